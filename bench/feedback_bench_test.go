package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/engine/feedback"
	"github.com/capdex/capdex/registry/store"
)

// BenchmarkFeedbackVotes: the votes of half 0's queries of each public set against a
// tenant that learned half 1's (every query a successful session of its own user, as
// capdex eval --feedback --split 0 replays them), CPU time per vote (cpu-ns/op) next to
// wall time.
func BenchmarkFeedbackVotes(b *testing.B) {
	dir, ok := EvalDir()
	if !ok {
		b.Skip("evaluation sets not found (set CAPDEX_EVAL_DIR to the shared/eval folder)")
	}
	for _, set := range EvalSets {
		b.Run(set, func(b *testing.B) {
			qs, err := ReadQueries(filepath.Join(dir, set, "queries.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			scored, replayed := splitFeedback(qs, qs, 0)
			r, err := feedback.New(noFeedbackStore{}, feedback.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			for _, q := range replayed {
				s := "replay-" + q.QID
				r.Searched("t", s, s, q.Query, nil, false)
				for _, id := range q.Relevant {
					r.Described("t", s, id)
					r.Ran("t", s, id, true)
				}
			}
			r.Votes("t", scored[0].Query) // the first vote after learning recomputes the norms
			b.ResetTimer()
			votes, cpu := 0, cputime.Process()
			for i := range b.N {
				votes += len(r.Votes("t", scored[i%len(scored)].Query))
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(votes)/float64(b.N), "votes/op")
		})
	}
}

// noFeedbackStore keeps no feedback records.
type noFeedbackStore struct{}

func (noFeedbackStore) PutFeedback(context.Context, []store.FeedbackRecord) error { return nil }
func (noFeedbackStore) EachFeedback(func(store.FeedbackRecord) error) error       { return nil }
