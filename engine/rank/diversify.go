package rank

import (
	"github.com/capdex/capdex/registry"
)

// DiversifyOptions tune Diversify. The zero value disables the per-pack and per-intent
// limits and the pack replacement; use DefaultDiversifyOptions.
type DiversifyOptions struct {
	// MaxPerPack caps candidates sharing one parent pack (root-level ids are exempt) in an
	// Ambiguous answer. Default 3; 0 means no cap.
	MaxPerPack int
	// MaxPerIntent caps candidates sharing one primary (first) intent in an Ambiguous
	// answer. Default 2; 0 means no cap.
	MaxPerIntent int
	// Ambiguous says the query is ambiguous (Resolve answered registry.Ambiguous): the list
	// then spreads over packs and intents (the caps above), folds close leaves into their
	// pack and keeps at least one read-only action when any candidate is one. A confident
	// (or no-match) answer is ranked by relevance alone: its top is the match, and its
	// runners-up are the closest alternatives, often siblings in one pack.
	Ambiguous bool
	// CloseGap is the score distance within which leaves of one pack count as close.
	// Default 0.004 (a fraction of one retriever's rank-1 contribution). 0 disables the
	// pack replacement.
	CloseGap float64
	// MinCloseLeaves is how many close leaves of one pack, with the pack itself a
	// candidate, make Diversify show the pack in place of all but the best of them, in an
	// ambiguous answer. Default 3.
	MinCloseLeaves int
	// NoBreakdown makes Diversify skip the CompPack component it records when it lifts a
	// pack (the score is the same). The zero value records it.
	NoBreakdown bool
	// ExplicitWrite says the user explicitly asked for a write: with limit 1 the top
	// candidate is kept even when high risk (the high-risk rule would otherwise replace the
	// very action asked for).
	ExplicitWrite bool
	// TieGap: outside an Ambiguous answer the per-pack and per-intent caps still apply,
	// but only to break near ties: a candidate over a cap gives way to the next one the
	// caps allow when that one's score is within TieGap of its own, and keeps its place
	// otherwise (relevance first). Default 0.001 (a twentieth of lexical's rank-1 contribution); 0 leaves such answers
	// uncapped.
	TieGap float64
	// Strict keeps the per-pack and per-intent caps even when the list would otherwise be
	// shorter than the limit. Default false: skipped candidates fill empty places, in rank
	// order, after every candidate that respects the caps.
	Strict bool
}

// DefaultDiversifyOptions returns the defaults of docs/ARCHITECTURE.md "Search".
func DefaultDiversifyOptions() DiversifyOptions {
	return DiversifyOptions{MaxPerPack: 3, MaxPerIntent: 2, CloseGap: 0.004, MinCloseLeaves: 3, TieGap: 0.001}
}

// CompPack is the breakdown component that lifts a pack shown in place of its close leaves
// to the score of the best of them.
const CompPack = "pack_for_leaves"

type counter struct {
	key string
	n   int
}

func bump(cs []counter, key string) ([]counter, int) {
	for i := range cs {
		if cs[i].key == key {
			cs[i].n++
			return cs, cs[i].n
		}
	}
	return append(cs, counter{key, 1}), 1
}

func count(cs []counter, key string) int {
	for i := range cs {
		if cs[i].key == key {
			return cs[i].n
		}
	}
	return 0
}

