package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/feedback"
	"github.com/capdex/capdex/engine/rank"
)

// feedbackWeights are the history weights the -feedback-tune sweep tries: the lexical
// retriever's 1.2 (the default before fb17) and 2.0 (the default, rank.DefaultWeights).
var feedbackWeights = []float64{1.2, 2.0}

var feedbackTune = flag.Bool("feedback-tune", false, "TestFeedbackWarmCold: also sweep the history weight and the least similarity, and choose them leave-one-set-out")

var consensusTune = flag.Bool("consensus-tune", false, "TestFeedbackWarmCold: also sweep the consensus vote (nearest searches, least similarity, least share), and choose it leave-one-set-out")

func TestHalfStable(t *testing.T) {
	// FNV-1a 64 of "single-3" is fixed: the split must not change between releases.
	if Half("single-3") != int(fnvLow("single-3")) {
		t.Fatal("Half is not the low bit of FNV-1a")
	}
	n := [2]int{}
	for i := range 1000 {
		n[Half(fmt.Sprintf("q%d", i))]++
	}
	if n[0] < 400 || n[1] < 400 {
		t.Fatalf("halves of 1000 ids: %v", n)
	}
}

// fnvLow is FNV-1a 64 written out, the reference of Half.
func fnvLow(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h & 1
}

func TestClassOf(t *testing.T) {
	class := classOf([]LabelledQuery{{QID: "a", Relevant: []string{"x", "y"}}})
	for _, tt := range []struct {
		rel  []string
		want string
	}{{[]string{"x"}, Warm}, {[]string{"x", "y"}, Warm}, {[]string{"z"}, Cold}, {[]string{"x", "z"}, Mixed}} {
		if got := class(LabelledQuery{Relevant: tt.rel}); got != tt.want {
			t.Errorf("class of %v = %s, want %s", tt.rel, got, tt.want)
		}
	}
}

// feedbackRun is one set's half scored with and without replaying the other half.
type feedbackRun struct {
	set             string
	half            int
	warmBase, warm  float64 // recall@5 of the warm queries without and with feedback
	coldBase, cold  float64
	nWarm, nCold    int
	replayed        int
	overallBase, ov float64
}

func (r feedbackRun) closed() float64 {
	if r.nWarm == 0 || r.warmBase >= 1 {
		return 1
	}
	return (r.warm - r.warmBase) / (1 - r.warmBase)
}

func (r feedbackRun) drop() float64 { return r.coldBase - r.cold }

func recall5(r *Report) float64 {
	if r == nil || r.Recall5 == nil {
		return math.NaN()
	}
	return *r.Recall5
}

