package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// Variant changes one search's pipeline, for measurement (capdex eval --ablate) and for
// tuning the fusion: which retrievers run, the fusion weights, and whether the rerank and
// the diversification run. The zero value changes nothing.
type Variant struct {
	// Skip names retrievers left out of the plan ("semantic", ...), as if the planner had
	// not chosen them.
	Skip []string
	// Weights, when set, replace the engine's fusion weights.
	Weights *rank.Weights
	// NoRerank ranks by the fused score alone.
	NoRerank bool
	// NoDiversify returns the first limit candidates of the ranking as they are.
	NoDiversify bool
}

// skips reports whether the variant leaves retriever k out (a nil variant skips none).
func (v *Variant) skips(k index.Kind) bool { return v != nil && slices.Contains(v.Skip, k.String()) }

// SearchVariant is Search with the pipeline changed by v. It is for evaluation and tuning:
// the policy pre-filter and every other rule of Search still apply.
func (e *Engine) SearchVariant(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext, v Variant) (*registry.SearchResponse, error) {
	for _, n := range v.Skip {
		if _, err := index.ParseKind(n); err != nil {
			return nil, fmt.Errorf("%w: variant: %w", ErrInvalidRequest, err)
		}
	}
	e.busy.Add(1)
	defer e.busy.Add(-1)
	return e.search(ctx, req, rc, &v)
}

// Weights returns the fusion weights the engine uses.
func (e *Engine) Weights() rank.Weights { return e.weights }

// FusionMethodWeights returns the default weights of a fusion method: "score" (the
// default, rank.DefaultWeights) or "rrf" (weighted RRF with the weights of seed 000 §15,
// rank.SeedWeights). An empty method is "score".
func FusionMethodWeights(method string) (rank.Weights, error) {
	if method == "" {
		method = rank.MethodScore
	}
	return rank.MethodWeights(method)
}
