package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Options configure Open. The zero value with Dir set is a sensible store.
type Options struct {
	// Dir is the data directory; it is created when missing. Required unless InMemory.
	Dir string
	// InMemory keeps everything in memory (tests, tools); Dir must be empty. Nothing survives
	// Close.
	InMemory bool
	// Logger receives Badger's messages (its Debug and Info at slog Debug, Warning at Warn,
	// Error at Error) and the store's own. Nil discards everything.
	Logger *slog.Logger
	// NoSync turns off the fsync of every commit. Default false: every commit is synced
	// (Badger SyncWrites), so a committed change survives a power loss.
	NoSync bool
	// MemTableSize is Badger's memtable size in bytes (default 8 MiB). It bounds the heap
	// Badger holds (about 1.3 times this per memtable) and the size of one transaction
	// (15% of it); PutAll splits larger imports across transactions without losing atomicity.
	MemTableSize int64
	// BlockCacheSize is Badger's block cache in bytes (default 8 MiB).
	BlockCacheSize int64
	// HistoryHalfLife is the half-life of the decayed use counts kept by RecordUse
	// (default 7 days). It is folded into the stored weights, so changing it between runs
	// only changes how later uses and reads decay.
	HistoryHalfLife time.Duration
	// AuditKey, when set, seals every audit record appended from now on with the
	// HMAC-SHA256 of its hash under this key, and VerifyAudit checks them: one who can write
	// the data directory but does not hold the key cannot rebuild the chain. Keep it out of
	// the data directory (ReadAuditKey refuses a key file inside it; see docs/audit.md). A
	// store once keyed refuses audited writes without its key or with another one.
	AuditKey []byte
	// ValueLogGCInterval is how often large values (blobs over 64 KiB) are garbage collected
	// from Badger's value log (default 10 minutes; negative disables; unused InMemory).
	ValueLogGCInterval time.Duration
}

// Defaults of Options.
const (
	DefaultMemTableSize       = 8 << 20
	DefaultBlockCacheSize     = 8 << 20
	DefaultHistoryHalfLife    = 7 * 24 * time.Hour
	DefaultValueLogGCInterval = 10 * time.Minute
	// valueThreshold: values up to this size live in the LSM tree, larger ones in the value log.
	valueThreshold = 64 << 10
	// maxRetries bounds the retries of a transaction that hit badger.ErrConflict.
	maxRetries = 200
)

// Store is the persistent registry, audit chain, token ledger, use history and blob store of
// one capdex data directory. All methods are safe for concurrent use.
type Store struct {
	db  *badger.DB
	log *slog.Logger
	opt Options

	// closeMu guards closed: methods hold it for reading while they use db; Close holds it
	// for writing, so Close waits for running calls and later calls get ErrClosed.
	closeMu sync.RWMutex
	closed  bool

	// wmu serializes every change of the registry and the audit chain (Put, Create, PutAll,
	// SetStatus, Delete, AppendAudit, SpendToken). It protects head, dirty and the writes of
	// meta/gen, meta/audit and meta/stage.
	wmu  sync.Mutex
	head auditHead
	// refusal, when set at Open, is returned by every audited write: the store is damaged
	// (checkIntegrity) or its audit key is missing or wrong (adoptKey).
	refusal error
	// dirty is set when a failed PutAll may have left staged entries that the in-process
	// rollback could not remove; the next writer removes them first.
	dirty bool

	// gen mirrors meta/gen, the committed registry generation. Written under wmu.
	gen atomic.Uint64

	// hist caches the uses Uses has read; RecordUse keeps it exact (see histCache).
	hist histCache

	// secMu serializes Secret so one name is generated once.
	secMu sync.Mutex

	// staged counts imports that took the staged path (for tests).
	staged atomic.Int64
	// stageHook, when set (by tests), is called during staging every 128 definitions with
	// the number staged so far; an error it returns fails the import there.
	stageHook func(n int) error

	stopGC chan struct{}
	gcDone chan struct{}
}

