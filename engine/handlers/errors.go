package handlers

import "errors"

// Sentinel errors of the handlers package. Errors returned by Run wrap one of them.
var (
	// ErrTimeout is returned when the context deadline passed before the handler finished.
	ErrTimeout = errors.New("handlers: timed out")
	// ErrHandlerFailed is returned when the handler ran and failed: a non-zero exit status,
	// a non-2xx HTTP status, an error or panic of a go function, a failed request.
	ErrHandlerFailed = errors.New("handlers: handler failed")
	// ErrNetworkUnenforceable is returned, before anything runs, for an action of side
	// effect I whose network policy this machine cannot enforce.
	ErrNetworkUnenforceable = errors.New("handlers: network policy cannot be enforced")
	// ErrNetworkRefused is returned when an http handler's target host is not allowed by
	// the network policy (none refuses every host; allowlist needs network_allow).
	ErrNetworkRefused = errors.New("handlers: network policy refuses the target")
	// ErrUnknownKind is returned by a Dispatcher for a handler kind it has no handler for.
	ErrUnknownKind = errors.New("handlers: unknown handler kind")
	// ErrUnknownFunc is returned by the go handler for a function name nobody registered.
	ErrUnknownFunc = errors.New("handlers: unknown go function")
	// ErrBadHandler is returned for a definition whose handler fields cannot run: no
	// handler, empty argv, a template that does not parse or names a missing argument.
	ErrBadHandler = errors.New("handlers: invalid handler definition")
	// ErrSecretMissing is returned when a secret's environment variable is not set.
	ErrSecretMissing = errors.New("handlers: secret not set")
)
