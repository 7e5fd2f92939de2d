package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"go.uber.org/goleak"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newSystem starts a System closed at the end of the test.
func newSystem(tb testing.TB, opts Options) *System {
	tb.Helper()
	s := New(opts)
	tb.Cleanup(s.Close)
	return s
}

// fiveKinds is a plan over five retrievers with generous deadlines.
func fiveKinds(d time.Duration) []Step {
	return []Step{
		{Kind: index.Exact, Deadline: d, Limit: 10},
		{Kind: index.Lexical, Deadline: d, Limit: 10},
		{Kind: index.Semantic, Deadline: d, Limit: 10},
		{Kind: index.Metadata, Deadline: d, Limit: 10},
		{Kind: index.History, Deadline: d, Limit: 10},
	}
}

// docOf is the one hit a fake retriever returns for kind k.
func docOf(k index.Kind) uint32 { return 100 + uint32(k) }

// behaviour is what a fake retriever does for one kind; nil answers at once.
type behaviour func(ctx context.Context) ([]index.Hit, error)

// fakeRetrieve answers every kind with one hit docOf(k), unless b overrides the kind.
func fakeRetrieve(b map[index.Kind]behaviour) RetrieveFunc {
	return func(ctx context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
		if f := b[k]; f != nil {
			return f(ctx)
		}
		return []index.Hit{{Doc: docOf(k), Score: 1, Matched: []string{k.String()}}}, nil
	}
}

// sleep ignores its context.
func sleep(d time.Duration, hits ...index.Hit) behaviour {
	return func(context.Context) ([]index.Hit, error) { time.Sleep(d); return hits, nil }
}

// snapshot is a deep copy of a Gathered.
type snapshot struct {
	Planned    []Step
	Evidence   []Evidence
	Candidates []uint32
	Pending    []index.Kind
	Final      bool
	Elapsed    time.Duration
	Meta       registry.SearchMeta
}

func snap(g *Gathered) snapshot {
	return snapshot{
		Planned:    slices.Clone(g.Planned),
		Evidence:   slices.Clone(g.Evidence),
		Candidates: g.Candidates.ToArray(),
		Pending:    slices.Clone(g.Pending),
		Final:      g.Final,
		Elapsed:    g.Elapsed,
		Meta:       g.Meta(),
	}
}

// recorder is a RankFunc keeping a copy of every Gathered it saw.
type recorder struct {
	mu    sync.Mutex
	calls []snapshot
}

func (r *recorder) rank(g *Gathered) *registry.SearchResponse {
	s := snap(g)
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
	return &registry.SearchResponse{SearchMeta: s.Meta, Resolution: registry.NoConfidentMatch}
}

func (r *recorder) final(tb testing.TB) snapshot {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 || !r.calls[len(r.calls)-1].Final {
		tb.Fatalf("no final Rank call among %d", len(r.calls))
	}
	return r.calls[len(r.calls)-1]
}

// timely runs attempt until it reports no timing problem, at most three times.
// Wall-clock bounds are retried because other processes may load the machine;
// attempt asserts everything else itself on every run.
func timely(t *testing.T, attempt func(t *testing.T) (problem string)) {
	t.Helper()
	var problem string
	for i := range 3 {
		if problem = attempt(t); problem == "" || t.Failed() {
			return
		}
		t.Logf("attempt %d: %s; retrying", i+1, problem)
	}
	t.Error(problem)
}

func evidenceOf(tb testing.TB, s snapshot, k index.Kind) Evidence {
	tb.Helper()
	for _, ev := range s.Evidence {
		if ev.Kind == k {
			return ev
		}
	}
	tb.Fatalf("no evidence for %s in %+v", k, s.Evidence)
	return Evidence{}
}

