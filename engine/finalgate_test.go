package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// forbiddenID is a built-in action only the ops scope may discover: hidden from dev.
const forbiddenID = "maintenance.docker.prune"

// injectForbidden returns engine options whose retriever k (every one when k is
// index.NumKinds) puts the document *doc first in its answer, with a score above every
// other, as a retriever that ignored its allow-list would.
func injectForbidden(k index.Kind, doc *uint32) engine.Options {
	return engine.Options{WrapRetriever: func(next actors.RetrieveFunc) actors.RetrieveFunc {
		return func(ctx context.Context, kind index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error) {
			hits, err := next(ctx, kind, q, allow, limit)
			if err != nil || (k != index.NumKinds && kind != k) {
				return hits, err
			}
			top := 1.0
			if len(hits) > 0 {
				top = hits[0].Score * 2
			}
			return append([]index.Hit{{Doc: *doc, Score: top}}, hits...), nil
		}
	}}
}

// TestFinalGateDropsInjectedHits injects a hit the caller may not discover into each
// retriever's answer in turn (and into all at once) and checks it never appears: not in a
// search, an explained search, nor any streamed partial.
func TestFinalGateDropsInjectedHits(t *testing.T) {
	for k := index.Kind(0); k <= index.NumKinds; k++ {
		name := "all"
		if k < index.NumKinds {
			name = k.String()
		}
		t.Run(name, func(t *testing.T) {
			var doc uint32
			e := open(t, injectForbidden(k, &doc))
			d, ok := e.Snapshot().DocID(forbiddenID)
			if !ok {
				t.Fatalf("%s is not in the built-in registry", forbiddenID)
			}
			doc = d
			for _, q := range []string{"docker 磁盘满了，清理一下镜像", "prune docker images", forbiddenID} {
				for _, explain := range []bool{false, true} {
					resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Explain: explain, Limit: 10}, dev)
					if err != nil {
						t.Fatal(err)
					}
					if b := shown(resp); strings.Contains(b, forbiddenID) {
						t.Fatalf("%q (explain %v): the forbidden capability came back: %s", q, explain, b)
					}
				}
				ch, err := e.SearchStream(context.Background(), registry.SearchRequest{Query: q, Limit: 10}, dev)
				if err != nil {
					t.Fatal(err)
				}
				for u := range ch {
					if b := shown(u.Response); strings.Contains(b, forbiddenID) {
						t.Fatalf("%q: a streamed partial shows the forbidden capability: %s", q, b)
					}
				}
			}
			// The caller who may discover it still finds it.
			ops := registry.RuntimeContext{Tenant: "default", User: "olga", Scopes: []string{"ops"}, OS: "linux"}
			resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "prune docker images", Limit: 10}, ops)
			if err != nil {
				t.Fatal(err)
			}
			if b := shown(resp); !strings.Contains(b, forbiddenID) {
				t.Fatalf("ops does not find %s: %s", forbiddenID, b)
			}
		})
	}
}

// shown is what a response discloses beyond the query it echoes: its matches (with their
// explanations) and missing information.
func shown(r *registry.SearchResponse) string {
	b, _ := json.Marshal(struct {
		M []registry.Match
		I []string
	}{r.Matches, r.MissingInformation})
	return string(b)
}
