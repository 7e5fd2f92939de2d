package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// FeedbackTTL is how long a feedback record is kept after its last write.
const FeedbackTTL = 180 * 24 * time.Hour

// maxFeedbackBatch bounds the records PutFeedback writes in one transaction; a larger batch
// is refused, so that a batch is always one commit (all or nothing).
const maxFeedbackBatch = 512

// FeedbackRecord is one search of a session and what it led to: the capabilities the
// session described after it, ran after it, and the runs that succeeded. It is written when
// the search answers and written again, whole, after each later step of the session.
type FeedbackRecord struct {
	// Tenant and Session name the session; At (the search's time) tells its searches apart.
	Tenant  string    `json:"tenant"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
	// User is the caller who searched.
	User string `json:"user,omitempty"`
	// Query is the search's text. It is never shown to another user.
	Query string `json:"query"`
	// Shown are the capabilities the answer listed, best first.
	Shown []string `json:"shown,omitempty"`
	// Clarify says the answer asked the caller to say more (not a confident match).
	Clarify bool `json:"clarify,omitempty"`
	// Described, Ran and Succeeded are the capabilities described, run (to an outcome) and
	// run successfully after the search, in order, each once.
	Described []string `json:"described,omitempty"`
	Ran       []string `json:"ran,omitempty"`
	Succeeded []string `json:"succeeded,omitempty"`
}

// feedbackKey is fb/<tenant>\x00<session>\x00<unix nanos u64 BE>.
func feedbackKey(r *FeedbackRecord) []byte {
	return cat([]byte(pfxFeedback), []byte(r.Tenant), []byte{0}, []byte(r.Session), []byte{0}, be64(uint64(r.At.UnixNano())))
}

func (r *FeedbackRecord) valid() error {
	switch {
	case r.Tenant == "" || !validScope(r.Tenant):
		return fmt.Errorf("%w: feedback record: tenant %q", ErrInvalid, r.Tenant)
	case r.Session == "" || !validScope(r.Session):
		return fmt.Errorf("%w: feedback record of tenant %q: session %q", ErrInvalid, r.Tenant, r.Session)
	case r.At.UnixNano() <= 0:
		return fmt.Errorf("%w: feedback record of session %q: time %v", ErrInvalid, r.Session, r.At)
	}
	return nil
}

// PutFeedback writes records (new ones, or new states of ones already written: a record is
// identified by its tenant, session and time) in one transaction, each kept for FeedbackTTL.
// Either every record is written or none is. At most 512 records per call.
func (s *Store) PutFeedback(ctx context.Context, recs []FeedbackRecord) error {
	if len(recs) > maxFeedbackBatch {
		return fmt.Errorf("%w: %d feedback records in one batch (at most %d)", ErrInvalid, len(recs), maxFeedbackBatch)
	}
	entries := make([]*badger.Entry, len(recs))
	for i := range recs {
		r := &recs[i]
		if err := r.valid(); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("%w: feedback record %d: %w", ErrInvalid, i, err)
		}
		entries[i] = badger.NewEntry(feedbackKey(r), b).WithTTL(FeedbackTTL)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	return wrapDB("put feedback", s.update(ctx, func(txn *badger.Txn) error {
		for _, e := range entries {
			if err := txn.SetEntry(e); err != nil {
				return err
			}
		}
		return nil
	}))
}

// EachFeedback calls fn with every feedback record kept, by tenant, session and time. A
// record that does not decode is skipped and logged; an error of fn stops the walk and is
// returned.
func (s *Store) EachFeedback(fn func(FeedbackRecord) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	return wrapDB("feedback", s.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = []byte(pfxFeedback)
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var r FeedbackRecord
			err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &r) })
			if err != nil {
				s.log.Warn("store: feedback record unreadable", "key", it.Item().KeyCopy(nil), "err", err)
				continue
			}
			if k := it.Item().Key(); len(k) < 8 || r.At.UnixNano() != int64(binary.BigEndian.Uint64(k[len(k)-8:])) {
				s.log.Warn("store: feedback record does not match its key", "key", it.Item().KeyCopy(nil))
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}))
}
