package index

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/registry"
)

// FilterSpec is the request part of the hard pre-filter.
type FilterSpec struct {
	// Within keeps only the named node and its subtree ("" = no limit). An id that names no
	// capability and prefixes none leaves nothing.
	Within string
	// Types keeps only these resource types (empty = all).
	Types []registry.ResourceType
	// SideEffectMax drops actions with a stronger side effect ("" = no limit). Packs and
	// recipes have no side effect and always pass; an action without a known side effect
	// counts as I. An unknown value counts as R, the strictest.
	SideEffectMax registry.SideEffect
}

// maxACLCache bounds the per-caller cache of the tenant and ACL part of the filter.
const maxACLCache = 4096

// maxFilterCache bounds the LRU cache of Filter results per generation, keyed by what a
// result depends on: the caller's tenant, user, scopes and OS, and the FilterSpec.
const maxFilterCache = 1024

// dense is a bitset over docIDs, one bit per document. roaring.FromDense adopts its whole
// 65536-doc chunks without copying.
type dense []uint64

func newDense(n int) dense { return make(dense, (n+63)/64) }

func (d dense) and(o dense) {
	for i := range d {
		d[i] &= o[i]
	}
}

func (d dense) or(o dense) {
	for i := range d {
		d[i] |= o[i]
	}
}

// keepRange clears every bit outside [lo, hi).
func (d dense) keepRange(lo, hi int) {
	for i := 0; i < lo/64; i++ {
		d[i] = 0
	}
	if lo%64 != 0 {
		d[lo/64] &^= 1<<(lo%64) - 1
	}
	if hi/64 < len(d) && hi%64 != 0 {
		d[hi/64] &= 1<<(hi%64) - 1
	}
	for i := (hi + 63) / 64; i < len(d); i++ {
		d[i] = 0
	}
}

// filterIndex holds the bitmaps read from the column view's indexes, as dense bitsets: the
// pre-filter is a handful of word-wise ANDs over n/64 words.
type filterIndex struct {
	n         int
	live      dense // enabled and not offline
	byType    [8]dense
	seLE      [4]dense
	osAny     dense
	osOK      map[string]dense // os → osAny ∪ docs naming it
	tenantAll dense
	byTenant  map[string]dense // tenant → tenantAll ∪ docs naming it
	acl       []dense          // per effective-ACL class
	acls      []registry.ACL
	deprec    *roaring.Bitmap

	mu    sync.RWMutex // protects cache
	cache map[string]dense

	results filterLRU // Filter results
}

// filterLRU is a mutex-guarded LRU cache of Filter results (read-only bitmaps).
type filterLRU struct {
	mu   sync.Mutex
	m    map[string]*filterEntry
	ring filterEntry // sentinel: ring.next is the most recently used
}

type filterEntry struct {
	key        string
	bm         *roaring.Bitmap
	prev, next *filterEntry
}

// get returns the cached result of key and marks it most recently used.
func (c *filterLRU) get(key []byte) (*roaring.Bitmap, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(key)]
	if !ok {
		return nil, false
	}
	if c.ring.next != e {
		e.unlink()
		c.pushFront(e)
	}
	return e.bm, true
}

// put caches bm under key, evicting the least recently used entry when full, and returns
// the cached bitmap (an earlier one when another caller cached key first).
func (c *filterLRU) put(key []byte, bm *roaring.Bitmap) *roaring.Bitmap {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*filterEntry, maxFilterCache)
		c.ring.prev, c.ring.next = &c.ring, &c.ring
	}
	if e, ok := c.m[string(key)]; ok {
		return e.bm
	}
	var e *filterEntry
	if len(c.m) >= maxFilterCache {
		e = c.ring.prev
		e.unlink()
		delete(c.m, e.key)
	} else {
		e = new(filterEntry)
	}
	e.key, e.bm = string(key), bm
	c.m[e.key] = e
	c.pushFront(e)
	return bm
}

func (c *filterLRU) pushFront(e *filterEntry) {
	e.prev, e.next = &c.ring, c.ring.next
	e.next.prev = e
	c.ring.next = e
}