// Diversify chooses at most limit candidates from the ranked cands (Rerank's order) and
// moves them, in their display order, to the front of cands; it returns that prefix. Rules:
//
//   - in an Ambiguous answer, close leaves are folded into their pack: when at least
//     MinCloseLeaves non-pack children of one pack lie within CloseGap of the best of them
//     and the pack itself is a candidate, the best leaf stays and the pack takes the place
//     of the others, right after it (its Score lifted to the next leaf's, recorded as
//     CompPack), unless the pack already ranks above them; a confident answer is never
//     folded (its top is the match);
//   - in an Ambiguous answer, at most MaxPerPack candidates per parent pack and
//     MaxPerIntent per primary intent (relaxed to fill the list unless Strict); in any
//     other answer the same caps, but a candidate over one gives way only to a candidate
//     the caps allow within TieGap of its score (near ties spread, relevance otherwise);
//   - high-risk candidates (HighRisk) never fill the list: at most limit-1 of them, and at
//     least one other when any candidate is not high risk (with limit 1 and ExplicitWrite
//     the top candidate stays);
//   - an Ambiguous query keeps at least one read-only action when any candidate is one, in
//     place of the lowest chosen candidate that is not.
//
// The order of the candidates not returned is unspecified.
func Diversify(cands []Candidate, limit int, opts DiversifyOptions) []Candidate {
	n := len(cands)
	limit = min(limit, n)
	if limit <= 0 {
		return cands[:0]
	}
	if opts.Ambiguous {
		// folding, the caps and the read-only rule read the whole list
		settle(cands, n)
	}
	var buf [128]int
	var order []int // visiting order: indices into cands
	if n <= len(buf) {
		order = buf[:0:n]
	} else {
		order = make([]int, 0, n)
	}
	// Pack replacement: absorbed leaves are marked by dropping them from order; the pack is
	// visited where its best leaf was.
	var skipBuf [64]bool
	var skip []bool
	if n <= len(skipBuf) {
		skip = skipBuf[:n]
	} else {
		skip = make([]bool, n)
	}
	var placeBuf [64]int32 // placeAt[i] = index of a pack shown right after leaf i, +1
	var placeAt []int32
	if n <= len(placeBuf) {
		placeAt = placeBuf[:n]
	} else {
		placeAt = make([]int32, n)
	}
	if opts.Ambiguous && opts.CloseGap > 0 && opts.MinCloseLeaves > 0 {
		for p := range cands {
			pc := cands[p].Cap
			if pc.ResourceType != registry.TypePack || skip[p] {
				continue
			}
			first, close := -1, 0
			for i := range cands {
				c := cands[i].Cap
				if i == p || skip[i] || c.ResourceType == registry.TypePack || registry.Parent(c.ID) != pc.ID {
					continue
				}
				if first < 0 {
					first = i
				}
				if cands[first].Score-cands[i].Score <= opts.CloseGap {
					close++
				}
			}
			if close < opts.MinCloseLeaves || placeAt[first] != 0 {
				continue
			}
			ahead := p < first // the pack already ranks above its leaves: it keeps its place
			next := -1         // the best folded leaf
			for i := range cands {
				c := cands[i].Cap
				if i != p && i != first && c.ResourceType != registry.TypePack && registry.Parent(c.ID) == pc.ID &&
					cands[first].Score-cands[i].Score <= opts.CloseGap {
					skip[i] = true
					if next < 0 {
						next = i
					}
				}
			}
			if ahead || next < 0 {
				continue
			}
			skip[p] = true // visited right after the best leaf instead of at its own place
			placeAt[first] = int32(p) + 1
			if lift := cands[next].Score - cands[p].Score; lift > 0 {
				if !opts.NoBreakdown {
					cands[p].Breakdown = append(cands[p].Breakdown, registry.ScoreComponent{Name: CompPack, Value: lift})
				}
				cands[p].Score = cands[next].Score
			}
		}
	}
	for i := range cands {
		if !skip[i] {
			order = append(order, i)
		}
		if placeAt[i] != 0 {
			order = append(order, int(placeAt[i]-1))
		}
	}
	hasSafe := false // any candidate not high risk (mostly the first: look no further)
	for i := range cands {
		if !HighRisk(cands[i].Cap) {
			hasSafe = true
			break
		}
	}

	var selBuf, defBuf [32]int
	sel, deferred := selBuf[:0], defBuf[:0]
	var packBuf, intentBuf [16]counter
	packs, intents := packBuf[:0], intentBuf[:0]
	maxHigh := limit
	if hasSafe && !(opts.ExplicitWrite && limit == 1) {
		maxHigh = limit - 1
	}
	high := 0
	take := func(pos int) {
		c := cands[order[pos]].Cap
		sel = append(sel, pos)
		if HighRisk(c) {
			high++
		}
		if pk := registry.Parent(c.ID); pk != "" {
			packs, _ = bump(packs, pk)
		}
		if len(c.Intents) > 0 {
			intents, _ = bump(intents, c.Intents[0])
		}
	}
	capped := func(c *registry.Capability) bool {
		pk := registry.Parent(c.ID)
		return opts.MaxPerPack > 0 && pk != "" && count(packs, pk) >= opts.MaxPerPack ||
			opts.MaxPerIntent > 0 && len(c.Intents) > 0 && count(intents, c.Intents[0]) >= opts.MaxPerIntent
	}
	// tieBehind reports whether a candidate the caps allow follows the one at pos within
	// TieGap of its score: outside an ambiguous answer the caps only break near ties.
	tieBehind := func(pos int) bool {
		if opts.TieGap <= 0 {
			return false
		}
		at := cands[order[pos]].Score
		for q := pos + 1; q < len(order); q++ {
			settle(cands, q+1)
			o := &cands[order[q]]
			if at-o.Score > opts.TieGap {
				return false
			}
			if !capped(o.Cap) && !(HighRisk(o.Cap) && high >= maxHigh) {
				return true
			}
		}
		return false
	}
	var tiedBuf [8]int
	tied := tiedBuf[:0] // outside an ambiguous answer: positions that gave way to a near tie
	for pos := range order {
		if len(sel) == limit {
			break
		}
		settle(cands, pos+1) // unless Ambiguous, order[pos] = pos (a pending ranking is read no further)
		// a candidate that gave way to a near tie comes back before anything further down
		for len(tied) > 0 && len(sel) < limit && cands[order[tied[0]]].Score-cands[order[pos]].Score > opts.TieGap {
			take(tied[0])
			tied = tied[1:]
		}
		if len(sel) == limit {
			break
		}
		c := cands[order[pos]].Cap
		if HighRisk(c) && high >= maxHigh {
			continue
		}
		if capped(c) && opts.Ambiguous {
			deferred = append(deferred, pos)
			continue
		}
		if capped(c) && tieBehind(pos) {
			tied = append(tied, pos)
			continue
		}
		take(pos)
	}
	deferred = append(tied, deferred...)
	if !opts.Strict {
		for _, pos := range deferred {
			if len(sel) == limit {
				break
			}
			if HighRisk(cands[order[pos]].Cap) && high >= maxHigh {
				continue
			}
			take(pos)
		}
	}
	sortInts(sel)
	if opts.Ambiguous {
		keepReadOnly(cands, order, sel)
		sortInts(sel)
	}
	// Move the chosen candidates to the front, in order. Each rotation moves one chosen
	// candidate from its current position to out; pos(j) = j + #(chosen before with j < them).
	var idxBuf [32]int
	idx := idxBuf[:0]
	for _, pos := range sel {
		idx = append(idx, order[pos])
	}
	for out, j := range idx {
		cur := j
		for q := 0; q < out; q++ {
			if idx[q] > j {
				cur++
			}
		}
		if cur != out {
			moved := cands[cur]
			copy(cands[out+1:cur+1], cands[out:cur])
			cands[out] = moved
		}
	}
	return cands[:len(idx)]
}

// keepReadOnly replaces the lowest chosen candidate that is not a read-only action by the
// best read-only action, unless a read-only action is already chosen or none exists.
func keepReadOnly(cands []Candidate, order, sel []int) {
	for _, pos := range sel {
		if readOnlyAction(cands[order[pos]].Cap) {
			return
		}
	}
	best := -1
	for pos := range order {
		if readOnlyAction(cands[order[pos]].Cap) {
			best = pos
			break
		}
	}
	if best < 0 || len(sel) == 0 {
		return
	}
	sel[len(sel)-1] = best
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
