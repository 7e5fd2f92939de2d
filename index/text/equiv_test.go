package text

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The optimised scanner, term memo and token-based concept matcher against the oracle of
// ref_test.go (the code as it was before): same tokens, same terms, same concept ids.

// equivTexts is a mixed corpus of English, Chinese, identifiers and odd inputs, random
// word salads over the lexicon's phrases and blockers, and the ../shared/eval queries and
// tool descriptions when they are checked out.
func equivTexts(tb testing.TB) []string {
	tb.Helper()
	texts := []string{
		"", "x", "the of and", "!!! ... ???", "\xff\x00删\x1b[0m", "a\xffb\x00c", "don't'''s",
		"Delete a schedule event", "删除日程", "Codex 更新后仍然启动旧版本", "包含日程的背包",
		"HTTPServer getUserID YouTube schedule_create maintenance.codex.diagnose",
		"IDs URLs listURLs getIDs parseJSONResponse getV2Orders HTTP2Server 2FA",
		"ＦＵＬＬ　ＷＩＤＴＨ　ｔｅｘｔ ＣｏｄｅｘＤｉａｇｎｏｓｅ", "cafe\u0301s Café NAÏVE Привет мир",
		"ファイルを削除 파일 삭제", "rock'n roll, 'quoted' O\u2019Reilly l\u2018x",
		"sign in to log in in order to look up the sign-in page; e-mail, order_by, sort order",
		strings.Repeat("schedule_create 删除日程 HTTPServer ", 50), strings.Repeat("z", 3000),
		strings.Repeat("A", 70) + "b " + strings.Repeat("é", 40), "ǅemal ǅ ᾈx Ⅻ ⅻ ①② ٣٤",
	}
	for _, bt := range benchTexts {
		texts = append(texts, bt.text)
	}
	words := []string{"delete", "schedule", "event", "删除", "日程", "更新", "codex", "version",
		"HTTPServer", "login", "sign", "in", "to", "log", "order", "by", "look", "up", "登录",
		"包含", "包", "the", "a", "查询", "user_id", "café", "ü", "e", "nation", "🙂", "x86_64",
		"Don't", "IDs", "getURLs", "ＡＢＣ", "，", "-", "_", ".", "'", "\u0301", "\xff"}
	l := DefaultLexicon()
	for k := range l.byKey { // every member key, phrases and blockers included
		words = append(words, k, strings.ReplaceAll(k, " ", "_"))
	}
	slices.Sort(words) // map order is random: keep the corpus reproducible
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
			switch r.IntN(4) {
			case 0:
			case 1:
				b.WriteByte('_')
			default:
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	max := 1 << 30
	if testing.Short() {
		max = 300
	}
	return append(texts, evalTexts(tb, max)...)
}

// evalTexts returns up to max query texts and tool descriptions per ../shared/eval set
// (nil when the sets are not checked out next to the repository).
func evalTexts(tb testing.TB, max int) []string {
	tb.Helper()
	sets, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "eval", "*"))
	var out []string
	for _, set := range sets {
		for _, name := range []string{"queries.jsonl", "tools.jsonl"} {
			f, err := os.Open(filepath.Join(set, name))
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for n := 0; sc.Scan() && n < max; n++ {
				var rec struct{ Query, Name, Description string }
				if json.Unmarshal(sc.Bytes(), &rec) != nil {
					continue
				}
				for _, s := range []string{rec.Query, rec.Name, rec.Description} {
					if s != "" {
						out = append(out, s)
					}
				}
			}
			f.Close()
		}
	}
	return out
}

// scanTrace renders every token of s as the Scanner or the reference scanner sees it.
func scanTrace(s string) string {
	var b strings.Builder
	var sc Scanner
	sc.Reset(s)
	for sc.Next() {
		fmt.Fprintf(&b, "%v %d %q %q %q|", sc.Kind(), sc.Offset(), sc.Bytes(), sc.Text(), sc.Folded())
	}
	return b.String()
}

func refScanTrace(s string) string {
	var b strings.Builder
	var sc refScanner
	sc.Reset(s)
	for sc.Next() {
		fmt.Fprintf(&b, "%v %d %q %q %q|", sc.Kind(), sc.Offset(), sc.Bytes(), sc.Text(), sc.Folded())
	}
	return b.String()
}

// refAnalyze is Analyze over the reference scanner and uncached stemming.
func refAnalyze(s string) []string {
	var out []string
	var sc refScanner
	sc.Reset(s)
	for sc.Next() {
		if sc.kind == KindCJK {
			out = appendCJKTerms(out, sc.Text())
			continue
		}
		if t, ok := refTerm(sc.buf); ok {
			out = append(out, t)
		}
	}
	return out
}

