package index

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/testcat"
)

// exhaustiveSparse scores every allowed document by walking every list of the query's
// features: the reference of semanticSparse. It returns the scores by document and the
// query's postings in common lists.
func exhaustiveSparse(g *Generation, text string, allow *roaring.Bitmap) (map[uint32]float64, int) {
	x := &g.sem
	v := x.sparse.EmbedSparse(text)
	scores := map[uint32]float64{}
	common := 0
	for i, f := range v.Idx {
		l, ok := x.sparseList(f)
		if !ok {
			continue
		}
		sl := &x.lists[l]
		if sl.cid != 0 {
			common += int(sl.df)
		}
		w := float64(v.Val[i]) * float64(sl.scale)
		for p := sl.start; p < sl.start+sl.df; p++ {
			if d := x.docs[p]; allow == nil || allow.Contains(d) {
				scores[d] += w * float64(x.q8[p])
			}
		}
	}
	return scores, common
}

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
// scoring: every hit's score is its exact score (the forward postings complete candidates
// exactly), hits are allowed and ordered, and a query whose common lists are walked gets
// exactly the exhaustive ranking.
func TestSemanticSparseExhaustive(t *testing.T) {
	g := buildCaps(t, 1, testcat.GenerateCatalog(1500, 7), Options{})
	caps := g.Snapshot().Caps
	var queries []string
	for i := 0; i < len(caps); i += 97 {
		c := caps[i]
		queries = append(queries, c.Title, "I need to "+strings.ToLower(c.Title)+" now")
		// long queries of several sentences take the forward postings
		queries = append(queries, c.Summary+" "+caps[(i+31)%len(caps)].Summary+" "+caps[(i+67)%len(caps)].Title)
	}
	half := roaring.New()
	for d := range uint32(g.Len()) {
		if d%2 == 0 {
			half.Add(d)
		}
	}
	cands := max(4*10, semCommonCands)
	var exact, forward int
	for _, allow := range []*roaring.Bitmap{nil, half} {
		for _, q := range queries {
			hits, err := g.Retrieve(context.Background(), Semantic, &Query{Text: q}, allow, 10)
			if err != nil {
				t.Fatal(err)
			}
			scores, common := exhaustiveSparse(g, q, allow)
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
			if common > g.sem.completionCost(g.Len(), cands) {
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
	if exact == 0 || forward == 0 {
		t.Fatalf("the queries should take both paths: %d exhaustive, %d forward", exact, forward)
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