func TestFanOut(t *testing.T) {
	tests := []struct {
		name string
		plan []Step
	}{
		{"five kinds", fiveKinds(time.Second)},
		{"one kind", []Step{{Kind: index.Lexical, Deadline: time.Minute}}},
		{"all kinds", []Step{{Kind: index.Exact, Deadline: time.Minute}, {Kind: index.Lexical, Deadline: time.Minute},
			{Kind: index.Semantic, Deadline: time.Minute}, {Kind: index.Metadata, Deadline: time.Minute},
			{Kind: index.Hierarchy, Deadline: time.Minute}, {Kind: index.History, Deadline: time.Minute}}},
		{"empty plan", nil},
	}
	s := newSystem(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			resp, err := s.Search(context.Background(), &Job{Query: &index.Query{Text: "q"}, Plan: tt.plan,
				Retrieve: fakeRetrieve(nil), Rank: rec.rank})
			if err != nil {
				t.Fatal(err)
			}
			f := rec.final(t)
			if len(rec.calls) != 1 {
				t.Errorf("Rank called %d times without streaming, want 1", len(rec.calls))
			}
			if len(f.Evidence) != len(tt.plan) {
				t.Fatalf("got %d evidence, want %d", len(f.Evidence), len(tt.plan))
			}
			var want []uint32
			for _, st := range tt.plan {
				ev := evidenceOf(t, f, st.Kind)
				if ev.Outcome != OK || ev.Err != nil || len(ev.Hits) != 1 || ev.Hits[0].Doc != docOf(st.Kind) {
					t.Errorf("%s: evidence %+v", st.Kind, ev)
				}
				want = append(want, docOf(st.Kind))
			}
			slices.Sort(want)
			if !slices.Equal(f.Candidates, want) {
				t.Errorf("candidates %v, want %v", f.Candidates, want)
			}
			if len(f.Pending) != 0 || resp.SearchMeta.Partial {
				t.Errorf("pending %v partial %v, want none", f.Pending, resp.SearchMeta.Partial)
			}
			if len(resp.SearchMeta.CompletedRetrievers) != len(tt.plan) || resp.SearchMeta.CandidateCount != len(want) {
				t.Errorf("meta %+v", resp.SearchMeta)
			}
		})
	}
}

func TestSlowRetriever(t *testing.T) {
	const deadline = 60 * time.Millisecond
	tests := []struct {
		name string
		slow behaviour
	}{
		{"ignores its context", sleep(300 * time.Millisecond)},
		{"honours its context", func(ctx context.Context) ([]index.Hit, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSystem(t, Options{})
			plan := fiveKinds(time.Second)
			plan[2].Deadline = deadline // semantic
			timely(t, func(t *testing.T) string {
				var rec recorder
				start := time.Now()
				resp, err := s.Search(context.Background(), &Job{Plan: plan,
					Retrieve: fakeRetrieve(map[index.Kind]behaviour{index.Semantic: tt.slow}), Rank: rec.rank})
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				f := rec.final(t)
				if !slices.Equal(f.Pending, []index.Kind{index.Semantic}) {
					t.Errorf("pending %v, want [semantic]", f.Pending)
				}
				if ev := evidenceOf(t, f, index.Semantic); ev.Outcome != TimedOut || ev.Hits != nil {
					t.Errorf("semantic evidence %+v, want timed out", ev)
				}
				for _, st := range plan {
					if st.Kind != index.Semantic && evidenceOf(t, f, st.Kind).Outcome != OK {
						t.Errorf("%s not OK", st.Kind)
					}
				}
				if len(f.Candidates) != 4 {
					t.Errorf("candidates %v, want the four others' docs", f.Candidates)
				}
				m := resp.SearchMeta
				if !m.Partial || !slices.Equal(m.TimedOutRetrievers, []string{"semantic"}) || len(m.CompletedRetrievers) != 4 {
					t.Errorf("meta %+v", m)
				}
				if took < deadline {
					t.Errorf("search took %v, before the %v deadline", took, deadline)
				}
				if took > deadline+20*time.Millisecond {
					return fmt.Sprintf("search took %v, want at most %v", took, deadline+20*time.Millisecond)
				}
				return ""
			})
		})
	}
}

