package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/capdex/capdex/registry"
	"github.com/kelindar/column"
)

// The column view is a kelindar/column collection with one row per capability; the row index
// is the docID (rows are inserted in docID order into an empty collection, and a restored
// collection is checked row by row). Its bitmap indexes serve the hard pre-filter: Build reads
// each index once into a roaring bitmap (filter.go), so a search never opens a column
// transaction.

// Column names of the view.
const (
	colID         = "id" // primary key
	colDoc        = "doc"
	colType       = "resource_type"
	colPack       = "pack"
	colCapType    = "capability_type"
	colDomain     = "domain"
	colSideEffect = "side_effect"
	colSERank     = "se_rank" // 0..3 for actions (unknown = 3), 0 for packs and recipes
	colRisk       = "risk"
	colStatus     = "status"
	colOS         = "os"      // comma-joined supported_os, "" = any
	colTenants    = "tenants" // comma-joined effective tenants, "" = all
	colACL        = "acl"     // effective-ACL class number
	colConfirm    = "requires_confirmation"
	colVersion    = "version"
	colEnabled    = "enabled" // effective: false when any ancestor pack is disabled or offline
)

// Index names of the view.
const (
	ixOffline    = "status:offline"
	ixDeprecated = "status:deprecated"
	ixEnabled    = "enabled"
	ixOSAny      = "os:*"
	ixTenantAll  = "tenant:*"
	ixConfirm    = "confirm"
)

func ixType(t registry.ResourceType) string { return "type:" + string(t) }
func ixSELE(level int) string               { return "se_le:" + strconv.Itoa(level) }
func ixOS(os string) string                 { return "os:" + os }
func ixTenant(t string) string              { return "tenant:" + t }
func ixACL(k int) string                    { return "acl:" + strconv.Itoa(k) }

// colFormat is the version of the bytes written by ColumnSnapshot.
const colFormat = 1

var colMagic = [8]byte{'c', 'a', 'p', 'd', 'x', 'c', 'o', 'l'}

// row is one capability as the column view stores it.
type row struct {
	id, typ, pack, capType, domain, se, risk, status, os, tenants string
	seRank, acl, version                                          int
	confirm, enabled                                              bool
}

// colView owns the kelindar collection and the schema derived from the snapshot.
type colView struct {
	mu   sync.Mutex // serialises Snapshot calls (kelindar allows one at a time)
	coll *column.Collection

	rows     rowChunks      // the rows, by docID
	n        int            // number of rows
	osNames  []string       // distinct os names, sorted
	tenants  []string       // distinct tenant names (other than "*"), sorted
	acls     []registry.ACL // effective-ACL classes; row.acl indexes this
	schema   uint64         // hash of column and index names
	restored bool
	byName   map[string]colIndex // the bitmap indexes by name, while the filter is built

	// What a patch of the rows (columns_patch.go) needs to keep the schema a build gives:
	// the number of documents naming each OS and tenant (parallel to osNames and tenants),
	// the class of each ACL key and each class's first document. Read-only once built;
	// a patch that changes them copies them.
	osCount, tenantCount []int32
	aclIdx               map[string]int
	aclFirst             []int32
}

func joinSorted(list []string) string {
	if len(list) == 0 {
		return ""
	}
	s := slices.Clone(list)
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ",")
}

func aclKey(a registry.ACL) string {
	return joinSorted(a.Discover) + "|" + joinSorted(a.Deny)
}

// seRank orders side effects for the side_effect_max filter. Packs and recipes have none
// (rank 0: they pass every maximum); an action with an unknown side effect counts as I.
func seRank(c *registry.Capability) int {
	if c.ResourceType != registry.TypeAction {
		return 0
	}
	if l := c.SideEffect.Level(); l >= 0 {
		return l
	}
	return 3
}

