package actors_test

import (
	"context"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func ExampleSystem_Search() {
	s := actors.New(actors.Options{})
	defer s.Close()

	job := &actors.Job{
		Query: &index.Query{Text: "restart docker"},
		Plan: []actors.Step{
			{Kind: index.Exact, Deadline: 2 * time.Second, Limit: 5},
			{Kind: index.Lexical, Deadline: 2 * time.Second, Limit: 5},
			{Kind: index.Semantic, Deadline: 20 * time.Millisecond, Limit: 5},
		},
		// Retrieve would call index.Generation.Retrieve; semantic here never answers in time.
		Retrieve: func(ctx context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
			if k == index.Semantic {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return []index.Hit{{Doc: uint32(k) + 1, Score: 1}}, nil
		},
		// Rank would fuse and rerank; it must copy what it keeps from g.
		Rank: func(g *actors.Gathered) *registry.SearchResponse {
			return &registry.SearchResponse{SearchMeta: g.Meta()}
		},
	}
	resp, err := s.Search(context.Background(), job)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := resp.SearchMeta
	fmt.Println("planned:", m.PlannedRetrievers)
	fmt.Println("timed out:", m.TimedOutRetrievers, "partial:", m.Partial)
	fmt.Println("candidates:", m.CandidateCount)
	// Output:
	// planned: [exact lexical semantic]
	// timed out: [semantic] partial: true
	// candidates: 2
}
