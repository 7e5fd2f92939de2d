package bench

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
)

// FusionPoint is one candidate of the fusion grid: its name and its weights.
type FusionPoint struct {
	Name    string
	Weights rank.Weights
}

// FusionGrid is the grid the fusion weights are chosen from: score-aware fusion with the
// lexical weight in {1.2, 1.6, 2.4, 3.2} and the semantic weight in {0.2, 0.3, 0.4, 0.5,
// 0.6}, the other weights at their defaults; and weighted RRF with the seed weights. (Two
// earlier grids, lexical 0.8-1.6 then 0.8-2.4, had their best on the lexical edge: the
// fused scores are weighed against the rerank's fixed bonuses, so the scale matters, not
// only the ratio; the seed-case constraint of TestFusionLOSO is what bounds it.) The grid
// is small on purpose: each point is scored on whole query sets, never on single queries.
func FusionGrid() []FusionPoint {
	var out []FusionPoint
	for _, lex := range []float64{1.2, 1.6, 2.4, 3.2} {
		for _, sem := range []float64{0.2, 0.3, 0.4, 0.5, 0.6} {
			w := rank.DefaultWeights()
			w.Lexical, w.Semantic = lex, sem
			out = append(out, FusionPoint{Name: "score lex=" + strconv.FormatFloat(lex, 'g', -1, 64) +
				" sem=" + strconv.FormatFloat(sem, 'g', -1, 64), Weights: w})
		}
	}
	return append(out, FusionPoint{Name: "rrf seed", Weights: rank.SeedWeights()})
}

// LOSORow is the leave-one-set-out result for one held-out set: the point chosen on the
// other sets (the best mean of their scores, ties to the earlier point), its score on the
// held-out set, the best score any point reaches there (in hindsight) and the score of the
// reference point.
type LOSORow struct {
	HeldOut   string
	Chosen    string
	Score     float64
	Best      string
	BestScore float64
	Reference float64
}

// LeaveOneSetOut chooses, for each set in turn, the point with the best mean score over the
// other sets and reports its score on the set left out. scores[set][point] is the metric
// (higher is better) of each point on each set; points are visited in the order given and
// reference names the point to compare with (the default). Every set must score every point.
func LeaveOneSetOut(scores map[string]map[string]float64, points []string, reference string) ([]LOSORow, error) {
	sets := make([]string, 0, len(scores))
	for s := range scores {
		sets = append(sets, s)
	}
	slices.Sort(sets)
	if len(sets) < 2 {
		return nil, fmt.Errorf("leave-one-set-out needs at least two sets, got %d", len(sets))
	}
	for _, s := range sets {
		for _, p := range append([]string{reference}, points...) {
			if _, ok := scores[s][p]; !ok {
				return nil, fmt.Errorf("set %s has no score for point %q", s, p)
			}
		}
	}
	var out []LOSORow
	for _, held := range sets {
		row := LOSORow{HeldOut: held, Reference: scores[held][reference]}
		bestMean := -1.0
		for _, p := range points {
			sum := 0.0
			for _, s := range sets {
				if s != held {
					sum += scores[s][p]
				}
			}
			if m := sum / float64(len(sets)-1); m > bestMean {
				bestMean, row.Chosen = m, p
			}
			if v := scores[held][p]; row.Best == "" || v > row.BestScore {
				row.Best, row.BestScore = p, v
			}
		}
		row.Score = scores[held][row.Chosen]
		out = append(out, row)
	}
	return out, nil
}

// LexicalPoint is one candidate of a lexical grid: its name and its parameters.
type LexicalPoint struct {
	Name   string
	Params index.LexicalParams
}

// LexicalBM25Grid is the first stage of the lexical procedure (TestLexicalLOSO): BM25F's K1
// in {1.2, 1.6} × the summary's length normalisation BSummary in {0.2, 0.5, 0.75} × that of
// the other free-text fields BOther in {0.3, 0.5, 0.75}; the name fields' BName stays 0.75
// (0 and 0.3 moved no set by more than 0.0005 nDCG@5) and the clause parameters stay at
// base's.
func LexicalBM25Grid(base index.LexicalParams) []LexicalPoint {
	var out []LexicalPoint
	for _, k1 := range []float64{1.2, 1.6} {
		for _, bs := range []float64{0.2, 0.5, 0.75} {
			for _, bo := range []float64{0.3, 0.5, 0.75} {
				p := base
				p.K1, p.BSummary, p.BOther = k1, bs, bo
				out = append(out, LexicalPoint{Name: "k1=" + ftoa(k1) + " bsum=" + ftoa(bs) + " bother=" + ftoa(bo), Params: p})
			}
		}
	}
	return out
}

// LexicalClauseGrid is the second stage: ClauseLift 0 (no lift), or ClauseLift in {0.4,
// 0.6, 0.8, 1} × ClauseMass in {0, 0.15, 0.3}, BM25F's parameters at base's.
func LexicalClauseGrid(base index.LexicalParams) []LexicalPoint {
	p := base
	p.ClauseLift, p.ClauseMass = 0, 0
	out := []LexicalPoint{{Name: "lift=0", Params: p}}
	for _, lift := range []float64{0.4, 0.6, 0.8, 1} {
		for _, mass := range []float64{0, 0.15, 0.3} {
			p := base
			p.ClauseLift, p.ClauseMass = lift, mass
			out = append(out, LexicalPoint{Name: "lift=" + ftoa(lift) + " mass=" + ftoa(mass), Params: p})
		}
	}
	return out
}

// LexicalVariantGrid is the third stage: no variants (VariantWeight 0, base's VariantSuffix
// kept, so that the point is the default when the default has none), or VariantWeight in
// {0.2, 0.3, 0.5} × VariantSuffix in {2, 3, 4}, the other parameters at base's.
func LexicalVariantGrid(base index.LexicalParams) []LexicalPoint {
	p := base
	p.VariantWeight = 0 // none (VariantSuffix then means nothing: base's is kept)
	out := []LexicalPoint{{Name: "variants=0", Params: p}}
	for _, w := range []float64{0.2, 0.3, 0.5} {
		for _, suf := range []int{2, 3, 4} {
			p := base
			p.VariantWeight, p.VariantSuffix = w, suf
			out = append(out, LexicalPoint{Name: "variants=" + ftoa(w) + " suffix=" + strconv.Itoa(suf), Params: p})
		}
	}
	return out
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
