package query

import "errors"

// Sentinel errors of the query package.
var (
	// ErrEmptyQuery is returned by Normalize when the text is empty or holds nothing but
	// white space and control characters.
	ErrEmptyQuery = errors.New("query: empty query")
	// ErrLLM is wrapped by the reasons the LLM normaliser fell back to the rules (recorded
	// in Parsed.Notes, never returned: the fallback answers instead).
	ErrLLM = errors.New("query: llm normaliser failed")
)
