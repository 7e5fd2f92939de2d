package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestFirstChangeAfterOpenPatched starts chains of changes from a generation that keeps no
// analysis (built from scratch, and loaded from persisted state, as Open makes them) and
// checks that the first change that keeps every docID patches the lexical and sparse
// semantic indexes (deriving the analysis it needs: reuse_derived.go), and that every
// generation of the chain, patched or assembled, is the one a build from scratch gives:
// the lexical and semantic indexes by content and every retriever's answers.
func TestFirstChangeAfterOpenPatched(t *testing.T) {
	ctx := context.Background()
	emb := embed.NewHashed()
	snap, err := registry.NewSnapshot(5, testcat.GenerateCatalog(600, 9))
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Build(ctx, snap, Options{Embedder: emb, Persisted: persisted(t, scratch)})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Stats().Persist.Loaded) != 3 {
		t.Fatalf("loaded %v (%v)", loaded.Stats().Persist.Loaded, loaded.Stats().Persist.Err)
	}
	compared, derived := 0, 0
	for _, start := range []struct {
		name string
		g    *Generation
	}{{"built", scratch}, {"loaded", loaded}} {
		r := rand.New(rand.NewPCG(20, 11))
		prev, chain := start.g, snap
		for step := range 6 {
			var put []*registry.Capability
			var deleted []string
			for range 1 + r.IntN(3) {
				c := chain.Caps[r.IntN(len(chain.Caps))]
				x := c.Clone()
				x.Version++
				switch r.IntN(4) {
				case 0: // a shorter text: the document's largest values move
					x.Summary = "tiny"
					x.WhenToUse = nil
				case 1: // a longer one
					x.Summary = strings.Repeat(c.Summary+" ", 3) + fmt.Sprintf("zqw%d", step)
				case 2: // any one field
					ms := testcat.Mutations(c)
					x = ms[r.IntN(len(ms))].Cap
				default:
					x.Summary += fmt.Sprintf(" grows wug%d", step)
				}
				put = append(put, x)
			}
			if step == 4 { // an id added: every structure assembled, kept analyses reused
				x := chain.Caps[r.IntN(len(chain.Caps))].Clone()
				x.ID += "_added"
				x.ResourceType = registry.TypeAction
				put = append(put, x)
			}
			put, deleted = dedupeChange(put, deleted)
			next, err := chain.Apply(chain.Generation+1, put, deleted)
			if err != nil {
				continue // a mutation the registry refuses
			}
			got, err := Build(ctx, next, Options{Embedder: emb, Reuse: prev})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Build(ctx, next, Options{Embedder: emb})
			if err != nil {
				t.Fatal(err)
			}
			keepsIDs := chain.SameIDs(next)
			if st := got.Stats(); keepsIDs && (!st.LexicalPatched || !st.SemanticPatched) {
				t.Fatalf("%s step %d: a change that keeps every docID was not patched (lexical %v, semantic %v)",
					start.name, step, st.LexicalPatched, st.SemanticPatched)
			}
			if d := lexDiff(&got.lex, &want.lex); d != "" {
				t.Fatalf("%s step %d: the lexical index differs from a build: %s", start.name, step, d)
			}
			if d := semDiff(&got.sem, &want.sem); d != "" {
				t.Fatalf("%s step %d: the semantic index differs from a build: %s", start.name, step, d)
			}
			if !reflect.DeepEqual(&got.exact, &want.exact) || !reflect.DeepEqual(&got.meta, &want.meta) {
				t.Fatalf("%s step %d: the exact or metadata index differs from a build", start.name, step)
			}
			compared += sameAnswers(t, got, want, persistQueries(next, r, 8))
			// vectors of unchanged documents the patch embedded again (kept for the next)
			if keepsIDs && step == 0 {
				for d, c := range next.Caps {
					if c == chain.Caps[d] && got.an.sparse[d].Idx != nil {
						derived++
					}
				}
			}
			prev, chain = got, next
		}
	}
	if derived == 0 {
		t.Fatal("no first patch read the vector of an unchanged document")
	}
	t.Logf("%d answers compared; %d vectors of unchanged documents derived by first patches", compared, derived)
}
