package feedback

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry/store"
)

// Defaults of Options.
const (
	DefaultHalfLife      = 30 * 24 * time.Hour
	DefaultMinSimilarity = 0.3
	DefaultMinSupport    = 0.15
	DefaultUserCap       = 0.5
	DefaultConsensusK    = 3
	DefaultConsensusSim  = 0.2
	DefaultConsensus     = 0.5
	DefaultMaxSessions   = 1 << 16
	DefaultMaxLearned    = 1 << 17
)

// Options configure New. The zero value takes every default.
type Options struct {
	// HalfLife is the age at which a past session's vote counts half (default 30 days).
	HalfLife time.Duration
	// MinSimilarity is the least cosine similarity (0..1) between a query and a past
	// successful search for that search to lead a vote for its capability (default 0.3).
	MinSimilarity float64
	// MinSupport (0..MinSimilarity) is the least similarity of a past search that adds to
	// the vote of a capability another search leads (default 0.15, or MinSimilarity when
	// that is lower): a capability only weakly like the query in every past search gets
	// no vote, however many such searches there are.
	MinSupport float64
	// ConsensusK, ConsensusSim and Consensus give a capability that no past search leads a
	// vote when the query's nearest past searches agree on it: among the ConsensusK (default
	// 3) past searches most like the query and at least ConsensusSim (default 0.2, at least
	// MinSupport) like it, the capability's searches hold at least Consensus (default 0.5)
	// of their similarity. Its vote is then its best search's similarity times that share:
	// below MinSimilarity, so weaker than any led vote. Consensus above 1 turns it off.
	ConsensusK   int
	ConsensusSim float64
	Consensus    float64
	// UserCap (0..1) caps one user's vote for one capability (default 0.5): a user's
	// sessions, however many, give it a strength of at most UserCap, and the users' capped
	// votes join as independent evidence, 1 − Π(1 − vote), so that only several users make
	// a vote strong.
	UserCap float64
	// MaxSessions bounds the live sessions kept per tenant (default 65536); the oldest are
	// forgotten first (their records stay in the store).
	MaxSessions int
	// MaxLearned bounds the successful searches learned per tenant (default 131072); the
	// oldest are forgotten first.
	MaxLearned int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
}

// Store keeps the records; *store.Store implements it.
type Store interface {
	PutFeedback(ctx context.Context, recs []store.FeedbackRecord) error
	EachFeedback(fn func(store.FeedbackRecord) error) error
}

