package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/capdex/capdex/registry"
)

// change is one planned registry change of Put, Create or PutAll.
type change struct {
	c      *registry.Capability
	data   []byte  // the definition's encoding, as stored (encodeDef)
	old    pointer // the committed pointer, when hadOld
	oldKey []byte
	hadOld bool
	ptr    pointer // the new pointer
	rec    AuditRecord
	noop   bool
}

func validateCap(c *registry.Capability) error {
	if c == nil {
		return fmt.Errorf("%w: nil capability", ErrInvalid)
	}
	if !registry.ValidID(c.ID) {
		return fmt.Errorf("%w: %w: %q", ErrInvalid, registry.ErrBadID, c.ID)
	}
	if c.Version < 1 {
		return fmt.Errorf("%w: %s: version %d (want 1 or more)", ErrInvalid, c.ID, c.Version)
	}
	return nil
}

// encodedDef is a definition as stored: its binary encoding (encodeDefBinary) and the
// digest its audit record carries, the SHA-256 of its JSON (as in stores that kept JSON).
type encodedDef struct {
	data   []byte
	digest string
}

// encodeDef returns what is stored for c, with its schema digest computed afresh
// (registry.Digest), so a stored definition never carries a stale digest. A definition
// that does not marshal to JSON (a schema that is not JSON, a budget that is not a
// number) is ErrInvalid.
func encodeDef(c *registry.Capability) (encodedDef, error) {
	d := *c
	d.Provenance.SchemaDigest = registry.Digest(c)
	b, err := json.Marshal(&d)
	if err != nil {
		return encodedDef{}, fmt.Errorf("%w: %s: %v", ErrInvalid, c.ID, err)
	}
	return encodedDef{data: encodeDefBinary(&d), digest: digestOf(b)}, nil
}

// decodeDef decodes a stored definition, binary or (from earlier stores) JSON.
func decodeDef(v []byte) (*registry.Capability, error) {
	if len(v) > 0 && v[0] == '{' {
		c := new(registry.Capability)
		if err := json.Unmarshal(v, c); err != nil {
			return nil, err
		}
		return c, nil
	}
	return decodeDefBinary(v)
}

// parallel calls fn(0..n-1) in chunks on up to GOMAXPROCS goroutines and returns when all
// calls have returned.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/128+1)
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// sameDef reports whether the stored definition encoding equals c (registry.Equal: the
// computed schema digest, key order and whitespace in schemas do not count).
func sameDef(stored []byte, data []byte, c *registry.Capability) (bool, error) {
	if bytes.Equal(stored, data) {
		return true, nil
	}
	old, err := decodeDef(stored)
	if err != nil {
		return false, err
	}
	return registry.Equal(old, c), nil
}

// keyedPointer is a pointer with its key.
type keyedPointer struct {
	p   pointer
	key []byte
}