func (e *filterEntry) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

var typeBits = map[registry.ResourceType]int{registry.TypePack: 1, registry.TypeAction: 2, registry.TypeRecipe: 4}

// buildFilter reads every bitmap index of the column view into dense bitsets.
func (g *Generation) buildFilter() error {
	v, f := g.cols, g.filter
	f.n = g.n
	get := func(index string) dense {
		d := newDense(g.n)
		v.forEach(index, func(i uint32) { d[i/64] |= 1 << (i % 64) })
		return d
	}
	f.live = get(ixEnabled)
	off := get(ixOffline)
	for i := range f.live {
		f.live[i] &^= off[i]
	}
	f.deprec = roaring.New()
	v.forEach(ixDeprecated, func(i uint32) { f.deprec.Add(i) })
	var single [3]dense
	for i, t := range []registry.ResourceType{registry.TypePack, registry.TypeAction, registry.TypeRecipe} {
		single[i] = get(ixType(t))
	}
	for mask := range f.byType {
		b := newDense(g.n)
		for i := range single {
			if mask&(1<<i) != 0 {
				b.or(single[i])
			}
		}
		f.byType[mask] = b
	}
	for l := range f.seLE {
		f.seLE[l] = get(ixSELE(l))
	}
	f.osAny = get(ixOSAny)
	f.osOK = make(map[string]dense, len(v.osNames))
	for _, o := range v.osNames {
		b := get(ixOS(o))
		b.or(f.osAny)
		f.osOK[o] = b
	}
	f.tenantAll = get(ixTenantAll)
	f.byTenant = make(map[string]dense, len(v.tenants))
	for _, t := range v.tenants {
		b := get(ixTenant(t))
		b.or(f.tenantAll)
		f.byTenant[t] = b
	}
	f.acls = v.acls
	f.acl = make([]dense, len(v.acls))
	for k := range v.acls {
		f.acl[k] = get(ixACL(k))
	}
	f.cache = make(map[string]dense)
	v.byName = nil
	return nil
}

var emptyRC registry.RuntimeContext

// Filter returns the docIDs rc may see under f: enabled and not offline (deprecated stays),
// visible to rc.Tenant, passing the discover gate of the effective ACL, supported on rc.OS
// (when both are known), inside f.Within, of f.Types and at most f.SideEffectMax. A nil rc
// is an anonymous caller with no scopes.
//
// The result is shared and read-only: it is cached (LRU, maxFilterCache entries per
// generation) per (tenant, user, scopes, OS, f), so repeated searches of one caller reuse
// it. Callers must not modify it; Clone it first.
func (g *Generation) Filter(rc *registry.RuntimeContext, f FilterSpec) *roaring.Bitmap {
	if rc == nil {
		rc = &emptyRC
	}
	kp := filterKeyPool.Get().(*[]byte)
	key := appendFilterKey((*kp)[:0], rc, f)
	bm, ok := g.filter.results.get(key)
	if !ok {
		bm = g.filter.results.put(key, g.computeFilter(rc, f))
	}
	*kp = key[:0]
	filterKeyPool.Put(kp)
	return bm
}