// Recorder records sessions and answers votes and funnels. All methods are safe for
// concurrent use.
type Recorder struct {
	opt Options
	st  Store
	log *slog.Logger

	mu      sync.RWMutex
	tenants map[string]*tenant

	// pending holds the records changed since the last write, by key; pmu guards it.
	pmu     sync.Mutex
	pending map[recKey]store.FeedbackRecord
	// wmu serialises writes, so that a record's states reach the store in order.
	wmu sync.Mutex

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type recKey struct {
	tenant, session string
	at              int64
}

// New loads the records of st and starts the background writer. Close stops it.
func New(st Store, opt Options) (*Recorder, error) {
	if opt.HalfLife <= 0 {
		opt.HalfLife = DefaultHalfLife
	}
	if opt.MinSimilarity <= 0 {
		opt.MinSimilarity = DefaultMinSimilarity
	}

	if opt.MinSimilarity > 1 {
		return nil, fmt.Errorf("feedback: MinSimilarity %v is above 1", opt.MinSimilarity)
	}
	if opt.MinSupport <= 0 {
		opt.MinSupport = min(DefaultMinSupport, opt.MinSimilarity)
	}
	if opt.MinSupport > opt.MinSimilarity {
		return nil, fmt.Errorf("feedback: MinSupport %v is above MinSimilarity %v", opt.MinSupport, opt.MinSimilarity)
	}
	if opt.ConsensusK <= 0 {
		opt.ConsensusK = DefaultConsensusK
	}
	if opt.ConsensusSim <= 0 {
		opt.ConsensusSim = max(DefaultConsensusSim, opt.MinSupport)
	}
	if opt.ConsensusSim < opt.MinSupport {
		return nil, fmt.Errorf("feedback: ConsensusSim %v is below MinSupport %v", opt.ConsensusSim, opt.MinSupport)
	}
	if opt.Consensus <= 0 {
		opt.Consensus = DefaultConsensus
	}
	if opt.UserCap <= 0 {
		opt.UserCap = DefaultUserCap
	}
	if opt.UserCap > 1 {
		return nil, fmt.Errorf("feedback: UserCap %v is above 1", opt.UserCap)
	}
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = DefaultMaxSessions
	}
	if opt.MaxLearned <= 0 {
		opt.MaxLearned = DefaultMaxLearned
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{opt: opt, st: st, log: log, tenants: map[string]*tenant{}, pending: map[recKey]store.FeedbackRecord{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	err := st.EachFeedback(func(rec store.FeedbackRecord) error {
		r.tenant(rec.Tenant).load(&rec, r.opt)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("feedback: loading the records: %w", err)
	}
	go r.writer()
	return r, nil
}

// Close writes what is pending and stops the writer. Later records stay in memory only.
func (r *Recorder) Close() error {
	r.once.Do(func() {
		close(r.stop)
		<-r.done
	})
	return r.Flush(context.Background())
}

// Flush writes the records changed so far to the store.
func (r *Recorder) Flush(ctx context.Context) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.pmu.Lock()
	recs := make([]store.FeedbackRecord, 0, len(r.pending))
	for _, rec := range r.pending {
		recs = append(recs, rec)
	}
	clear(r.pending)
	r.pmu.Unlock()
	var errs []error
	for len(recs) > 0 {
		n := min(len(recs), 512)
		if err := r.st.PutFeedback(ctx, recs[:n]); err != nil {
			errs = append(errs, err)
		}
		recs = recs[n:]
	}
	if len(errs) > 0 {
		return fmt.Errorf("feedback: writing %d batches failed: %w", len(errs), errs[0])
	}
	return nil
}

func (r *Recorder) writer() {
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-r.wake:
			if err := r.Flush(context.Background()); err != nil {
				r.log.Warn("feedback: writing records failed", "err", err)
			}
		}
	}
}

// changed queues c, a copy of a record that nothing else holds, for the writer.
func (r *Recorder) changed(c store.FeedbackRecord) {
	r.pmu.Lock()
	r.pending[recKey{c.Tenant, c.Session, c.At.UnixNano()}] = c
	r.pmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// tenant returns the tables of tenant name, creating them.
func (r *Recorder) tenant(name string) *tenant {
	r.mu.RLock()
	t := r.tenants[name]
	r.mu.RUnlock()
	if t != nil {
		return t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t = r.tenants[name]; t == nil {
		t = newTenant()
		r.tenants[name] = t
	}
	return t
}

// lookup returns the tables of tenant name, or nil.
func (r *Recorder) lookup(name string) *tenant {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tenants[name]
}

// Searched records a search of a session: its text, the capabilities it showed, best
// first, and whether it asked the caller to clarify. It becomes the session's current
// search, to which later describes and runs are counted. A search without a tenant or a
// session is not recorded.
func (r *Recorder) Searched(tenant, session, user, query string, shown []string, clarify bool) {
	if tenant == "" || session == "" {
		return
	}
	now := r.opt.Now()
	t := r.tenant(tenant)
	t.mu.Lock()
	c := t.searched(&store.FeedbackRecord{Tenant: tenant, Session: session, At: now, User: user, Query: query,
		Shown: slices.Clone(shown), Clarify: clarify}, r.opt.MaxSessions)
	t.mu.Unlock()
	r.changed(c)
}

// Described records that the session described capability id after its current search.
// It reports whether the session had a search to count it to.
func (r *Recorder) Described(tenant, session, id string) bool {
	t := r.lookup(tenant)
	if t == nil || session == "" {
		return false
	}
	t.mu.Lock()
	c, ok := t.described(session, id)
	t.mu.Unlock()
	if ok {
		r.changed(c)
	}
	return ok
}

// Ran records that the session ran capability id to an outcome (ok: it succeeded) after
// its current search. A success of a capability the search showed or the session described
// teaches the tenant that searches like it lead there. It reports whether the session had
// a search to count it to.
func (r *Recorder) Ran(tenant, session, id string, ok bool) bool {
	t := r.lookup(tenant)
	if t == nil || session == "" {
		return false
	}
	now := r.opt.Now()
	t.mu.Lock()
	c, found := t.ran(session, id, ok, now, r.opt.MaxLearned)
	t.mu.Unlock()
	if found {
		r.changed(c)
	}
	return found
}

// Votes returns the votes of the tenant's past successful sessions whose searches were like
// query, heaviest first (see the package documentation). It implements
// index.FeedbackSource.
func (r *Recorder) Votes(tenant, query string) []index.Vote {
	t := r.lookup(tenant)
	if t == nil {
		return nil
	}
	t.mu.RLock()
	none := len(t.learned) == 0
	t.mu.RUnlock()
	if none {
		return nil // nothing learned: not even the query's terms are needed
	}
	terms := Terms(query)
	now := r.opt.Now().UnixNano()
	t.mu.RLock()
	if t.stale {
		t.mu.RUnlock()
		t.mu.Lock()
		defer t.mu.Unlock()
		t.refresh()
		return t.votes(terms, r.opt, now)
	}
	defer t.mu.RUnlock()
	return t.votes(terms, r.opt, now)
}

// Funnel is a tenant's funnel (the JSON of GET /v1/stats).
type Funnel struct {
	// Capabilities are the counts of each capability, most shown first.
	Capabilities     []CapabilityFunnel `json:"funnel"`
	SearchToDescribe float64            `json:"search_to_describe"`
	DescribeToRun    float64            `json:"describe_to_run"`
	RunSuccess       float64            `json:"run_success"`
	// ClarificationRate is the share of searches whose answer was not confident.
	ClarificationRate float64 `json:"clarification_rate"`
}

// CapabilityFunnel is one capability's funnel: how many recorded searches showed it, how
// many were followed by its describe, its run (to an outcome) and its successful run.
type CapabilityFunnel struct {
	ResourceID string `json:"resource_id"`
	Searched   int    `json:"searched"`
	Described  int    `json:"described"`
	Ran        int    `json:"ran"`
	Succeeded  int    `json:"succeeded"`
}

// Funnel returns the tenant's funnel, listing only the capabilities visible reports true
// for (the rates are the tenant's, over every search).
func (r *Recorder) Funnel(tenant string, visible func(id string) bool) Funnel {
	out := Funnel{Capabilities: []CapabilityFunnel{}}
	t := r.lookup(tenant)
	if t == nil {
		return out
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for id, c := range t.caps {
		if visible(id) {
			out.Capabilities = append(out.Capabilities, CapabilityFunnel{ResourceID: id, Searched: c.searched,
				Described: c.described, Ran: c.ran, Succeeded: c.succeeded})
		}
	}
	slices.SortFunc(out.Capabilities, func(a, b CapabilityFunnel) int {
		if c := cmp.Compare(b.Searched, a.Searched); c != 0 {
			return c
		}
		return cmp.Compare(a.ResourceID, b.ResourceID)
	})
	out.SearchToDescribe, out.DescribeToRun, out.RunSuccess, out.ClarificationRate = t.tot.Rates()
	return out
}

// Totals returns the funnel counts of every tenant together (for metrics, which name no
// tenant and no capability).
func (r *Recorder) Totals() Totals {
	r.mu.RLock()
	ts := make([]*tenant, 0, len(r.tenants))
	for _, t := range r.tenants {
		ts = append(ts, t)
	}
	r.mu.RUnlock()
	var out Totals
	for _, t := range ts {
		t.mu.RLock()
		out.add(t.tot)
		t.mu.RUnlock()
	}
	return out
}

// uniqueTerms returns terms without repeats, in place.
func uniqueTerms(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// decay returns 0.5^(age/halfLife) (1 for a negative age).
func decay(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// sortVotes orders votes heaviest first, ties by id.
func sortVotes(v []index.Vote) {
	slices.SortFunc(v, func(a, b index.Vote) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
