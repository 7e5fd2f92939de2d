package feedback

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newRecorder(t *testing.T, st Store, o Options) *Recorder {
	t.Helper()
	r, err := New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// succeed plays one successful session: search query, describe id, run id successfully.
func succeed(t *testing.T, r *Recorder, tenant, user, session, query, id string) {
	t.Helper()
	r.Searched(tenant, session, user, query, []string{id, "other.one"}, false)
	if !r.Described(tenant, session, id) || !r.Ran(tenant, session, id, true) {
		t.Fatalf("session %s had no search to count its steps to", session)
	}
}

func vote(vs []index.Vote, id string) (index.Vote, bool) {
	for _, v := range vs {
		if v.ID == id {
			return v, true
		}
	}
	return index.Vote{}, false
}

func TestVotesFindSimilarSuccess(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	succeed(t, r, "acme", "alice", "s1", "roll back the billing deploy", "deploy.rollback")
	vs := r.Votes("acme", "please roll back the billing deploy now")
	v, ok := vote(vs, "deploy.rollback")
	if !ok || v.Sessions != 1 || v.Weight <= 0 || v.Weight > DefaultUserCap {
		t.Fatalf("votes %+v: want deploy.rollback from 1 session, strength in (0, %v]", vs, DefaultUserCap)
	}
	if _, ok := vote(vs, "other.one"); ok {
		t.Fatalf("a capability shown but never run got a vote: %+v", vs)
	}
	if vs := r.Votes("acme", "translate this poem into french"); len(vs) != 0 {
		t.Fatalf("an unrelated query got votes: %+v", vs)
	}
}

func TestVotesNeverCrossTenants(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	succeed(t, r, "acme", "alice", "s1", "roll back the billing deploy", "deploy.rollback")
	if vs := r.Votes("globex", "roll back the billing deploy"); len(vs) != 0 {
		t.Fatalf("tenant globex sees acme's sessions: %+v", vs)
	}
	// a session id of another tenant is another session
	r.Searched("globex", "s1", "bob", "roll back the billing deploy", []string{"deploy.rollback"}, false)
	if r.Described("acme", "s9", "deploy.rollback") {
		t.Fatal("a describe counted to a session that never searched")
	}
	if f := r.Funnel("globex", func(string) bool { return true }); len(f.Capabilities) != 1 || f.Capabilities[0].Described != 0 || f.Capabilities[0].Succeeded != 0 {
		t.Fatalf("globex funnel counts acme's steps: %+v", f)
	}
}

// TestUserCap: one user repeating a wrong choice weighs at most UserCap, and fewer users
// choosing well outweigh them.
func TestUserCap(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	q := "send the weekly report to the team"
	for i := range 50 {
		succeed(t, r, "acme", "mallory", fmt.Sprint("m", i), q, "wrong.choice")
	}
	for i, u := range []string{"alice", "bob"} {
		succeed(t, r, "acme", u, fmt.Sprint("g", i), q, "right.choice")
	}
	vs := r.Votes("acme", q)
	wrong, _ := vote(vs, "wrong.choice")
	right, _ := vote(vs, "right.choice")
	if wrong.Weight > DefaultUserCap+1e-9 || wrong.Sessions != 50 {
		t.Fatalf("50 sessions of one user: %+v, want strength ≤ %v", wrong, DefaultUserCap)
	}
	if right.Weight <= wrong.Weight || vs[0].ID != "right.choice" {
		t.Fatalf("two users (%+v) must outweigh one user's 50 sessions (%+v): %+v", right, wrong, vs)
	}
}

func TestVotesDecay(t *testing.T) {
	c := newClock()
	o := Options{Now: c.now, HalfLife: time.Hour, UserCap: 1}
	r := newRecorder(t, openStore(t), o)
	q := "rotate the api keys of the payments service"
	succeed(t, r, "acme", "alice", "s1", q, "keys.rotate")
	at := func() float64 {
		v, _ := vote(r.Votes("acme", q), "keys.rotate")
		return v.Weight
	}
	w0 := at()
	c.advance(time.Hour)
	w1 := at()
	c.advance(9 * time.Hour)
	w10 := at()
	if math.Abs(w0-1) > 1e-9 || math.Abs(w1-0.5) > 1e-9 || math.Abs(w10-math.Exp2(-10)) > 1e-9 {
		t.Fatalf("strength at 0, 1 and 10 half-lives: %v %v %v, want 1 0.5 2^-10", w0, w1, w10)
	}
}

func TestNotLearned(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	q := "restart the staging database"
	r.Searched("acme", "s1", "alice", q, []string{"db.restart"}, false)
	r.Described("acme", "s1", "db.restart")
	r.Ran("acme", "s1", "db.restart", false) // failed
	r.Searched("acme", "s2", "alice", q, []string{"db.restart"}, false)
	r.Ran("acme", "s2", "db.other", true) // never shown nor described after this search
	if vs := r.Votes("acme", q); len(vs) != 0 {
		t.Fatalf("a failed run or a run the search did not lead to was learned: %+v", vs)
	}
	if r.Ran("acme", "s3", "db.restart", true) {
		t.Fatal("a run counted to a session that never searched")
	}
}

func TestFunnel(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	r.Searched("acme", "s1", "alice", "deploy billing", []string{"deploy.run", "deploy.rollback"}, false)
	r.Described("acme", "s1", "deploy.run")
	r.Described("acme", "s1", "deploy.run") // once per search
	r.Ran("acme", "s1", "deploy.run", false)
	r.Ran("acme", "s1", "deploy.run", true) // a retry that succeeds: one run, one success
	r.Searched("acme", "s2", "bob", "what can I do", []string{"deploy.run"}, true)
	f := r.Funnel("acme", func(id string) bool { return id != "deploy.rollback" })
	want := Funnel{
		Capabilities:     []CapabilityFunnel{{ResourceID: "deploy.run", Searched: 2, Described: 1, Ran: 1, Succeeded: 1}},
		SearchToDescribe: 0.5, DescribeToRun: 1, RunSuccess: 1, ClarificationRate: 0.5,
	}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("funnel %+v, want %+v", f, want)
	}
	if tot := r.Totals(); tot.Searches != 2 || tot.Succeeded != 1 {
		t.Fatalf("totals %+v", tot)
	}
}

