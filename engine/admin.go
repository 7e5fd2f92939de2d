package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// AuditRecord is one record of the tamper-evident audit chain.
type AuditRecord = store.AuditRecord

// Definitions returns the active stored definitions whose id starts with prefix, in id order.
// It is an administrator's view: no gate applies.
func (e *Engine) Definitions(prefix string) ([]*registry.Capability, error) {
	return e.store.List(prefix)
}

// Definition returns one stored definition; version 0 means the active one.
func (e *Engine) Definition(id string, version int) (*registry.Capability, error) {
	return e.store.Get(id, version)
}

// Import lints caps together with the registry they join and stores them all or none, then
// swaps in the new generation. The schema digest of each definition is computed afresh
// (it is never typed); caps themselves are not modified. A definition changed without a version bump is refused.
func (e *Engine) Import(ctx context.Context, caps []*registry.Capability, actor string) error {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	return e.changeLocked(ctx, caps, nil, actor)
}

// changeLocked stores caps and deletes the ids of deleted as one change: it lints the
// registry they make together, stores it in one store transaction (one generation, one
// audit record per id; all or nothing) and swaps in the new generation. Caller holds adminMu.
func (e *Engine) changeLocked(ctx context.Context, caps []*registry.Capability, deleted []string, actor string) error {
	// Shallow copies without the typed digest: nothing below modifies a definition, the
	// lint checks no digest that is absent, and the store computes every digest it stores
	// (the generation is read back from the store).
	unsealed := make([]*registry.Capability, len(caps))
	for i, c := range caps {
		d := *c
		d.Provenance.SchemaDigest = ""
		unsealed[i] = &d
	}
	caps = unsealed
	all, affected, err := e.withChange(caps, deleted)
	if err != nil {
		return err
	}
	if errs := registry.LintAffected(all, affected); len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, errs)
	}
	if err := e.store.Apply(ctx, caps, deleted, actor); err != nil {
		return err
	}
	ids := make([]string, len(caps))
	for i, c := range caps {
		ids[i] = c.ID
	}
	return e.applyChange(ctx, ids, deleted)
}