func TestPanickingRetriever(t *testing.T) {
	s := newSystem(t, Options{})
	boom := func(context.Context) ([]index.Hit, error) { panic("boom") }
	for i := range 2 { // the retriever actor survives its panic
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			var rec recorder
			start := time.Now()
			resp, err := s.Search(context.Background(), &Job{Plan: fiveKinds(time.Second),
				Retrieve: fakeRetrieve(map[index.Kind]behaviour{index.Lexical: boom}), Rank: rec.rank})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 500*time.Millisecond {
				t.Errorf("search took %v: it waited for a deadline", took)
			}
			f := rec.final(t)
			ev := evidenceOf(t, f, index.Lexical)
			var pe *PanicError
			if ev.Outcome != Crashed || !errors.As(ev.Err, &pe) || pe.Value != "boom" || pe.Where != "lexical" ||
				!errors.Is(ev.Err, ErrPanic) || len(pe.Stack) == 0 {
				t.Fatalf("lexical evidence %+v, want crashed with the panic value", ev)
			}
			if len(f.Candidates) != 4 || len(f.Pending) != 0 {
				t.Errorf("candidates %v pending %v", f.Candidates, f.Pending)
			}
			if m := resp.SearchMeta; !m.Partial || !slices.Equal(m.FailedRetrievers, []string{"lexical"}) {
				t.Errorf("meta %+v", m)
			}
		})
	}
}

func TestLateEvidenceDropped(t *testing.T) {
	s := newSystem(t, Options{})
	plan := []Step{
		{Kind: index.Exact, Deadline: 80 * time.Millisecond},
		{Kind: index.Lexical, Deadline: 5 * time.Second},
		{Kind: index.Metadata, Deadline: 5 * time.Second},
	}
	timely(t, func(t *testing.T) string {
		exactDone := make(chan struct{})
		var rec recorder
		_, err := s.Search(context.Background(), &Job{Plan: plan, Stream: true, Rank: rec.rank,
			Retrieve: fakeRetrieve(map[index.Kind]behaviour{
				// exact answers 20ms after its deadline, ignoring its ctx
				index.Exact: func(ctx context.Context) ([]index.Hit, error) {
					defer close(exactDone)
					d, _ := ctx.Deadline()
					time.Sleep(time.Until(d) + 20*time.Millisecond)
					return []index.Hit{{Doc: 7}}, nil
				},
				// lexical answers after exact, keeping the search open for its late evidence
				index.Lexical: func(context.Context) ([]index.Hit, error) {
					<-exactDone
					time.Sleep(20 * time.Millisecond)
					return []index.Hit{{Doc: 8}}, nil
				},
			})})
		if err != nil {
			t.Fatal(err)
		}
		f := rec.final(t)
		ev := evidenceOf(t, f, index.Exact)
		if ev.Took == 0 {
			return "the exact request reached its retriever after its deadline"
		}
		if ev.Outcome != TimedOut || !errors.Is(ev.Err, ErrLate) || ev.Hits != nil {
			t.Errorf("exact evidence %+v, want late", ev)
		}
		if want := []uint32{8, docOf(index.Metadata)}; !slices.Equal(f.Candidates, want) {
			t.Errorf("candidates %v, want %v", f.Candidates, want)
		}
		if !slices.Equal(f.Pending, []index.Kind{index.Exact}) {
			t.Errorf("pending %v", f.Pending)
		}
		if f.Evidence[len(f.Evidence)-1].Kind != index.Lexical {
			t.Errorf("evidence not in arrival order: %+v", f.Evidence)
		}
		for _, c := range rec.calls {
			if slices.Contains(c.Candidates, 7) {
				t.Errorf("late doc 7 reached Rank: %+v", c)
			}
		}
		return ""
	})
}

