package store

import (
	"context"
	"fmt"
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

// TestHistoryReadThenRecord: Uses caches what it reads, including a scope without uses, and
// a later RecordUse of that scope must still be seen by the next Uses, for that scope only,
// and decayed to the time of the read.
func TestHistoryReadThenRecord(t *testing.T) {
	ctx := context.Background()
	const hl = time.Hour
	s, err := Open(Options{InMemory: true, HistoryHalfLife: hl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := s.HistorySource()
	now := t0
	h.Now = func() time.Time { return now }
	want := func(user, project string, w map[string]float64) {
		t.Helper()
		got := h.Uses(user, project)
		if len(got) != len(w) {
			t.Fatalf("Uses(%q, %q) = %v, want %v", user, project, got, w)
		}
		for id, x := range w {
			if math.Abs(got[id]-x) > 1e-9 {
				t.Fatalf("Uses(%q, %q) = %v, want %v", user, project, got, w)
			}
		}
	}
	for range 2 { // the second read comes from the cache
		want("ann", "web", nil)
		want("bob", "", nil)
	}
	if err := s.RecordUse(ctx, "ann", "web", "a.diagnose", t0); err != nil {
		t.Fatal(err)
	}
	want("ann", "web", map[string]float64{"a.diagnose": 1 + ProjectWeight})
	want("ann", "", map[string]float64{"a.diagnose": 1})
	want("bob", "", nil)
	want("bob", "web", map[string]float64{"a.diagnose": ProjectWeight})
	if err := s.RecordUse(ctx, "ann", "", "a.diagnose", t0); err != nil {
		t.Fatal(err)
	}
	want("ann", "web", map[string]float64{"a.diagnose": 2 + ProjectWeight})
	now = t0.Add(hl)
	want("ann", "web", map[string]float64{"a.diagnose": (2 + ProjectWeight) / 2})
	now = t0.Add(30 * hl) // 2.5 × 2^-30 < 1e-6: left out
	want("ann", "web", nil)
}

// TestHistoryCacheConcurrent: while readers keep filling the cache, every writer must see
// each of its uses in the Uses call that follows it, whoever read the scope meanwhile.
func TestHistoryCacheConcurrent(t *testing.T) {
	s := openT(t, "")
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const writers, uses = 4, 50
	users := []string{"u0", "u1", "u2", "u3"}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			for i := r; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Uses(users[i%writers], "p", at); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for k := 1; k <= uses; k++ {
				if err := s.RecordUse(ctx, users[w], "p", "x", at); err != nil {
					t.Error(err)
					return
				}
				got, err := s.Uses(users[w], "", at)
				if err != nil || got["x"] != float64(k) {
					t.Errorf("%s after %d uses: Uses = %v, %v", users[w], k, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	got, err := s.Uses("", "p", at)
	if err != nil || got["x"] != ProjectWeight*writers*uses {
		t.Fatalf("project: Uses = %v, %v; want %v", got, err, ProjectWeight*writers*uses)
	}
}

// TestHistoryCacheStaleRead: what a reader read before a write's forget is never kept, while
// a read begun after it is.
func TestHistoryCacheStaleRead(t *testing.T) {
	var c histCache
	sc := histScope{pfxHistU, "ann"}
	_, _, epoch := c.lookup(sc)
	c.forget([]histScope{sc})
	c.keep(sc, nil, epoch)
	if uses, ok, _ := c.lookup(sc); ok {
		t.Fatalf("stale read kept: %v", uses)
	}
	_, _, epoch = c.lookup(sc)
	fresh := []histUse{{"x", histValue{w: 1}}}
	c.keep(sc, fresh, epoch)
	if uses, ok, _ := c.lookup(sc); !ok || len(uses) != 1 {
		t.Fatalf("fresh read not kept: %v, %v", uses, ok)
	}
}

// TestHistoryCacheBounded: reading more scopes than maxHistScopes keeps the cache at the bound
// and every answer right.
func TestHistoryCacheBounded(t *testing.T) {
	s := openT(t, "")
	at := time.Now()
	if err := s.RecordUse(context.Background(), "u0", "", "x", at); err != nil {
		t.Fatal(err)
	}
	for i := range maxHistScopes + 10 {
		got, err := s.Uses(fmt.Sprintf("u%d", i), "", at)
		if err != nil || (i == 0) != (got["x"] == 1) {
			t.Fatalf("u%d: Uses = %v, %v", i, got, err)
		}
	}
	n := 0
	s.hist.scopes.Range(func(_, _ any) bool { n++; return true })
	if n != maxHistScopes || s.hist.n != n {
		t.Fatalf("%d scopes cached (counted %d), want %d", n, s.hist.n, maxHistScopes)
	}
	if got, err := s.Uses("u0", "", at); err != nil || got["x"] != 1 {
		t.Fatalf("u0 after eviction: Uses = %v, %v", got, err)
	}
}

// BenchmarkUses: the history a search reads (through HistorySource, as the history retriever
// does), for a caller with no uses and one with some.
func BenchmarkUses(b *testing.B) {
	s := openT(b, "")
	h := s.HistorySource()
	at := time.Now()
	for i := range 20 {
		if err := s.RecordUse(context.Background(), "ann", "web", fmt.Sprintf("cap.n%d", i), at); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, user, project string }{
		{"uses=0", "bob", "cli"},
		{"uses=20", "ann", "web"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += len(h.Uses(tc.user, tc.project))
			}
			b.ReportMetric(float64(n)/float64(b.N), "ids/op")
		})
	}
}
