package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// RefreshSummary says what ImportRefresh did, by id.
type RefreshSummary struct {
	Created   []string `json:"created"`
	Updated   []string `json:"updated"`
	Unchanged []string `json:"unchanged"`
	Removed   []string `json:"removed"`
}

// ImportRefresh imports a foreign catalogue again: a definition equal to the stored one
// (version aside) is left alone, a changed one is stored as the next version (audited), a
// new one is created. With prune, the capabilities imported before from the same source
// (provenance.source) that caps no longer holds are deleted; a pack that still holds
// something else is kept. The new versions and the deletions are one change, all or
// nothing: one lint of the registry they make, one store transaction, one generation. An id that a definition not imported from source
// holds is not overwritten: a pack of that id is joined as it is, any other capability
// refuses the whole import (ErrInvalidRequest, naming them). Each cap's version is set
// here; caps themselves are not modified.
func (e *Engine) ImportRefresh(ctx context.Context, caps []*registry.Capability, source string, prune bool, actor string) (RefreshSummary, error) {
	var sum RefreshSummary
	e.adminMu.Lock()
	active, _, err := e.store.Active()
	if err != nil {
		e.adminMu.Unlock()
		return sum, err
	}
	stored := make(map[string]*registry.Capability, len(active))
	for _, c := range active {
		stored[c.ID] = c
	}
	in := make(map[string]bool, len(caps))
	var put []*registry.Capability
	var taken []string
	for _, c := range caps {
		in[c.ID] = true
		x := c.Clone()
		old := stored[c.ID]
		switch {
		case old != nil && !(old.Provenance.Imported && old.Provenance.Source == source):
			// the id belongs to a definition of its own (a registry file, another
			// catalogue): a pack is joined as it is, an action is never overwritten
			if c.ResourceType == registry.TypePack && old.ResourceType == registry.TypePack {
				sum.Unchanged = append(sum.Unchanged, c.ID)
				continue
			}
			owner := "a registry definition"
			if old.Provenance.Imported {
				owner = fmt.Sprintf("the import of source %q", old.Provenance.Source)
			}
			taken = append(taken, fmt.Sprintf("%s (%s v%d, from %s)", c.ID, old.ResourceType, old.Version, owner))
			continue
		case old == nil:
			x.Version = max(x.Version, 1)
			sum.Created = append(sum.Created, c.ID)
		default:
			x.Version = old.Version
			if registry.Equal(old, x) {
				sum.Unchanged = append(sum.Unchanged, c.ID)
				continue
			}
			x.Version = old.Version + 1
			sum.Updated = append(sum.Updated, c.ID)
		}
		put = append(put, x)
	}
	if len(taken) > 0 {
		e.adminMu.Unlock()
		return sum, fmt.Errorf("%w: source %q would overwrite %d capabilities it does not own: %s; import under another --pack, or delete them first",
			ErrInvalidRequest, source, len(taken), strings.Join(taken, ", "))
	}
	var gone []string
	if prune {
		for _, c := range active {
			if !in[c.ID] && c.Provenance.Imported && c.Provenance.Source == source {
				gone = append(gone, c.ID)
			}
		}
		// keep a pack that still holds something not pruned
		removed := make(map[string]bool, len(gone))
		for _, id := range gone {
			removed[id] = true
		}
		kept := gone[:0]
		for _, id := range gone {
			if c := stored[id]; c.ResourceType == registry.TypePack && slices.ContainsFunc(active, func(o *registry.Capability) bool {
				return strings.HasPrefix(o.ID, id+".") && !removed[o.ID]
			}) {
				continue
			}
			kept = append(kept, id)
		}
		gone = kept
	}
	sum.Removed = gone
	// The new versions and the pruned ones are one change: one lint of the registry they
	// make, one store transaction, one generation; a refusal of either half stores nothing.
	if len(put) > 0 || len(gone) > 0 {
		if err := e.changeLocked(ctx, put, gone, actor); err != nil {
			e.adminMu.Unlock()
			if len(gone) > 0 {
				return sum, fmt.Errorf("engine: import of %s (storing %d, pruning %d): %w", source, len(put), len(gone), err)
			}
			return sum, err
		}
	}
	e.adminMu.Unlock()
	for _, l := range []*[]string{&sum.Created, &sum.Updated, &sum.Unchanged, &sum.Removed} {
		if *l == nil {
			*l = []string{}
		}
	}
	return sum, nil
}
