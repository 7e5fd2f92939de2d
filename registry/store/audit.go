package store

import (
	"bytes"
	"context"
	"crypto/hmac"
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
// and MAC empty, so it covers every other field including Prev, the previous record's Hash.
// With an audit key (Options.AuditKey) the store also sets MAC, the HMAC-SHA256 of Hash
// under the key: one who can write the data directory but does not hold the key can
// rebuild the hash chain, not the MACs (see docs/audit.md).
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
	// MAC is the hex HMAC-SHA256 of Hash under the audit key ("" without one).
	MAC string `json:"mac,omitempty"`
}

// macPrefix is what the MAC of a record hashes before the record's hash (a domain tag, so
// the MAC of a record can never pass for the MAC of another kind of message).
const macPrefix = "capdex audit v1\n"

// recordMAC returns the hex HMAC-SHA256 of a record's hash under key.
func recordMAC(key []byte, hash string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macPrefix))
	m.Write([]byte(hash))
	return hex.EncodeToString(m.Sum(nil))
}

// hashRecord returns the hex SHA-256 of rec's JSON with Hash and MAC empty.
func hashRecord(rec AuditRecord) (string, error) {
	rec.Hash, rec.MAC = "", ""
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal fills Seq, Prev, Time (when zero), Hash and, with a key, MAC of rec as the successor
// of prev, and returns it with its encoding. Hash and MAC are the last fields and omitted
// when empty, so the encoding is the hashed encoding with `,"hash":"<hex>"` (and
// `,"mac":"<hex>"`) inserted before its closing brace.
func seal(rec AuditRecord, prev auditHead, now time.Time, key []byte) (AuditRecord, []byte, error) {
	rec.Seq = prev.Seq + 1
	rec.Prev = prev.Hash
	if rec.Time.IsZero() {
		rec.Time = now
	}
	rec.Time = rec.Time.UTC().Round(0)
	rec.Hash, rec.MAC = "", ""
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
	out := make([]byte, 0, len(b)+len(`,"hash":"","mac":""`)+4*sha256.Size)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"hash":"`...)
	out = append(out, rec.Hash...)
	if key != nil {
		rec.MAC = recordMAC(key, rec.Hash)
		out = append(out, `","mac":"`...)
		out = append(out, rec.MAC...)
	}
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

// appendInTxn seals rec after s.head and writes it and the new head in txn, after checking
// in txn that no record is stored at or past the new record's number (a reset or rolled
// back head must never let an append overwrite a record). The caller holds wmu and
// installs the returned head after a successful commit.
func (s *Store) appendInTxn(txn *badger.Txn, rec AuditRecord, now time.Time) (AuditRecord, auditHead, error) {
	if err := auditFree(txn, s.head.Seq+1); err != nil {
		return AuditRecord{}, auditHead{}, err
	}
	out, b, err := seal(rec, s.head, now, s.opt.AuditKey)
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

// VerifyAudit checks the whole committed audit chain and returns how many records passed;
// on the first failure the error is a *ChainError naming the record. It scans every key
// under audit/, so it finds:
//
//   - a changed record: each record's Hash must match its stored bytes and its Prev the
//     previous record's Hash, and the bytes must be exactly what the store writes for the
//     record they decode to;
//   - a gap, a record past the recorded head (the head reset or rolled back), a missing
//     head while records are stored, a head that does not name the last record, and any
//     key under audit/ that is no record's;
//   - with an audit key (Options.AuditKey), a chain rebuilt without the key: every record
//     from the one the key was adopted at must carry the HMAC of its hash under the key,
//     and the mark saying where the key was adopted must carry its own HMAC.
//
// Records past the head are expected only while an import is staged (meta/stage names
// them; Open removes them when the import was cut off). After the chain, VerifyAudit checks
// that the registry generation (meta/gen) is not below a stored definition pointer's: a
// deleted or rolled back generation hides every definition stored since, and is reported
// as ErrCorrupt.
//
// What the chain cannot show: records cut off at its end together with the head set back
// to the last one kept. See docs/audit.md.
func (s *Store) VerifyAudit() (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		head, found, err := readHead(txn)
		if err != nil {
			return err
		}
		stage, staged, err := readStage(txn)
		if err != nil {
			return err
		}
		from, err := s.keyedFrom(txn)
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
				return &ChainError{Seq: want, Reason: fmt.Sprintf("stray key %q under audit/", k)}
			}
			seq := binary.BigEndian.Uint64(k[len(pfxAudit):])
			if seq > head.Seq {
				if staged && stage.AuditFrom == head.Seq+1 && seq >= stage.AuditFrom {
					break // an import in flight (or cut off: Open removes it)
				}
				if !found {
					return &ChainError{Seq: seq, Reason: "head missing: records are stored but meta/audit is gone"}
				}
				return &ChainError{Seq: seq, Reason: fmt.Sprintf("past the head: stored after the recorded head %d (the head was reset or rolled back)", head.Seq)}
			}
			if seq != want {
				return &ChainError{Seq: want, Reason: "missing"}
			}
			var key []byte
			if from > 0 && seq >= from {
				key = s.opt.AuditKey
			}
			var reason, hash string
			err := it.Item().Value(func(v []byte) error {
				hash, reason = checkRecord(v, seq, prev, key)
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
		return checkGeneration(txn, stage, staged)
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
// (no prev in record 1), or with ,"hash":"<hex>","mac":"<hex>"} when it was appended with
// an audit key; its hash is the SHA-256 of the bytes before ,"hash": plus "}", and the
// bytes are exactly what seal writes for the record they decode to. With key set, the
// record must carry the HMAC of its hash under key.
func checkRecord(v []byte, seq uint64, prev string, key []byte) (hash, reason string) {
	const hexLen = 2 * sha256.Size
	if !bytes.HasSuffix(v, []byte(`"}`)) {
		return "", "undecodable"
	}
	body := v[:len(v)-1] // without the closing brace
	mac := ""
	macField := len(`,"mac":""`) + hexLen
	if len(body) >= macField && bytes.HasPrefix(body[len(body)-macField:], []byte(`,"mac":"`)) {
		mac = string(body[len(body)-1-hexLen : len(body)-1])
		body = body[:len(body)-macField]
	}
	hashField := len(`,"hash":""`) + hexLen
	if len(body) < hashField || !bytes.HasPrefix(body[len(body)-hashField:], []byte(`,"hash":"`)) {
		return "", "undecodable"
	}
	hash = string(body[len(body)-1-hexLen : len(body)-1])
	body = body[:len(body)-hashField]
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
	// Only what seal writes is a record: it decodes, and sealing it again gives the same
	// bytes (a forger who hashes bytes of his own cannot hide fields or garbage behind the
	// hash).
	var rec AuditRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return "", "undecodable"
	}
	_, canon, err := seal(rec, auditHead{Seq: seq - 1, Hash: prev}, rec.Time, nil)
	if err != nil || len(canon) != len(body)+hashField+1 || !bytes.Equal(canon[:len(body)], body) ||
		!bytes.Equal(canon[len(body):len(canon)-2], []byte(`,"hash":"`+hash)) {
		return "", "not canonical"
	}
	if key != nil {
		if mac == "" {
			return "", "unsigned: no MAC, though the chain is keyed from an earlier record"
		}
		if !hmac.Equal([]byte(mac), []byte(recordMAC(key, hash))) {
			return "", "mac mismatch: the record was not sealed with the audit key"
		}
	}
	return hash, ""
}

// auditFree checks in txn that no audit record is stored at seq or after it.
func auditFree(txn *badger.Txn, seq uint64) error {
	o := badger.DefaultIteratorOptions
	o.PrefetchValues = false
	o.Prefix = []byte(pfxAudit)
	it := txn.NewIterator(o)
	defer it.Close()
	it.Seek(AuditKey(seq))
	if it.Valid() {
		return fmt.Errorf("%w: audit record key %x exists at or past record %d, the next one to append: the audit head was deleted or rolled back; refusing to overwrite (run capdex audit verify)",
			ErrCorrupt, it.Item().Key(), seq)
	}
	return nil
}

// readHead reads meta/audit, reporting whether it exists.
func readHead(txn *badger.Txn) (auditHead, bool, error) {
	var h auditHead
	v, err := getValue(txn, keyHead)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	if err := json.Unmarshal(v, &h); err != nil {
		return h, false, fmt.Errorf("%w: meta/audit: %w", ErrCorrupt, err)
	}
	return h, true, nil
}

// readStage reads meta/stage, reporting whether an import is staged.
func readStage(txn *badger.Txn) (stageMarker, bool, error) {
	var m stageMarker
	v, err := getValue(txn, keyStage)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return m, false, fmt.Errorf("%w: meta/stage: %w", ErrCorrupt, err)
	}
	return m, true, nil
}

// checkGeneration checks that no definition pointer is stored above meta/gen but those of a
// staged import: a deleted meta/gen reads as 0 and a rolled back one as less, and either
// hides every definition stored since (and would let an empty-looking store be seeded over
// them).
func checkGeneration(txn *badger.Txn, stage stageMarker, staged bool) error {
	gen, err := readGen(txn)
	if err != nil {
		return err
	}
	o := badger.DefaultIteratorOptions
	o.PrefetchValues = false
	o.Prefix = []byte(pfxActive)
	it := txn.NewIterator(o)
	defer it.Close()
	var top uint64
	for it.Rewind(); it.Valid(); it.Next() {
		_, g, ok := parseActiveKey(it.Item().Key())
		if ok && g > gen && !(staged && g == stage.Gen) {
			top = max(top, g)
		}
	}
	if top == 0 {
		return nil
	}
	if _, err := txn.Get(keyGen); errors.Is(err, badger.ErrKeyNotFound) {
		return fmt.Errorf("%w: meta/gen is missing but definitions are stored up to generation %d: the registry generation was deleted", ErrCorrupt, top)
	}
	return fmt.Errorf("%w: meta/gen is %d but definitions are stored up to generation %d: the registry generation was rolled back", ErrCorrupt, gen, top)
}

// checkIntegrity finds, at Open, the damage that must stop every registry and audit write:
// a deleted or rolled back registry generation, and audit records stored past the head
// (or a deleted head): an append would overwrite them, a seed would hide the registry.
func (s *Store) checkIntegrity() error {
	return s.db.View(func(txn *badger.Txn) error {
		if err := checkGeneration(txn, stageMarker{}, false); err != nil {
			return err
		}
		head, found, err := readHead(txn)
		if err != nil {
			return err
		}
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		o.Reverse = true
		o.Prefix = []byte(pfxAudit)
		it := txn.NewIterator(o)
		defer it.Close()
		it.Seek(append([]byte(pfxAudit), bytes.Repeat([]byte{0xff}, 9)...))
		if !it.Valid() {
			return nil
		}
		k := it.Item().Key()
		if len(k) != len(pfxAudit)+8 {
			return fmt.Errorf("%w: stray key %q under audit/", ErrCorrupt, k)
		}
		last := binary.BigEndian.Uint64(k[len(pfxAudit):])
		switch {
		case !found:
			return fmt.Errorf("%w: meta/audit is missing but audit records up to %d are stored: the audit head was deleted", ErrCorrupt, last)
		case last > head.Seq:
			return fmt.Errorf("%w: audit record %d is stored past the audit head %d: the head was rolled back", ErrCorrupt, last, head.Seq)
		}
		return nil
	})
}

// auditKeyMark is the value of meta/auditkey: the first record sealed with the audit key,
// and the HMAC under the key of that number and the hash of the record before it.
type auditKeyMark struct {
	From uint64 `json:"from"`
	MAC  string `json:"mac"`
}

func markMAC(key []byte, from uint64, prevHash string) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "capdex audit key mark v1\n%d\n%s", from, prevHash)
	return hex.EncodeToString(m.Sum(nil))
}

// readKeyMark reads meta/auditkey and the hash of the record before the one it names.
func readKeyMark(txn *badger.Txn) (mark auditKeyMark, prevHash string, found bool, err error) {
	v, err := getValue(txn, keyAuditKey)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return mark, "", false, nil
	}
	if err != nil {
		return mark, "", false, err
	}
	if err := json.Unmarshal(v, &mark); err != nil || mark.From == 0 {
		return mark, "", true, &ChainError{Seq: mark.From, Reason: "key mark undecodable"}
	}
	if mark.From > 1 {
		pv, err := getValue(txn, AuditKey(mark.From-1))
		if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return mark, "", true, err
		}
		var rec AuditRecord
		if err == nil && json.Unmarshal(pv, &rec) == nil {
			prevHash = rec.Hash
		}
	}
	return mark, prevHash, true, nil
}

