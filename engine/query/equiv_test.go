package query

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// The equivalence tests check that Rules.Normalize gives exactly what the reference
// normaliser (refNormalize, ref_rules_test.go) gives: every field of the parse, nil and
// empty slices told apart, and the same error.

// evalDir is ../shared/eval seen from this package's directory, or the directory
// CAPDEX_EVAL_DIR names (as for package bench).
var evalDir = cmp.Or(os.Getenv("CAPDEX_EVAL_DIR"), "../../../shared/eval")

// equivLexicon is one lexicon the equivalence tests normalise with.
type equivLexicon struct {
	name string
	lex  *Lexicon
}

// equivLexicons returns the lexicons of the tests: none (the default), the fixture and
// built-in registries and, with evalSets, the registries of the evaluation sets found
// under evalDir.
func equivLexicons(tb testing.TB, evalSets bool) []equivLexicon {
	tb.Helper()
	out := []equivLexicon{
		{"default", nil},
		{"fixture", NewLexicon(fixtureSnapshot(tb))},
		{"builtin", builtinLexicon(tb)},
	}
	if !evalSets {
		return out
	}
	sets, _ := filepath.Glob(filepath.Join(evalDir, "*", "tools.jsonl"))
	for _, path := range sets {
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
			ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		snap, err := registry.NewSnapshot(1, caps)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, equivLexicon{filepath.Base(filepath.Dir(path)), NewLexicon(snap)})
	}
	return out
}

// jsonlQueries returns the "query" value of every line of a JSON-lines file.
func jsonlQueries(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, q.Query)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// evalQueries returns the queries of every evaluation set, by set.
func evalQueries(tb testing.TB) map[string][]string {
	tb.Helper()
	out := make(map[string][]string)
	paths, _ := filepath.Glob(filepath.Join(evalDir, "*", "queries.jsonl"))
	for _, p := range paths {
		out[filepath.Base(filepath.Dir(p))] = jsonlQueries(tb, p)
	}
	return out
}