// prepareRows computes the rows, the schema and the fingerprints from the snapshot.
func (v *colView) prepareRows(snap *registry.Snapshot) {
	v.n = len(snap.Caps)
	v.rows = newRowChunks(v.n)
	osSet, tenantSet := map[string]int32{}, map[string]int32{}
	v.aclIdx = map[string]int{}
	for i, c := range snap.Caps {
		// Only the discover list and the deny list decide the discover gate.
		k := aclKey(c.Eff.ACL)
		cls, ok := v.aclIdx[k]
		if !ok {
			cls = len(v.acls)
			v.aclIdx[k] = cls
			v.acls = append(v.acls, registry.ACL{Discover: c.Eff.ACL.Discover, Deny: c.Eff.ACL.Deny})
			v.aclFirst = append(v.aclFirst, int32(i))
		}
		forDistinct(c.SupportedOS, func(o string) { osSet[o]++ })
		forTenants(c, func(t string) { tenantSet[t]++ })
		*v.rows.at(i) = makeRow(c, cls)
	}
	for o := range osSet {
		v.osNames = append(v.osNames, o)
	}
	for t := range tenantSet {
		v.tenants = append(v.tenants, t)
	}
	slices.Sort(v.osNames)
	slices.Sort(v.tenants)
	v.osCount = make([]int32, len(v.osNames))
	for i, o := range v.osNames {
		v.osCount[i] = osSet[o]
	}
	v.tenantCount = make([]int32, len(v.tenants))
	for i, t := range v.tenants {
		v.tenantCount[i] = tenantSet[t]
	}
	v.schema = v.schemaHash()
}

// makeRow is capability c's row, of ACL class cls.
func makeRow(c *registry.Capability, cls int) row {
	return row{
		id: c.ID, typ: string(c.ResourceType), pack: registry.Parent(c.ID), capType: c.CapabilityType,
		domain: c.Domain, se: string(c.SideEffect), risk: string(c.RiskLevel), status: string(c.Status),
		os: joinSorted(c.SupportedOS), tenants: joinSorted(c.Eff.Tenants),
		seRank: seRank(c), acl: cls, version: c.Version, confirm: c.RequiresConfirmation, enabled: c.Eff.Enabled,
	}
}

// forDistinct calls fn once with each distinct value of list.
func forDistinct(list []string, fn func(string)) {
	for i, x := range list {
		if !slices.Contains(list[:i], x) {
			fn(x)
		}
	}
}

// forTenants calls fn once with each distinct effective tenant of c other than "*": the
// tenants that have an index of their own.
func forTenants(c *registry.Capability, fn func(string)) {
	forDistinct(c.Eff.Tenants, func(t string) {
		if t != "*" {
			fn(t)
		}
	})
}

