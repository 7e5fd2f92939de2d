package server

import "errors"

// Sentinel errors of the server package.
var (
	// ErrConfig is returned by LoadConfig, ParseConfig and Validate for a configuration that
	// cannot be read or is invalid; the message lists every problem.
	ErrConfig = errors.New("server: invalid configuration")
	// ErrOverloaded is returned when a search or run finds every slot of its limit taken;
	// HTTP answers it with 429 and Retry-After.
	ErrOverloaded = errors.New("server: overloaded, retry later")
	// ErrAdminKey is returned by Open when the generated admin key cannot be read or kept.
	ErrAdminKey = errors.New("server: admin key")
	// ErrShuttingDown is returned for work that arrives while the daemon drains.
	ErrShuttingDown = errors.New("server: shutting down")
)