func TestStream(t *testing.T) {
	plan := []Step{
		{Kind: index.Exact, Deadline: time.Second},
		{Kind: index.Lexical, Deadline: time.Second},
		{Kind: index.Semantic, Deadline: time.Second},
	}
	b := map[index.Kind]behaviour{
		index.Lexical:  sleep(15*time.Millisecond, index.Hit{Doc: 1}),
		index.Semantic: sleep(30*time.Millisecond, index.Hit{Doc: 2}),
	}
	tests := []struct {
		name        string
		stream      bool
		minPartials int
	}{
		{"partials", true, 1},
		{"final only", false, 0},
	}
	s := newSystem(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			ch, err := s.SearchStream(context.Background(), &Job{Plan: plan, Stream: tt.stream,
				Retrieve: fakeRetrieve(b), Rank: rec.rank})
			if err != nil {
				t.Fatal(err)
			}
			var ups []Update
			for u := range ch { // ends only when the channel is closed
				ups = append(ups, u)
			}
			if len(ups) < tt.minPartials+1 {
				t.Fatalf("%d updates, want at least %d", len(ups), tt.minPartials+1)
			}
			if !tt.stream && len(ups) != 1 {
				t.Errorf("%d updates without streaming, want 1", len(ups))
			}
			for i, u := range ups {
				if last := i == len(ups)-1; u.Final != last || u.Response == nil || u.Err != nil {
					t.Errorf("update %d: %+v", i, u)
				}
			}
			for i, c := range rec.calls {
				if c.Final != (i == len(rec.calls)-1) {
					t.Errorf("rank call %d: final=%v", i, c.Final)
				}
			}
			if f := rec.final(t); len(f.Candidates) != 3 || len(f.Pending) != 0 {
				t.Errorf("final %+v", f)
			}
			if tt.stream && len(rec.calls[0].Pending) == 0 {
				t.Errorf("first partial has nothing pending: %+v", rec.calls[0])
			}
		})
	}
}

