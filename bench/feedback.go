package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// Half returns the half (0 or 1) a query id falls in: the low bit of its 64-bit FNV-1a
// hash. It is stable across runs, machines and orderings of a file.
func Half(qid string) int {
	h := fnv.New64a()
	h.Write([]byte(qid))
	return int(h.Sum64() & 1)
}

// Feedback classes of a scored query (FeedbackReport).
const (
	// Warm: every capability the query is labelled with was led to by a replayed session.
	Warm = "warm"
	// Cold: none was.
	Cold = "cold"
	// Mixed: some were.
	Mixed = "mixed"
)

// FeedbackReport is the part of a Report about replayed feedback (capdex eval --feedback):
// how many sessions were replayed and the scored queries' metrics by class.
type FeedbackReport struct {
	// Replayed is the number of queries replayed as successful sessions (0 with NoReplay).
	Replayed int `json:"replayed"`
	// Warm, Cold and Mixed score the queries of each class (nil when it has none).
	Warm  *Report `json:"warm"`
	Cold  *Report `json:"cold"`
	Mixed *Report `json:"mixed"`
}

// splitFeedback applies opts.Split: the scored queries are those of half Split, the replayed
// ones those of the other half. Without a split (Split < 0) both are kept whole.
func splitFeedback(scored, replayed []LabelledQuery, split int) ([]LabelledQuery, []LabelledQuery) {
	if split < 0 {
		return scored, replayed
	}
	keep := func(qs []LabelledQuery, half bool) []LabelledQuery {
		var out []LabelledQuery
		for _, q := range qs {
			if (Half(q.QID) == split) == half {
				out = append(out, q)
			}
		}
		return out
	}
	return keep(scored, true), keep(replayed, false)
}

// classOf returns the class of each scored query against the labels of the replayed ones.
func classOf(replayed []LabelledQuery) func(LabelledQuery) string {
	seen := map[string]bool{}
	for _, q := range replayed {
		for _, r := range q.Relevant {
			seen[r] = true
		}
	}
	return func(q LabelledQuery) string {
		n := 0
		for _, r := range q.Relevant {
			if seen[r] {
				n++
			}
		}
		switch n {
		case 0:
			return Cold
		case len(q.Relevant):
			return Warm
		}
		return Mixed
	}
}

// Replay plays each query as one successful session of its own user (tenant and scopes of
// rc, session and user "replay-<qid>"): a search, then a describe and a successful outcome
// (Engine.ReportOutcome) of each capability it is labelled with. It goes through the same
// recording path as the sessions of the daemon. Labels name capabilities by id or by
// external id; a label that names none is an error.
func Replay(ctx context.Context, e *engine.Engine, queries []LabelledQuery, rc registry.RuntimeContext) error {
	byLabel := map[string]string{}
	label := labeller(e.Snapshot())
	for _, c := range e.Snapshot().Caps {
		byLabel[label(c.ID)] = c.ID
		byLabel[c.ID] = c.ID
	}
	for _, q := range queries {
		src := rc
		src.User, src.Session = "replay-"+q.QID, "replay-"+q.QID
		if _, err := e.Search(ctx, registry.SearchRequest{Query: q.Query}, src); err != nil {
			if errors.Is(err, engine.ErrInvalidRequest) {
				continue
			}
			return fmt.Errorf("replaying query %s: %w", q.QID, err)
		}
		for _, r := range q.Relevant {
			id, ok := byLabel[r]
			if !ok {
				return fmt.Errorf("replaying query %s: label %q names no capability", q.QID, r)
			}
			if _, err := e.Describe(ctx, id, src); err != nil {
				return fmt.Errorf("replaying query %s: describe %s: %w", q.QID, id, err)
			}
			if _, err := e.ReportOutcome(ctx, id, true, src); err != nil {
				return fmt.Errorf("replaying query %s: outcome of %s: %w", q.QID, id, err)
			}
		}
	}
	return nil
}
