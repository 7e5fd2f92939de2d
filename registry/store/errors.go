package store

import (
	"errors"
	"fmt"

	"github.com/capdex/capdex/registry"
)

// Sentinel errors of the store. Every error a Store method returns wraps one of these (or a
// registry sentinel, or a context error), so callers test with errors.Is.
var (
	// ErrLocked is returned by Open when another process (or another Store in this process)
	// holds the data directory. It is returned at once; Open never waits for the lock.
	ErrLocked = errors.New("store: data directory is locked by another process")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("store: closed")
	// ErrFormat is returned by Open when the directory holds data of an unknown format version.
	ErrFormat = errors.New("store: unsupported data format version")
	// ErrNotFound is returned when no capability, version, blob or cache entry has the key.
	// errors.Is(err, registry.ErrNotFound) holds for it too.
	ErrNotFound error = &aliasError{msg: "store: not found", alias: registry.ErrNotFound}
	// ErrExists is returned by Create when the id already has an active (not deleted)
	// definition. Of concurrent Create calls for one new id exactly one succeeds; the others
	// get ErrExists.
	ErrExists = errors.New("store: capability already exists")
	// ErrNoVersionBump is returned by Put, Create and PutAll when a definition differs from the
	// stored one of the same id and version: a change needs a higher version.
	ErrNoVersionBump = errors.New("store: definition changed without a version bump")
	// ErrStaleVersion is returned by Put and PutAll when the version is lower than the id's
	// latest version.
	ErrStaleVersion = errors.New("store: version is older than the active version")
	// ErrInvalid is returned for input the store cannot keep: a nil capability, an invalid id,
	// a version below 1, an unknown status, an empty key or name.
	ErrInvalid = errors.New("store: invalid input")
	// ErrTokenSpent is returned by SpendToken when the token id was spent before.
	ErrTokenSpent = errors.New("store: token already spent")
	// ErrConflict is returned when a transaction kept conflicting with concurrent writers
	// after all internal retries (it should not happen in practice).
	ErrConflict = errors.New("store: transaction conflict, retries exhausted")
	// ErrCorrupt is returned when a stored value cannot be decoded.
	ErrCorrupt = errors.New("store: corrupt value")
	// ErrChainBroken is wrapped by every *ChainError.
	ErrChainBroken = errors.New("store: audit chain broken")
)

// aliasError is a sentinel that also matches another package's sentinel with errors.Is.
type aliasError struct {
	msg   string
	alias error
}

func (e *aliasError) Error() string { return e.msg }

// Is reports whether target is the aliased sentinel.
func (e *aliasError) Is(target error) bool { return target == e.alias }

// ChainError names the first audit record that breaks the hash chain. VerifyAudit returns it;
// errors.Is(err, ErrChainBroken) holds.
type ChainError struct {
	// Seq is the sequence number of the first bad (or missing) record.
	Seq uint64
	// Reason says what is wrong: "missing", "undecodable", "seq mismatch", "prev mismatch",
	// "hash mismatch", "head mismatch", "head missing: …", "past the head: …", "stray key …",
	// and with an audit key "unsigned: …", "mac mismatch: …" or "key mark …".
	Reason string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("store: audit chain broken at record %d: %s", e.Seq, e.Reason)
}

// Unwrap returns ErrChainBroken.
func (e *ChainError) Unwrap() error { return ErrChainBroken }
