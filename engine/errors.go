package engine

import "errors"

// Sentinel errors of the engine package.
var (
	// ErrInvalidRequest is returned for a request that breaks the protocol: an empty query,
	// a limit outside 1..10, an unknown type or side effect, a malformed id.
	ErrInvalidRequest = errors.New("engine: invalid request")
	// ErrNotFound is returned by Describe and List when no visible capability has the id.
	ErrNotFound = errors.New("engine: not found")
	// ErrForbidden is returned by Describe when the caller may not pass the describe gate.
	ErrForbidden = errors.New("engine: forbidden")
	// ErrInvalidOptions is returned by Open for Options it cannot use (an unknown retriever
	// name in Deadlines).
	ErrInvalidOptions = errors.New("engine: invalid options")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("engine: closed")
)

// gateError is a refusal of a gate: it matches its sentinel (ErrNotFound, ErrForbidden)
// with errors.Is and reads as msg alone, the message Run answers for the same refusal.
type gateError struct {
	sentinel error
	msg      string
}

func (e gateError) Error() string { return e.msg }

func (e gateError) Unwrap() error { return e.sentinel }