// checkEquiv fails t when s scans, analyses or names concepts differently from the oracle.
func checkEquiv(t *testing.T, l *Lexicon, s string) {
	t.Helper()
	if got, want := scanTrace(s), refScanTrace(s); got != want {
		t.Fatalf("%.80q: tokens\n%s\nwant\n%s", s, got, want)
	}
	if got, want := Analyze(s), refAnalyze(s); !slices.Equal(got, want) {
		t.Fatalf("%.80q: terms %q, want %q", s, got, want)
	}
	if got, want := l.AppendConceptIDs(nil, s), l.refAppendConceptIDs(nil, s); !slices.Equal(got, want) {
		t.Fatalf("%.80q: concepts %v, want %v", s, l.namesOf(got), l.namesOf(want))
	}
	if l == DefaultLexicon() {
		terms, ids := AppendTermsConceptIDs([]string{"x"}, []int32{-1}, s)
		if !slices.Equal(terms[1:], AppendTerms(nil, s)) || !slices.Equal(ids[1:], AppendConceptIDs(nil, s)) || terms[0] != "x" || ids[0] != -1 {
			t.Fatalf("%.80q: AppendTermsConceptIDs gives %q %v", s, terms, ids)
		}
	}
}

func TestScanAnalyzeConceptsMatchReference(t *testing.T) {
	l := defaultLex(t)
	texts := equivTexts(t)
	for _, s := range texts {
		checkEquiv(t, l, s)
	}
	t.Logf("%d texts identical", len(texts))
}

// TestConceptsOfTokensMatchesConceptIDs: a caller scanning into Tokens with Key gets the
// concepts AppendConceptIDs gives, for a small custom lexicon too (long phrases, a CJK
// key whose prefix is another key, blockers).
func TestConceptsOfTokensMatchesConceptIDs(t *testing.T) {
	for _, l := range []*Lexicon{defaultLex(t), phraseLexicon(t)} {
		for _, s := range tokenTexts(t) {
			var toks []Token
			var sc Scanner
			sc.Reset(s)
			for sc.Next() {
				key, _ := sc.Key()
				toks = append(toks, Token{Key: key, Kind: sc.Kind()})
			}
			got, want := l.AppendTokenConceptIDs(nil, toks), l.refAppendConceptIDs(nil, s)
			if !slices.Equal(got, want) {
				t.Fatalf("%.80q: concepts %v, want %v", s, l.namesOf(got), l.namesOf(want))
			}
		}
	}
}

// phraseLexicon is a small lexicon of long phrases, CJK keys whose prefix is another key,
// overlapping members and blockers.
func phraseLexicon(tb testing.TB) *Lexicon {
	l, err := ParseLexicon([]byte("-: in_order_to 包含 a_b_c_d_e\n" +
		"x: sign_in sign_in_with_google_account 包 包裹 删除日程表 log\n" +
		"y: sign google_account 日程 删除 a_b in_order\n"))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// tokenTexts are equivTexts plus texts meeting phraseLexicon's phrases and blockers.
func tokenTexts(tb testing.TB) []string {
	return append(equivTexts(tb), "sign in with google account", "a b c d e a b c d",
		"in order to sign in order", "删除日程表包含包裹包", "sign_in_with_google")
}

// TestTermMemoConcurrent hammers a fresh memo from several goroutines through its growth
// up to full: every answer is the uncached analysis.
func TestTermMemoConcurrent(t *testing.T) {
	m := newTermMemo()
	n := memoMaxSlots/2 + 1000 // past full
	if testing.Short() {
		n = 3 * memoMinSlots
	}
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("%s%d", []string{"running", "the", "x", "nationality", "ab"}[i%5], i/5)
		if i%3 == 0 { // letters only, so the stemmer runs: "baing", "caing", ...
			var b []byte
			for v := i; v > 0; v /= 26 {
				b = append(b, byte('a'+v%26))
			}
			words[i] = string(b) + "ing"
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 2 * n / 4 {
				w := words[r.IntN(len(words))]
				var e *memoEntry
				if r.IntN(2) == 0 {
					e = m.lookup(w)
				} else {
					e = m.lookupBytes([]byte(w))
				}
				_, stop := stopWords[w]
				if e.word != w || e.term != computeTerm(w) || e.stop != stop {
					t.Errorf("%q: entry %+v", w, *e)
					return
				}
			}
		})
	}
	wg.Wait()
	if tab := m.tab.Load(); 2*m.n > len(tab.slots) || len(tab.slots) > memoMaxSlots {
		t.Errorf("%d entries in %d slots", m.n, len(tab.slots))
	}
}

func FuzzScanMatchesReference(f *testing.F) {
	for _, s := range []string{
		"", "queryPassengerTrainOrder", "Codex 更新后仍然启动旧版本", "HTTPServer IDs",
		"a\xffb\x00c", "ＡＢＣ，删除\u3000日程", "don't'''s", "cafe\u0301", "::..__--",
		"sign in to look up", "包含日程", "ǅemal O\u2019Reilly",
	} {
		f.Add(s)
	}
	l := DefaultLexicon()
	f.Fuzz(func(t *testing.T, s string) { checkEquiv(t, l, s) })
}