// without returns all less the capabilities whose id is in deleted (all itself when
// deleted is empty).
func without(all []*registry.Capability, deleted []string) []*registry.Capability {
	if len(deleted) == 0 {
		return all
	}
	gone := make(map[string]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	return slices.DeleteFunc(all, func(c *registry.Capability) bool { return gone[c.ID] })
}

// storedOver returns snap's capabilities with caps stored over them (a changed id in its
// place, new ids after the rest, a repeated id its last definition, as store.PutAll refuses
// it) and the ids caps touch.
func storedOver(snap *registry.Snapshot, caps []*registry.Capability) ([]*registry.Capability, map[string]bool) {
	all := slices.Clone(snap.Caps)
	touched := make(map[string]bool, len(caps))
	added := map[string]int{} // position in all of a new id
	for _, c := range caps {
		touched[c.ID] = true
		if d, ok := snap.DocID(c.ID); ok {
			all[d] = c
		} else if i, ok := added[c.ID]; ok {
			all[i] = c
		} else {
			added[c.ID] = len(all)
			all = append(all, c)
		}
	}
	return all, touched
}

// withChange returns the registry caps and deleted would make (the active definitions with
// caps stored over them, less the deleted ids) and which of its capabilities a lint must check: all of them when the engine's
// generation is not the store's, else only caps and their children (registry.LintAffected:
// the full lint's errors when the registry they join lints clean, as every registry the
// engine stored does; a registry seeded through Options.Seed is not linted, and its own
// problems no longer block a change elsewhere in it). The children of a deleted id count
// as touched: they lose their parent.
func (e *Engine) withChange(caps []*registry.Capability, deleted []string) ([]*registry.Capability, func(*registry.Capability) bool, error) {
	if cur := e.state.Load(); cur != nil && cur.gen.Snapshot().Generation == e.store.Generation() {
		snap := cur.gen.Snapshot()
		all, touched := storedOver(snap, caps)
		for _, id := range deleted {
			touched[id] = true
		}
		return without(all, deleted), affectedSet(snap, caps, touched), nil
	}
	active, _, err := e.store.Active()
	if err != nil {
		return nil, nil, err
	}
	merged := make(map[string]*registry.Capability, len(active)+len(caps))
	for _, c := range active {
		merged[c.ID] = c
	}
	for _, c := range caps {
		merged[c.ID] = c
	}
	for _, id := range deleted {
		delete(merged, id)
	}
	all := make([]*registry.Capability, 0, len(merged))
	for _, c := range merged {
		all = append(all, c)
	}
	return all, func(*registry.Capability) bool { return true }, nil
}

// affectedSet returns the predicate a lint of a change to snap asks of every capability:
// whether it is one of caps or a child of one of their ids (touched). It holds them by
// pointer, so that the lint of a large registry does not hash every id: the other
// capabilities of the registry after the change are snap's own, and the children of an id
// are found in snap's id order (the ids that start with it are contiguous there).
func affectedSet(snap *registry.Snapshot, caps []*registry.Capability, touched map[string]bool) func(*registry.Capability) bool {
	set := slices.Clone(caps)
	for id := range touched {
		d, _ := slices.BinarySearchFunc(snap.Caps, id, func(c *registry.Capability, id string) int { return strings.Compare(c.ID, id) })
		for ; d < len(snap.Caps) && strings.HasPrefix(snap.Caps[d].ID, id); d++ {
			if c := snap.Caps[d]; !touched[c.ID] && registry.Parent(c.ID) == id {
				set = append(set, c)
			}
		}
	}
	if len(set) > 16 {
		m := make(map[*registry.Capability]bool, len(set))
		for _, c := range set {
			m[c] = true
		}
		return func(c *registry.Capability) bool { return m[c] }
	}
	return func(c *registry.Capability) bool { return slices.Contains(set, c) }
}

// Put stores one definition (a new capability or a new version) after linting it against
// the registry, and swaps in the new generation.
func (e *Engine) Put(ctx context.Context, c *registry.Capability, actor string) error {
	return e.Import(ctx, []*registry.Capability{c}, actor)
}

// Delete removes a capability (audited) and swaps in the new generation. A pack that still
// has children is refused.
func (e *Engine) Delete(ctx context.Context, id, actor string) error {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	sub, err := e.store.List(id) // id itself and everything under it
	if err != nil {
		return err
	}
	if kids := len(sub) - 1; kids > 0 {
		return fmt.Errorf("%w: %s still has %d capabilities under it", ErrInvalidRequest, id, kids)
	}
	if err := e.store.Delete(ctx, id, actor); err != nil {
		return err
	}
	return e.applyChange(ctx, nil, []string{id})
}

// DeleteTree removes a capability and everything under it (audited, one record each), all
// or nothing, and swaps in the new generation. It returns the ids deleted, deepest first.
func (e *Engine) DeleteTree(ctx context.Context, id, actor string) ([]string, error) {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	sub, err := e.store.List(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range sub {
		if c.ID == id || strings.HasPrefix(c.ID, id+".") {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: %s", registry.ErrNotFound, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(b, a) })
	if err := e.store.DeleteAll(ctx, ids, actor); err != nil {
		return nil, err
	}
	return ids, e.Reload(ctx)
}

// SetStatus changes a capability's status (audited) and swaps in the new generation.
func (e *Engine) SetStatus(ctx context.Context, id string, st registry.Status, actor string) error {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	if err := e.store.SetStatus(ctx, id, st, actor); err != nil {
		return err
	}
	return e.applyChange(ctx, []string{id}, nil)
}

// VerifyAudit checks the whole audit hash chain and returns how many records it holds. A
// broken chain is a *store.ChainError naming the first bad record.
func (e *Engine) VerifyAudit() (int, error) { return e.store.VerifyAudit() }

// AuditTail returns the last n audit records, oldest first.
func (e *Engine) AuditTail(n int) ([]AuditRecord, error) { return e.store.AuditTail(n) }

// SaveThresholds stores calibrated resolution thresholds and uses them from now on.
func (e *Engine) SaveThresholds(t rank.Thresholds) error {
	b, err := t.Encode()
	if err != nil {
		return err
	}
	if err := e.store.PutBlob(thresholdsBlob, b); err != nil {
		return err
	}
	e.thresh.Store(&t)
	return nil
}
