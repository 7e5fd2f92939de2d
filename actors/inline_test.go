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

// TestInlineWorkBound checks the rule for running a search inline: every planned kind
// marked, and the expected run times beside the longest step below InlineBelow.
func TestInlineWorkBound(t *testing.T) {
	s := newSystem(t, Options{InlineBelow: 50 * time.Microsecond})
	job := &Job{Plan: fiveKinds(time.Second), Inline: allKinds}
	set := func(d map[index.Kind]time.Duration) {
		for k := range index.NumKinds {
			s.expect[k].Store(int64(d[k]))
		}
	}
	set(nil)
	if !s.inline(job) {
		t.Fatal("no run time known yet: not inline")
	}
	set(map[index.Kind]time.Duration{index.Semantic: time.Millisecond, index.Lexical: 30 * time.Microsecond, index.Exact: 19 * time.Microsecond})
	if !s.inline(job) {
		t.Fatal("49µs beside the longest step: not inline")
	}
	set(map[index.Kind]time.Duration{index.Semantic: time.Millisecond, index.Lexical: 30 * time.Microsecond, index.Exact: 20 * time.Microsecond})
	if s.inline(job) {
		t.Fatal("50µs beside the longest step: inline")
	}
	set(nil)
	if s.inline(&Job{Plan: fiveKinds(time.Second), Inline: allKinds &^ (1 << index.Exact)}) {
		t.Fatal("a planned kind not marked: inline")
	}
	never := newSystem(t, Options{InlineBelow: -1})
	if never.inline(job) {
		t.Fatal("InlineBelow < 0: inline")
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