// committedPointers returns the latest pointer of every id as of gen, in one pass.
func committedPointers(txn *badger.Txn, gen uint64) (map[string]keyedPointer, error) {
	out := map[string]keyedPointer{}
	o := badger.DefaultIteratorOptions
	o.PrefetchValues = false
	o.Prefix = []byte(pfxActive)
	it := txn.NewIterator(o)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		id, g, ok := parseActiveKey(item.Key())
		if !ok || g > gen {
			continue
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		p, err := decodePointer(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		out[id] = keyedPointer{p: p, key: item.KeyCopy(nil)} // later keys are newer
	}
	return out, nil
}

// latestPointer returns id's pointer with the highest generation not above maxGen.
func latestPointer(txn *badger.Txn, id string, maxGen uint64) (p pointer, key []byte, found bool, err error) {
	o := badger.DefaultIteratorOptions
	o.PrefetchValues = false
	o.Prefix = activeIDPrefix(id)
	it := txn.NewIterator(o)
	defer it.Close()
	var v []byte
	for it.Rewind(); it.Valid(); it.Next() {
		// An item is valid only until Next, so the key and value are copied.
		_, gen, ok := parseActiveKey(it.Item().Key())
		if !ok || gen > maxGen {
			continue
		}
		key = it.Item().KeyCopy(nil)
		if v, err = it.Item().ValueCopy(v[:0]); err != nil {
			return pointer{}, nil, false, err
		}
	}
	if key == nil {
		return pointer{}, nil, false, nil
	}
	p, err = decodePointer(v)
	return p, key, err == nil, err
}

// plan decides what storing c (encoded as enc) means given the committed state as of gen.
// known, when not nil, holds every committed pointer (see committedPointers), saving a lookup.
func plan(txn *badger.Txn, c *registry.Capability, enc encodedDef, gen uint64, create bool, known map[string]keyedPointer) (change, error) {
	data := enc.data
	ch := change{c: c, data: data}
	var old pointer
	var oldKey []byte
	var found bool
	if known != nil {
		kp, ok := known[c.ID]
		old, oldKey, found = kp.p, kp.key, ok
	} else {
		var err error
		if old, oldKey, found, err = latestPointer(txn, c.ID, gen); err != nil {
			return ch, err
		}
	}
	ch.old, ch.oldKey, ch.hadOld = old, oldKey, found
	ch.rec = AuditRecord{Kind: KindRegistry, Action: c.ID, Version: c.Version, Digest: enc.digest}
	switch {
	case !found:
		ch.ptr = pointer{Version: c.Version, NewDef: true}
		ch.rec.Decision = DecisionCreated
		return ch, nil
	case create && !old.Deleted:
		return ch, fmt.Errorf("%w: %s (version %d)", ErrExists, c.ID, old.Version)
	case c.Version < old.Version:
		return ch, fmt.Errorf("%w: %s: version %d, latest is %d", ErrStaleVersion, c.ID, c.Version, old.Version)
	case c.Version > old.Version:
		ch.ptr = pointer{Version: c.Version, NewDef: true}
		if old.Deleted {
			ch.rec.Decision = DecisionCreated
			ch.rec.Detail = fmt.Sprintf("recreated after delete at version %d", old.Version)
		} else {
			ch.rec.Decision = DecisionUpdated
			ch.rec.Detail = fmt.Sprintf("version %d → %d", old.Version, c.Version)
		}
		return ch, nil
	}
	stored, err := getValue(txn, defKey(c.ID, old.Version))
	if err != nil {
		return ch, fmt.Errorf("%w: %s@%d: definition missing: %v", ErrCorrupt, c.ID, old.Version, err)
	}
	same, err := sameDef(stored, data, c)
	if err != nil {
		return ch, fmt.Errorf("%w: %s@%d: %v", ErrCorrupt, c.ID, old.Version, err)
	}
	if !same {
		return ch, fmt.Errorf("%w: %s: version %d is stored with a different definition", ErrNoVersionBump, c.ID, c.Version)
	}
	if !old.Deleted {
		ch.noop = true
		return ch, nil
	}
	ch.ptr = pointer{Version: c.Version}
	ch.rec.Decision = DecisionCreated
	ch.rec.Detail = fmt.Sprintf("restored version %d after delete", c.Version)
	return ch, nil
}

// writeChange writes ch's definition and pointer at generation gen with set.
func writeChange(set func(k, v []byte) error, ch *change, gen uint64) error {
	if ch.ptr.NewDef {
		if err := set(defKey(ch.c.ID, ch.ptr.Version), ch.data); err != nil {
			return err
		}
	}
	return set(activeKey(ch.c.ID, gen), ch.ptr.encode())
}

// Put stores c as a new capability or a new version of one, and appends the audit record
// in the same transaction. The same version with an identical definition is a no-op (nil,
// no audit record, no new generation); the same version with a different definition is
// ErrNoVersionBump; a version below the id's latest is ErrStaleVersion. A deleted id may be
// stored again at its last version (restoring that definition) or a higher one. Of
// concurrent Puts of one id and version with different definitions exactly one succeeds.
// c is encoded at once and not kept.
func (s *Store) Put(ctx context.Context, c *registry.Capability, actor string) error {
	return s.putOne(ctx, c, actor, false)
}

// Create is Put that refuses an id that already has a (not deleted) definition with
// ErrExists, whatever its version. Of concurrent Creates of one id exactly one succeeds.
func (s *Store) Create(ctx context.Context, c *registry.Capability, actor string) error {
	return s.putOne(ctx, c, actor, true)
}

func (s *Store) putOne(ctx context.Context, c *registry.Capability, actor string, create bool) error {
	if err := validateCap(c); err != nil {
		return err
	}
	enc, err := encodeDef(c)
	if err != nil {
		return err
	}
	return s.commitOne(ctx, func(txn *badger.Txn, gen uint64) (*change, error) {
		ch, err := plan(txn, c, enc, gen, create, nil)
		if err != nil || ch.noop {
			return nil, err
		}
		ch.rec.Actor = actor
		return &ch, nil
	})
}

// commitOne runs one registry change in one transaction: planFn decides the change against
// the committed generation (nil: nothing to do); commitOne writes it at the next generation
// with its audit record, and removes the superseded pointer.
func (s *Store) commitOne(ctx context.Context, planFn func(txn *badger.Txn, gen uint64) (*change, error)) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureClean(); err != nil {
		return err
	}
	gen := s.gen.Load() + 1
	var head auditHead
	var changed bool
	err := s.update(ctx, func(txn *badger.Txn) error {
		changed = false
		ch, err := planFn(txn, gen-1)
		if err != nil || ch == nil {
			return err
		}
		if err := writeChange(txn.Set, ch, gen); err != nil {
			return err
		}
		if ch.hadOld {
			if err := txn.Delete(ch.oldKey); err != nil {
				return err
			}
		}
		if err := txn.Set(keyGen, be64(gen)); err != nil {
			return err
		}
		_, head, err = s.appendInTxn(txn, ch.rec, time.Now())
		changed = err == nil
		return err
	})
	if err != nil {
		s.reloadAfterError()
		return wrapDB("put", err)
	}
	if changed {
		s.gen.Store(gen)
		s.head = head
	}
	return nil
}