// schemaHash is the hash of the view's index names.
func (v *colView) schemaHash() uint64 {
	h := fnv.New64a()
	for _, name := range v.indexNames() {
		io.WriteString(h, name)
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// contentHash is the fingerprint of every row value (ColumnSnapshot, restore).
func (v *colView) contentHash() uint64 {
	h := fnv.New64a()
	var num [8]byte
	for i := range v.n {
		r := v.rows.at(i)
		for _, s := range [...]string{r.id, r.typ, r.pack, r.capType, r.domain, r.se, r.risk, r.status, r.os, r.tenants} {
			io.WriteString(h, s)
			h.Write([]byte{0})
		}
		for _, x := range [...]int{r.seRank, r.acl, r.version, b2i(r.confirm), b2i(r.enabled)} {
			binary.LittleEndian.PutUint64(num[:], uint64(x))
			h.Write(num[:])
		}
	}
	return h.Sum64()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// indexNames lists every bitmap index of the schema, in creation order.
func (v *colView) indexNames() []string {
	names := []string{ixOffline, ixDeprecated, ixEnabled, ixOSAny, ixTenantAll, ixConfirm,
		ixType(registry.TypePack), ixType(registry.TypeAction), ixType(registry.TypeRecipe)}
	for l := 0; l <= 3; l++ {
		names = append(names, ixSELE(l))
	}
	for _, o := range v.osNames {
		names = append(names, ixOS(o))
	}
	for _, t := range v.tenants {
		names = append(names, ixTenant(t))
	}
	for k := range v.acls {
		names = append(names, ixACL(k))
	}
	return names
}

func listHas(list, x string) bool {
	for list != "" {
		i := strings.IndexByte(list, ',')
		if i < 0 {
			return list == x
		}
		if list[:i] == x {
			return true
		}
		list = list[i+1:]
	}
	return false
}

// newCollection creates an empty collection with the view's columns and indexes.
func (v *colView) newCollection(capacity int) (*column.Collection, error) {
	c := column.NewCollection(column.Options{Capacity: max(capacity, 64)})
	cols := []struct {
		name string
		col  column.Column
	}{
		{colID, column.ForKey()}, {colDoc, column.ForUint32()}, {colType, column.ForEnum()},
		{colPack, column.ForString()}, {colCapType, column.ForEnum()}, {colDomain, column.ForEnum()},
		{colSideEffect, column.ForEnum()}, {colSERank, column.ForInt()}, {colRisk, column.ForEnum()},
		{colStatus, column.ForEnum()}, {colOS, column.ForString()}, {colTenants, column.ForString()},
		{colACL, column.ForInt()}, {colConfirm, column.ForBool()}, {colVersion, column.ForInt()},
		{colEnabled, column.ForBool()},
	}
	var errs []error
	for _, x := range cols {
		errs = append(errs, c.CreateColumn(x.name, x.col))
	}
	for _, ix := range v.indexes() {
		errs = append(errs, c.CreateIndex(ix.name, ix.col, func(r column.Reader) bool { return ix.fromColumn(r) }))
	}
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// buildColumns fills g.cols: the rows, and the collection restored from snapBytes when they
// match. A collection not restored is built when first needed (ColumnSnapshot, collection):
// the pre-filter reads the rows (buildFilter), so a generation that is never snapshotted
// (every one a registry change makes, but the last before Close) never builds one.
func (g *Generation) buildColumns(snapBytes []byte) error {
	v := g.cols
	v.prepareRows(g.snap)
	if len(snapBytes) > 0 {
		coll, err := v.restore(snapBytes, g.snap.Generation)
		if err == nil {
			// Only the vacuum goroutine stops: the collection stays readable and snapshottable.
			coll.Close()
			v.coll, v.restored = coll, true
		} else {
			g.log.Info("index: column snapshot not used, rebuilding", "err", err)
		}
	}
	g.stats.ColumnRestored = v.restored
	return g.buildFilter()
}

// collection returns the kelindar collection of the view, building it on first use. The
// caller holds v.mu.
func (v *colView) collection() (*column.Collection, error) {
	if v.coll != nil {
		return v.coll, nil
	}
	coll, err := v.newCollection(v.n)
	if err != nil {
		return nil, fmt.Errorf("index: column view: %w", err)
	}
	if err := v.insertRows(coll); err != nil {
		coll.Close()
		return nil, fmt.Errorf("index: column view: %w", err)
	}
	coll.Close() // only the vacuum goroutine stops
	v.coll = coll
	return coll, nil
}

func (v *colView) insertRows(coll *column.Collection) error {
	return coll.Query(func(txn *column.Txn) error {
		for i := range v.n {
			r := v.rows.at(i)
			var at uint32
			err := txn.InsertKey(r.id, func(w column.Row) error {
				at = w.Index()
				w.SetUint32(colDoc, uint32(i))
				w.SetEnum(colType, r.typ)
				w.SetString(colPack, r.pack)
				w.SetEnum(colCapType, r.capType)
				w.SetEnum(colDomain, r.domain)
				w.SetEnum(colSideEffect, r.se)
				w.SetInt(colSERank, r.seRank)
				w.SetEnum(colRisk, r.risk)
				w.SetEnum(colStatus, r.status)
				w.SetString(colOS, r.os)
				w.SetString(colTenants, r.tenants)
				w.SetInt(colACL, r.acl)
				w.SetBool(colConfirm, r.confirm)
				w.SetInt(colVersion, r.version)
				w.SetBool(colEnabled, r.enabled)
				return nil
			})
			if err != nil {
				return err
			}
			if at != uint32(i) {
				return fmt.Errorf("row %d inserted at %d", i, at)
			}
		}
		return nil
	})
}

// ColumnSnapshot writes the column view so a later Build of the same registry generation can
// restore it (Options.ColumnSnapshot). The bytes carry the registry generation, a fingerprint
// of every row and kelindar/column's own snapshot. kelindar stages the snapshot in a
// temporary file under os.TempDir.
func (g *Generation) ColumnSnapshot(w io.Writer) error {
	v := g.cols
	v.mu.Lock()
	defer v.mu.Unlock()
	coll, err := v.collection()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrColumnSnapshot, err)
	}
	var hdr []byte
	hdr = append(hdr, colMagic[:]...)
	hdr = binary.AppendUvarint(hdr, colFormat)
	hdr = binary.AppendUvarint(hdr, g.snap.Generation)
	hdr = binary.AppendUvarint(hdr, uint64(v.n))
	hdr = binary.LittleEndian.AppendUint64(hdr, v.schema)
	hdr = binary.LittleEndian.AppendUint64(hdr, v.contentHash())
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("%w: %w", ErrColumnSnapshot, err)
	}
	if err := coll.Snapshot(w); err != nil {
		return fmt.Errorf("%w: %w", ErrColumnSnapshot, err)
	}
	return nil
}

// errColumnMismatch says why snapshot bytes were not used.
var errColumnMismatch = errors.New("index: column snapshot does not match")

// restore reads bytes written by ColumnSnapshot into a new collection and checks them
// against the prepared rows.
func (v *colView) restore(b []byte, gen uint64) (coll *column.Collection, err error) {
	if len(b) < len(colMagic) || !bytes.Equal(b[:len(colMagic)], colMagic[:]) {
		return nil, fmt.Errorf("%w: bad magic", errColumnMismatch)
	}
	rest := b[len(colMagic):]
	next := func() uint64 {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			err = fmt.Errorf("%w: truncated header", errColumnMismatch)
			return 0
		}
		rest = rest[n:]
		return x
	}
	format, sgen, n := next(), next(), next()
	if err != nil {
		return nil, err
	}
	if len(rest) < 16 {
		return nil, fmt.Errorf("%w: truncated header", errColumnMismatch)
	}
	schema, content := binary.LittleEndian.Uint64(rest), binary.LittleEndian.Uint64(rest[8:])
	rest = rest[16:]
	switch {
	case format != colFormat:
		return nil, fmt.Errorf("%w: format %d", errColumnMismatch, format)
	case sgen != gen:
		return nil, fmt.Errorf("%w: registry generation %d, want %d", errColumnMismatch, sgen, gen)
	case n != uint64(v.n) || schema != v.schema || content != v.contentHash():
		return nil, fmt.Errorf("%w: rows changed", errColumnMismatch)
	}
	c, err := v.newCollection(v.n)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: restore panicked: %v", errColumnMismatch, p)
		}
		if err != nil {
			c.Close()
			coll = nil
		}
	}()
	if err = c.Restore(bytes.NewReader(rest)); err != nil {
		return nil, fmt.Errorf("%w: %w", errColumnMismatch, err)
	}
	if err = v.check(c); err != nil {
		return nil, err
	}
	return c, nil
}

