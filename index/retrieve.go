package index

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// Retrieve runs retriever k for q and returns at most limit hits, best first, each a doc in
// allow (a nil allow means every doc; callers serving a RuntimeContext pass Filter's result).
// It returns ErrBadLimit for limit < 1, ErrUnknownKind for an unknown k, ctx's error when ctx
// is done, and wraps ErrEmbed when the semantic retriever cannot embed the query. An empty
// or unusable query is not an error: it finds nothing. Hit.Matched slices may be shared
// between hits and calls; callers must not modify them.
func (g *Generation) Retrieve(ctx context.Context, k Kind, q *Query, allow *roaring.Bitmap, limit int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, ErrBadLimit
	}
	if k >= NumKinds {
		return nil, fmt.Errorf("%w: %d", ErrUnknownKind, k)
	}
	if q == nil || g.n == 0 || (allow != nil && allow.IsEmpty()) {
		return nil, nil
	}
	limit = min(limit, g.n)
	switch k {
	case Exact:
		return g.retrieveExact(q, allow, limit), nil
	case Lexical:
		return g.retrieveLexical(q, allow, limit), nil
	case Semantic:
		return g.retrieveSemantic(ctx, q, allow, limit)
	case Metadata:
		return g.retrieveMetadata(q, allow, limit), nil
	case Hierarchy:
		return g.retrieveHierarchy(q, allow, limit), nil
	default: // History
		return g.retrieveHistory(q, allow, limit), nil
	}
}
