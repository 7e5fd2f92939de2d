package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// ProjectWeight is the share of project-level use in Uses: user + ProjectWeight*project.
const ProjectWeight = 0.5

// histValue is a decayed use count: weight w as of time t (unix nanoseconds).
// Encoding: float64 bits u64 BE, then t i64 BE.
type histValue struct {
	w float64
	t int64
}

func (h histValue) encode() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, math.Float64bits(h.w))
	binary.BigEndian.PutUint64(b[8:], uint64(h.t))
	return b
}

func decodeHist(b []byte) (histValue, bool) {
	if len(b) != 16 {
		return histValue{}, false
	}
	return histValue{w: math.Float64frombits(binary.BigEndian.Uint64(b)), t: int64(binary.BigEndian.Uint64(b[8:]))}, true
}

// decay returns 0.5^(age/halfLife) (1 for a negative age).
func decay(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// fold adds one use at time at to h with the given half-life.
func (h histValue) fold(at int64, halfLife time.Duration) histValue {
	if h.w == 0 {
		return histValue{w: 1, t: at}
	}
	if at >= h.t {
		return histValue{w: h.w*decay(time.Duration(at-h.t), halfLife) + 1, t: at}
	}
	return histValue{w: h.w + decay(time.Duration(h.t-at), halfLife), t: h.t}
}

// at returns the weight decayed to now.
func (h histValue) at(now int64, halfLife time.Duration) float64 {
	return h.w * decay(time.Duration(now-h.t), halfLife)
}

func validScope(s string) bool { return !strings.ContainsRune(s, 0) && len(s) <= 256 }

// RecordUse counts one use of capability id at time at by user in project (either may be
// empty: that level is not counted). Each (user, id) and (project, id) keeps one decayed
// weight, folded with Options.HistoryHalfLife, so the cost of a use and of Uses does not grow
// with the number of uses. Once it returns, Uses sees the use.
func (s *Store) RecordUse(ctx context.Context, user, project, id string, at time.Time) error {
	if id == "" || !validScope(user) || !validScope(project) || !validScope(id) {
		return fmt.Errorf("%w: history scope or id", ErrInvalid)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	var scopes []histScope
	if user != "" {
		scopes = append(scopes, histScope{pfxHistU, user})
	}
	if project != "" {
		scopes = append(scopes, histScope{pfxHistP, project})
	}
	hl := s.opt.HistoryHalfLife
	err := s.update(ctx, func(txn *badger.Txn) error {
		for _, sc := range scopes {
			k := histKey(sc.pfx, sc.scope, id)
			var h histValue
			v, err := getValue(txn, k)
			switch {
			case errors.Is(err, badger.ErrKeyNotFound):
			case err != nil:
				return err
			default:
				h, _ = decodeHist(v) // a damaged value restarts the count
			}
			if err := txn.Set(k, h.fold(at.UnixNano(), hl).encode()); err != nil {
				return err
			}
		}
		return nil
	})
	// Forgotten whatever update returned: an error does not prove that nothing was written,
	// and the cost is one read of each scope from Badger.
	s.hist.forget(scopes)
	return wrapDB("record use", err)
}

// Uses returns, for every capability id user or project has used, its decayed weight as of
// now: user + ProjectWeight × project, where each level is Σ 0.5^(age/HistoryHalfLife) over
// its uses. Weights below 1e-6 are left out; the map is nil when there are none.
//
// Uses reads the scopes' stored weights from memory once it has read them from Badger (see
// histCache) and decays them to now on every call. RawSet and RawDelete of history keys
// bypass that memory as they bypass every other check: after repairing history keys that
// way, a store serves the old weights of scopes it had read until their next RecordUse or
// until it is reopened.
func (s *Store) Uses(user, project string, now time.Time) (map[string]float64, error) {
	return s.uses(user, project, func() time.Time { return now })
}

// uses is Uses with the time read from now only when there is something to decay: a
// search by a caller without history does not even read the clock.
func (s *Store) uses(user, project string, now func() time.Time) (map[string]float64, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	u, err := s.scopeUses(histScope{pfxHistU, user})
	if err != nil {
		return nil, wrapDB("uses", err)
	}
	p, err := s.scopeUses(histScope{pfxHistP, project})
	if err != nil {
		return nil, wrapDB("uses", err)
	}
	if len(u)+len(p) == 0 {
		return nil, nil
	}
	// u and p are both sorted by id, so one merge pass joins them.
	var out map[string]float64
	hl, t := s.opt.HistoryHalfLife, now().UnixNano()
	for len(u) > 0 || len(p) > 0 {
		var id string
		var w float64
		switch {
		case len(p) == 0 || len(u) > 0 && u[0].id < p[0].id:
			id, w = u[0].id, u[0].h.at(t, hl)
			u = u[1:]
		case len(u) == 0 || p[0].id < u[0].id:
			id, w = p[0].id, ProjectWeight*p[0].h.at(t, hl)
			p = p[1:]
		default:
			id, w = u[0].id, u[0].h.at(t, hl)+ProjectWeight*p[0].h.at(t, hl)
			u, p = u[1:], p[1:]
		}
		if w < 1e-6 {
			continue
		}
		if out == nil {
			out = make(map[string]float64, len(u)+len(p)+1)
		}
		out[id] = w
	}
	return out, nil
}

// histScope names the uses of one user (pfx pfxHistU) or one project (pfxHistP).
type histScope struct{ pfx, scope string }

// histUse is the stored weight of one capability id in a scope.
type histUse struct {
	id string
	h  histValue
}

// maxHistScopes bounds the scopes histCache holds; reading one more evicts an arbitrary one.
const maxHistScopes = 1 << 14

// histCache holds the stored weights of the scopes Uses has read, so that a search reads
// memory instead of opening a Badger transaction and iterator (tens of µs, even for a
// caller who never used anything). The zero value is an empty cache. Lookups take no lock,
// so concurrent searches do not contend for it.
//
// A cached list is never changed. RecordUse drops the scopes it wrote after its commit and
// counts the write in epoch; a reader installs what it read only if epoch did not move
// since before its read transaction began. So a reader whose transaction predates a
// commit can never install the older weights after that commit's forget, and every Uses
// that starts after RecordUse returns reads the new weight, from Badger or from a list
// installed after the commit. Decay is computed by Uses, so cached weights never go stale
// with time.
type histCache struct {
	// scopes maps a scope read to its uses sorted by id ([]histUse; nil records no uses).
	// Only keep and forget change it, under mu.
	scopes sync.Map
	// epoch counts the forgets done; it moves only under mu.
	epoch atomic.Uint64
	// mu serializes keep and forget, so that a keep sees every earlier forget; it
	// protects n, the number of scopes held.
	mu sync.Mutex
	n  int
}

// lookup returns the cached uses of sc and whether it has them; without them it returns
// the epoch to pass to keep.
func (c *histCache) lookup(sc histScope) (uses []histUse, ok bool, epoch uint64) {
	epoch = c.epoch.Load()
	v, ok := c.scopes.Load(sc)
	if !ok {
		return nil, false, epoch
	}
	return v.([]histUse), true, epoch
}

// keep caches the uses of sc read from Badger, unless a forget happened since epoch.
func (c *histCache) keep(sc histScope, uses []histUse, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch.Load() != epoch {
		return
	}
	if _, held := c.scopes.Swap(sc, uses); held {
		return
	}
	if c.n++; c.n > maxHistScopes {
		c.scopes.Range(func(k, _ any) bool {
			if k == sc {
				return true
			}
			c.scopes.Delete(k)
			c.n--
			return false
		})
	}
}

// forget drops the cached uses of scopes after a write of them.
func (c *histCache) forget(scopes []histScope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.Add(1)
	for _, sc := range scopes {
		if _, held := c.scopes.LoadAndDelete(sc); held {
			c.n--
		}
	}
}

// scopeUses returns the stored weights of sc's uses sorted by id (Badger's key order; nil
// for an empty scope name or no uses), from the cache or else from Badger.
func (s *Store) scopeUses(sc histScope) ([]histUse, error) {
	if sc.scope == "" {
		return nil, nil
	}
	uses, ok, epoch := s.hist.lookup(sc)
	if ok {
		return uses, nil
	}
	err := s.db.View(func(txn *badger.Txn) error {
		p := histKey(sc.pfx, sc.scope, "")
		o := badger.DefaultIteratorOptions
		o.Prefix = p
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id := string(it.Item().Key()[len(p):])
			err := it.Item().Value(func(v []byte) error {
				if h, ok := decodeHist(v); ok {
					uses = append(uses, histUse{id, h})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.hist.keep(sc, uses, epoch)
	return uses, nil
}

// HistorySource adapts a Store to the index package's HistorySource interface
// (Uses(user, project string) map[string]float64), decaying to the current time.
type HistorySource struct {
	s *Store
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// HistorySource returns the adapter of s for the history retriever.
func (s *Store) HistorySource() *HistorySource { return &HistorySource{s: s} }

// Uses returns the decayed use weights of user and project (see Store.Uses). On a store
// error it logs at Warn and returns nil: history is a weak signal, never a failure.
func (h *HistorySource) Uses(user, project string) map[string]float64 {
	now := h.Now
	if now == nil {
		now = time.Now
	}
	m, err := h.s.uses(user, project, now)
	if err != nil {
		h.s.log.Warn("store: history read failed", "err", err)
		return nil
	}
	return m
}