// check verifies that every row of coll sits at its docID with the prepared values the
// filter reads.
func (v *colView) check(coll *column.Collection) error {
	if coll.Count() != v.n {
		return fmt.Errorf("%w: %d rows, want %d", errColumnMismatch, coll.Count(), v.n)
	}
	var bad error
	coll.Query(func(txn *column.Txn) error {
		key, doc, acl, tenants := txn.Key(), txn.Uint32(colDoc), txn.Int(colACL), txn.String(colTenants)
		return txn.Range(func(i uint32) {
			if bad != nil {
				return
			}
			id, _ := key.Get()
			d, _ := doc.Get()
			a, _ := acl.Get()
			t, _ := tenants.Get()
			if int(i) >= v.n {
				bad = fmt.Errorf("%w: row %d holds %q", errColumnMismatch, i, id)
				return
			}
			if r := v.rows.at(int(i)); d != i || id != r.id || a != r.acl || t != r.tenants {
				bad = fmt.Errorf("%w: row %d holds %q", errColumnMismatch, i, id)
			}
		})
	})
	return bad
}

// forEach calls fn with every docID in a bitmap index of the view, in order, read from the
// rows (colIndex.fromRow); forEachColumn reads the same from the collection.
func (v *colView) forEach(index string, fn func(uint32)) {
	if v.byName == nil {
		v.byName = map[string]colIndex{}
		for _, ix := range v.indexes() {
			v.byName[ix.name] = ix
		}
	}
	ix, ok := v.byName[index]
	if !ok {
		return
	}
	for i := range v.n {
		if ix.fromRow(v.rows.at(i)) {
			fn(uint32(i))
		}
	}
}

// forEachColumn is forEach read from the collection's bitmap index (building it): the
// reference forEach is checked against (TestColumnFilterFromRows).
func (v *colView) forEachColumn(index string, fn func(uint32)) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	coll, err := v.collection()
	if err != nil {
		return err
	}
	return coll.Query(func(txn *column.Txn) error {
		return txn.With(index).Range(fn)
	})
}
