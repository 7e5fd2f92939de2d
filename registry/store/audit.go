package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Audit record kinds.
const (
	// KindRegistry marks a registry change (create, new version, status change, delete).
	KindRegistry = "registry"
	// KindRun marks a run attempt or outcome.
	KindRun = "run"
)

// Decisions of registry records. Run records carry the run pipeline's decisions (allowed,
// denied, confirmation_required, succeeded, failed, timed_out), chosen by the caller.
const (
	DecisionCreated       = "created"
	DecisionUpdated       = "updated"
	DecisionStatusChanged = "status_changed"
	DecisionDeleted       = "deleted"
)

// AuditRecord is one entry of the hash-chained audit log. The store assigns Seq, Prev and
// Hash (and Time when zero); Hash is the hex SHA-256 of the record's JSON encoding with Hash
// empty, so it covers every other field including Prev, the previous record's Hash.
type AuditRecord struct {
	// Seq numbers records from 1 without gaps.
	Seq uint64 `json:"seq"`
	// Time is when the record was appended (UTC).
	Time time.Time `json:"time"`
	// Kind is KindRegistry or KindRun.
	Kind string `json:"kind"`
	// Actor is who acted: a user, "tenant/user", or a tool name such as "capdex import".
	Actor string `json:"actor,omitempty"`
	// Action is the capability id acted on (a registry change's id, a run's action id).
	Action string `json:"action,omitempty"`
	// Version is the capability version the record concerns.
	Version int `json:"version,omitempty"`
	// Decision is what happened: a Decision* constant for registry records, the run
	// pipeline's outcome for run records.
	Decision string `json:"decision,omitempty"`
	// Digest is, for registry records, "sha256:<hex>" of the stored definition JSON; for run
	// records the schema digest of the version that ran.
	Digest string `json:"digest,omitempty"`
	// ArgsDigest is the digest of a run's arguments.
	ArgsDigest string `json:"args_digest,omitempty"`
	// Args are a run's raw arguments, kept only when the definition allows it.
	Args json.RawMessage `json:"args,omitempty"`
	// DurationUS is a run's duration in microseconds.
	DurationUS int64 `json:"duration_us,omitempty"`
	// ExitStatus is an exec handler's exit status.
	ExitStatus int `json:"exit_status,omitempty"`
	// Detail is free text: "version 2 → 3", "active → offline", an error message.
	Detail string `json:"detail,omitempty"`
	// Prev is the Hash of the previous record ("" for the first).
	Prev string `json:"prev,omitempty"`
	// Hash is this record's hash (see the type comment).
	Hash string `json:"hash,omitempty"`
}

