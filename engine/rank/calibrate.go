package rank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/capdex/capdex/registry"
)

// Thresholds decide a search's resolution (see Resolve). They are calibrated from labelled
// samples (Calibrate) and stored by the engine as JSON (Encode, DecodeThresholds); they
// depend on the fusion weights and rerank constants they were calibrated with.
type Thresholds struct {
	// Floor: a top score below it (without an exact hit) is no_confident_match.
	Floor float64 `json:"floor"`
	// Confident: the least top score for a confident answer.
	Confident float64 `json:"confident"`
	// Margin: the least lead of the top over the next usable candidate for a confident
	// answer.
	Margin float64 `json:"margin"`
	// MinCoverage: the least Coverage of the best usable candidate (outside a browse) for
	// any match; below it the answer is no_confident_match.
	MinCoverage float64 `json:"min_coverage"`
	// Samples and Accuracy describe the calibration that produced the thresholds (0 for
	// the defaults).
	Samples  int     `json:"samples,omitempty"`
	Accuracy float64 `json:"accuracy,omitempty"`
	// Model, when set, is the learned confidence Resolve decides with instead of Floor,
	// Confident, Margin and MinCoverage (see Model).
	Model *Model `json:"model,omitempty"`
}

// DefaultThresholds returns the thresholds a fresh engine uses with the default weights
// and rerank options. They are Calibrate's answer on testdata/eval/seed_cases.jsonl (the
// built-in registry's labelled cases), rounded: a top score under 0.019 (less than one
// retriever's best contribution plus a little agreement) or a best candidate covering under
// 0.21 of the query's idf weight is no match; a confident answer needs 0.019 and a lead of
// 0.0001 over the runner-up (scores closer than that are ties). `capdex calibrate` replaces
// them with thresholds fitted to a deployment's own cases.
//
// With the embedded model (DefaultModel) the thresholds are kept for a model-less
// calibration only: Resolve decides with the model.
func DefaultThresholds() Thresholds {
	t := DefaultThresholdsNoModel()
	t.Model = DefaultModel()
	return t
}

// DefaultThresholdsNoModel returns DefaultThresholds without the learned model: the
// thresholds alone decide.
func DefaultThresholdsNoModel() Thresholds {
	return Thresholds{Floor: 0.019, Confident: 0.019, Margin: 0.0001, MinCoverage: 0.21}
}

// Encode returns the thresholds as JSON.
func (t Thresholds) Encode() ([]byte, error) { return json.Marshal(t) }

// DecodeThresholds parses thresholds written by Encode; unknown fields and negative or
// non-finite values are ErrBadThresholds. Thresholds stored before min_coverage existed
// decode with MinCoverage 0 (no coverage floor).
func DecodeThresholds(b []byte) (Thresholds, error) {
	var t Thresholds
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Thresholds{}, fmt.Errorf("%w: %w", ErrBadThresholds, err)
	}
	for _, v := range []float64{t.Floor, t.Confident, t.Margin, t.MinCoverage, t.Accuracy} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Thresholds{}, fmt.Errorf("%w: value %v", ErrBadThresholds, v)
		}
	}
	if t.Samples < 0 || t.Accuracy > 1 || t.MinCoverage > 1 {
		return Thresholds{}, fmt.Errorf("%w: samples %d accuracy %v min_coverage %v", ErrBadThresholds, t.Samples, t.Accuracy, t.MinCoverage)
	}
	if t.Model != nil {
		if err := t.Model.Validate(); err != nil {
			return Thresholds{}, err
		}
	}
	return t, nil
}

// Sample is one labelled search for calibration: the values Resolve would compare and the
// resolution the case expects. Build it with SampleOf so it matches Resolve exactly.
type Sample struct {
	TopScore    float64 `json:"top_score"`
	SecondScore float64 `json:"second_score"`
	// Coverage is the best usable candidate's Coverage.
	Coverage float64             `json:"coverage"`
	ExactHit bool                `json:"exact_hit,omitempty"`
	Expected registry.Resolution `json:"expected"`
	// Browse: the coverage floor does not apply.
	Browse bool `json:"browse,omitempty"`
	// Fixed is the resolution Resolve gives the sample whatever Confident and Margin are:
	// no_confident_match when no candidate is usable or the ids written are hidden,
	// ambiguous for a browse, a pack at the top or a vague request (when the floors are
	// cleared). Empty for ordinary samples.
	Fixed registry.Resolution `json:"fixed,omitempty"`
	// Features are the ranking's confidence features (see Features); HasFeatures is false
	// when no candidate is usable.
	Features    [NumFeatures]float64 `json:"features"`
	HasFeatures bool                 `json:"has_features,omitempty"`
}