// TestReload: what a recorder learned and counted comes back from the store.
func TestReload(t *testing.T) {
	st := openStore(t)
	r, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	succeed(t, r, "acme", "alice", "s1", "roll back the billing deploy", "deploy.rollback")
	r.Searched("acme", "s2", "bob", "list the deploys", []string{"deploy.list"}, true)
	before := r.Funnel("acme", func(string) bool { return true })
	votes := fmt.Sprint(r.Votes("acme", "roll back the billing deploy"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r2 := newRecorder(t, st, Options{})
	if after := r2.Funnel("acme", func(string) bool { return true }); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("funnel after reload %+v, before %+v", after, before)
	}
	if got := fmt.Sprint(r2.Votes("acme", "roll back the billing deploy")); got != votes {
		t.Fatalf("votes after reload %s, before %s", got, votes)
	}
	// the reloaded session is still current: its describe counts
	if !r2.Described("acme", "s2", "deploy.list") {
		t.Fatal("session s2 lost its search on reload")
	}
}

type failingStore struct{ Store }

func (failingStore) PutFeedback(context.Context, []store.FeedbackRecord) error {
	return errors.New("disk full")
}

func TestFlushError(t *testing.T) {
	r := newRecorder(t, failingStore{openStore(t)}, Options{})
	r.Searched("acme", "s1", "alice", "deploy", nil, false)
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a failed write was not reported")
	}
	// recording goes on in memory
	if f := r.Funnel("acme", func(string) bool { return true }); f.ClarificationRate != 0 || r.Totals().Searches != 1 {
		t.Fatalf("funnel %+v", f)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []Options{{MinSimilarity: 1.5}, {UserCap: 2}, {MinSimilarity: 0.2, MinSupport: 0.25},
		{MinSupport: 0.15, ConsensusSim: 0.1}} {
		if _, err := New(openStore(t), o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestConcurrentRecording(t *testing.T) {
	r := newRecorder(t, openStore(t), Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				s := fmt.Sprint(g, "-", i)
				r.Searched("acme", s, fmt.Sprint("u", g), "roll back the deploy", []string{"deploy.rollback"}, false)
				r.Described("acme", s, "deploy.rollback")
				r.Ran("acme", s, "deploy.rollback", true)
				r.Votes("acme", "roll back the deploy")
			}
		}()
	}
	wg.Wait()
	if tot := r.Totals(); tot.Searches != 400 || tot.Succeeded != 400 {
		t.Fatalf("totals %+v", tot)
	}
}

// nopStore keeps nothing.
type nopStore struct{}

func (nopStore) PutFeedback(context.Context, []store.FeedbackRecord) error { return nil }
func (nopStore) EachFeedback(func(store.FeedbackRecord) error) error       { return nil }
