package text

import "errors"

// ErrLexicon is wrapped by every error of ParseLexicon; the message names the line.
var ErrLexicon = errors.New("text: bad concept lexicon")