// PutAll stores every capability of caps as Put would, all or nothing: either every change
// becomes visible at once, in one new generation, or none does, even when the process is
// killed in the middle. Errors of single capabilities (ErrStaleVersion, ErrNoVersionBump,
// ErrInvalid, a duplicate id) are all reported, joined, and nothing is written. Capabilities
// identical to their stored version are skipped. An import too large for one Badger
// transaction is staged under the next generation and made visible by one small commit; see
// the package documentation.
func (s *Store) PutAll(ctx context.Context, caps []*registry.Capability, actor string) error {
	return s.Apply(ctx, caps, nil, actor)
}

// Apply stores every capability of caps as PutAll would and deletes every id of deleted as
// DeleteAll would, all or nothing, in one new generation with one audit record per change:
// a refresh that replaces some definitions and removes others is never half done. An id
// both stored and deleted, or deleted twice, is ErrInvalid; an unknown or already deleted
// id is ErrNotFound; every problem is reported, joined, and nothing is written.
func (s *Store) Apply(ctx context.Context, caps []*registry.Capability, deleted []string, actor string) error {
	// Each definition's problem, in the order of caps: validation and duplicates first,
	// then (on all cores) the encoding of those that passed.
	bad := make([]error, len(caps))
	seen := make(map[string]bool, len(caps))
	for i, c := range caps {
		if err := validateCap(c); err != nil {
			bad[i] = err
			continue
		}
		if seen[c.ID] {
			bad[i] = fmt.Errorf("%w: %w: %s", ErrInvalid, registry.ErrDuplicateID, c.ID)
			continue
		}
		seen[c.ID] = true
	}
	datas := make([]encodedDef, len(caps))
	parallel(len(caps), func(i int) {
		if bad[i] == nil {
			datas[i], bad[i] = encodeDef(caps[i])
		}
	})
	var errs []error
	for _, err := range bad {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureClean(); err != nil {
		return err
	}
	gen := s.gen.Load() + 1
	var changes []change
	batchNote := fmt.Sprintf(" (import of %d at generation %d)", len(caps), gen)
	if len(deleted) > 0 {
		batchNote = fmt.Sprintf(" (import of %d, deleting %d, at generation %d)", len(caps), len(deleted), gen)
	}
	err := s.db.View(func(txn *badger.Txn) error {
		var known map[string]keyedPointer
		if len(caps) > 64 {
			var err error
			if known, err = committedPointers(txn, gen-1); err != nil {
				return err
			}
		}
		for i, c := range caps {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			ch, err := plan(txn, c, datas[i], gen-1, false, known)
			if err != nil {
				if errors.Is(err, ErrCorrupt) || !isInputError(err) {
					return err
				}
				errs = append(errs, err)
				continue
			}
			if !ch.noop {
				ch.rec.Actor = actor
				ch.rec.Detail = strings.TrimSpace(ch.rec.Detail + batchNote)
				changes = append(changes, ch)
			}
		}
		for _, id := range deleted {
			if seen[id] {
				errs = append(errs, fmt.Errorf("%w: %s is both stored and deleted", ErrInvalid, id))
				continue
			}
			seen[id] = true
			old, oldKey, found, err := latestPointer(txn, id, gen-1)
			if err != nil {
				return err
			}
			if !found || old.Deleted {
				errs = append(errs, fmt.Errorf("%w: %s", ErrNotFound, id))
				continue
			}
			changes = append(changes, change{
				c: &registry.Capability{ID: id}, old: old, oldKey: oldKey, hadOld: true,
				ptr: pointer{Version: old.Version, Deleted: true},
				rec: AuditRecord{Kind: KindRegistry, Actor: actor, Action: id, Version: old.Version,
					Decision: DecisionDeleted, Detail: strings.TrimSpace(batchNote)},
			})
		}
		return nil
	})
	if err != nil {
		return wrapDB("import", err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(changes) == 0 {
		return nil
	}
	now := time.Now()
	err = s.putAllOneTxn(changes, gen, now)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		if err != nil {
			s.reloadAfterError()
			return wrapDB("import", err)
		}
		return nil
	}
	return s.putAllStaged(ctx, changes, gen, now)
}

func isInputError(err error) bool {
	return errors.Is(err, ErrStaleVersion) || errors.Is(err, ErrNoVersionBump) ||
		errors.Is(err, ErrExists) || errors.Is(err, ErrInvalid)
}

// putAllOneTxn commits a batch small enough for one transaction; it returns
// badger.ErrTxnTooBig (having written nothing) when the batch is too large.
func (s *Store) putAllOneTxn(changes []change, gen uint64, now time.Time) error {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	head := s.head
	if err := auditFree(txn, head.Seq+1); err != nil {
		return err
	}
	for i := range changes {
		ch := &changes[i]
		if err := writeChange(txn.Set, ch, gen); err != nil {
			return err
		}
		if ch.hadOld {
			if err := txn.Delete(ch.oldKey); err != nil {
				return err
			}
		}
		rec, b, err := seal(ch.rec, head, now, s.opt.AuditKey)
		if err != nil {
			return err
		}
		if err := txn.Set(AuditKey(rec.Seq), b); err != nil {
			return err
		}
		head = auditHead{Seq: rec.Seq, Hash: rec.Hash}
	}
	hb, _ := json.Marshal(head) // plain struct: cannot fail
	if err := txn.Set(keyHead, hb); err != nil {
		return err
	}
	if err := txn.Set(keyGen, be64(gen)); err != nil {
		return err
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	s.gen.Store(gen)
	s.head = head
	return nil
}

// putAllStaged writes a large batch in several transactions under generation gen, which
// readers ignore until meta/gen reaches it, then flips meta/gen and meta/audit in one commit.
func (s *Store) putAllStaged(ctx context.Context, changes []change, gen uint64, now time.Time) (err error) {
	s.staged.Add(1)
	if err := s.db.View(func(txn *badger.Txn) error { return auditFree(txn, s.head.Seq+1) }); err != nil {
		return wrapDB("import", err)
	}
	marker, _ := json.Marshal(stageMarker{Gen: gen, AuditFrom: s.head.Seq + 1, Started: now.UTC(), Count: len(changes)})
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyStage, marker) }); err != nil {
		return wrapDB("import", err)
	}
	flipped := false
	defer func() {
		if err == nil || flipped {
			return
		}
		// Roll back what was staged, or keep it if a flip that reported an error landed
		// after all; should the cleanup fail too, the next writer or Open retries it.
		s.reloadAfterError()
		if s.gen.Load() == gen {
			err = nil
		}
		if cerr := s.cleanupStage(); cerr != nil {
			s.dirty = true
			s.log.Warn("store: cleanup of an import deferred", "err", cerr)
		}
	}()
	b := newBatcher(s.db)
	defer b.discard()
	head := s.head
	for i := range changes {
		if i%128 == 0 {
			if s.stageHook != nil {
				if err := s.stageHook(i); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ch := &changes[i]
		if err := writeChange(b.set, ch, gen); err != nil {
			return wrapDB("import", err)
		}
		rec, v, err := seal(ch.rec, head, now, s.opt.AuditKey)
		if err != nil {
			return err
		}
		if err := b.set(AuditKey(rec.Seq), v); err != nil {
			return wrapDB("import", err)
		}
		head = auditHead{Seq: rec.Seq, Hash: rec.Hash}
	}
	if err := b.finish(); err != nil {
		return wrapDB("import", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The flip: one small commit makes the whole import visible.
	hb, _ := json.Marshal(head) // plain struct: cannot fail
	err = s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(keyHead, hb); err != nil {
			return err
		}
		return txn.Set(keyGen, be64(gen))
	})
	if err != nil {
		// Whether the flip landed is read back from the store by the deferred rollback,
		// which keeps a committed import and removes an uncommitted one.
		return wrapDB("import", err)
	}
	flipped = true
	s.gen.Store(gen)
	s.head = head
	// Remove the superseded pointers and the marker. Readers already ignore them; a
	// failure here only leaves work for the next writer or Open.
	if cerr := s.cleanupStage(); cerr != nil {
		s.dirty = true
		s.log.Warn("store: cleanup after import deferred", "err", cerr)
	}
	return nil
}

// ensureClean refuses every audited write of a damaged store (see checkIntegrity and
// adoptKey), and finishes a cleanup that a failed import left. Caller holds wmu.
func (s *Store) ensureClean() error {
	if s.refusal != nil {
		return s.refusal
	}
	if !s.dirty {
		return nil
	}
	if err := s.cleanupStage(); err != nil {
		return wrapDB("cleanup of an interrupted import", err)
	}
	return nil
}

// reloadAfterError re-reads the generation and audit head after a failed commit.
func (s *Store) reloadAfterError() {
	if err := s.loadMeta(); err != nil {
		s.log.Warn("store: reload of meta after an error failed", "err", err)
		s.dirty = true
	}
}

// cleanupStage finishes or rolls back an import when meta/stage is present: pointers above
// the committed generation are deleted (with the definitions they wrote), so are pointers
// shadowed by a newer committed one and audit records above the committed head; then the
// marker goes. Caller holds wmu (or is Open).
func (s *Store) cleanupStage() error {
	var dels [][]byte
	found := false
	err := s.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(keyStage); errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		found = true
		gen, head, err := readMeta(txn)
		if err != nil {
			return err
		}
		s.gen.Store(gen)
		s.head = head
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		o.Prefix = []byte(pfxActive)
		it := txn.NewIterator(o)
		defer it.Close()
		var group [][]byte // committed keys of the current id, oldest first
		curID := ""
		flush := func() {
			if len(group) > 1 {
				dels = append(dels, group[:len(group)-1]...)
			}
			group = group[:0]
		}
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			id, g, ok := parseActiveKey(item.Key())
			if !ok {
				continue
			}
			if id != curID {
				flush()
				curID = id
			}
			if g <= gen {
				group = append(group, item.KeyCopy(nil))
				continue
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if p, err := decodePointer(v); err == nil && p.NewDef {
				dels = append(dels, defKey(id, p.Version))
			}
			dels = append(dels, item.KeyCopy(nil))
		}
		flush()
		ao := badger.DefaultIteratorOptions
		ao.PrefetchValues = false
		ao.Prefix = []byte(pfxAudit)
		at := txn.NewIterator(ao)
		defer at.Close()
		for at.Seek(AuditKey(head.Seq + 1)); at.Valid(); at.Next() {
			dels = append(dels, at.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil || !found {
		if err == nil {
			s.dirty = false
		}
		return err
	}
	b := newBatcher(s.db)
	defer b.discard()
	for _, k := range dels {
		if err := b.del(k); err != nil {
			return err
		}
	}
	if err := b.del(keyStage); err != nil {
		return err
	}
	if err := b.finish(); err != nil {
		return err
	}
	if len(dels) > 0 {
		s.log.Debug("store: import staging cleaned up", "keys", len(dels))
	}
	s.dirty = false
	return nil
}

// SetStatus changes the status of id's active version (active, deprecated or offline),
// with its audit record, in one transaction. Setting the current status is a no-op. The
// stored definition is kept; the new status overrides its status field in Get, Active and
// List. Unknown id or a deleted one: ErrNotFound.
func (s *Store) SetStatus(ctx context.Context, id string, st registry.Status, actor string) error {
	switch st {
	case registry.StatusActive, registry.StatusDeprecated, registry.StatusOffline:
	default:
		return fmt.Errorf("%w: status %q", ErrInvalid, st)
	}
	return s.commitOne(ctx, func(txn *badger.Txn, gen uint64) (*change, error) {
		old, oldKey, found, err := latestPointer(txn, id, gen)
		if err != nil {
			return nil, err
		}
		if !found || old.Deleted {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		cur := old.Status
		if cur == "" {
			c, err := getDef(txn, id, old.Version)
			if err != nil {
				return nil, err
			}
			cur = c.Status
		}
		if cur == st {
			return nil, nil
		}
		p := pointer{Version: old.Version, Status: st}
		return &change{
			c: &registry.Capability{ID: id}, old: old, oldKey: oldKey, hadOld: true, ptr: p,
			rec: AuditRecord{Kind: KindRegistry, Actor: actor, Action: id, Version: old.Version,
				Decision: DecisionStatusChanged, Detail: fmt.Sprintf("%s → %s", statusName(cur), st)},
		}, nil
	})
}

func statusName(s registry.Status) string {
	if s == "" {
		return "(none)"
	}
	return string(s)
}

// Delete removes id from the active registry (a tombstone at its latest version, with its
// audit record, in one transaction). Its versions stay stored for the audit trail but Get,
// Active and List no longer return them; storing the id again needs its last version (which
// restores that definition) or a higher one. Unknown or already deleted id: ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string, actor string) error {
	return s.commitOne(ctx, func(txn *badger.Txn, gen uint64) (*change, error) {
		old, oldKey, found, err := latestPointer(txn, id, gen)
		if err != nil {
			return nil, err
		}
		if !found || old.Deleted {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return &change{
			c: &registry.Capability{ID: id}, old: old, oldKey: oldKey, hadOld: true,
			ptr: pointer{Version: old.Version, Deleted: true},
			rec: AuditRecord{Kind: KindRegistry, Actor: actor, Action: id, Version: old.Version,
				Decision: DecisionDeleted},
		}, nil
	})
}

// DeleteAll removes every id as Delete would, all or nothing, in one new generation with one
// audit record per id. An unknown, already deleted or repeated id is ErrNotFound and
// nothing is deleted.
func (s *Store) DeleteAll(ctx context.Context, ids []string, actor string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureClean(); err != nil {
		return err
	}
	gen := s.gen.Load() + 1
	changes := make([]change, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	err := s.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			old, oldKey, found, err := latestPointer(txn, id, gen-1)
			if err != nil {
				return err
			}
			if !found || old.Deleted || seen[id] {
				return fmt.Errorf("%w: %s", ErrNotFound, id)
			}
			seen[id] = true
			changes = append(changes, change{
				c: &registry.Capability{ID: id}, old: old, oldKey: oldKey, hadOld: true,
				ptr: pointer{Version: old.Version, Deleted: true},
				rec: AuditRecord{Kind: KindRegistry, Actor: actor, Action: id, Version: old.Version, Decision: DecisionDeleted},
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.putAllOneTxn(changes, gen, time.Now()); err != nil {
		s.reloadAfterError()
		return wrapDB("delete", err)
	}
	return nil
}

func getDef(txn *badger.Txn, id string, version int) (*registry.Capability, error) {
	v, err := getValue(txn, defKey(id, version))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %s@%d", ErrNotFound, id, version)
	}
	if err != nil {
		return nil, err
	}
	c, err := decodeDef(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s@%d: %v", ErrCorrupt, id, version, err)
	}
	return c, nil
}

// Get returns version of id, or its active version when version is 0. A version above the
// latest, a deleted id or an unknown one: ErrNotFound. The status set by SetStatus applies
// to the active version. The result is the caller's own copy.
func (s *Store) Get(id string, version int) (*registry.Capability, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if version < 0 {
		return nil, fmt.Errorf("%w: version %d", ErrInvalid, version)
	}
	var c *registry.Capability
	err := s.db.View(func(txn *badger.Txn) error {
		gen, err := readGen(txn)
		if err != nil {
			return err
		}
		p, _, found, err := latestPointer(txn, id, gen)
		if err != nil {
			return err
		}
		if !found || p.Deleted || version > p.Version {
			return fmt.Errorf("%w: %s", ErrNotFound, ref(id, version))
		}
		if version == 0 {
			version = p.Version
		}
		c, err = getDef(txn, id, version)
		if err != nil {
			return err
		}
		if version == p.Version && p.Status != "" {
			c.Status = p.Status
		}
		return nil
	})
	if err != nil {
		return nil, wrapDB("get", err)
	}
	return c, nil
}

func ref(id string, version int) string {
	if version == 0 {
		return id
	}
	return fmt.Sprintf("%s@%d", id, version)
}

// Active returns the active version of every capability (deleted ones left out), sorted by
// id, and the generation they belong to, read from one consistent snapshot. The results are
// the caller's own copies.
func (s *Store) Active() ([]*registry.Capability, uint64, error) {
	return s.scan("")
}

// List returns the active capabilities in the subtree of prefix: the id prefix itself and
// every id below it ("maintenance.codex" lists maintenance.codex and maintenance.codex.*,
// not maintenance.codex2). An empty prefix lists everything. Sorted by id.
func (s *Store) List(prefix string) ([]*registry.Capability, error) {
	caps, _, err := s.scan(strings.TrimSuffix(prefix, "."))
	return caps, err
}

// GetActive returns the active version of every id of ids, in the order of ids, read from
// one consistent snapshot, as Get(id, 0) would return each: a deleted or unknown id is
// ErrNotFound. Many ids are read in one sequential walk (as Active reads), a few one by one.
// The results are the caller's own copies.
func (s *Store) GetActive(ids []string) ([]*registry.Capability, error) {
	if len(ids) <= getActiveScan {
		if err := s.enter(); err != nil {
			return nil, err
		}
		defer s.leave()
		out := make([]*registry.Capability, len(ids))
		err := s.db.View(func(txn *badger.Txn) error {
			gen, err := readGen(txn)
			if err != nil {
				return err
			}
			for i, id := range ids {
				p, _, found, err := latestPointer(txn, id, gen)
				if err != nil {
					return err
				}
				if !found || p.Deleted {
					return fmt.Errorf("%w: %s", ErrNotFound, id)
				}
				if out[i], err = getDef(txn, id, p.Version); err != nil {
					return err
				}
				if p.Status != "" {
					out[i].Status = p.Status
				}
				registry.Intern(out[i])
			}
			return nil
		})
		if err != nil {
			return nil, wrapDB("get", err)
		}
		return out, nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	caps, _, err := s.scanWith("", func(id string) bool { return want[id] })
	if err != nil {
		return nil, err
	}
	got := make(map[string]*registry.Capability, len(caps))
	for _, c := range caps {
		got[c.ID] = c
	}
	out := make([]*registry.Capability, len(ids))
	for i, id := range ids {
		if out[i] = got[id]; out[i] == nil {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
	}
	return out, nil
}

// getActiveScan is the number of ids above which GetActive walks the whole registry once
// instead of looking each id up.
const getActiveScan = 64

func (s *Store) scan(prefix string) ([]*registry.Capability, uint64, error) {
	return s.scanWith(prefix, nil)
}

// scanWith is scan keeping only the ids for which keep (when not nil) is true.
func (s *Store) scanWith(prefix string, keep func(id string) bool) ([]*registry.Capability, uint64, error) {
	if err := s.enter(); err != nil {
		return nil, 0, err
	}
	defer s.leave()
	var raws [][]byte
	var ptrs []pointer
	var gen uint64
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		gen, err = readGen(txn)
		if err != nil {
			return err
		}
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		o.Prefix = []byte(pfxActive + prefix)
		it := txn.NewIterator(o)
		defer it.Close()
		// Pass 1: the latest committed pointer of every id. An item is valid only until
		// Next, so the pointer value is copied.
		var ids []string
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			id, g, ok := parseActiveKey(item.Key())
			if !ok || g > gen {
				continue
			}
			if prefix != "" && id != prefix && !strings.HasPrefix(id, prefix+".") {
				continue
			}
			if keep != nil && !keep(id) {
				continue
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			p, err := decodePointer(v)
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			if n := len(ids); n > 0 && ids[n-1] == id {
				ptrs[n-1] = p // a newer pointer of the same id
				continue
			}
			ids = append(ids, id)
			ptrs = append(ptrs, p)
		}
		// Pass 2: the definitions, merged from one sequential walk over def/ (def keys sort
		// like pointer keys), which decompresses each table block once; a Seek or Get per
		// id would decompress blocks again and again.
		do := badger.DefaultIteratorOptions
		do.PrefetchValues = false
		do.Prefix = []byte(pfxDef + prefix)
		dit := txn.NewIterator(do)
		defer dit.Close()
		keep := ptrs[:0]
		i := 0
		var want []byte
		next := func() {
			for ; i < len(ids) && ptrs[i].Deleted; i++ {
			}
			want = nil
			if i < len(ids) {
				want = defKey(ids[i], ptrs[i].Version)
			}
		}
		next()
		for dit.Rewind(); dit.Valid() && want != nil; dit.Next() {
			switch c := bytes.Compare(dit.Item().Key(), want); {
			case c < 0:
				continue // an older version, or an id outside the subtree
			case c > 0:
				return fmt.Errorf("%w: %s@%d: definition missing", ErrCorrupt, ids[i], ptrs[i].Version)
			}
			d, err := dit.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			raws = append(raws, d)
			keep = append(keep, ptrs[i])
			i++
			next()
		}
		if want != nil {
			return fmt.Errorf("%w: %s@%d: definition missing", ErrCorrupt, ids[i], ptrs[i].Version)
		}
		ptrs = keep
		return nil
	})
	if err != nil {
		return nil, 0, wrapDB("scan", err)
	}
	caps, err := decodeDefs(raws, ptrs)
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(caps, func(a, b *registry.Capability) int { return strings.Compare(a.ID, b.ID) })
	return caps, gen, nil
}

// decodeDefs decodes definitions on up to GOMAXPROCS goroutines and applies status overrides.
func decodeDefs(raws [][]byte, ptrs []pointer) ([]*registry.Capability, error) {
	out := make([]*registry.Capability, len(raws))
	errs := make([]error, len(raws))
	parallel(len(raws), func(i int) {
		c, err := decodeDef(raws[i])
		if err != nil {
			errs[i] = fmt.Errorf("%w: definition: %v", ErrCorrupt, err)
			return
		}
		if ptrs[i].Status != "" {
			c.Status = ptrs[i].Status
		}
		registry.Intern(c)
		out[i] = c
	})
	for _, err := range errs {
		if err != nil {
			return nil, err // the first: a damaged store may hold many
		}
	}
	return out, nil
}
