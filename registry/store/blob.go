package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// PutBlob stores b under key (a column snapshot, calibration data), replacing what was there.
// Values over 64 KiB go to Badger's value log and are garbage collected in the background.
func (s *Store) PutBlob(key string, b []byte) error {
	return s.put(pfxBlob, key, b, 0)
}

// GetBlob returns the blob stored under key, or ErrNotFound.
func (s *Store) GetBlob(key string) ([]byte, error) {
	return s.get(pfxBlob, key)
}

// DeleteBlob removes the blob under key; a missing key is not an error.
func (s *Store) DeleteBlob(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	return wrapDB("delete blob", s.db.Update(func(txn *badger.Txn) error {
		return txn.Delete([]byte(pfxBlob + key))
	}))
}

// BlobKeys returns the keys of the blobs whose key starts with prefix, in key order (their
// values are not read).
func (s *Store) BlobKeys(prefix string) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []string
	err := s.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		o.Prefix = []byte(pfxBlob + prefix)
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			out = append(out, string(it.Item().Key()[len(pfxBlob):]))
		}
		return nil
	})
	return out, wrapDB("blob keys", err)
}

// CachePut stores a derived value (an embedding vector, say) under key. Cache entries are
// rebuildable: losing one costs only its recomputation.
func (s *Store) CachePut(key string, b []byte) error {
	return s.put(pfxCache, key, b, 0)
}

// CacheGet returns the cached value under key and whether there was one. A store error is
// reported as a miss.
func (s *Store) CacheGet(key string) ([]byte, bool) {
	b, err := s.get(pfxCache, key)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.log.Debug("store: cache read failed", "key", key, "err", err)
		}
		return nil, false
	}
	return b, true
}

func (s *Store) put(pfx, key string, b []byte, ttl time.Duration) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	e := badger.NewEntry([]byte(pfx+key), b)
	if ttl > 0 {
		e = e.WithTTL(ttl)
	}
	return wrapDB("put "+pfx, s.db.Update(func(txn *badger.Txn) error { return txn.SetEntry(e) }))
}

func (s *Store) get(pfx, key string) ([]byte, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []byte
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		out, err = getValue(txn, []byte(pfx+key))
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %s%s", ErrNotFound, pfx, key)
	}
	if err != nil {
		return nil, wrapDB("get "+pfx, err)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// SearchLogTTL is how long LogSearch keeps a record.
const SearchLogTTL = 30 * 24 * time.Hour

var qlogSeq atomic.Uint32

// LogSearch keeps rec (any JSON-encodable search record) in the search log for SearchLogTTL.
// It is not part of the audit chain.
func (s *Store) LogSearch(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: search record: %v", ErrInvalid, err)
	}
	// Key: time in nanoseconds then a process-wide counter, so records sort by time.
	k := string(cat(be64(uint64(time.Now().UnixNano())), be64(uint64(qlogSeq.Add(1)))[4:]))
	return s.put(pfxQLog, k, b, SearchLogTTL)
}

// SearchLog returns the last n search records, oldest first.
func (s *Store) SearchLog(n int) ([]json.RawMessage, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []json.RawMessage
	err := s.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Reverse = true
		o.Prefix = []byte(pfxQLog)
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek([]byte(pfxQLog + "\xff")); it.Valid() && len(out) < n; it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, wrapDB("search log", err)
}

// RawGet returns the raw value of a Badger key, or ErrNotFound. It is for tests and repair
// tools (see AuditKey); nothing else should depend on the key schema.
func (s *Store) RawGet(key []byte) ([]byte, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []byte
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		out, err = getValue(txn, key)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: raw key %q", ErrNotFound, key)
	}
	return out, wrapDB("raw get", err)
}

// RawSet overwrites the raw value of a Badger key, bypassing every check and the audit
// chain. It is for tests (damaging records on purpose) and repair tools only.
func (s *Store) RawSet(key, value []byte) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	return wrapDB("raw set", s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, value) }))
}

// RawDelete deletes a Badger key, bypassing every check and the audit chain. It is for tests
// and repair tools only.
func (s *Store) RawDelete(key []byte) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	return wrapDB("raw delete", s.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) }))
}
