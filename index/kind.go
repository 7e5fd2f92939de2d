package index

import (
	"fmt"
	"time"

	"github.com/capdex/capdex/registry"
)

// Kind names a retriever.
type Kind uint8

// Retriever kinds.
const (
	Exact Kind = iota
	Lexical
	Semantic
	Metadata
	Hierarchy
	History
	// NumKinds is the number of retriever kinds.
	NumKinds
)

// The kinds' names, as String writes and ParseKind reads them; the only spelling of each
// (engine/rank names its sources with these).
const (
	ExactName     = "exact"
	LexicalName   = "lexical"
	SemanticName  = "semantic"
	MetadataName  = "metadata"
	HierarchyName = "hierarchy"
	HistoryName   = "history"
)

var kindNames = [NumKinds]string{ExactName, LexicalName, SemanticName, MetadataName, HierarchyName, HistoryName}

// String returns the lowercase name of the kind ("exact", "lexical", ...).
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// DefaultDeadline is the kind's deadline, measured from the start of a search, when the
// caller sets none (docs/ARCHITECTURE.md "Search"): exact 50 ms, metadata and hierarchy
// 100 ms, lexical 200 ms, history 300 ms, semantic 500 ms. A kind's deadline is spelled
// here and nowhere else.
func (k Kind) DefaultDeadline() time.Duration {
	switch k {
	case Exact:
		return 50 * time.Millisecond
	case Metadata, Hierarchy:
		return 100 * time.Millisecond
	case Lexical:
		return 200 * time.Millisecond
	case History:
		return 300 * time.Millisecond
	default:
		return 500 * time.Millisecond
	}
}

// ParseKind returns the kind named s (as written by String); ErrUnknownKind otherwise.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownKind, s)
}

// Hit is one document a retriever found.
type Hit struct {
	// Doc is the docID: the position of the capability in the generation's snapshot.
	Doc uint32
	// Score is the retriever's raw score; higher is better, comparable only within one
	// retriever's answer.
	Score float64
	// Matched names what matched: field names for lexical ("title", "aliases"), field:value
	// pairs for metadata ("intents:diagnose"), the name form for exact ("id", "alias").
	Matched []string
}

// Query is what the retrievers read. The engine's normalizer fills it; a Query with only
// Text set also works (Terms are then analysed from Text).
type Query struct {
	// Text is the raw query text.
	Text string
	// Terms are the analysed search terms (text.Analyze of the text); nil means analyse Text.
	Terms []string
	// ConceptIDs are the ids (text.ConceptID) of the shared lexicon's concepts named in Text,
	// each once in order of first appearance: text.AppendConceptIDs of Text with its repeats
	// removed. nil means find them in Text (in Terms when Text is empty); a caller that
	// found none sets an empty, non-nil slice. Retrievers only read it.
	ConceptIDs []int32
	// IDs are explicit ids or tool names found in the text.
	IDs []string
	// Intents, Entities and Symptoms are normalised values (concept names or registry terms).
	Intents, Entities, Symptoms []string
	// Match is the structured match of a search request, if any.
	Match *registry.StructuredMatch
	// Within is the pack scope of the request, if any.
	Within string
	// Browse says the caller is browsing (asking what exists) rather than naming a task.
	Browse bool
	// User and Project select the history of uses.
	User, Project string
	// Tenant selects the past sessions the history retriever learns from (FeedbackSource);
	// empty means none.
	Tenant string
}