// fixtureStrings returns every string literal of the package's test files and the
// FuzzNormalize corpus: the texts the package's own tests normalise, among others.
func fixtureStrings(tb testing.TB) []string {
	tb.Helper()
	var out []string
	fset := gotoken.NewFileSet()
	files, _ := filepath.Glob("*_test.go")
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out = append(out, s)
				}
			}
			return true
		})
	}
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzNormalize/*")
	for _, name := range corpus {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		// go test fuzz v1, then one line: string("…")
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// randomQueries returns n texts mixing words and phrases of the pool (queries, cue
// phrases, concept members, ids) with punctuation, digits, odd spacing and runes of other
// scripts, in Chinese and English.
func randomQueries(r *rand.Rand, pool []string, n int) []string {
	seps := []string{" ", " ", " ", "", "", ",", "，", "。", ". ", ".", "、", "/", "_", "-", "::", "@", "?", "？", "!", "\n", "\t", "  ",
		":", "：", "(", ")", "（", "）", "\"", "“", "”", ";", "；", "'", "’", "\x1b[31m", "\u200b", "\ufeff", "\x00", "\xff"}
	odd := []string{"Ａｂｃ", "１２３", "ñandú", "Straße", "İstanbul", "ﬁle", "한국어", "カタカナ", "ｶﾀｶﾅ", "ー", "😀", "e\u0301",
		"v2", "3.14", "@3", "@v2", "HTTPServer", "YouTube", "queryPassengerTrainOrder", "don't", "DON'T", "IDs", "URLs",
		"a.b.c", "x::y", "tools.get_weather", "maintenance.codex.diagnose@3", "Flights::book-flight", "codex_diagnose",
		"不", "别", "了", "吗", "没有", "再", "在", "里", "先", "后", "的"}
	out := make([]string, 0, n)
	var sb strings.Builder
	for range n {
		sb.Reset()
		words := 1 + r.IntN(40)
		if r.IntN(8) == 0 {
			words += r.IntN(300) // long, sometimes past MaxQueryBytes
		}
		for range words {
			var w string
			switch x := r.IntN(10); {
			case x < 6:
				p := pool[r.IntN(len(pool))]
				if r.IntN(3) == 0 { // a piece of a longer text
					f := strings.Fields(p)
					if len(f) > 0 {
						i := r.IntN(len(f))
						p = strings.Join(f[i:min(len(f), i+1+r.IntN(4))], " ")
					}
				}
				w = p
			case x < 8:
				w = odd[r.IntN(len(odd))]
			default:
				w = seps[r.IntN(len(seps))]
			}
			if r.IntN(6) == 0 {
				w = strings.ToUpper(w)
			}
			sb.WriteString(w)
			sb.WriteString(seps[r.IntN(len(seps))])
		}
		out = append(out, sb.String())
	}
	return out
}

// wordPool returns the material randomQueries mixes: the given texts, the cue phrases and
// the concept members.
func wordPool(texts []string) []string {
	pool := append([]string(nil), texts...)
	for _, phrases := range cueTable {
		pool = append(pool, phrases...)
	}
	lx := text.DefaultLexicon()
	for _, name := range lx.Names() {
		pool = append(pool, lx.Members(name)...)
	}
	return pool
}

// checkEquiv fails t when Rules.Normalize and refNormalize differ on s.
func checkEquiv(t *testing.T, lexName string, lex *Lexicon, s string) bool {
	t.Helper()
	got, gotErr := Rules{}.Normalize(context.Background(), s, lex)
	want, wantErr := refNormalize(s, lex)
	if !errors.Is(gotErr, wantErr) || (gotErr == nil) != (wantErr == nil) {
		t.Errorf("lexicon %s, %q: error %v, reference %v", lexName, s, gotErr, wantErr)
		return false
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lexicon %s, %q:\n got %+v\nwant %+v", lexName, s, got, want)
		return false
	}
	return true
}

// TestNormalizeMatchesReference runs the new and the reference normaliser over the
// evaluation queries, the seed cases, the package's fixtures, adversarial repetitions and
// random mixes, with every lexicon. CAPDEX_EQUIV_RANDOM sets the number of random mixes
// per lexicon (default 3000); -short samples the rest too.
func TestNormalizeMatchesReference(t *testing.T) {
	lexicons := equivLexicons(t, true)
	var texts []string
	for _, qs := range evalQueries(t) {
		texts = append(texts, qs...)
	}
	if seeds := "../../testdata/eval/seed_cases.jsonl"; fileExists(seeds) {
		texts = append(texts, jsonlQueries(t, seeds)...)
	}
	texts = append(texts, fixtureStrings(t)...)
	for _, w := range []string{"不要", "a.", "别更新或", "list tools ", "有哪些能力", "在里", "don't update or ", "先", "让", "x ",
		"maintenance.codex.diagnose ", "不想再", "之后", "if it fails, "} {
		texts = append(texts, strings.Repeat(w, 50), strings.Repeat(w, 3000))
	}
	nRandom := 3000
	if n, err := strconv.Atoi(os.Getenv("CAPDEX_EQUIV_RANDOM")); err == nil {
		nRandom = n
	}
	r := rand.New(rand.NewPCG(1, 2))
	if testing.Short() {
		r.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
		texts = texts[:min(len(texts), 1500)]
		nRandom = min(nRandom, 300)
	}
	pool := wordPool(texts)
	for _, l := range lexicons {
		t.Run(l.name, func(t *testing.T) {
			fails := 0
			for _, s := range slices.Concat(texts, randomQueries(r, pool, nRandom)) {
				if !checkEquiv(t, l.name, l.lex, s) {
					if fails++; fails >= 10 {
						t.Fatal("too many differences")
					}
				}
			}
		})
	}
}

// TestCueBits: every cue name has a bit of its own.
func TestCueBits(t *testing.T) {
	var all cueSet
	for name := range cueTable {
		b := cueBits[name]
		if b == 0 || b&(b-1) != 0 || all&b != 0 {
			t.Errorf("cue %q: bit %#x (taken: %#x)", name, b, all)
		}
		all |= b
	}
	for name, b := range cueBits {
		if b == 0 || b&(b-1) != 0 {
			t.Errorf("cue %q: bit %#x", name, b)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// FuzzNormalizeMatchesReference: the normaliser gives what the reference gives.
func FuzzNormalizeMatchesReference(f *testing.F) {
	for _, s := range fixtureStrings(f) {
		f.Add(s)
	}
	lexicons := equivLexicons(f, false) // the eval sets' lexicons are slow to build per worker
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range lexicons {
			checkEquiv(t, l.name, l.lex, s)
		}
	})
}

// TestNormalizeConcurrent: scans sharing a lexicon (and so its word cache) from several
// goroutines still give the reference's parses (run it with -race).
func TestNormalizeConcurrent(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	texts := fixtureStrings(t)
	r := rand.New(rand.NewPCG(3, 4))
	texts = append(texts, randomQueries(r, wordPool(texts), 200)...)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range texts {
				checkEquiv(t, "fixture", lex, texts[(i+g*len(texts)/4)%len(texts)])
			}
		})
	}
	wg.Wait()
}
