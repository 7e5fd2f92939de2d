package index

import "errors"

// Sentinel errors of the index package.
var (
	// ErrNilSnapshot is returned by Build when the snapshot is nil.
	ErrNilSnapshot = errors.New("index: nil snapshot")
	// ErrUnknownKind is returned by Retrieve and ParseKind for a retriever kind that does not exist.
	ErrUnknownKind = errors.New("index: unknown retriever kind")
	// ErrBadLimit is returned by Retrieve when limit is less than 1.
	ErrBadLimit = errors.New("index: limit must be at least 1")
	// ErrEmbed is wrapped when the embedder fails or returns vectors of the wrong shape.
	ErrEmbed = errors.New("index: embedding failed")
	// ErrColumnSnapshot is wrapped when the column view cannot be written.
	ErrColumnSnapshot = errors.New("index: column snapshot failed")
	// ErrLexicalParams is returned by SetLexicalParams for a parameter out of its range.
	ErrLexicalParams = errors.New("index: invalid lexical parameters")
)