// SampleOf builds the calibration sample of a ranked candidate list as Resolve sees it.
func SampleOf(cands []Candidate, s Signals, expected registry.Resolution) Sample {
	sm := Sample{Expected: expected, Browse: s.Browse, Coverage: 1}
	sm.Features, sm.HasFeatures = Features(cands, s)
	if len(cands) == 0 {
		sm.Fixed = registry.NoConfidentMatch
		return sm
	}
	Complete(cands)
	top := &cands[0]
	sm.TopScore = top.Score
	if top.ExactHit() {
		if Usable(top.Availability) {
			sm.ExactHit = true
		} else {
			sm.Fixed = registry.NoConfidentMatch
		}
		return sm
	}
	if idsMissed(cands, s) {
		sm.Fixed = registry.NoConfidentMatch
		return sm
	}
	b, next := -1, -1
	for i := range cands {
		if !Usable(cands[i].Availability) {
			continue
		}
		if b < 0 {
			b = i
		} else if next < 0 {
			next = i
			break
		}
	}
	if b < 0 {
		sm.Fixed = registry.NoConfidentMatch
		return sm
	}
	sm.Coverage = cands[b].Coverage
	switch {
	case s.Browse:
		sm.Fixed = registry.Ambiguous
	case cands[b].Cap.ResourceType == registry.TypePack || s.Vague && s.Scope == "":
		sm.Fixed = registry.Ambiguous
	}
	if b > 0 {
		// Unusable candidates ahead of b: the floor still applies to the top score, the rest
		// to b; approximate with b's score (Resolve would need both).
		sm.TopScore = cands[b].Score
	}
	if next >= 0 {
		sm.SecondScore = cands[next].Score
	}
	return sm
}

// Predict returns the resolution thresholds t give a sample (Resolve's rule).
func (t Thresholds) Predict(s Sample) registry.Resolution {
	switch {
	case s.Fixed == registry.NoConfidentMatch:
		return registry.NoConfidentMatch
	case s.ExactHit:
		return registry.Confident
	case s.TopScore < t.Floor:
		return registry.NoConfidentMatch
	case !s.Browse && s.Coverage < t.MinCoverage:
		return registry.NoConfidentMatch
	case s.Fixed != "":
		return s.Fixed
	case s.TopScore >= t.Confident && s.TopScore-s.SecondScore >= t.Margin:
		return registry.Confident
	}
	return registry.Ambiguous
}

// Score is the share of samples whose expected resolution t predicts (0 for none).
func (t Thresholds) Score(samples []Sample) float64 {
	if len(samples) == 0 {
		return 0
	}
	n := 0
	for _, s := range samples {
		if t.Predict(s) == s.Expected {
			n++
		}
	}
	return float64(n) / float64(len(samples))
}

// maxGrid bounds the candidate values tried per threshold; coverage tries fewer.
const (
	maxGrid    = 64
	maxCovGrid = 24
)

// Calibrate picks the thresholds that maximise resolution accuracy on the samples: a grid
// search over Confident, Margin and MinCoverage (midpoints between the distinct values seen
// in the data, plus 0 and values above every sample; at most 64, 64 and 24 values, then a
// second grid of at most 64, 64 and 48 between the neighbours of the best values) with, for
// each triple, an exact sweep over Floor (midpoints between distinct top scores). Ties go
// to the thresholds closest to DefaultThresholds (relative distance), so sparse data moves
// them little. No samples give DefaultThresholds. The cost is O(64²·72·n) after an
// O(n log n) sort: about 0.1 s for 150 samples.
func Calibrate(samples []Sample) Thresholds {
	def := DefaultThresholdsNoModel()
	if len(samples) == 0 {
		return def
	}
	tops := make([]float64, 0, len(samples))
	gaps := make([]float64, 0, len(samples))
	covs := make([]float64, 0, len(samples))
	for _, s := range samples {
		tops = append(tops, s.TopScore)
		gaps = append(gaps, s.TopScore-s.SecondScore)
		covs = append(covs, s.Coverage)
	}
	// Samples sorted by top score for the floor sweep.
	order := slices.Clone(samples)
	slices.SortFunc(order, func(a, b Sample) int {
		switch {
		case a.TopScore < b.TopScore:
			return -1
		case a.TopScore > b.TopScore:
			return 1
		}
		return 0
	})
	cal := calibrator{order: order, def: def, bestAcc: -1, bestDist: math.Inf(1), best: def}
	// below[k]: correct predictions of order[:k] when all are below the floor.
	cal.below = make([]int, len(order)+1)
	for k, s := range order {
		p := registry.NoConfidentMatch
		if s.ExactHit && s.Fixed != registry.NoConfidentMatch {
			p = registry.Confident
		}
		cal.below[k+1] = cal.below[k]
		if p == s.Expected {
			cal.below[k+1]++
		}
	}
	cal.above = make([]int, len(order)+1)
	// Coarse grid, then a second grid between the neighbours of the best values.
	allConf, allMargin, allCov := candidates(tops), candidates(gaps), candidates(covs)
	cal.search(append(thin(allConf, maxGrid), def.Confident), append(thin(allMargin, maxGrid), def.Margin), append(thin(allCov, maxCovGrid), def.MinCoverage))
	cal.search(thin(around(allConf, cal.best.Confident, maxGrid), maxGrid), thin(around(allMargin, cal.best.Margin, maxGrid), maxGrid),
		thin(around(allCov, cal.best.MinCoverage, maxCovGrid), 2*maxCovGrid))
	best := cal.best
	best.Samples = len(samples)
	best.Accuracy = float64(cal.bestAcc) / float64(len(samples))
	return best
}

