package bench

import (
	"math"
	"slices"
	"time"
)

// Ranking is what one search returned, as ids in the label space, best first.
type Ranking []string

// RecallAt returns |relevant ∩ top k| / |relevant|.
func RecallAt(r Ranking, relevant []string, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	hit := 0
	for i := 0; i < k && i < len(r); i++ {
		if slices.Contains(relevant, r[i]) && firstIndex(r, r[i]) == i {
			hit++
		}
	}
	return float64(hit) / float64(len(relevant))
}

// ReciprocalRank returns 1/rank of the first relevant result within the top k, else 0.
func ReciprocalRank(r Ranking, relevant []string, k int) float64 {
	for i := 0; i < k && i < len(r); i++ {
		if slices.Contains(relevant, r[i]) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAt returns the binary nDCG of the top k, the ideal taken from min(|relevant|, k).
func NDCGAt(r Ranking, relevant []string, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	dcg := 0.0
	for i := 0; i < k && i < len(r); i++ {
		if slices.Contains(relevant, r[i]) && firstIndex(r, r[i]) == i {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	ideal := 0.0
	for i := 0; i < min(len(relevant), k); i++ {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

func firstIndex(r Ranking, id string) int { return slices.Index(r, id) }

// mean accumulates a mean that is null when nothing was added.
type mean struct {
	sum float64
	n   int
}

func (m *mean) add(v float64) { m.sum += v; m.n++ }

func (m *mean) addBool(b bool) {
	if b {
		m.add(1)
	} else {
		m.add(0)
	}
}

// value is the mean, or nil when no value was added.
func (m *mean) value() *float64 {
	if m.n == 0 {
		return nil
	}
	v := round(m.sum / float64(m.n))
	return &v
}

func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// percentile returns the p-th percentile (0..1) of durations in microseconds.
func percentile(ds []time.Duration, p float64) int64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)].Microseconds()
}
