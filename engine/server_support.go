package engine

import "github.com/capdex/capdex/registry/store"

// Errors of the registry's versioning rules, re-exported so that callers above the engine
// (the daemon in engine/server) can tell a version conflict from a bad request without
// importing the store. Put, Import and SetStatus return errors wrapping them.
var (
	// ErrNoVersionBump is returned (wrapped) by Put and Import when a definition differs from
	// the stored one of the same id and version: a change needs a higher version.
	ErrNoVersionBump = store.ErrNoVersionBump
	// ErrStaleVersion is returned (wrapped) by Put and Import when a definition's version is
	// lower than the id's latest stored version.
	ErrStaleVersion = store.ErrStaleVersion
)