var filterKeyPool = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// appendFilterKey appends to dst a key naming everything Filter's result depends on; each
// string is length-prefixed so no two inputs share a key.
func appendFilterKey(dst []byte, rc *registry.RuntimeContext, f FilterSpec) []byte {
	str := func(s string) {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	str(rc.Tenant)
	str(rc.User)
	str(rc.OS)
	scopes := rc.Scopes
	if !slices.IsSorted(scopes) {
		scopes = slices.Sorted(slices.Values(scopes))
	}
	dst = binary.AppendUvarint(dst, uint64(len(scopes)))
	for _, s := range scopes {
		str(s)
	}
	str(f.Within)
	mask := 0
	if len(f.Types) > 0 { // unknown types alone leave nothing, unlike no types
		mask = 8
	}
	for _, t := range f.Types {
		mask |= typeBits[t]
	}
	se := -1
	if f.SideEffectMax != "" {
		se = max(f.SideEffectMax.Level(), 0)
	}
	return append(dst, byte(mask), byte(se+1))
}

// computeFilter is Filter without the result cache: a new bitmap.
func (g *Generation) computeFilter(rc *registry.RuntimeContext, f FilterSpec) *roaring.Bitmap {
	fi := g.filter
	out := newDense(g.n)
	copy(out, fi.base(rc))
	if rc.OS != "" {
		if b, ok := fi.osOK[rc.OS]; ok {
			out.and(b)
		} else {
			out.and(fi.osAny)
		}
	}
	if f.Within != "" {
		self, lo, hi := g.subtree(f.Within)
		switch {
		case self < 0 && lo >= hi:
			return roaring.New()
		case self >= 0 && self+1 != lo && lo < hi: // ids between the node and its subtree
			keepSelf := out[self/64] & (1 << (self % 64))
			out.keepRange(lo, hi)
			out[self/64] |= keepSelf
		case self >= 0:
			out.keepRange(self, max(hi, self+1))
		default:
			out.keepRange(lo, hi)
		}
	}
	if len(f.Types) > 0 {
		mask := 0
		for _, t := range f.Types {
			mask |= typeBits[t]
		}
		out.and(fi.byType[mask])
	}
	if f.SideEffectMax != "" {
		out.and(fi.seLE[max(f.SideEffectMax.Level(), 0)])
	}
	return roaring.FromDense(out, false)
}

// base returns the shared (read-only) bitset of live docs visible to rc's tenant and passing
// the discover gate.
func (f *filterIndex) base(rc *registry.RuntimeContext) dense {
	key := cacheKey(rc)
	f.mu.RLock()
	b, ok := f.cache[key]
	f.mu.RUnlock()
	if ok {
		return b
	}
	b = newDense(f.n)
	for k := range f.acls {
		if f.acls[k].Allows(rc, registry.GateDiscover) {
			b.or(f.acl[k])
		}
	}
	b.and(f.live)
	if t, ok := f.byTenant[rc.Tenant]; ok {
		b.and(t)
	} else {
		b.and(f.tenantAll)
	}
	f.mu.Lock()
	if len(f.cache) >= maxACLCache {
		clear(f.cache)
	}
	f.cache[key] = b
	f.mu.Unlock()
	return b
}

// cacheKey identifies what the discover gate and tenant visibility depend on.
func cacheKey(rc *registry.RuntimeContext) string {
	scopes := rc.Scopes
	if !slices.IsSorted(scopes) {
		scopes = slices.Sorted(slices.Values(scopes))
	}
	n := len(rc.Tenant) + len(rc.User) + 2
	for _, s := range scopes {
		n += len(s) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(rc.Tenant)
	b.WriteByte(0)
	b.WriteString(rc.User)
	for _, s := range scopes {
		b.WriteByte(0)
		b.WriteString(s)
	}
	return b.String()
}

// Descendants returns the docID range [lo, hi) of the capabilities under id (empty when
// there are none).
func (g *Generation) Descendants(id string) (lo, hi int) {
	_, lo, hi = g.subtree(id)
	return lo, hi
}

// subtree finds id (self, -1 when no capability has it) and the docID range [lo, hi) of
// the ids under it. Snapshot ids are sorted, so the ids starting with id+"." are contiguous
// and end before id+"/".
func (g *Generation) subtree(id string) (self, lo, hi int) {
	id = strings.TrimSpace(id)
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	id = strings.TrimSuffix(id, ".")
	if id == "" {
		return -1, 0, 0
	}
	caps := g.snap.Caps
	self = -1
	if d, ok := g.snap.DocID(id); ok {
		self = int(d)
	}
	pre := id + "."
	lo = sort.Search(len(caps), func(i int) bool { return caps[i].ID >= pre })
	end := id + "/"
	hi = lo + sort.Search(len(caps)-lo, func(i int) bool { return caps[lo+i].ID >= end })
	return self, lo, hi
}

// Deprecated reports whether doc d is deprecated (it stays searchable).
func (g *Generation) Deprecated(d uint32) bool { return g.filter.deprec.Contains(d) }
