package store

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestHistory(t *testing.T) {
	ctx := context.Background()
	const hl = 24 * time.Hour
	s, err := Open(Options{InMemory: true, HistoryHalfLife: hl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	uses := []struct {
		user, project, id string
		at                time.Time
	}{
		{"alice", "web", "a.diagnose", t0},
		{"alice", "web", "a.diagnose", t0.Add(hl)},
		{"bob", "web", "a.update", t0.Add(hl)},
		{"alice", "", "a.status", t0.Add(2 * hl)},
		{"carol", "cli", "a.rollback", t0},
	}
	for _, u := range uses {
		if err := s.RecordUse(ctx, u.user, u.project, u.id, u.at); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(2 * hl)
	cases := []struct {
		name, user, project string
		want                map[string]float64
	}{
		// alice's diagnose: user 0.25+0.5, project (alice's own web uses) 0.5×0.75.
		{"user and project", "alice", "web", map[string]float64{"a.diagnose": 0.75 + 0.5*0.75, "a.update": 0.5 * 0.5, "a.status": 1}},
		{"user only", "alice", "", map[string]float64{"a.diagnose": 0.75, "a.status": 1}},
		{"project only", "", "web", map[string]float64{"a.diagnose": 0.5 * 0.75, "a.update": 0.5 * 0.5}},
		{"other project", "bob", "cli", map[string]float64{"a.update": 0.5, "a.rollback": 0.5 * 0.25}},
		{"nobody", "zed", "none", map[string]float64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Uses(tc.user, tc.project, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for id, w := range tc.want {
				if math.Abs(got[id]-w) > 1e-9 {
					t.Errorf("%s = %v, want %v", id, got[id], w)
				}
			}
		})
	}
	t.Run("adapter", func(t *testing.T) {
		h := s.HistorySource()
		h.Now = func() time.Time { return now }
		if got := h.Uses("alice", ""); math.Abs(got["a.status"]-1) > 1e-9 {
			t.Errorf("adapter = %v", got)
		}
	})
}

// TestHistoryFoldMatchesSum checks the folded weight against the plain sum over every use,
// with uses recorded out of order.
func TestHistoryFoldMatchesSum(t *testing.T) {
	ctx := context.Background()
	const hl = 6 * time.Hour
	s, err := Open(Options{InMemory: true, HistoryHalfLife: hl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(10 * 24 * time.Hour)
	want := 0.0
	for i := 0; i < 200; i++ {
		at := t0.Add(time.Duration(r.Int64N(int64(10 * 24 * time.Hour))))
		if err := s.RecordUse(ctx, "u", "", "x", at); err != nil {
			t.Fatal(err)
		}
		want += math.Exp2(-float64(now.Sub(at)) / float64(hl))
	}
	got, err := s.Uses("u", "", now)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got["x"]-want) > 1e-9*want {
		t.Fatalf("folded %v, summed %v", got["x"], want)
	}
}

// TestHistoryConcurrent: concurrent uses of one id conflict in Badger and are retried, so
// none is lost.
func TestHistoryConcurrent(t *testing.T) {
	s := openT(t, "")
	at := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.RecordUse(context.Background(), "u", "p", "x", at)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Uses("u", "p", at)
	if err != nil || math.Abs(got["x"]-64*(1+ProjectWeight)) > 1e-9 {
		t.Fatalf("Uses = %v, %v; want %v", got, err, 64*(1+ProjectWeight))
	}
}
