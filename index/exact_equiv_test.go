package index

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// refNameTokens is nameTokens as it was before the ASCII table, when it gave every token and
// its caller kept the identLike ones (a frozen reference).
func refNameTokens(s string, fn func(tok string) bool) {
	isTok := func(r rune) bool {
		if r < utf8.RuneSelf {
			return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
				strings.IndexByte("._:-/@", byte(r)) >= 0
		}
		return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !text.IsCJK(r)
	}
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isTok(r) {
				break
			}
			i += size
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isTok(r) {
				break
			}
			j += size
		}
		if j > i {
			tok := strings.Trim(s[i:j], ".:-/@")
			if tok != "" {
				if n++; n > maxExactTokens || !fn(tok) {
					return
				}
			}
		}
		i = j
	}
}

// refRetrieveExact is retrieveExact as it was before mayName, mayRoot and the token scan
// (a frozen reference): it normalises and looks up the whole text whatever its length, and
// reads every token.
func refRetrieveExact(g *Generation, q *Query, allow *roaring.Bitmap, limit int) []Hit {
	s := getScratch()
	defer putScratch(s)
	acc, seen := s.dense(g.n)
	look := func(name string) {
		name = stripVersion(name)
		if name == "" {
			return
		}
		v, ok := g.exact.names[nameKey(name)]
		if !ok {
			if strings.IndexByte(name, '.') > 0 {
				refExactPrefix(g, s, name, allow)
			}
			return
		}
		var buf [1]exactRef
		for _, r := range g.exact.refs(v, &buf) {
			if allow != nil && !allow.Contains(r.doc) {
				continue
			}
			if seen[r.doc] == 0 {
				s.docs = append(s.docs, r.doc)
			}
			seen[r.doc] |= 1 << r.form
			acc[r.doc] = max(acc[r.doc], exactScores[r.form])
		}
	}
	for _, id := range q.IDs {
		look(normName(id))
	}
	if whole := normName(q.Text); len(whole) <= 512 {
		look(whole)
	}
	refNameTokens(q.Text, func(tok string) bool {
		if identLike(tok) {
			look(normName(tok))
		}
		return true
	})
	s.top.reset(limit)
	for _, d := range s.docs {
		s.top.push(cand{doc: d, score: acc[d], mask: seen[d]})
	}
	s.clearTouched()
	return hitsOf(s.top.best(), exactNamesOf)
}

// refExactPrefix is exactPrefix as it was before mayRoot (a frozen reference): every dotted
// name goes to the subtree lookup.
func refExactPrefix(g *Generation, s *scratch, prefix string, allow *roaring.Bitmap) {
	self, lo, hi := g.subtree(prefix)
	if self >= 0 || lo >= hi {
		return
	}
	acc, seen := s.acc, s.seen
	base := strings.Count(prefix, ".") + 1
	for d := lo; d < hi; d++ {
		if allow != nil && !allow.Contains(uint32(d)) {
			continue
		}
		rel := strings.Count(g.snap.Caps[d].ID, ".") + 1 - base
		sc := exactScores[exPrefix] / float32(rel)
		if seen[d] == 0 {
			s.docs = append(s.docs, uint32(d))
		}
		seen[d] |= 1 << exPrefix
		acc[d] = max(acc[d], sc)
	}
}

// checkExactSame asserts that retrieveExact and the reference agree on text: the same
// name-like tokens, the same hits with the same scores and matches.
func checkExactSame(t *testing.T, g *Generation, text string) {
	t.Helper()
	var got, want []string
	nameTokens(text, func(tok string) { got = append(got, tok) })
	refNameTokens(text, func(tok string) bool {
		if identLike(tok) {
			want = append(want, tok)
		}
		return true
	})
	if !slices.Equal(got, want) {
		t.Fatalf("%q: tokens %q, want %q", text, got, want)
	}
	q := &Query{Text: text}
	gh, wh := g.retrieveExact(q, nil, 50), refRetrieveExact(g, q, nil, 50)
	if !slices.EqualFunc(gh, wh, func(a, b Hit) bool {
		return a.Doc == b.Doc && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
	}) {
		t.Fatalf("%q: exact hits %v, want %v", text, gh, wh)
	}
}

