// Package store keeps capdex's persistent state in Badger: capability definitions with their
// versions and active version, the registry generation, the hash-chained audit log,
// single-use token ids, use history, key material, blobs and caches. It is the only package
// that imports Badger.
//
// # Basics
//
// Open a data directory (or an in-memory store) and keep the *Store for the life of the
// process; every method is safe for concurrent use:
//
//	s, err := store.Open(store.Options{Dir: dir})
//	defer s.Close()
//	err = s.Put(ctx, capability, "alice")          // create or new version, audited
//	caps, gen, err := s.Active()                   // every active definition + generation
//
// Every registry change (Put, Create, PutAll, Apply, SetStatus, Delete, DeleteAll) appends an audit record in
// the same Badger transaction as the change and raises the registry generation by one. A
// definition changed without a version bump is refused (ErrNoVersionBump); an older version
// is refused (ErrStaleVersion); storing an identical definition again is a no-op. Run records
// go through AppendAudit, or SpendToken, which spends a single-use confirmation token id and
// appends the run's start record in one transaction. VerifyAudit proves the chain.
//
// Of concurrent writers exactly one wins: all registry and audit writes are serialized (and
// every transaction is also checked by Badger's conflict detection and retried), so of 64
// concurrent Creates of one id one succeeds and 63 get ErrExists; of 64 Puts of one id and
// version with different definitions one succeeds and 63 get ErrNoVersionBump; of 64
// SpendTokens of one token id one succeeds and 63 get ErrTokenSpent.
//
// Every commit is fsynced (Options.NoSync turns that off). Badger's memory is capped: two
// 8 MiB memtables, an 8 MiB block cache, small level-0 and value-log files; its log lines go
// to Options.Logger (nil: discarded).
//
// # Key schema
//
// Integers are unsigned 64-bit big-endian, so keys sort numerically. Ids never hold '/'.
//
//	meta/format                 format version of the directory ("1"); another value → ErrFormat
//	meta/gen                    committed registry generation (u64)
//	meta/audit                  JSON {seq, hash} of the last committed audit record
//	meta/stage                  JSON {gen, audit_from, started, count} while a large PutAll runs
//	meta/auditkey               JSON {from, mac}: the first audit record sealed with the audit key
//	def/<id>/<version>          the definition as stored (registry.Capability): a binary
//	                            encoding (first byte 0x01, see defcodec.go), or its JSON
//	                            (first byte '{') as stores before the binary encoding wrote
//	                            it, still read; a registry audit record's digest is the
//	                            SHA-256 of the definition's JSON either way
//	active/<id>/<gen>           pointer written at generation gen: version (u64), flags byte
//	                            (1 deleted, 2 this commit wrote def/<id>/<version>), then the
//	                            status set by SetStatus (empty: the definition's own)
//	audit/<seq>                 JSON of AuditRecord seq (1, 2, …)
//	tok/<token id>              JSON {spent_at, seq, expires}, Badger TTL expires+TokenGrace
//	hist/u/<user>\x00<id>       decayed use weight of a user: float64 bits, then unix nanos
//	hist/p/<project>\x00<id>    the same per project
//	secret/<name>               generated key material (Secret)
//	blob/<key>                  PutBlob values
//	cache/<key>                 CachePut values
//	qlog/<unix nanos><counter>  LogSearch records, Badger TTL SearchLogTTL
//	fb/<tenant>\x00<session>\x00<unix nanos>
//	                            JSON FeedbackRecord: one search of a session and what it
//	                            led to (PutFeedback), Badger TTL FeedbackTTL
//
// The active version of an id is its active/<id>/* pointer with the highest generation not
// above meta/gen. A single change writes the new pointer at meta/gen+1, deletes the pointer it
// supersedes and writes meta/gen, all in one transaction, so normally one pointer per id
// exists. Generations in keys are what make PutAll (and Apply, which stores and deletes in
// one change) atomic.
//
// # Atomic import
//
// One Badger transaction holds at most 15% of a memtable (about 1.2 MB by default), far less
// than a catalogue of thousands of definitions. PutAll first tries one transaction; when that
// is too big it stages:
//
//  1. It writes meta/stage = {gen: G+1, audit_from: H+1} (G = meta/gen, H = the audit head).
//  2. It writes, across as many transactions as needed, each new definition, its pointer
//     active/<id>/<G+1> and its audit record audit/<H+i> chained after the head. Readers do
//     not see any of it: they take pointers only up to meta/gen and audit records only up to
//     meta/audit, both read in the same snapshot.
//  3. The flip: one small transaction sets meta/gen = G+1 and meta/audit to the last staged
//     record. From that commit on, the whole import is visible; before it, none of it is.
//  4. Cleanup deletes the pointers the import superseded, then meta/stage.
//
// When the process dies (SIGKILL, power loss) at any point, Open finds meta/stage and
// repairs: pointers above meta/gen are deleted with the definitions they wrote, audit records
// above meta/audit are deleted, superseded pointers are deleted, then meta/stage. An import
// cut off before step 3 is gone entirely; one cut off after it is kept entirely. All writers
// are serialized inside the process (and Badger's directory lock keeps other processes out),
// so nothing else writes a generation or an audit record while an import is staged.
//
// # Caveats
//
//   - Registry changes, audit appends and token spends share one writer lock, and every one
//     is an fsynced commit: they run one at a time, and a large PutAll holds the lock for its
//     whole duration (about a second for a few thousand definitions). Reads never wait.
//   - Use history is folded into one decayed weight per (user or project, id) with
//     Options.HistoryHalfLife; the half-life cannot be chosen per read.
//   - A spent token id is forgotten TokenGrace after the expiry given to SpendToken; callers
//     must refuse expired tokens themselves.
//   - SetStatus overrides the stored definition's status without a new version; Put of the
//     same version with an identical definition leaves that override in place.
//   - Deleted ids keep their stored versions; Get does not return them, and storing the id
//     again needs its last version (restoring it) or a higher one.
//   - Open deletes empty (0-byte) .mem and .vlog files before Badger sees them: a process
//     killed right after creating one leaves it behind, and Badger v4.9.6 then refuses to
//     open the directory (dgraph-io/badger#2207). It takes the directory's flock first, so a
//     directory in use is never touched (ErrLocked).
//   - Active and List decode every definition: about a quarter of what decoding its JSON
//     cost (BenchmarkActive), still tens of milliseconds for 10k. Call them when the
//     registry generation changes, not per request.
//   - RawGet, RawSet and RawDelete bypass every rule; they exist for tests and repair tools.
//   - Open refuses every registry and audit write (ErrCorrupt) of a directory whose
//     meta/gen was deleted or rolled back below a stored definition, or whose audit head was
//     deleted or rolled back below a stored record: a seed would hide the registry, an
//     append would overwrite a record. VerifyAudit names the damage. With Options.AuditKey
//     records carry an HMAC; see docs/audit.md for what that does and does not protect.
package store