type calibrator struct {
	order        []Sample
	below, above []int
	hit          []bool
	def, best    Thresholds
	bestAcc      int
	bestDist     float64
}

func (c *calibrator) dist(t Thresholds) float64 {
	return rel(t.Floor, c.def.Floor) + rel(t.Confident, c.def.Confident) + rel(t.Margin, c.def.Margin) + rel(t.MinCoverage, c.def.MinCoverage)
}

// search tries every (confident, margin, coverage) triple with the best floor for each.
func (c *calibrator) search(confVals, marginVals, covVals []float64) {
	order, below, above := c.order, c.below, c.above
	if cap(c.hit) < len(order) {
		c.hit = make([]bool, len(order))
	}
	hit := c.hit[:len(order)]
	for _, cv := range confVals {
		for _, m := range marginVals {
			// hit[k]: the prediction without floors is right.
			t := Thresholds{Confident: cv, Margin: m, Floor: -1}
			for k := range order {
				hit[k] = t.Predict(order[k]) == order[k].Expected
			}
			for _, mc := range covVals {
				t.MinCoverage = mc
				// above[k]: correct predictions of order[k:] when all clear the floor.
				above[len(order)] = 0
				for k := len(order) - 1; k >= 0; k-- {
					s := &order[k]
					ok := hit[k]
					if !s.Browse && s.Coverage < mc && s.Fixed != registry.NoConfidentMatch && !s.ExactHit {
						ok = s.Expected == registry.NoConfidentMatch
					}
					above[k] = above[k+1]
					if ok {
						above[k]++
					}
				}
				for k := 0; k <= len(order); k++ {
					if k > 0 && k < len(order) && order[k-1].TopScore == order[k].TopScore {
						continue // a floor cannot separate equal scores
					}
					var f float64
					switch {
					case k == 0:
						f = order[0].TopScore / 2
					case k == len(order):
						f = order[k-1].TopScore + math.Max(math.Abs(order[k-1].TopScore)*0.01, 1e-6)
					default:
						f = (order[k-1].TopScore + order[k].TopScore) / 2
					}
					// Keep the default floor when it separates the same samples.
					if (k == 0 || order[k-1].TopScore < c.def.Floor) && (k == len(order) || c.def.Floor <= order[k].TopScore) {
						f = c.def.Floor
					}
					acc := below[k] + above[k]
					if acc < c.bestAcc {
						continue
					}
					t.Floor = f
					if d := c.dist(t); acc > c.bestAcc || d < c.bestDist {
						c.bestAcc, c.bestDist, c.best = acc, d, t
					}
				}
			}
		}
	}
}

// rel is the distance of v from d relative to d.
func rel(v, d float64) float64 {
	if d == 0 {
		return math.Abs(v)
	}
	return math.Abs(v-d) / d
}

// candidates returns the threshold values worth trying for the data: 0, the midpoints
// between distinct sorted values and a value above the largest.
func candidates(vals []float64) []float64 {
	v := slices.Clone(vals)
	slices.Sort(v)
	v = slices.Compact(v)
	out := make([]float64, 0, len(v)+1)
	out = append(out, 0)
	for i := 1; i < len(v); i++ {
		if m := (v[i-1] + v[i]) / 2; m > 0 {
			out = append(out, m)
		}
	}
	if len(v) > 0 {
		out = append(out, v[len(v)-1]+math.Max(math.Abs(v[len(v)-1])*0.01, 1e-6))
	}
	return out
}

// thin keeps at most n evenly spaced values of the sorted vals.
func thin(vals []float64, n int) []float64 {
	if len(vals) <= n {
		return vals
	}
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, vals[i*(len(vals)-1)/(n-1)])
	}
	return slices.Compact(out)
}

// around returns the values of the sorted vals between the neighbours of x in the grid
// thin(vals, n).
func around(vals []float64, x float64, n int) []float64 {
	g := thin(vals, n)
	i, _ := slices.BinarySearch(g, x)
	lo, hi := g[max(i-1, 0)], g[min(i+1, len(g)-1)]
	a, _ := slices.BinarySearch(vals, lo)
	b, _ := slices.BinarySearch(vals, hi)
	return vals[a:min(b+1, len(vals))]
}