// exactEdgeTexts are texts that stress mayName and the tokenizer: names among many words,
// "@" that cuts a prefix lookup, full-width forms, spaces and punctuation of every kind.
var exactEdgeTexts = []string{
	"", " ", "@", "＠", "...", "。", "maintenance.codex.diagnose", "  Maintenance.Codex.Diagnose。",
	// Over prefixCaps, the prefix before "@" names ids that only the whole text finds: "@"
	// is no separator of identLike, so the token "nav@x" is not looked up alone.
	"nav@x then y.z and many more words to go past every bound of a name",
	"nav.bus＠latest then y.z and many more words to go past every bound of a name",
	"(nav@1 then y.z and many more words to go past every bound of a name",
	"Onlylettersinthislongestname", "onlylettersinthislongestnamex",
	"myapp.schedule@2", "myapp.schedule@", "ＭＹＡＰＰ．ＳＣＨＥＤＵＬＥ", "myapp . schedule",
	"Codex Still Runs Old Version After Update", "codex 更新后还是旧版本", "codex\u3000更新后还是旧版本",
	"codex\t更新后还是旧版本\n", "请运行maintenance.codex.diagnose。", "-.:/@", "a-b:c/d@e.f",
	"GitHub::getPullRequest", "use getPullRequest, then codex_diagnose!", "x\x00y", "\xff\xfe name",
	// past 512 bytes: under and over maxExactTokens tokens, with a name before and after it
	strings.Repeat("word ", 200) + "maintenance.codex.diagnose", strings.Repeat("a", 600),
	strings.Repeat("a.b ", 300), strings.Repeat("x ", 300) + "maintenance.codex.diagnose",
	strings.Repeat("x ", maxExactTokens-1) + "maintenance.codex.diagnose", // the last token that counts
	strings.Repeat("x ", maxExactTokens) + "maintenance.codex.diagnose",   // the first that does not
	"maintenance.codex.diagnose " + strings.Repeat("x ", 300),
	strings.Repeat("请", 200) + " maintenance.codex.diagnose", strings.Repeat("é ", 255) + "GitHub::getPullRequest",
}

// prefixCaps has dotted prefixes ("nav", "nav.bus") that name no capability, and a longest
// name of letters only (at the very bound of mayName).
func prefixCaps() []*registry.Capability {
	var caps []*registry.Capability
	for _, id := range []string{"nav.bus.query_realtime", "nav.bus.pay", "nav.bus.x.deep", "other"} {
		caps = append(caps, &registry.Capability{ID: id, ResourceType: registry.TypeAction, Status: registry.StatusActive})
	}
	caps[3].Aliases = []string{"Onlylettersinthislongestname"}
	return caps
}

// TestExactSameAsReference runs every query of every evaluation set, every name form of the
// fixture inside and outside a sentence, and edge texts through both implementations.
func TestExactSameAsReference(t *testing.T) {
	g := buildFixture(t, cheap)
	prefixes := buildCaps(t, 1, prefixCaps(), cheap)
	for _, text := range exactEdgeTexts {
		checkExactSame(t, g, text)
		checkExactSame(t, prefixes, text)
	}
	for _, c := range g.Snapshot().Caps {
		for _, form := range nameForms(c, true) {
			checkExactSame(t, g, form)
			checkExactSame(t, g, "please use "+form+" now, thanks")
		}
	}
	sets := 0
	for _, name := range []string{"seal_tools", "hammerbench_zh", "metatool"} {
		s := loadEvalSet(t, evalDir(), name)
		if s == nil {
			continue
		}
		sets++
		for _, q := range s.queries {
			checkExactSame(t, s.g, q.Query)
		}
		for _, c := range s.g.Snapshot().Caps {
			checkExactSame(t, s.g, c.Title)
		}
	}
	if sets == 0 {
		t.Log("no evaluation sets found (set CAPDEX_EVAL_DIR): only the fixture was compared")
	}
}

// FuzzExactSameAsReference compares both implementations on arbitrary text over the fixture.
func FuzzExactSameAsReference(f *testing.F) {
	for _, text := range exactEdgeTexts {
		f.Add(text)
	}
	g := buildFixture(f, cheap)
	prefixes := buildCaps(f, 1, prefixCaps(), cheap)
	f.Fuzz(func(t *testing.T, text string) {
		checkExactSame(t, g, text)
		checkExactSame(t, prefixes, text)
	})
}
