package index

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// exhaustiveSparse scores every allowed document by walking the lists of the query's
// features (one term per list, as the retriever merges them): the reference of
// semanticSparse. When the query's common lists hold more than
// cost postings, only the rareTerms strongest of its rarer features count, as in
// semanticSparse. It returns the scores by document, whether that was the case and whether
// rarer features were left out.
func exhaustiveSparse(g *Generation, text string, allow *roaring.Bitmap, cost, rareTerms int) (scores map[uint32]float64, forward, pruned bool) {
	x := &g.sem
	v := x.sparse.EmbedSparse(text)
	type term struct {
		sl *semList
		w  float32
	}
	// one term per list, the weights of the features sharing it summed
	byList := map[uint32]int{}
	var all []term
	for i, f := range v.Idx {
		id, ok := x.feature(f)
		if !ok {
			continue
		}
		fe := x.feats[id]
		if j, ok := byList[fe.list]; ok {
			all[j].w += v.Val[i] * fe.scale
			continue
		}
		byList[fe.list] = len(all)
		all = append(all, term{&x.lists[fe.list], v.Val[i] * fe.scale})
	}
	var terms, rare []term
	common := 0
	for _, t := range all {
		if t.sl.cid == 0 {
			rare = append(rare, t)
			continue
		}
		terms = append(terms, t)
		common += int(t.sl.df)
	}
	forward = common > cost
	if forward && len(rare) > rareTerms {
		pruned = true
		byWeight := slices.Clone(rare)
		slices.SortFunc(byWeight, func(a, b term) int { return cmp.Compare(abs32(b.w), abs32(a.w)) })
		floor := abs32(byWeight[rareTerms-1].w)
		rare = slices.DeleteFunc(rare, func(t term) bool { return abs32(t.w) < floor })
	}
	scores = map[uint32]float64{}
	for _, t := range append(terms, rare...) {
		for _, p := range x.postings(t.sl) {
			if d := p >> 8; allow == nil || allow.Contains(d) {
				scores[d] += float64(t.w) * float64(int8(p))
			}
		}
	}
	return scores, forward, pruned
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// topOf ranks scores as semanticSparse does: positive scores, best first, ties by doc.
func topOf(scores map[uint32]float64, limit int) []uint32 {
	var docs []uint32
	for d, sc := range scores {
		if sc > 1e-6 {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b uint32) int {
		if scores[a] != scores[b] {
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	return docs[:min(limit, len(docs))]
}

// TestSemanticSparseExhaustive checks the sparse semantic retriever against exhaustive
// scoring: every hit's score is its exhaustive score over the features the retriever
// counts (the forward postings complete candidates exactly; integer sums round by far
// less than the tolerance), hits are allowed and ordered, and a query whose common lists
// are walked gets exactly the exhaustive ranking.
func TestSemanticSparseExhaustive(t *testing.T) {
	withSemanticParams(t, SemanticParams{}) // the whole text's scores, without clauseBest
	g := buildCaps(t, 1, testcat.GenerateCatalog(1500, 7), Options{})
	caps := g.Snapshot().Caps
	var queries []string
	for i := 0; i < len(caps); i += 97 {
		c := caps[i]
		queries = append(queries, c.Title, "I need to "+strings.ToLower(c.Title)+" now")
		// long queries of several sentences take the forward postings
		queries = append(queries, c.Summary+" "+caps[(i+31)%len(caps)].Summary+" "+caps[(i+67)%len(caps)].Title)
		// and longer ones have more rarer features than are walked
		var long strings.Builder
		for j := range 8 {
			long.WriteString(caps[(i+j*131)%len(caps)].Summary + " ")
		}
		queries = append(queries, long.String())
	}
	half := roaring.New()
	for d := range uint32(g.Len()) {
		if d%2 == 0 {
			half.Add(d)
		}
	}
	cands := max(semCandsPerHit*10, semCommonCands)
	var exact, forward, pruned int
	for _, allow := range []*roaring.Bitmap{nil, half} {
		for _, q := range queries {
			hits, err := g.Retrieve(context.Background(), Semantic, &Query{Text: q}, allow, 10)
			if err != nil {
				t.Fatal(err)
			}
			scores, fwd, pr := exhaustiveSparse(g, q, allow, g.sem.completionCost(g.Len(), cands), semRareTerms)
			for i, h := range hits {
				if allow != nil && !allow.Contains(h.Doc) {
					t.Fatalf("%q: hit %d outside allow", q, h.Doc)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Fatalf("%q: hits out of order: %v", q, hits)
				}
				if want := scores[h.Doc]; math.Abs(h.Score-want) > 1e-4*max(1, math.Abs(want)) {
					t.Fatalf("%q: doc %d scored %v, exhaustive %v", q, h.Doc, h.Score, want)
				}
			}
			if pr {
				pruned++
			}
			if fwd {
				forward++
				continue
			}
			exact++
			got := make([]uint32, len(hits))
			for i, h := range hits {
				got[i] = h.Doc
			}
			if want := topOf(scores, 10); !equalRanking(got, want, scores) {
				t.Fatalf("%q: got %v, exhaustive %v", q, got, want)
			}
		}
	}
	if exact == 0 || forward == 0 || pruned == 0 {
		t.Fatalf("the queries should take both paths and leave out rarer features: %d exhaustive, %d forward, %d pruned", exact, forward, pruned)
	}
}

// equalRanking reports whether two rankings agree up to float rounding: the same length
// and, rank by rank, the same score.
func equalRanking(got, want []uint32, scores map[uint32]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if a, b := scores[got[i]], scores[want[i]]; math.Abs(a-b) > 1e-4*max(1, math.Abs(b)) {
			return false
		}
	}
	return true
}

// TestSemanticIdf checks that the index weighs a feature by its rarity: of two lists with
// the same largest value, the rarer has the larger scale.
func TestSemanticIdf(t *testing.T) {
	if a, b := semIdf(1000, 1), semIdf(1000, 500); a <= b || b <= 0 {
		t.Fatalf("idf(df=1) %v, idf(df=500) %v", a, b)
	}
}

// BenchmarkSemanticSparse times the sparse semantic retriever at the engine's limit (50)
// on the seal_tools and hammerbench_zh queries and on the titles of a generated catalogue
// of 10,000 (the sets of the engine's BenchmarkStages).
func BenchmarkSemanticSparse(b *testing.B) {
	const limit = 50
	for _, set := range []string{"seal_tools", "hammerbench_zh", "catalog=10k"} {
		b.Run("set="+set, func(b *testing.B) {
			var g *Generation
			var qs []Query
			if set == "catalog=10k" {
				g = benchGeneration(b, 10_000)
				for i, c := range g.Snapshot().Caps {
					if c.ResourceType == registry.TypeAction && i%7 == 0 {
						qs = append(qs, Query{Text: c.Title})
					}
				}
			} else {
				s := loadEvalSet(b, evalDir(), set)
				if s == nil {
					b.Skipf("evaluation set %s not found (set CAPDEX_EVAL_DIR)", set)
				}
				g = s.g
				for _, q := range s.queries {
					qs = append(qs, Query{Text: q.Query})
				}
			}
			ctx := context.Background()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			cpu := threadCPU()
			i := 0
			for b.Loop() {
				if _, err := g.Retrieve(ctx, Semantic, &qs[i%len(qs)], nil, limit); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestKthLargest checks the radix select against sorting, on spans from one value to the
// whole int32 range.
func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + r.IntN(600)
		span := int64(1) << r.IntN(33)
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(int64(math.MinInt32) + r.Int64N(span)) // lowest values first
			if trial%2 == 1 {
				v[i] = int32(r.Int64N(span) - span/2)
			}
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		k := r.IntN(n)
		if got, want := kthLargest(v, k), sorted[n-1-k]; got != want {
			t.Fatalf("n=%d span=%d k=%d: got %d, want %d", n, span, k, got, want)
		}
	}
}
