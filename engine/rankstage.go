package engine

import (
	"slices"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/registry"
)

// rankFacts is what the ranking stage reads of every candidate before scoring it, kept per
// generation in small dense tables instead of read from the capabilities: a search's
// candidates are spread over the whole catalogue and mostly out of cache after the
// retrievers ran, and a capability's fields lie on several cache lines. Only the candidates
// shown read their capability.
type rankFacts struct {
	// avail answers each candidate's availability for the caller.
	avail *policy.Table
	// packs has a bit per docID, set for the packs (state.packs holds their ranges).
	packs []uint64
}

// newRankFacts builds the facts of caps, whose positions are their docIDs.
func newRankFacts(caps []*registry.Capability) *rankFacts {
	f := &rankFacts{avail: policy.NewTable(caps), packs: make([]uint64, (len(caps)+63)/64)}
	for d, c := range caps {
		if c.ResourceType == registry.TypePack {
			f.packs[d/64] |= 1 << (d % 64)
		}
	}
	return f
}

// next returns the facts of caps, which hold the capabilities of old (f's) at the same
// docIDs but for some changed ones: the availability table and the pack bits of only those
// are computed again (policy.Table.With). Caps of another length give newRankFacts(caps).
func (f *rankFacts) next(old, caps []*registry.Capability) *rankFacts {
	if len(caps) != len(old) {
		return newRankFacts(caps)
	}
	n := &rankFacts{avail: f.avail.With(caps), packs: slices.Clone(f.packs)}
	for d, c := range caps {
		if c != old[d] {
			n.packs[d/64] &^= 1 << (d % 64)
			if c.ResourceType == registry.TypePack {
				n.packs[d/64] |= 1 << (d % 64)
			}
		}
	}
	return n
}

// pack reports whether docID d is a pack.
func (f *rankFacts) pack(d uint32) bool {
	return f.packs[d/64]&(1<<(d%64)) != 0
}