// auditHead is the value of meta/audit: the last committed audit record.
type auditHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// stageMarker is the value of meta/stage while a PutAll is in flight.
type stageMarker struct {
	Gen       uint64    `json:"gen"`
	AuditFrom uint64    `json:"audit_from"`
	Started   time.Time `json:"started"`
	Count     int       `json:"count"`
}

// Open opens (creating when needed) the store in opts.Dir, or an in-memory store. A directory
// held by another process gives ErrLocked at once. Open rolls back an import that was cut off
// (see PutAll) before it returns.
func Open(opts Options) (*Store, error) {
	if opts.InMemory == (opts.Dir != "") {
		return nil, fmt.Errorf("%w: set exactly one of Dir and InMemory", ErrInvalid)
	}
	if opts.MemTableSize <= 0 {
		opts.MemTableSize = DefaultMemTableSize
	}
	if opts.MemTableSize < 1<<20 {
		return nil, fmt.Errorf("%w: MemTableSize below 1 MiB", ErrInvalid)
	}
	if opts.BlockCacheSize <= 0 {
		opts.BlockCacheSize = DefaultBlockCacheSize
	}
	if opts.AuditKey != nil && len(opts.AuditKey) < MinAuditKeyBytes {
		return nil, fmt.Errorf("%w: AuditKey of %d bytes (want at least %d)", ErrInvalid, len(opts.AuditKey), MinAuditKeyBytes)
	}
	if opts.HistoryHalfLife <= 0 {
		opts.HistoryHalfLife = DefaultHistoryHalfLife
	}
	if opts.ValueLogGCInterval == 0 {
		opts.ValueLogGCInterval = DefaultValueLogGCInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bo := badger.DefaultOptions(opts.Dir).
		WithInMemory(opts.InMemory).
		WithSyncWrites(!opts.NoSync).
		WithLogger(badgerLogger{log.With("component", "badger")}).
		WithMetricsEnabled(false).
		WithMemTableSize(opts.MemTableSize).
		WithNumMemtables(2).
		WithNumLevelZeroTables(3).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(opts.BlockCacheSize).
		WithIndexCacheSize(0).
		WithValueThreshold(min(valueThreshold, opts.MemTableSize*15/100)).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		WithNumGoroutines(2).
		WithDetectConflicts(true)
	if !opts.InMemory {
		if err := removeEmptyLogs(opts.Dir); err != nil {
			return nil, err
		}
	}
	db, err := badger.Open(bo)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("%w: %s (%v)", ErrLocked, opts.Dir, err)
		}
		return nil, fmt.Errorf("store: open %s: %w", opts.Dir, err)
	}
	s := &Store{db: db, log: log, opt: opts}
	if err := s.init(); err != nil {
		_ = db.Close() // the init error is the one worth reporting
		return nil, err
	}
	if !opts.InMemory && opts.ValueLogGCInterval > 0 {
		s.stopGC = make(chan struct{})
		s.gcDone = make(chan struct{})
		go s.gcLoop(opts.ValueLogGCInterval)
	}
	return s, nil
}

// init checks the format version, loads the generation and audit head, and rolls back or
// finishes an interrupted import.
func (s *Store) init() error {
	err := s.db.Update(func(txn *badger.Txn) error {
		v, err := getValue(txn, keyFormat)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			return txn.Set(keyFormat, []byte(formatVersion))
		case err != nil:
			return err
		case string(v) != formatVersion:
			return fmt.Errorf("%w: found %q, this build reads %q", ErrFormat, v, formatVersion)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.loadMeta(); err != nil {
		return err
	}
	if err := s.cleanupStage(); err != nil {
		return err
	}
	if err := s.checkIntegrity(); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return err
		}
		s.refusal = fmt.Errorf("%w (registry and audit writes refused)", err)
		s.log.Error("store: damaged data directory: registry and audit writes refused", "err", err)
	}
	return s.adoptKey()
}

// loadMeta reads meta/gen and meta/audit into the in-memory mirrors.
func (s *Store) loadMeta() error {
	return s.db.View(func(txn *badger.Txn) error {
		g, h, err := readMeta(txn)
		if err != nil {
			return err
		}
		s.gen.Store(g)
		s.head = h
		return nil
	})
}