// hashRecord returns the hex SHA-256 of rec's JSON with Hash empty.
func hashRecord(rec AuditRecord) (string, error) {
	rec.Hash = ""
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal fills Seq, Prev, Time (when zero) and Hash of rec as the successor of prev, and returns
// it with its encoding. Hash is the last field and omitted when empty, so the encoding is the
// hashed encoding with `,"hash":"<hex>"` inserted before its closing brace.
func seal(rec AuditRecord, prev auditHead, now time.Time) (AuditRecord, []byte, error) {
	rec.Seq = prev.Seq + 1
	rec.Prev = prev.Hash
	if rec.Time.IsZero() {
		rec.Time = now
	}
	rec.Time = rec.Time.UTC().Round(0)
	rec.Hash = ""
	if rec.Kind == "" {
		return AuditRecord{}, nil, fmt.Errorf("%w: audit record without kind", ErrInvalid)
	}
	if len(rec.Args) > 0 && !json.Valid(rec.Args) {
		return AuditRecord{}, nil, fmt.Errorf("%w: audit args are not valid JSON", ErrInvalid)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return AuditRecord{}, nil, fmt.Errorf("%w: audit record: %v", ErrInvalid, err)
	}
	sum := sha256.Sum256(b)
	rec.Hash = hex.EncodeToString(sum[:])
	out := make([]byte, 0, len(b)+len(`,"hash":""`)+len(rec.Hash))
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"hash":"`...)
	out = append(out, rec.Hash...)
	out = append(out, `"}`...)
	return rec, out, nil
}

// stored returns rec as a reader gets it back: decoded from its encoding b (Args compacted).
func stored(rec AuditRecord, b []byte) AuditRecord {
	var out AuditRecord
	if err := json.Unmarshal(b, &out); err != nil {
		return rec // b came from encoding rec; this does not happen
	}
	return out
}

// appendInTxn seals rec after s.head and writes it and the new head in txn. The caller holds
// wmu and installs the returned head after a successful commit.
func (s *Store) appendInTxn(txn *badger.Txn, rec AuditRecord, now time.Time) (AuditRecord, auditHead, error) {
	out, b, err := seal(rec, s.head, now)
	if err != nil {
		return AuditRecord{}, auditHead{}, err
	}
	out = stored(out, b)
	h := auditHead{Seq: out.Seq, Hash: out.Hash}
	hb, _ := json.Marshal(h) // plain struct: cannot fail
	if err := txn.Set(AuditKey(out.Seq), b); err != nil {
		return AuditRecord{}, auditHead{}, err
	}
	if err := txn.Set(keyHead, hb); err != nil {
		return AuditRecord{}, auditHead{}, err
	}
	return out, h, nil
}

// AppendAudit appends rec to the audit chain and returns it as stored, with Seq, Prev, Hash
// and (when zero) Time assigned. rec.Kind must not be empty; rec.Args must be valid JSON or
// empty. Appends are serialized with every registry change.
func (s *Store) AppendAudit(ctx context.Context, rec AuditRecord) (AuditRecord, error) {
	if err := s.enter(); err != nil {
		return AuditRecord{}, err
	}
	defer s.leave()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureClean(); err != nil {
		return AuditRecord{}, err
	}
	var out AuditRecord
	var h auditHead
	err := s.update(ctx, func(txn *badger.Txn) error {
		var err error
		out, h, err = s.appendInTxn(txn, rec, time.Now())
		return err
	})
	if err != nil {
		s.reloadAfterError()
		return AuditRecord{}, wrapDB("append audit", err)
	}
	s.head = h
	return out, nil
}

// AuditHead returns the sequence number and hash of the last committed audit record
// (0 and "" for an empty chain).
func (s *Store) AuditHead() (seq uint64, hash string, err error) {
	if err := s.enter(); err != nil {
		return 0, "", err
	}
	defer s.leave()
	var h auditHead
	err = s.db.View(func(txn *badger.Txn) error {
		_, h, err = readMeta(txn)
		return err
	})
	return h.Seq, h.Hash, wrapDB("audit head", err)
}

// AuditTail returns the last n committed audit records, oldest first. n <= 0 returns none.
func (s *Store) AuditTail(n int) ([]AuditRecord, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if n <= 0 {
		return nil, nil
	}
	var out []AuditRecord
	err := s.db.View(func(txn *badger.Txn) error {
		_, h, err := readMeta(txn)
		if err != nil || h.Seq == 0 {
			return err
		}
		o := badger.DefaultIteratorOptions
		o.Reverse = true
		o.Prefix = []byte(pfxAudit)
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(AuditKey(h.Seq)); it.Valid() && len(out) < n; it.Next() {
			var rec AuditRecord
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rec) }); err != nil {
				return fmt.Errorf("%w: audit record %x: %v", ErrCorrupt, it.Item().Key(), err)
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, wrapDB("audit tail", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// VerifyAudit walks the committed audit chain from record 1 and checks that records are
// numbered without gaps, that each record's Hash matches its stored bytes and its Prev is the
// previous record's Hash, and that the chain ends at the recorded head. It returns how many
// records passed; on the first failure the error is a *ChainError naming the record.
//
// The hash is checked over the stored bytes themselves (the value without its trailing hash
// field is exactly the encoding the hash was computed over), so any changed byte of a record
// is caught without decoding it.
func (s *Store) VerifyAudit() (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		_, head, err := readMeta(txn)
		if err != nil {
			return err
		}
		o := badger.DefaultIteratorOptions
		o.Prefix = []byte(pfxAudit)
		it := txn.NewIterator(o)
		defer it.Close()
		want := uint64(1)
		prev := ""
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(pfxAudit)+8 {
				continue // not an audit record key
			}
			seq := binary.BigEndian.Uint64(k[len(pfxAudit):])
			if seq > head.Seq {
				break // uncommitted tail of an interrupted import, removed at Open
			}
			if seq != want {
				return &ChainError{Seq: want, Reason: "missing"}
			}
			var reason, hash string
			err := it.Item().Value(func(v []byte) error {
				hash, reason = checkRecord(v, seq, prev)
				return nil
			})
			if err != nil {
				return err
			}
			if reason != "" {
				return &ChainError{Seq: seq, Reason: reason}
			}
			prev = hash
			n++
			want++
		}
		if want-1 != head.Seq {
			return &ChainError{Seq: want, Reason: "missing"}
		}
		if prev != head.Hash {
			return &ChainError{Seq: head.Seq, Reason: "head mismatch"}
		}
		return nil
	})
	var ce *ChainError
	if errors.As(err, &ce) {
		return n, err
	}
	return n, wrapDB("verify audit", err)
}

// checkRecord checks the stored value v of record seq, whose predecessor has hash prev. It
// returns the record's hash, or why the record is bad. An honest record is the JSON encoding
// of an AuditRecord: it starts with {"seq":N, and ends with ,"prev":"<hex>","hash":"<hex>"}
// (no prev in record 1); its hash is the SHA-256 of the bytes before ,"hash": plus "}".
func checkRecord(v []byte, seq uint64, prev string) (hash, reason string) {
	const hexLen = 2 * sha256.Size
	hashSuffix := len(`,"hash":""}`) + hexLen
	if len(v) < hashSuffix || !bytes.HasPrefix(v[len(v)-hashSuffix:], []byte(`,"hash":"`)) ||
		!bytes.HasSuffix(v, []byte(`"}`)) {
		return "", "undecodable"
	}
	body := v[:len(v)-hashSuffix]
	hash = string(v[len(v)-2-hexLen : len(v)-2])
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{'}'})
	if hex.EncodeToString(h.Sum(nil)) != hash {
		return "", "hash mismatch"
	}
	// The bytes are what seal wrote; read seq and prev from their fixed places.
	rest, ok := bytes.CutPrefix(body, []byte(`{"seq":`))
	i := bytes.IndexByte(rest, ',')
	if !ok || i < 0 {
		return "", "undecodable"
	}
	if got, err := strconv.ParseUint(string(rest[:i]), 10, 64); err != nil || got != seq {
		return "", "seq mismatch"
	}
	gotPrev := ""
	prevField := len(`,"prev":""`) + hexLen
	if len(body) >= prevField && bytes.HasPrefix(body[len(body)-prevField:], []byte(`,"prev":"`)) {
		gotPrev = string(body[len(body)-1-hexLen : len(body)-1])
	}
	if gotPrev != prev {
		return "", "prev mismatch"
	}
	return hash, ""
}

// wrapDB gives a Badger error the store's prefix; store sentinels and context errors pass
// through unchanged.
func wrapDB(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{ErrLocked, ErrClosed, ErrFormat, ErrNotFound, ErrExists,
		ErrNoVersionBump, ErrStaleVersion, ErrInvalid, ErrTokenSpent, ErrConflict, ErrCorrupt,
		ErrChainBroken, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return err
		}
	}
	return fmt.Errorf("store: %s: %w", op, err)
}
