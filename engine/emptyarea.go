package engine

import (
	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
)

// emptyAreaFirst reports whether the lexical retriever's first hit is a pack the caller may
// discover (the final gate lets it through) in which nothing is visible to the caller
// (emptyPack: the ranking leaves such a pack out): rank.Signals.EmptyAreaFirst. The pack is
// discoverable, so telling it apart says nothing of what is hidden inside it.
func (sc *searchCtx) emptyAreaFirst(g *actors.Gathered) bool {
	for i := range g.Evidence {
		ev := &g.Evidence[i]
		if ev.Kind != index.Lexical || ev.Outcome != actors.OK || len(ev.Hits) == 0 {
			continue
		}
		d := ev.Hits[0].Doc
		return sc.allow.Contains(d) && sc.st.facts.pack(d) && sc.emptyPack(d)
	}
	return false
}
