package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
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
// with the number of uses.
func (s *Store) RecordUse(ctx context.Context, user, project, id string, at time.Time) error {
	if id == "" || !validScope(user) || !validScope(project) || !validScope(id) {
		return fmt.Errorf("%w: history scope or id", ErrInvalid)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	var keys [][]byte
	if user != "" {
		keys = append(keys, histKey(pfxHistU, user, id))
	}
	if project != "" {
		keys = append(keys, histKey(pfxHistP, project, id))
	}
	hl := s.opt.HistoryHalfLife
	err := s.update(ctx, func(txn *badger.Txn) error {
		for _, k := range keys {
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
	return wrapDB("record use", err)
}

// Uses returns, for every capability id user or project has used, its decayed weight as of
// now: user + ProjectWeight × project, where each level is Σ 0.5^(age/HistoryHalfLife) over
// its uses. Weights below 1e-6 are left out.
func (s *Store) Uses(user, project string, now time.Time) (map[string]float64, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	out := map[string]float64{}
	hl := s.opt.HistoryHalfLife
	err := s.db.View(func(txn *badger.Txn) error {
		scan := func(pfx, scope string, weight float64) error {
			if scope == "" {
				return nil
			}
			p := histKey(pfx, scope, "")
			o := badger.DefaultIteratorOptions
			o.Prefix = p
			it := txn.NewIterator(o)
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				id := string(it.Item().Key()[len(p):])
				err := it.Item().Value(func(v []byte) error {
					if h, ok := decodeHist(v); ok {
						out[id] += weight * h.at(now.UnixNano(), hl)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := scan(pfxHistU, user, 1); err != nil {
			return err
		}
		return scan(pfxHistP, project, ProjectWeight)
	})
	if err != nil {
		return nil, wrapDB("uses", err)
	}
	for id, w := range out {
		if w < 1e-6 {
			delete(out, id)
		}
	}
	return out, nil
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
	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	m, err := h.s.Uses(user, project, now)
	if err != nil {
		h.s.log.Warn("store: history read failed", "err", err)
		return nil
	}
	return m
}
