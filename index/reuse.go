package index

import (
	"slices"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// analysis is the per-document work of Build that a later Build may reuse
// (Options.Reuse), by docID.
type analysis struct {
	lex    []lexDoc
	voc    *text.Vocab // the vocabulary of lex (lexDoc.vterms)
	terms  int         // the distinct terms of lex (see text.Vocab.Outgrown)
	sparse []embed.SparseVector
	emb    embed.Embedder // the embedder of sparse
}

// reuseOf returns, for every document of snap, the docID of the same capability in prev's
// analysis, or -1 where there is none; nil when prev keeps no analysis.
func reuseOf(prev *Generation, snap *registry.Snapshot) []int32 {
	if prev == nil || prev.an == nil {
		return nil
	}
	out := make([]int32, len(snap.Caps))
	old := prev.snap.Caps
	for d, c := range snap.Caps {
		out[d] = -1
		switch {
		case d < len(old) && old[d] == c: // the same capability at the same docID (ids are unique)
			out[d] = int32(d)
		case d < len(old) && len(old) == len(snap.Caps) && old[d].ID == c.ID: // changed, not moved
		default:
			if pd, ok := prev.snap.DocID(c.ID); ok && old[pd] == c {
				out[d] = int32(pd)
			}
		}
	}
	return out
}

// reused returns the docID of document d's analysis in the previous generation's
// (Options.Reuse), or -1.
func (g *Generation) reused(d int) int {
	if g.prevDoc == nil {
		return -1
	}
	return int(g.prevDoc[d])
}

// sharable reports whether every capability of g's snapshot that is not the one of the
// same docID in g.shared's is the same for same (the inputs of one index): that index of
// g.shared is then the one a build would make.
func (g *Generation) sharable(same func(a, b *registry.Capability) bool) bool {
	if g.shared == nil {
		return false
	}
	old := g.shared.snap.Caps
	for d, c := range g.snap.Caps {
		if o := old[d]; o != c && !same(o, c) {
			return false
		}
	}
	return true
}

// sameExact reports whether a and b give the exact index the same names (buildExact reads
// the id, aliases and external id; the ids of the others are the same docs).
func sameExact(a, b *registry.Capability) bool {
	return a.ID == b.ID && slices.Equal(a.Aliases, b.Aliases) && a.ExternalID == b.ExternalID
}

// sameMeta reports whether a and b give the metadata index the same values (buildMeta).
func sameMeta(a, b *registry.Capability) bool {
	return slices.Equal(a.Intents, b.Intents) && slices.Equal(a.Entities, b.Entities) &&
		slices.Equal(a.Symptoms, b.Symptoms) && a.Domain == b.Domain &&
		slices.Equal(a.Scenarios, b.Scenarios) && a.CapabilityType == b.CapabilityType &&
		slices.Equal(riskSignals(a), riskSignals(b)) && a.SideEffect == b.SideEffect
}

// sameTree: the tree reads the ids only.
func sameTree(a, b *registry.Capability) bool { return a.ID == b.ID }
