package registry

import "errors"

// Sentinel errors of the registry package.
var (
	// ErrBadDuration is returned when a duration field is not a Go duration string.
	ErrBadDuration = errors.New("registry: invalid duration (want a Go duration such as \"30s\")")
	// ErrBadID is returned for an id that is not lowercase [a-z0-9_] segments joined by dots.
	ErrBadID = errors.New("registry: invalid id")
	// ErrDuplicateID is returned when two definitions share an id.
	ErrDuplicateID = errors.New("registry: duplicate id")
	// ErrNotFound is returned when no capability has the id.
	ErrNotFound = errors.New("registry: not found")
	// ErrUnknownFormat is returned by Import for a catalogue format it does not know.
	ErrUnknownFormat = errors.New("registry: unknown import format")
	// ErrLint is wrapped by a LintErrors value.
	ErrLint = errors.New("registry: lint failed")
)