func runFeedback(t *testing.T, set string, half int, eo *engine.Options, base *Report) (*Report, *Report) {
	t.Helper()
	dir, ok := EvalDir()
	if !ok {
		t.Skipf("evaluation sets not found at %s (set CAPDEX_EVAL_DIR to the shared/eval folder)", dir)
	}
	tools, queries := filepath.Join(dir, set, "tools.jsonl"), filepath.Join(dir, set, "queries.jsonl")
	fb, err := ReadQueries(queries)
	if err != nil {
		t.Fatal(err)
	}
	h := half
	if base == nil {
		base, err = EvalToolsWith(context.Background(), tools, queries, eoOf(eo), Options{Feedback: fb, Split: &h, NoReplay: true})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := EvalToolsWith(context.Background(), tools, queries, eoOf(eo), Options{Feedback: fb, Split: &h})
	if err != nil {
		t.Fatal(err)
	}
	return base, got
}

func summarise(set string, half int, base, got *Report) feedbackRun {
	r := feedbackRun{set: set, half: half, replayed: got.Feedback.Replayed,
		warmBase: recall5(base.Feedback.Warm), warm: recall5(got.Feedback.Warm),
		coldBase: recall5(base.Feedback.Cold), cold: recall5(got.Feedback.Cold),
		overallBase: recall5(base), ov: recall5(got)}
	if got.Feedback.Warm != nil {
		r.nWarm = got.Feedback.Warm.Cases
	}
	if got.Feedback.Cold != nil {
		r.nCold = got.Feedback.Cold.Cases
	}
	return r
}

// TestFeedbackWarmCold measures issue 17's feedback target on every public set, both halves:
// the scored half's warm queries (every labelled capability led to by a replayed session)
// should close at least half of the gap of recall@5 to 1 (logged; asserted on the sets of
// warmTargetMet, and elsewhere: they gain), and its cold queries (none was) lose at most
// 0.005 of recall@5 (asserted on every set and half). It runs only with -feedback-tune or
// without -short, since it replays thousands of sessions; with -feedback-tune it also sweeps
// the history weight and the least similarities (to lead a vote, to support one) and
// chooses them leave-one-set-out (printed, not asserted).
// warmTargetMet are the sets where issue 17's warm target is met, so that a change that
// loses it fails.
var warmTargetMet = map[string]bool{"metatool": true}

func TestFeedbackWarmCold(t *testing.T) {
	if testing.Short() && !*feedbackTune && !*consensusTune {
		t.Skip("-short: replays thousands of sessions")
	}
	if _, ok := EvalDir(); !ok {
		t.Skip("evaluation sets not found (set CAPDEX_EVAL_DIR to the shared/eval folder)")
	}
	bases := map[string]*Report{}
	key := func(set string, half int) string { return fmt.Sprint(set, half) }
	for _, set := range EvalSets {
		for half := range 2 {
			base, got := runFeedback(t, set, half, nil, nil)
			bases[key(set, half)] = base
			r := summarise(set, half, base, got)
			t.Logf("%s half %d: warm %d %.3f → %.3f (closes %.2f of the gap), cold %d %.3f → %.3f, all %.3f → %.3f",
				set, half, r.nWarm, r.warmBase, r.warm, r.closed(), r.nCold, r.coldBase, r.cold, r.overallBase, r.ov)
			// issue 17's warm target (close half the gap) is met on metatool only
			// (bench/report/fb17.md): asserted there; elsewhere, feedback lifts every warm
			// class of 50 queries or more
			if warmTargetMet[set] && r.closed() < 0.5 {
				t.Errorf("%s half %d: warm recall@5 %.3f → %.3f closes %.2f of the gap, want ≥ 0.5", set, half, r.warmBase, r.warm, r.closed())
			}
			if r.nWarm >= 50 && r.warm <= r.warmBase {
				t.Errorf("%s half %d: warm recall@5 %.3f → %.3f: feedback does not help", set, half, r.warmBase, r.warm)
			}
			if r.nCold > 0 && r.drop() > 0.005 {
				t.Errorf("%s half %d: cold recall@5 %.3f → %.3f drops %.4f, want ≤ 0.005", set, half, r.coldBase, r.cold, r.drop())
			}
		}
	}
	if *consensusTune {
		tuneConsensus(t, bases)
	}
	if !*feedbackTune {
		return
	}
	type config struct{ weight, minSim, support float64 }
	var configs []config
	// weights up to 2 (one user's vote, capped at UserCap 0.5, then gives at most 1, below
	// the lexical retriever's 1.2: history stays a weak signal), least similarities to lead
	// a vote, least similarities to support one (at most the former)
	for _, w := range feedbackWeights {
		for _, s := range []float64{0.15, 0.2, 0.25, 0.3, 0.35, 0.4} {
			for _, sup := range []float64{0.1, 0.15, 0.2, 0.3} {
				if sup <= s {
					configs = append(configs, config{w, s, sup})
				}
			}
		}
	}
	results := map[config][]feedbackRun{}
	for _, c := range configs {
		w := rank.DefaultWeights()
		w.History = c.weight
		eo := &engine.Options{Weights: &w, Feedback: &feedback.Options{MinSimilarity: c.minSim, MinSupport: c.support}}
		for _, set := range EvalSets {
			for half := range 2 {
				_, got := runFeedback(t, set, half, eo, bases[key(set, half)])
				r := summarise(set, half, bases[key(set, half)], got)
				results[c] = append(results[c], r)
				t.Logf("w %.2f sim %.2f support %.2f %s/%d: closes %.3f, cold drop %.4f", c.weight, c.minSim, c.support, set, half, r.closed(), r.drop())
			}
		}
	}
	var table strings.Builder
	for _, out := range EvalSets {
		keep := func(s string) bool { return s != out }
		best, bestClosed, bestDrop := configs[0], math.Inf(-1), math.Inf(1)
		for _, c := range configs {
			cl, dr := feedbackScore(results[c], keep)
			feasible, bestFeasible := dr <= 0.005, bestDrop <= 0.005
			if feasible && (!bestFeasible || cl > bestClosed) || !feasible && !bestFeasible && dr < bestDrop {
				best, bestClosed, bestDrop = c, cl, dr
			}
		}
		heldClosed, heldDrop := feedbackScore(results[best], func(s string) bool { return s == out })
		fmt.Fprintf(&table, "| %s | %.2f | %.2f | %.2f | %.3f | %.4f | %.3f | %.4f |\n", out, best.weight, best.minSim, best.support, bestClosed, bestDrop, heldClosed, heldDrop)
	}
	t.Logf("leave-one-set-out (held-out set | weight | least similarity | least support | tuning sets: mean gap closed, worst cold drop | held out: mean gap closed, worst cold drop):\n%s", table.String())
}

// eoOf is the engine options a test passes, or the defaults for nil.
// eoOf is eo (or the defaults) with quality deadlines: the warm/cold figures must not
// depend on how loaded the test machine is.
func eoOf(eo *engine.Options) engine.Options {
	var o engine.Options
	if eo != nil {
		o = *eo
	}
	if o.Deadlines == nil {
		o.Deadlines = QualityDeadlines()
	}
	return o
}

// tuneConsensus sweeps the consensus vote (feedback.Options ConsensusK, ConsensusSim,
// Consensus; Consensus 2 turns it off) at the default weight, lead and support, and
// chooses it leave-one-set-out by the procedure of the -feedback-tune sweep: feasible when
// the worst cold drop of the tuning sets' halves is within 0.005, then the largest mean gap
// closed (printed, not asserted).
func tuneConsensus(t *testing.T, bases map[string]*Report) {
	type config struct {
		k          int
		sim, share float64
	}
	// off, the default, and each of its three constants moved one step either way that is
	// not already the others' (nearest 5; least similarity 0.15, 0.25; share 0.7)
	configs := []config{{3, 0.2, 2}, {3, 0.2, 0.5}, {5, 0.2, 0.5}, {3, 0.15, 0.5}, {3, 0.25, 0.5}, {3, 0.2, 0.7}}
	results := make([][]feedbackRun, len(configs))
	for i, c := range configs {
		eo := &engine.Options{Feedback: &feedback.Options{ConsensusK: c.k, ConsensusSim: c.sim, Consensus: c.share}}
		for _, set := range EvalSets {
			for half := range 2 {
				b := bases[fmt.Sprint(set, half)]
				_, got := runFeedback(t, set, half, eo, b)
				r := summarise(set, half, b, got)
				results[i] = append(results[i], r)
				t.Logf("consensus k %d sim %.2f share %.2f %s/%d: closes %.3f, cold drop %.4f", c.k, c.sim, c.share, set, half, r.closed(), r.drop())
			}
		}
	}
	var table strings.Builder
	for _, out := range append(slices.Clone(EvalSets), "none") {
		keep := func(s string) bool { return s != out }
		best, bestClosed, bestDrop := 0, math.Inf(-1), math.Inf(1)
		for i := range configs {
			cl, dr := feedbackScore(results[i], keep)
			feasible, bestFeasible := dr <= 0.005, bestDrop <= 0.005
			if feasible && (!bestFeasible || cl > bestClosed) || !feasible && !bestFeasible && dr < bestDrop {
				best, bestClosed, bestDrop = i, cl, dr
			}
		}
		heldClosed, heldDrop := feedbackScore(results[best], func(s string) bool { return s == out })
		c := configs[best]
		fmt.Fprintf(&table, "| %s | %d | %.2f | %.2f | %.3f | %.4f | %.3f | %.4f |\n", out, c.k, c.sim, c.share, bestClosed, bestDrop, heldClosed, heldDrop)
	}
	t.Logf("consensus, leave-one-set-out (held-out set, none: all three tune | nearest | least similarity | least share | tuning sets: mean gap closed, worst cold drop | held out: mean gap closed, worst cold drop):\n%s", table.String())
}

// feedbackScore is a tuning grid's score of one config: the mean gap closure over the runs
// of the sets kept (warm queries), and the worst cold drop; a config is feasible when that
// drop is within 0.005.
func feedbackScore(rs []feedbackRun, keep func(string) bool) (closed, maxDrop float64) {
	sum, n := 0.0, 0
	for _, r := range rs {
		if !keep(r.set) {
			continue
		}
		if r.nWarm > 0 {
			sum += r.closed()
			n++
		}
		if r.nCold > 0 {
			maxDrop = max(maxDrop, r.drop())
		}
	}
	return sum / float64(max(n, 1)), maxDrop
}