func TestConcurrentSearches(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	s := newSystem(t, Options{MailboxSize: 2 * n})
	retrieve := func(_ context.Context, k index.Kind, q *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
		i, _ := strconv.Atoi(q.Text)
		return []index.Hit{{Doc: uint32(i*10) + uint32(k)}}, nil
	}
	rank := func(g *Gathered) *registry.SearchResponse {
		return &registry.SearchResponse{Query: fmt.Sprint(g.Candidates.ToArray()), SearchMeta: g.Meta()}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := s.Search(context.Background(), &Job{Query: &index.Query{Text: strconv.Itoa(i)},
				Plan: fiveKinds(30 * time.Second), Retrieve: retrieve, Rank: rank})
			var want []uint32
			for _, st := range fiveKinds(0) {
				want = append(want, uint32(i*10)+uint32(st.Kind))
			}
			slices.Sort(want)
			switch {
			case err != nil:
				errs <- err
			case resp.Query != fmt.Sprint(want) || resp.SearchMeta.Partial || len(resp.SearchMeta.CompletedRetrievers) != 5:
				errs <- fmt.Errorf("search %d: got %s %+v, want %v", i, resp.Query, resp.SearchMeta, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCallerCancel(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
	}{{"search", false}, {"stream", true}}
	s := newSystem(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var others atomic.Int32
			var cancelled time.Time
			other := func(context.Context) ([]index.Hit, error) {
				others.Add(1)
				return []index.Hit{{Doc: 1}}, nil
			}
			// semantic waits for the others, lets their evidence travel, then cancels the
			// caller's ctx and blocks until its own ctx is done.
			block := func(sctx context.Context) ([]index.Hit, error) {
				for others.Load() < 4 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(10 * time.Millisecond)
				cancelled = time.Now()
				cancel()
				<-sctx.Done()
				return nil, sctx.Err()
			}
			var rec recorder
			job := &Job{Plan: fiveKinds(10 * time.Second), Rank: rec.rank,
				Retrieve: fakeRetrieve(map[index.Kind]behaviour{index.Semantic: block,
					index.Exact: other, index.Lexical: other, index.Metadata: other, index.History: other})}
			if tt.stream {
				ch, err := s.SearchStream(ctx, job)
				if err != nil {
					t.Fatal(err)
				}
				for range ch {
				}
			} else if _, err := s.Search(ctx, job); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(cancelled); took > time.Second {
				t.Errorf("search ended %v after its ctx was cancelled", took)
			}
			f := rec.final(t)
			if !slices.Equal(f.Pending, []index.Kind{index.Semantic}) || len(f.Candidates) != 1 || f.Elapsed > 5*time.Second {
				t.Errorf("final %+v", f)
			}
			if ev := evidenceOf(t, f, index.Semantic); !errors.Is(ev.Err, context.Canceled) {
				t.Errorf("semantic evidence %+v, want canceled", ev)
			}
		})
	}
}

func TestClose(t *testing.T) {
	const n = 20
	s := New(Options{})
	var submitted atomic.Int32 // exact steps run: each search's steps were all sent
	retrieve := fakeRetrieve(map[index.Kind]behaviour{
		index.Exact: func(context.Context) ([]index.Hit, error) { submitted.Add(1); return nil, nil },
		index.Lexical: func(ctx context.Context) ([]index.Hit, error) { // blocks the actor until Close
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	var finals atomic.Int32
	rank := func(g *Gathered) *registry.SearchResponse {
		if g.Final {
			finals.Add(1)
			if !slices.Contains(g.Pending, index.Lexical) {
				t.Errorf("pending %v, want lexical among them", g.Pending)
			}
			if ev := g.Evidence[len(g.Evidence)-1]; ev.Outcome != TimedOut || !errors.Is(ev.Err, ErrClosed) {
				t.Errorf("unanswered step %+v, want timed out by ErrClosed", ev)
			}
		}
		return &registry.SearchResponse{}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			job := &Job{Plan: fiveKinds(time.Minute), Stream: i%2 == 1, Retrieve: retrieve, Rank: rank}
			if i%2 == 0 {
				if _, err := s.Search(context.Background(), job); err != nil {
					t.Error(err)
				}
				return
			}
			ch, err := s.SearchStream(context.Background(), job)
			if err != nil {
				t.Error(err)
				return
			}
			for range ch {
			}
		})
	}
	for submitted.Load() < n {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	wg.Wait()
	if got := finals.Load(); got != n {
		t.Errorf("%d final Rank calls, want %d", got, n)
	}
	if _, err := s.Search(context.Background(), &Job{Retrieve: fakeRetrieve(nil), Rank: (&recorder{}).rank}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: %v, want ErrClosed", err)
	}
	if _, err := s.SearchStream(context.Background(), &Job{Retrieve: fakeRetrieve(nil), Rank: (&recorder{}).rank}); !errors.Is(err, ErrClosed) {
		t.Errorf("SearchStream after Close: %v, want ErrClosed", err)
	}
}

func TestOverload(t *testing.T) {
	s := newSystem(t, Options{MailboxSize: 1})
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	retrieve := fakeRetrieve(map[index.Kind]behaviour{index.Exact: func(context.Context) ([]index.Hit, error) {
		running <- struct{}{}
		<-release
		return nil, nil
	}})
	plan := []Step{{Kind: index.Exact, Deadline: 5 * time.Second}}
	results := make(chan snapshot, 2)
	var wg sync.WaitGroup
	search := func() {
		wg.Go(func() {
			var rec recorder
			if _, err := s.Search(context.Background(), &Job{Plan: plan, Retrieve: retrieve, Rank: rec.rank}); err != nil {
				t.Error(err)
			}
			results <- rec.final(t)
		})
	}
	search()
	<-running // the first request left the mailbox and blocks the actor
	search()  // the second waits in the mailbox
	for s.kinds[index.Exact][0].queued.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	var rec recorder
	start := time.Now()
	if _, err := s.Search(context.Background(), &Job{Plan: plan, Retrieve: retrieve, Rank: rec.rank}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("overloaded search took %v", took)
	}
	if ev := evidenceOf(t, rec.final(t), index.Exact); ev.Outcome != TimedOut || !errors.Is(ev.Err, ErrOverloaded) {
		t.Errorf("evidence %+v, want overloaded", ev)
	}
	close(release)
	<-running
	wg.Wait()
	close(results)
	for r := range results {
		if ev := evidenceOf(t, r, index.Exact); ev.Outcome != OK {
			t.Errorf("queued search: %+v", ev)
		}
	}
}

func TestSkipsExpiredRequests(t *testing.T) {
	s := newSystem(t, Options{})
	var calls atomic.Int32
	blocking, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the system closes, so a failed test cannot hang on the held actor
	retrieve := func(ctx context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
		if calls.Add(1) == 1 { // the first call holds the actor, ignoring ctx
			close(blocking)
			<-release
		}
		return nil, nil
	}
	search := func(deadline time.Duration) <-chan snapshot {
		out := make(chan snapshot, 1)
		go func() {
			var rec recorder
			if _, err := s.Search(context.Background(), &Job{Plan: []Step{{Kind: index.Exact, Deadline: deadline}},
				Retrieve: retrieve, Rank: rec.rank}); err != nil {
				t.Error(err)
			}
			out <- rec.final(t)
		}()
		return out
	}
	first := search(20 * time.Millisecond)
	<-blocking
	var queued []<-chan snapshot
	for range 5 {
		queued = append(queued, search(20*time.Millisecond))
	}
	for _, q := range append(queued, first) { // they end at their deadlines, not when the actor is free
		select {
		case f := <-q:
			if ev := evidenceOf(t, f, index.Exact); ev.Outcome != TimedOut {
				t.Errorf("evidence %+v, want timed out", ev)
			}
		case <-time.After(30 * time.Second): // the retriever is held until unblock: any bound tells
			t.Fatal("a search waited for its blocked retriever")
		}
	}
	unblock()
	waitFor(t, func() bool { return s.kinds[index.Exact][0].queued.Load() == 0 })
	// one more search proves the backlog was drained (skipped) before it
	if f := <-search(5 * time.Second); evidenceOf(t, f, index.Exact).Outcome != OK {
		t.Errorf("search after the backlog: %+v", f.Evidence)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("RetrieveFunc ran %d times, want 2: expired requests must be skipped", n)
	}
}

func TestMaxCandidates(t *testing.T) {
	hits := func(base uint32) behaviour {
		return func(context.Context) ([]index.Hit, error) {
			var h []index.Hit
			for i := range uint32(10) {
				h = append(h, index.Hit{Doc: base + i})
			}
			return h, nil
		}
	}
	tests := []struct {
		name string
		max  int
		want []uint32
	}{
		{"no cap", 0, []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109}},
		{"cap above", 50, []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109}},
		{"cap 4", 4, []uint32{0, 1, 100, 101}},
		{"cap 5", 5, []uint32{0, 1, 2, 100, 101}},
	}
	s := newSystem(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			_, err := s.Search(context.Background(), &Job{MaxCandidates: tt.max, Rank: rec.rank,
				Plan: []Step{{Kind: index.Exact, Deadline: time.Second}, {Kind: index.Lexical, Deadline: time.Second}},
				Retrieve: fakeRetrieve(map[index.Kind]behaviour{
					index.Exact:   hits(0),
					index.Lexical: sleep(10*time.Millisecond, hitsOf(100, 10)...),
				})})
			if err != nil {
				t.Fatal(err)
			}
			f := rec.final(t)
			if !slices.Equal(f.Candidates, tt.want) {
				t.Errorf("candidates %v, want %v", f.Candidates, tt.want)
			}
			if len(evidenceOf(t, f, index.Lexical).Hits) != 10 {
				t.Error("evidence trimmed: every hit must be kept")
			}
		})
	}
}

