package index

import (
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/text"
)

// lexprepTexts are texts whose concepts the lexical retriever expands: repeats, phrases,
// joined words, CJK runs, texts of stop words only and texts naming nothing.
var lexprepTexts = []string{
	"codex 更新后仍然启动旧版本", "delete the meeting and remove the meeting again",
	"sign in then log in", "YouTube video upload", "删除日程 删除 日程", "do it", "的了吗",
	"zzqx unknownword", "restart the service, not reinstall", "帮我取消明天的会议",
	"maintenance.codex.diagnose", "how do I fix the PATH conflict",
}

// analysedQuery is what the engine's normaliser gives the retrievers: the text with its
// terms and its concept ids, each once in order of first appearance (an empty, non-nil
// slice when it names none).
func analysedQuery(s string) *Query {
	all := text.AppendConceptIDs(nil, s)
	ids := []int32{}
	for _, c := range all {
		if !slices.Contains(ids, c) {
			ids = append(ids, c)
		}
	}
	terms := text.Analyze(s)
	if terms == nil {
		terms = []string{}
	}
	return &Query{Text: s, Terms: terms, ConceptIDs: ids}
}

// checkLexicalPrepared fails unless a query holding its terms and concept ids
// (Query.ConceptIDs) gets the hits of the same query given by its text alone, and leaves its
// concept ids as they were.
func checkLexicalPrepared(t *testing.T, g *Generation, s string, limit int) {
	t.Helper()
	want := g.retrieveLexical(&Query{Text: s}, nil, limit)
	q := analysedQuery(s)
	ids := slices.Clone(q.ConceptIDs)
	got := g.retrieveLexical(q, nil, limit)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: with concept ids %v\n got %v\nwant %v", s, q.ConceptIDs, got, want)
	}
	if !slices.Equal(q.ConceptIDs, ids) {
		t.Fatalf("%q: concept ids changed from %v to %v", s, ids, q.ConceptIDs)
	}
}

// TestLexicalConceptIDs: the lexical retriever gives a query holding its concept ids the
// hits it finds for the text alone, on the fixture and on every query of the evaluation sets.
func TestLexicalConceptIDs(t *testing.T) {
	g := buildFixture(t, cheap)
	for _, s := range lexprepTexts {
		checkLexicalPrepared(t, g, s, 50)
	}
	for _, c := range g.Snapshot().Caps {
		checkLexicalPrepared(t, g, c.Title+" "+c.Summary, 10)
	}
	for _, name := range []string{"seal_tools", "hammerbench_zh", "metatool"} {
		s := loadEvalSet(t, evalDir(), name)
		if s == nil {
			continue
		}
		for i, q := range s.queries {
			if testing.Short() && i%10 != 0 {
				continue
			}
			checkLexicalPrepared(t, s.g, q.Query, 50)
		}
	}
}

// TestLexicalConceptIDsRead: the retriever reads the concept ids a query holds instead of
// scanning its text: ids of other concepts change the hits, an empty list drops the
// expansion, and the ids of the text give the text's hits.
func TestLexicalConceptIDsRead(t *testing.T) {
	g := buildFixture(t, cheap)
	const s = "删除日程"
	full := g.retrieveLexical(&Query{Text: s}, nil, 50)
	none := g.retrieveLexical(&Query{Text: s, Terms: text.Analyze(s), ConceptIDs: []int32{}}, nil, 50)
	if reflect.DeepEqual(full, none) {
		t.Fatalf("%q: dropping the concepts changed nothing: %v", s, full)
	}
	for _, h := range none {
		if slices.Contains(h.Matched, "concepts") {
			t.Fatalf("%q: a concept match without concepts: %v", s, none)
		}
	}
	if got := g.retrieveLexical(analysedQuery(s), nil, 50); !reflect.DeepEqual(got, full) {
		t.Fatalf("%q: with its concept ids\n got %v\nwant %v", s, got, full)
	}
}

// TestLexicalConceptIDsShared: a query's concept ids are the caller's: concurrent searches
// sharing one query, and searches of other texts on the pooled scratch afterwards, neither
// change them nor see them.
func TestLexicalConceptIDsShared(t *testing.T) {
	g := buildFixture(t, cheap)
	shared := analysedQuery("delete the meeting, sign in, 删除日程")
	ids := slices.Clone(shared.ConceptIDs)
	want := g.retrieveLexical(&Query{Text: shared.Text}, nil, 50)
	others := map[string][]Hit{}
	for _, s := range lexprepTexts {
		others[s] = g.retrieveLexical(&Query{Text: s}, nil, 50)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if (i+w)%2 == 0 {
					if got := g.retrieveLexical(shared, nil, 50); !reflect.DeepEqual(got, want) {
						t.Errorf("shared query: got %v, want %v", got, want)
						return
					}
					continue
				}
				s := lexprepTexts[(i+w)%len(lexprepTexts)]
				if got := g.retrieveLexical(&Query{Text: s}, nil, 50); !reflect.DeepEqual(got, others[s]) {
					t.Errorf("%q after the shared query: got %v, want %v", s, got, others[s])
					return
				}
			}
		}()
	}
	wg.Wait()
	if !slices.Equal(shared.ConceptIDs, ids) {
		t.Fatalf("concept ids changed from %v to %v", ids, shared.ConceptIDs)
	}
}
