package actors

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// goid returns the current goroutine's id, read from its stack header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// allKinds marks every kind inline.
const allKinds = uint16(1)<<index.NumKinds - 1

// goroutines records the goroutine of every RetrieveFunc and Rank call.
type goroutines struct {
	mu   sync.Mutex
	seen map[uint64]int
}

func (g *goroutines) note() {
	g.mu.Lock()
	if g.seen == nil {
		g.seen = map[uint64]int{}
	}
	g.seen[goid()]++
	g.mu.Unlock()
}

func (g *goroutines) job(inline uint16) *Job {
	return &Job{Query: &index.Query{Text: "q"}, Plan: fiveKinds(time.Minute), Inline: inline,
		Retrieve: func(_ context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
			g.note()
			return []index.Hit{{Doc: docOf(k), Score: 1}}, nil
		},
		Rank: func(gd *Gathered) *registry.SearchResponse {
			g.note()
			return &registry.SearchResponse{SearchMeta: gd.Meta()}
		}}
}

// TestInlineRunsOnCaller checks that a search marked inline runs its retrievers and its
// ranking on the goroutine that called Search, and that an unmarked one, or one with an
// unmarked planned kind, runs none of them there.
func TestInlineRunsOnCaller(t *testing.T) {
	s := newSystem(t, Options{InlineBelow: time.Hour}) // however long the calls took
	// workers woken before (for the actors' start) may take queued runs too: wait until
	// every one is parked
	waitParked(t, s)
	for _, tt := range []struct {
		name   string
		inline uint16
		want   bool
	}{
		{"inline", allKinds, true},
		{"not marked", 0, false},
		{"semantic not marked", allKinds &^ (1 << index.Semantic), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 {
				var g goroutines
				resp, err := s.Search(context.Background(), g.job(tt.inline))
				if err != nil || resp.SearchMeta.Partial || len(resp.SearchMeta.CompletedRetrievers) != 5 {
					t.Fatalf("resp %+v, err %v", resp, err)
				}
				me := goid()
				if on := g.seen[me]; tt.want && (on != 6 || len(g.seen) != 1) || !tt.want && on != 0 {
					t.Fatalf("%d of 6 calls on the caller, goroutines %v", on, g.seen)
				}
			}
		})
	}
}

// waitParked waits until no worker is on its way to the pool's queue or running.
func waitParked(t *testing.T, s *System) {
	t.Helper()
	p := s.workers
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		quiet := p.coming == 0 && len(p.queue) == 0 && len(p.idle) > 0
		p.mu.Unlock()
		if quiet {
			time.Sleep(5 * time.Millisecond) // a worker between its last run and parking
			return
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("workers never parked")
		}
	}
}

// TestInlineWorkBound checks the rule for running a search on its caller: every planned
// kind marked, and either the expected run times beside the longest step below
// InlineBelow (inline), or more work and no other Search in progress on more than one
// processor (helped).
func TestInlineWorkBound(t *testing.T) {
	s := newSystem(t, Options{InlineBelow: 50 * time.Microsecond})
	s.workers.procs = 2
	job := &Job{Plan: fiveKinds(time.Second), Inline: allKinds, Alone: true}
	set := func(d map[index.Kind]time.Duration) {
		for k := range index.NumKinds {
			s.expect[k].Store(int64(d[k]))
		}
	}
	s.blocking.Store(1) // as Search counts its own call
	for _, tt := range []struct {
		name   string
		expect map[index.Kind]time.Duration
		job    *Job
		want   runMode
	}{
		{"no run time known yet", nil, job, inline},
		{"49µs beside the longest step", map[index.Kind]time.Duration{index.Semantic: time.Millisecond, index.Lexical: 30 * time.Microsecond, index.Exact: 19 * time.Microsecond}, job, inline},
		{"50µs beside the longest step", map[index.Kind]time.Duration{index.Semantic: time.Millisecond, index.Lexical: 30 * time.Microsecond, index.Exact: 20 * time.Microsecond}, job, helped},
		{"a planned kind not marked", nil, &Job{Plan: fiveKinds(time.Second), Inline: allKinds &^ (1 << index.Exact)}, handOff},
		{"nothing marked", nil, &Job{Plan: fiveKinds(time.Second)}, handOff},
	} {
		set(tt.expect)
		if got := s.mode(tt.job); got != tt.want {
			t.Errorf("%s: mode %d, want %d", tt.name, got, tt.want)
		}
	}
	big := map[index.Kind]time.Duration{index.Semantic: time.Millisecond, index.Lexical: time.Millisecond}
	set(big)
	s.blocking.Store(2)
	if got := s.mode(job); got != handOff {
		t.Errorf("another Search in progress: mode %d, want handOff", got)
	}
	s.blocking.Store(1)
	if got := s.mode(&Job{Plan: job.Plan, Inline: allKinds}); got != handOff {
		t.Errorf("a job not known to be alone: mode %d, want handOff", got)
	}
	s.blocking.Store(1)
	s.workers.procs = 1
	if got := s.mode(job); got != handOff {
		t.Errorf("one processor: mode %d, want handOff", got)
	}
	s.workers.procs = 2
	s.blocking.Store(0)

	never := newSystem(t, Options{InlineBelow: -1})
	never.blocking.Store(1)
	for _, d := range []map[index.Kind]time.Duration{nil, big} {
		for k := range index.NumKinds {
			never.expect[k].Store(int64(d[k]))
		}
		if got := never.mode(job); got != handOff {
			t.Errorf("InlineBelow < 0: mode %d, want handOff", got)
		}
	}
}