func hitsOf(base uint32, n int) []index.Hit {
	h := make([]index.Hit, n)
	for i := range h {
		h[i].Doc = base + uint32(i)
	}
	return h
}

func TestBadJob(t *testing.T) {
	rank := (&recorder{}).rank
	tests := []struct {
		name string
		job  *Job
	}{
		{"nil job", nil},
		{"nil retrieve", &Job{Rank: rank}},
		{"nil rank", &Job{Retrieve: fakeRetrieve(nil)}},
		{"unknown kind", &Job{Retrieve: fakeRetrieve(nil), Rank: rank, Plan: []Step{{Kind: index.NumKinds}}}},
		{"negative deadline", &Job{Retrieve: fakeRetrieve(nil), Rank: rank, Plan: []Step{{Kind: index.Exact, Deadline: -1}}}},
	}
	s := newSystem(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Search(context.Background(), tt.job); !errors.Is(err, ErrBadJob) {
				t.Errorf("Search: %v, want ErrBadJob", err)
			}
			if _, err := s.SearchStream(context.Background(), tt.job); !errors.Is(err, ErrBadJob) {
				t.Errorf("SearchStream: %v, want ErrBadJob", err)
			}
		})
	}
}

func TestRankPanic(t *testing.T) {
	s := newSystem(t, Options{})
	plan := []Step{{Kind: index.Exact, Deadline: time.Second}, {Kind: index.Lexical, Deadline: time.Second}}
	retrieve := fakeRetrieve(map[index.Kind]behaviour{index.Lexical: sleep(10*time.Millisecond, index.Hit{Doc: 1})})
	t.Run("final", func(t *testing.T) {
		resp, err := s.Search(context.Background(), &Job{Plan: plan, Retrieve: retrieve,
			Rank: func(*Gathered) *registry.SearchResponse { panic("rank boom") }})
		var pe *PanicError
		if resp != nil || !errors.As(err, &pe) || pe.Where != "rank" || pe.Value != "rank boom" {
			t.Errorf("got %v, %v; want a rank PanicError", resp, err)
		}
	})
	t.Run("partial", func(t *testing.T) {
		ch, err := s.SearchStream(context.Background(), &Job{Plan: plan, Retrieve: retrieve, Stream: true,
			Rank: func(g *Gathered) *registry.SearchResponse {
				if !g.Final {
					panic("partial boom")
				}
				return &registry.SearchResponse{Query: "final"}
			}})
		if err != nil {
			t.Fatal(err)
		}
		var ups []Update
		for u := range ch {
			ups = append(ups, u)
		}
		if len(ups) != 1 || !ups[0].Final || ups[0].Response.Query != "final" {
			t.Errorf("updates %+v, want only the final one", ups)
		}
	})
}