// keyedFrom returns the first record that must carry a MAC (0: the store has no audit key).
// Without a mark every record must; a mark whose HMAC fails is a ChainError.
func (s *Store) keyedFrom(txn *badger.Txn) (uint64, error) {
	key := s.opt.AuditKey
	if key == nil {
		return 0, nil
	}
	mark, prevHash, found, err := readKeyMark(txn)
	if err != nil || !found {
		return 1, err
	}
	if !hmac.Equal([]byte(mark.MAC), []byte(markMAC(key, mark.From, prevHash))) {
		return 0, &ChainError{Seq: mark.From, Reason: "key mark does not match the audit key (forged, moved, or another key)"}
	}
	return mark.From, nil
}

// adoptKey reconciles the audit key with meta/auditkey at Open: with a key and no mark,
// the chain is keyed from the next record on (the mark is written); a mark that this key
// does not match, or a mark with no key configured, refuses every audited write, since
// the records would not verify.
func (s *Store) adoptKey() error {
	key := s.opt.AuditKey
	var mark auditKeyMark
	var found bool
	var verr error
	err := s.db.View(func(txn *badger.Txn) error {
		var prevHash string
		var err error
		mark, prevHash, found, err = readKeyMark(txn)
		if err != nil {
			verr = err
			return nil
		}
		if found && key != nil && !hmac.Equal([]byte(mark.MAC), []byte(markMAC(key, mark.From, prevHash))) {
			verr = &ChainError{Seq: mark.From, Reason: "key mark does not match the audit key"}
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case verr != nil:
		s.refusal = fmt.Errorf("%w: the audit key does not match the key the audit chain is sealed with: %w", ErrInvalid, verr)
		return nil
	case found && key == nil:
		s.refusal = fmt.Errorf("%w: the audit chain is sealed with an audit key from record %d on, and none is configured (audit_key_file or CAPDEX_AUDIT_KEY_FILE): refusing unsigned audited writes", ErrInvalid, mark.From)
		return nil
	case found || key == nil || s.refusal != nil:
		return nil
	}
	from := s.head.Seq + 1
	b, _ := json.Marshal(auditKeyMark{From: from, MAC: markMAC(key, from, s.head.Hash)}) // plain struct: cannot fail
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyAuditKey, b) })
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
