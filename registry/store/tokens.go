package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TokenGrace is how long after its expiry a spent token id is remembered.
const TokenGrace = 24 * time.Hour

// spentToken is the value of tok/<id>.
type spentToken struct {
	SpentAt time.Time `json:"spent_at"`
	Seq     uint64    `json:"seq"`
	Expires time.Time `json:"expires"`
}

// SpendToken spends the single-use token id and appends start, the audit record of the run
// it starts, in one transaction: either both happen or neither. A token id spent before gives
// ErrTokenSpent and no record. Of concurrent spends of one id exactly one succeeds and the
// others get ErrTokenSpent. The spent mark is kept until TokenGrace after expires; checking
// that a token has not expired is the caller's job.
func (s *Store) SpendToken(ctx context.Context, tokenID string, expires time.Time, start AuditRecord) (AuditRecord, error) {
	if tokenID == "" || len(tokenID) > 512 {
		return AuditRecord{}, fmt.Errorf("%w: token id of %d bytes", ErrInvalid, len(tokenID))
	}
	if err := s.enter(); err != nil {
		return AuditRecord{}, err
	}
	defer s.leave()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureClean(); err != nil {
		return AuditRecord{}, err
	}
	key := []byte(pfxTok + tokenID)
	var out AuditRecord
	var head auditHead
	err := s.update(ctx, func(txn *badger.Txn) error {
		_, err := txn.Get(key)
		if err == nil {
			return fmt.Errorf("%w: %s", ErrTokenSpent, tokenID)
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		now := time.Now()
		out, head, err = s.appendInTxn(txn, start, now)
		if err != nil {
			return err
		}
		ttl := time.Until(expires) + TokenGrace
		if ttl < TokenGrace {
			ttl = TokenGrace
		}
		v, _ := json.Marshal(spentToken{SpentAt: now.UTC(), Seq: out.Seq, Expires: expires.UTC()})
		return txn.SetEntry(badger.NewEntry(key, v).WithTTL(ttl))
	})
	if err != nil {
		if !errors.Is(err, ErrTokenSpent) {
			s.reloadAfterError()
		}
		return AuditRecord{}, wrapDB("spend token", err)
	}
	s.head = head
	return out, nil
}

// TokenSpent reports whether tokenID has been spent (and is still remembered).
func (s *Store) TokenSpent(tokenID string) (bool, error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(pfxTok + tokenID))
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, wrapDB("token", err)
}

// Secret returns the key material stored under name, calling gen to make it the first time
// it is asked for and keeping the result; later calls (in this or a later process) return the
// same bytes. Concurrent calls for one name call gen once. An error from gen is returned and
// nothing is kept.
func (s *Store) Secret(name string, gen func() ([]byte, error)) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty secret name", ErrInvalid)
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.secMu.Lock()
	defer s.secMu.Unlock()
	key := []byte(pfxSecret + name)
	var out, fresh []byte // fresh: generated at most once, kept across retries
	err := s.update(context.Background(), func(txn *badger.Txn) error {
		v, err := getValue(txn, key)
		if err == nil {
			out = v
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if fresh == nil {
			b, err := gen()
			if err != nil {
				return fmt.Errorf("store: secret %s: %w", name, err)
			}
			if len(b) == 0 {
				return fmt.Errorf("%w: secret %s: generator returned nothing", ErrInvalid, name)
			}
			fresh = bytes.Clone(b)
		}
		out = fresh
		return txn.Set(key, fresh)
	})
	if err != nil {
		return nil, wrapDB("secret", err)
	}
	return bytes.Clone(out), nil
}