// TestRankNeverConcurrent runs many streaming searches whose Rank would notice
// overlapping calls for one search (and -race would notice shared Gathered writes).
func TestRankNeverConcurrent(t *testing.T) {
	s := newSystem(t, Options{PerKind: 2, Gatherers: 3})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			var busy atomic.Bool
			ch, err := s.SearchStream(context.Background(), &Job{Plan: fiveKinds(10 * time.Second), Stream: true,
				Retrieve: fakeRetrieve(nil),
				Rank: func(g *Gathered) *registry.SearchResponse {
					if !busy.CompareAndSwap(false, true) {
						t.Error("Rank called concurrently for one search")
					}
					defer busy.Store(false)
					time.Sleep(100 * time.Microsecond)
					return &registry.SearchResponse{Query: strconv.Itoa(len(g.Evidence))}
				}})
			if err != nil {
				t.Error(err)
				return
			}
			last := Update{}
			for u := range ch {
				last = u
			}
			if !last.Final || last.Response.Query != "5" {
				t.Errorf("last update %+v", last)
			}
		})
	}
	wg.Wait()
}

type ctxKey struct{}

func TestRetrieverContext(t *testing.T) {
	s := newSystem(t, Options{})
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	type seen struct {
		deadline time.Time
		ok       bool
		value    any
		err      error
	}
	got := make(chan seen, 1)
	start := time.Now()
	_, err := s.Search(parent, &Job{Plan: []Step{{Kind: index.Exact, Deadline: 300 * time.Millisecond}}, Rank: (&recorder{}).rank,
		Retrieve: func(ctx context.Context, _ index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
			d, ok := ctx.Deadline()
			got <- seen{d, ok, ctx.Value(ctxKey{}), ctx.Err()}
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	g := <-got
	if want := start.Add(300 * time.Millisecond); !g.ok || g.deadline.Before(want) || g.deadline.After(want.Add(time.Second)) {
		t.Errorf("deadline %v %v, want about %v", g.deadline, g.ok, want)
	}
	if g.value != "v" || g.err != nil {
		t.Errorf("value %v err %v", g.value, g.err)
	}
}

func TestDefaultDeadlines(t *testing.T) {
	s := newSystem(t, Options{})
	var plan []Step
	for k := range index.NumKinds {
		plan = append(plan, Step{Kind: k, Limit: int(k)})
	}
	plan = append(plan, Step{Kind: index.Exact, Deadline: time.Second})
	var rec recorder
	if _, err := s.Search(context.Background(), &Job{Plan: plan, Retrieve: fakeRetrieve(nil), Rank: rec.rank}); err != nil {
		t.Fatal(err)
	}
	got := rec.final(t).Planned
	want := map[index.Kind]time.Duration{index.Exact: 50 * time.Millisecond, index.Metadata: 100 * time.Millisecond,
		index.Hierarchy: 100 * time.Millisecond, index.Lexical: 200 * time.Millisecond,
		index.History: 300 * time.Millisecond, index.Semantic: 500 * time.Millisecond}
	for i, st := range got[:index.NumKinds] {
		if st.Kind != index.Kind(i) || st.Limit != i || st.Deadline != want[st.Kind] || DefaultDeadline(st.Kind) != want[st.Kind] {
			t.Errorf("planned %+v, want deadline %v", st, want[st.Kind])
		}
	}
	if got[index.NumKinds].Deadline != time.Second {
		t.Errorf("explicit deadline replaced: %+v", got[index.NumKinds])
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{OK: "ok", TimedOut: "timed_out", Failed: "failed", Crashed: "crashed", 9: "unknown"} {
		if o.String() != want {
			t.Errorf("%d: %q, want %q", o, o.String(), want)
		}
	}
}

func TestFailedRetriever(t *testing.T) {
	s := newSystem(t, Options{})
	errBad := errors.New("bad index")
	var rec recorder
	resp, err := s.Search(context.Background(), &Job{Plan: fiveKinds(time.Second), Rank: rec.rank,
		Retrieve: fakeRetrieve(map[index.Kind]behaviour{
			index.Metadata: func(context.Context) ([]index.Hit, error) { return nil, errBad },
			index.History:  func(context.Context) ([]index.Hit, error) { return nil, fmt.Errorf("x: %w", context.DeadlineExceeded) },
		})})
	if err != nil {
		t.Fatal(err)
	}
	f := rec.final(t)
	if ev := evidenceOf(t, f, index.Metadata); ev.Outcome != Failed || !errors.Is(ev.Err, errBad) {
		t.Errorf("metadata %+v", ev)
	}
	if ev := evidenceOf(t, f, index.History); ev.Outcome != TimedOut {
		t.Errorf("history %+v", ev)
	}
	m := resp.SearchMeta
	if !slices.Equal(m.FailedRetrievers, []string{"metadata"}) || !slices.Equal(m.TimedOutRetrievers, []string{"history"}) || !m.Partial {
		t.Errorf("meta %+v", m)
	}
}

// TestAnswerNotHeldByNextRequest: a retriever answering while more requests wait in
// its mailbox must not keep the gather actor's run for itself, since the next request
// may block it for long.
func TestAnswerNotHeldByNextRequest(t *testing.T) {
	s := newSystem(t, Options{})
	started, gate, hold := make(chan struct{}), make(chan struct{}), make(chan struct{})
	releaseHold := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(releaseHold) // before Close, which waits for the stuck retriever
	retrieve := func(_ context.Context, _ index.Kind, q *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
		switch q.Text {
		case "first":
			close(started)
			<-gate
		case "third":
			<-hold // ignores its context, like a stuck retriever
		}
		return []index.Hit{{Doc: 1}}, nil
	}
	search := func(text string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := s.Search(context.Background(), &Job{Query: &index.Query{Text: text},
				Plan: []Step{{Kind: index.Exact, Deadline: time.Minute}}, Retrieve: retrieve, Rank: (&recorder{}).rank})
			done <- err
		}()
		return done
	}
	first := search("first")
	<-started // the first request holds the exact retriever
	second := search("second")
	waitFor(t, func() bool { return s.kinds[index.Exact][0].queued.Load() == 1 })
	third := search("third")
	waitFor(t, func() bool { return s.kinds[index.Exact][0].queued.Load() == 2 })
	close(gate) // first answers; second answers at once; third blocks the retriever
	for _, done := range []<-chan error{first, second} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("an answered search waited for the retriever's next request")
		}
	}
	releaseHold()
	if err := <-third; err != nil {
		t.Fatal(err)
	}
}

func TestLongestFirst(t *testing.T) {
	s := newSystem(t, Options{})
	for k, ns := range map[index.Kind]int64{index.Exact: 50, index.Lexical: 900, index.Semantic: 900, index.History: 300} {
		s.expect[k].Store(ns)
	}
	se := &search{}
	for _, st := range fiveKinds(time.Second) { // exact, lexical, semantic, metadata, history
		se.reqs = append(se.reqs, retrieval{kind: st.Kind})
	}
	if got, want := s.longestFirst(se), []int{1, 2, 4, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
