package govern

import "errors"

// Sentinel errors of the govern package.
var (
	// ErrBadRequest is returned by DecodeRunRequest for a body that is not one JSON object
	// with only the fields id (required), version, arguments and confirmation_token.
	ErrBadRequest = errors.New("govern: invalid run request")
	// ErrBadToken is returned by ParseToken for text that is not a well-formed token.
	ErrBadToken = errors.New("govern: malformed confirmation token")
	// ErrConfig is returned by New for missing or invalid Options.
	ErrConfig = errors.New("govern: invalid options")
	// ErrAudit is returned by Run when an audit record could not be written; the run did
	// not start when the first record failed.
	ErrAudit = errors.New("govern: audit log failed")
	// ErrBackend is returned by Run when the definitions or the key store failed.
	ErrBackend = errors.New("govern: backend failed")
)