// TestHelpedSearchSharesWork runs searches too big to run inline, one at a time: the
// caller runs some of their steps itself and workers run the others, and every answer
// is complete.
func TestHelpedSearchSharesWork(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a search is helped only with more than one processor")
	}
	s := newSystem(t, Options{InlineBelow: time.Nanosecond})
	caller, other := 0, 0
	for range 20 {
		for k := range index.NumKinds {
			s.expect[k].Store(int64(time.Millisecond)) // as learnt from earlier searches
		}
		var g goroutines
		job := g.job(allKinds)
		job.Alone = true
		retrieve := job.Retrieve
		job.Retrieve = func(ctx context.Context, k index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error) {
			for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
			} // CPU-bound, as an inline kind must be
			return retrieve(ctx, k, q, allow, limit)
		}
		s.blocking.Add(1) // as Search counts itself
		got := s.mode(job)
		s.blocking.Add(-1)
		if got != helped {
			t.Fatalf("mode %d, want helped", got)
		}
		resp, err := s.Search(context.Background(), job)
		if err != nil || resp.SearchMeta.Partial || len(resp.SearchMeta.CompletedRetrievers) != 5 {
			t.Fatalf("resp %+v, err %v", resp, err)
		}
		me := goid()
		caller += g.seen[me]
		for id, n := range g.seen {
			if id != me {
				other += n
			}
		}
	}
	// 120 calls in all (5 steps and a Rank per search); a machine too loaded for the
	// woken workers to start within a search's 10 ms leaves them all to the caller
	if caller == 0 || caller+other != 120 {
		t.Fatalf("%d calls on the caller, %d on workers, want some on the caller and 120 in all", caller, other)
	}
	t.Logf("%d of 120 calls on the caller, %d on workers", caller, other)
}

// TestHelpedSearchNeverStrands runs helped searches one after another whose steps take
// different times, so that workers' retrievers answer both while the caller still runs
// steps and while it waits for runs to take, and just as it stops waiting: every answer
// must come complete, long before the steps' deadline.
func TestHelpedSearchNeverStrands(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a search is helped only with more than one processor")
	}
	n := 2000
	if testing.Short() {
		n = 300
	}
	s := newSystem(t, Options{InlineBelow: time.Nanosecond})
	spin := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	for i := range n {
		for k := range index.NumKinds {
			s.expect[k].Store(int64(time.Millisecond))
		}
		job := &Job{Query: &index.Query{Text: "q"}, Plan: fiveKinds(10 * time.Second), Inline: allKinds, Alone: true,
			Retrieve: func(_ context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
				// 0-60 µs, varied by search and kind: around helpedWait
				spin(time.Duration((i*7+int(k)*13)%61) * time.Microsecond)
				return []index.Hit{{Doc: docOf(k), Score: 1}}, nil
			},
			Rank: func(g *Gathered) *registry.SearchResponse { return &registry.SearchResponse{SearchMeta: g.Meta()} },
		}
		start := time.Now()
		resp, err := s.Search(context.Background(), job)
		if err != nil || resp.SearchMeta.Partial || len(resp.SearchMeta.CompletedRetrievers) != 5 {
			t.Fatalf("search %d: resp %+v, err %v", i, resp, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("search %d took %v: a run waited for its deadline", i, took)
		}
	}
}

// TestInlineMixedWithHandedOff runs inline and ordinary searches at once through the
// same actors: every answer is complete and right, and no ordinary search's retriever
// or ranking ever runs on the goroutine of an inline search's caller.
func TestInlineMixedWithHandedOff(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	s := newSystem(t, Options{MailboxSize: 2 * n, InlineBelow: time.Hour})
	var mu sync.Mutex
	callers := map[uint64]bool{} // goroutines of inline callers
	var handedOff goroutines     // goroutines of the ordinary searches' calls
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		inline := i%2 == 0
		wg.Go(func() {
			if inline {
				mu.Lock()
				callers[goid()] = true
				mu.Unlock()
			}
			retrieve := func(_ context.Context, k index.Kind, q *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
				if !inline {
					handedOff.note()
				}
				j, _ := strconv.Atoi(q.Text)
				return []index.Hit{{Doc: uint32(j*10) + uint32(k)}}, nil
			}
			rank := func(g *Gathered) *registry.SearchResponse {
				if !inline {
					handedOff.note()
				}
				return &registry.SearchResponse{Query: fmt.Sprint(g.Candidates.ToArray()), SearchMeta: g.Meta()}
			}
			job := &Job{Query: &index.Query{Text: strconv.Itoa(i)}, Plan: fiveKinds(30 * time.Second), Retrieve: retrieve, Rank: rank}
			if inline {
				job.Inline = allKinds
			}
			resp, err := s.Search(context.Background(), job)
			want := fmt.Sprint([]uint32{uint32(i * 10), uint32(i*10) + 1, uint32(i*10) + 2, uint32(i*10) + 3, uint32(i*10) + 5})
			switch {
			case err != nil:
				errs <- err
			case resp.Query != want || resp.SearchMeta.Partial:
				errs <- fmt.Errorf("search %d (inline %v): got %s %+v, want %s", i, inline, resp.Query, resp.SearchMeta, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for id := range handedOff.seen {
		if callers[id] {
			t.Fatalf("an ordinary search's call ran on inline caller goroutine %d", id)
		}
	}
}
