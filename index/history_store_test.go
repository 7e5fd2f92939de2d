package index

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/registry/store"
)

// TestHistoryFromStore: a use recorded in the store is a history hit of the very next
// retrieval, for the user who made it (and, at ProjectWeight, for the project), and its
// weight decays with the store's clock.
func TestHistoryFromStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Options{InMemory: true, HistoryHalfLife: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	src := st.HistorySource()
	src.Now = func() time.Time { return now }
	g := buildFixture(t, Options{Embedder: cheap.Embedder, History: src})
	type hit struct {
		id string
		w  float64
	}
	check := func(q *Query, want ...hit) {
		t.Helper()
		hits := retrieve(t, g, History, q, 5)
		got := make([]hit, len(hits))
		for i, h := range hits {
			got[i] = hit{g.Doc(h.Doc).ID, h.Score}
		}
		if !slices.EqualFunc(got, want, func(a, b hit) bool { return a.id == b.id && math.Abs(a.w-b.w) < 1e-6 }) {
			t.Fatalf("history of %+v = %v, want %v", *q, got, want)
		}
	}
	alice, bob, web := &Query{User: "alice"}, &Query{User: "bob"}, &Query{Project: "web"}
	check(alice) // read (and remembered) before any use
	record := func(user, id string) {
		t.Helper()
		if err := st.RecordUse(ctx, user, "web", id, now); err != nil {
			t.Fatal(err)
		}
	}
	record("alice", "maintenance.codex.update")
	check(alice, hit{"maintenance.codex.update", useStrength(1)})
	check(bob)
	record("alice", "myapp.schedule.list")
	record("alice", "myapp.schedule.list")
	check(alice, hit{"myapp.schedule.list", useStrength(2)}, hit{"maintenance.codex.update", useStrength(1)})
	check(web, hit{"myapp.schedule.list", useStrength(2 * store.ProjectWeight)}, hit{"maintenance.codex.update", useStrength(store.ProjectWeight)})
	now = now.Add(2 * time.Hour)
	check(alice, hit{"myapp.schedule.list", useStrength(0.5)}, hit{"maintenance.codex.update", useStrength(0.25)})
	record("bob", "maintenance.codex.update")
	check(bob, hit{"maintenance.codex.update", useStrength(1)})
}