func readMeta(txn *badger.Txn) (uint64, auditHead, error) {
	var g uint64
	var h auditHead
	v, err := getValue(txn, keyGen)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
	case err != nil:
		return 0, h, err
	case len(v) != 8:
		return 0, h, fmt.Errorf("%w: meta/gen", ErrCorrupt)
	default:
		g = binary.BigEndian.Uint64(v)
	}
	v, err = getValue(txn, keyHead)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
	case err != nil:
		return 0, h, err
	default:
		if err := json.Unmarshal(v, &h); err != nil {
			return 0, h, fmt.Errorf("%w: meta/audit: %v", ErrCorrupt, err)
		}
	}
	return g, h, nil
}

// readGen reads the committed generation inside a read transaction.
func readGen(txn *badger.Txn) (uint64, error) {
	v, err := getValue(txn, keyGen)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: meta/gen", ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close flushes and closes the store. It waits for running calls; later calls get ErrClosed.
// Closing twice is a no-op.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.stopGC != nil {
		close(s.stopGC)
		<-s.gcDone
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// enter marks a call in progress; it fails with ErrClosed after Close. Pair with leave.
func (s *Store) enter() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.closeMu.RUnlock() }

// Generation returns the committed registry generation: 0 for an empty registry, increased
// by one by every committed Put, Create, PutAll, SetStatus and Delete that changed something.
func (s *Store) Generation() uint64 { return s.gen.Load() }

func (s *Store) gcLoop(every time.Duration) {
	defer close(s.gcDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
			for s.db.RunValueLogGC(0.5) == nil {
			}
		}
	}
}

// update runs fn in a read-write transaction, retrying on badger.ErrConflict.
func (s *Store) update(ctx context.Context, fn func(txn *badger.Txn) error) error {
	for i := 0; i < maxRetries; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		if i > 2 {
			time.Sleep(time.Duration(i) * 50 * time.Microsecond)
		}
	}
	return ErrConflict
}

// getValue returns a copy of the value of key.
func getValue(txn *badger.Txn, key []byte) ([]byte, error) {
	it, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return it.ValueCopy(nil)
}

// batcher writes more than one transaction can hold: on ErrTxnTooBig it commits what it has
// and goes on in a new transaction. It gives no atomicity by itself; PutAll builds that.
type batcher struct {
	db  *badger.DB
	txn *badger.Txn
}

func newBatcher(db *badger.DB) *batcher { return &batcher{db: db, txn: db.NewTransaction(true)} }

func (b *batcher) setEntry(e *badger.Entry) error {
	err := b.txn.SetEntry(e)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err = b.flush(); err != nil {
			return err
		}
		err = b.txn.SetEntry(e)
	}
	return err
}

func (b *batcher) set(k, v []byte) error { return b.setEntry(badger.NewEntry(k, v)) }

func (b *batcher) del(k []byte) error {
	err := b.txn.Delete(k)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err = b.flush(); err != nil {
			return err
		}
		err = b.txn.Delete(k)
	}
	return err
}

// flush commits the current transaction and starts a new one.
func (b *batcher) flush() error {
	err := b.txn.Commit()
	b.txn = b.db.NewTransaction(true)
	return err
}

// finish commits the last transaction.
func (b *batcher) finish() error {
	err := b.txn.Commit()
	b.txn = nil
	return err
}

func (b *batcher) discard() {
	if b.txn != nil {
		b.txn.Discard()
	}
}

// badgerLogger routes Badger's log lines to slog: Debug and Info at Debug (Badger is chatty
// at Info), Warning at Warn, Error at Error.
type badgerLogger struct{ l *slog.Logger }

func trimNL(format string, args []any) string {
	return strings.TrimRight(fmt.Sprintf(format, args...), "\n")
}

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error(trimNL(f, a)) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(trimNL(f, a)) }
func (b badgerLogger) Infof(f string, a ...any) {
	if b.l.Enabled(context.Background(), slog.LevelDebug) {
		b.l.Debug(trimNL(f, a))
	}
}
func (b badgerLogger) Debugf(f string, a ...any) {
	if b.l.Enabled(context.Background(), slog.LevelDebug) {
		b.l.Debug(trimNL(f, a))
	}
}
