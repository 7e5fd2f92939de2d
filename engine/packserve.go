package engine

import (
	"slices"

	"github.com/capdex/capdex/engine/rank"
)

// packServes reports whether a descendant of the pack with this id that the caller may
// discover (the search's pre-filter) and use declares one of intents: the question of
// Resolve's pack rule (rank.Signals.Serves), asked of the whole subtree rather than of the
// candidates the retrievers returned, so that a serving child no retriever found is not
// taken for a hidden one. What the caller may not discover never counts, so the answer
// tells nothing of it.
func (sc *searchCtx) packServes(id string, intents []string) bool {
	gen := sc.st.gen
	d, ok := gen.Snapshot().DocID(id)
	if !ok {
		return false
	}
	r, ok := sc.st.packs[d]
	if !ok {
		return false
	}
	for k := r[0]; k < r[1]; k++ {
		if !sc.allow.Contains(k) || !rank.Usable(sc.bufs.avail.Availability(k)) {
			continue
		}
		if slices.ContainsFunc(gen.Doc(k).Intents, func(v string) bool { return slices.Contains(intents, v) }) {
			return true
		}
	}
	return false
}
