package query

// The reference normaliser: a frozen copy of the rules as they were before the
// single-scan rewrite (rules.go, tokens.go, sanitize.go and the matching parts of
// lexicon.go and parsed.go), every top-level name prefixed with "ref". The equivalence
// tests compare Rules.Normalize with refNormalize field by field.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// refNormalize is Rules.Normalize as it was.
func refNormalize(s string, lex *Lexicon) (*Parsed, error) {
	if lex == nil {
		lex = defaultLexicon()
	}
	raw, clean, truncated := refSanitize(s)
	if clean == "" {
		return nil, ErrEmptyQuery
	}
	p := &Parsed{Raw: raw, Text: clean, Normalizer: "rules"}
	if truncated {
		p.Notes = append(p.Notes, fmt.Sprintf("truncated to %d bytes", MaxQueryBytes))
	}
	a := refNewAnalysis(clean, lex)
	a.run(p)
	a.release()
	return p, nil
}

// refAnalysis holds the per-query state of the rules.
type refAnalysis struct {
	s      string
	lex    *Lexicon
	toks   []refToken
	ms     []refMatch
	clause []int // clause number per refToken
	// startAt[i] is the index of the first refMatch starting at refToken i or later.
	startAt []int
	// concept[i] is the concept refMatch starting at refToken i, nil when none.
	concept []*refMatch
	// covered[i] is true when a concept refMatch started before refToken i covers it.
	covered []bool
}

// refAnalysisPool recycles the per-query buffers of the rules (nothing of an refAnalysis
// outlives Normalize: Parsed holds strings only).
var refAnalysisPool = sync.Pool{New: func() any { return new(refAnalysis) }}

func refNewAnalysis(s string, lex *Lexicon) *refAnalysis {
	a := refAnalysisPool.Get().(*refAnalysis)
	a.s, a.lex = s, lex
	a.toks = refTokenize(a.toks[:0], s)
	a.ms = lex.refScan(s, a.toks, a.ms[:0])
	n := len(a.toks)
	a.clause = refResize(a.clause, n)
	for i := 1; i < n; i++ {
		a.clause[i] = a.clause[i-1]
		if refBreaksClause(s[a.toks[i-1].end:a.toks[i].start]) {
			a.clause[i]++
		}
	}
	a.startAt = refResize(a.startAt, n+1)
	k := 0
	for i := 0; i <= n; i++ {
		for k < len(a.ms) && a.ms[k].i < i {
			k++
		}
		a.startAt[i] = k
	}
	a.concept = refResize(a.concept, n)
	a.covered = refResize(a.covered, n)
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.kind != kConcept {
			continue
		}
		a.concept[m.i] = m
		for j := m.i + 1; j < m.j; j++ {
			a.covered[j] = true
		}
	}
	return a
}

// release returns a to the pool; it must not be used afterwards.
func (a *refAnalysis) release() {
	if cap(a.toks) > 1024 { // a pathological query: let its buffers go
		return
	}
	// keep the arrays, not what they point to (the query's text, the lexicon's entries);
	// what lies beyond the lengths was cleared by earlier releases
	clear(a.toks)
	clear(a.ms)
	clear(a.concept)
	a.s, a.lex = "", nil
	refAnalysisPool.Put(a)
}

// refResize returns s with length n and every element zero, reusing its array when it can.
func refResize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// refBreaksClause reports whether the text between two tokens ends a clause.
func refBreaksClause(gap string) bool {
	for i, r := range gap {
		switch r {
		case ',', '，', '。', ';', '；', '!', '！', '?', '？', '\n', ':', '：', '(', ')', '（', '）', '"', '“', '”':
			return true
		case '.':
			if i+1 < len(gap) && gap[i+1] == ' ' {
				return true // a full stop; "a.b" is an id
			}
		}
	}
	return false
}

// cueAt returns the longest cue refMatch named name starting at refToken i, or nil.
func (a *refAnalysis) cueAt(i int, name string) *refMatch {
	if i < 0 || i >= len(a.toks) {
		return nil
	}
	var best *refMatch
	for k := a.startAt[i]; k < len(a.ms) && a.ms[k].i == i; k++ {
		m := &a.ms[k]
		if m.e.kind == kCue && m.e.value == name && (best == nil || m.j > best.j) {
			best = m
		}
	}
	return best
}

// cues returns every cue refMatch named name.
func (a *refAnalysis) cues(name string) []*refMatch {
	var out []*refMatch
	for k := range a.ms {
		if m := &a.ms[k]; m.e.kind == kCue && m.e.value == name {
			out = append(out, m)
		}
	}
	return out
}

func (a *refAnalysis) has(name string) bool {
	for k := range a.ms {
		if m := &a.ms[k]; m.e.kind == kCue && m.e.value == name {
			return true
		}
	}
	return false
}

// verbAt returns the verb concept (or registry intent) refMatch starting at refToken i.
func (a *refAnalysis) verbAt(i int) *refMatch {
	if i < 0 || i >= len(a.toks) {
		return nil
	}
	if c := a.concept[i]; c != nil && a.lex.verbs[c.e.value] {
		return c
	}
	for k := a.startAt[i]; k < len(a.ms) && a.ms[k].i == i; k++ {
		if m := &a.ms[k]; m.e.kind == kIntent {
			return m
		}
	}
	return nil
}

// skipFiller moves past (at most refMaxFiller) filler words inside clause c.
func (a *refAnalysis) skipFiller(p, c int) int {
	for n := 0; n < refMaxFiller && p < len(a.toks) && a.clause[p] == c; n++ {
		if a.verbAt(p) != nil {
			return p // a verb wins over a filler reading ("要" in "要更新" is filler, "更新" is not)
		}
		f := a.cueAt(p, cueFiller)
		if f == nil {
			return p
		}
		p = f.j
	}
	return p
}

// refMaxFiller bounds the filler words between a cue and its verb.
const refMaxFiller = 6

// prevAdjacentCJK returns the CJK character right before refToken i, or "".
func (a *refAnalysis) prevAdjacentCJK(i int) string {
	if i > 0 && a.toks[i].cjk && a.toks[i-1].cjk && a.toks[i-1].end == a.toks[i].start {
		return a.toks[i-1].word
	}
	return ""
}

func (a *refAnalysis) nextAdjacentCJK(j int) string {
	if j < len(a.toks) && j > 0 && a.toks[j].cjk && a.toks[j-1].cjk && a.toks[j-1].end == a.toks[j].start {
		return a.toks[j].word
	}
	return ""
}

// wish reports whether a negation cue states a wish (不想, 不需要, bare 不) rather than an
// order (不要, 别): with 再 or a closing 了 it means "no longer".
func (a *refAnalysis) wish(m *refMatch) bool {
	return m.e.value == cueNegBare || slices.Contains(wishNeg, a.s[a.toks[m.i].start:a.toks[m.j-1].end])
}

// negationValid applies the guards of the bare 不 and of 别.
func (a *refAnalysis) negationValid(m *refMatch) bool {
	if a.covered[m.i] {
		return false // inside a word: 识别, 不一致 …
	}
	if a.wish(m) && m.e.value != cueNegBare {
		end := m.j
		for end < len(a.toks) && a.clause[end] == a.clause[m.i] {
			end++
		}
		if end > m.j && a.toks[end-1].word == "了" {
			return false // 不需要…了: "no longer needed"
		}
	}
	switch m.e.value {
	case cueNegStart:
		if m.i == 0 || a.clause[m.i-1] != a.clause[m.i] {
			return true
		}
		prev := a.toks[m.i-1].word
		return prev == "with" || prev == "and" || prev == "but" || prev == "please" || prev == "just"
	case cueNegBare:
		if m.i == 0 || a.clause[m.i-1] != a.clause[m.i] {
			return true
		}
		prev := a.prevAdjacentCJK(m.i)
		return prev != "" && strings.Contains(bareNegAfter, prev)
	case cueBie:
		if prev := a.prevAdjacentCJK(m.i); prev != "" && strings.Contains(bieBefore, prev) {
			return false
		}
		if next := a.nextAdjacentCJK(m.j); next != "" && strings.Contains(bieAfter, next) {
			return false
		}
	}
	return true
}

// negated returns the verb concepts under a negation, in order.
func (a *refAnalysis) negated() []string {
	var out []string
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.kind != kCue || (m.e.value != cueNeg && m.e.value != cueNegBare && m.e.value != cueBie && m.e.value != cueNegStart) || !a.negationValid(m) {
			continue
		}
		c := a.clause[m.i]
		p := m.j
		if a.wish(m) {
			if q := a.skipFiller(p, c); slices.ContainsFunc(a.toks[p:q], func(t refToken) bool { return t.word == "再" }) {
				continue // 不再… / 不想再…: "no longer", a wish to undo, not a prohibition
			}
		}
		for range 8 { // a handful of coordinated verbs at most
			p = a.skipFiller(p, c)
			if p >= len(a.toks) || a.clause[p] != c {
				break
			}
			v := a.verbAt(p)
			if v == nil {
				break
			}
			out = refAddUnique(out, v.e.value)
			// A coordinator within a few tokens carries the negation to the next verb.
			next := -1
			for q := v.j; q < len(a.toks) && q < v.j+5 && a.clause[q] == c; q++ {
				if a.cueAt(q, cueStop) != nil {
					break
				}
				if gap := a.s[a.toks[q-1].end:a.toks[q].start]; strings.ContainsAny(gap, "、/") {
					next = q
					break
				}
				if co := a.cueAt(q, cueCoord); co != nil {
					next = co.j
					break
				}
				if a.verbAt(q) != nil {
					break // an uncoordinated verb is not negated
				}
			}
			if next < 0 {
				break
			}
			p = next
		}
	}
	return out
}

// isEvent reports whether a verb refMatch describes something that happened ("更新后",
// "after updating", "updated") rather than something wanted.
func (a *refAnalysis) isEvent(v *refMatch) bool {
	if prev := a.prevAdjacentCJK(v.i); prev != "" && strings.Contains(statePrefix, prev) {
		return true // 待合并, 未支付, 已删除: a state, not a request
	}
	if a.yesNoQuestion(v.i) {
		return true // "退款到账了吗": asks whether it happened, not for it to happen
	}
	if v.j < len(a.toks) && a.toks[v.j].cjk && a.toks[v.j-1].cjk && a.toks[v.j-1].end == a.toks[v.j].start {
		if t := a.cueAt(v.j, cueEventTail); t != nil {
			if c := a.concept[v.j]; c == nil || c.j <= t.j {
				return true
			}
		}
	}
	if last := a.toks[v.j-1]; !last.cjk && len(last.word) > 4 && strings.HasSuffix(last.word, "ed") {
		return true
	}
	c := a.clause[v.i]
	for q := v.i - 1; q >= 0 && q >= v.i-3 && a.clause[q] == c; q-- {
		if a.cueAt(q, cueAfter) != nil {
			return true
		}
	}
	return false
}

// yesNoQuestion reports whether refToken i is in a Chinese clause that ends with a yes/no
// question particle (吗, 么, 没, 没有) and holds no request cue ("能帮我退款吗" asks for
// it; "退款到账了吗" asks about it).
func (a *refAnalysis) yesNoQuestion(i int) bool {
	c := a.clause[i]
	end := i
	for end+1 < len(a.toks) && a.clause[end+1] == c {
		end++
	}
	last := a.toks[end]
	if !last.cjk || !strings.Contains("吗么没", last.word) && !(last.word == "有" && end > 0 && a.toks[end-1].word == "没") {
		return false
	}
	for _, m := range a.cues(cueRequest) {
		if a.clause[m.i] == c {
			return false
		}
	}
	return true
}

// isNoun reports whether an English verb refMatch is used as a noun: a one-word refMatch with a
// noun suffix ("payment", "confirmation") or right after a determiner ("the refund", "a
// review"). "email the customer the refund confirmation" asks to send an email, not for a
// refund.
func (a *refAnalysis) isNoun(v *refMatch) bool {
	if v.j-v.i != 1 {
		return false
	}
	t := a.toks[v.i]
	if t.cjk {
		return false
	}
	for _, suf := range nounSuffixes {
		if len(t.word) > len(suf)+2 && strings.HasSuffix(t.word, suf) {
			return true
		}
	}
	if v.i > 0 && a.clause[v.i-1] == a.clause[v.i] && !a.toks[v.i-1].cjk && slices.Contains(determiners, a.toks[v.i-1].word) {
		return true
	}
	return false
}

// quietSpans marks the tokens whose verbs are not intents: inside a constraint cue
// (dry run, read only, confirm first, offline), a symptom or alias phrase, or the outcome.
func (a *refAnalysis) quietSpans() []bool {
	q := make([]bool, len(a.toks))
	mark := func(i, j int) {
		for ; i < j && i < len(q); i++ {
			q[i] = true
		}
	}
	for k := range a.ms {
		m := &a.ms[k]
		switch {
		case m.e.kind == kSymptom || m.e.kind == kAlias:
			mark(m.i, m.j)
		case m.e.kind == kCue && (m.e.value == cueDryRun || m.e.value == cueReadOnly || m.e.value == cueConfirm || m.e.value == cueOffline):
			mark(m.i, m.j)
		}
	}
	if i, j := a.outcomeSpan(); i >= 0 {
		mark(i, j)
	}
	return q
}

// run fills p from the refAnalysis.
func (a *refAnalysis) run(p *Parsed) {
	lex := a.lex
	p.Lang = refLang(a.toks)
	p.Terms = text.Analyze(a.s)

	// Forbidden verbs first: intents exclude them.
	forbidConcepts := a.negated()
	var forbidden []string
	for _, c := range forbidConcepts {
		forbidden = refAddUnique(forbidden, c)
		forbidden = refAddUnique(forbidden, relatives[c]...)
	}
	for _, c := range slices.Clone(forbidden) {
		forbidden = refAddUnique(forbidden, lex.intentVals[c]...)
	}
	p.Forbidden = forbidden

	// Concepts, intents, entities, symptoms. A verb inside a constraint cue ("dry run"),
	// a symptom or alias ("active version mismatch") or the outcome is not an intent.
	quiet := a.quietSpans()
	wanted := func(m *refMatch) bool {
		return !slices.Contains(forbidden, m.e.value) && !quiet[m.i] && !a.isEvent(m) && !a.isNoun(m)
	}
	var verbs []string // concept-level intents, for the explicit-write test
	// verbSpan marks the tokens of wanted verbs: an entity named only by them ("book"
	// names the entity "booking", "review this PR" the entity "review") is the action, not
	// its object, and is left out of Entities.
	verbSpan := make([]bool, len(a.toks))
	for k := range a.ms {
		if m := &a.ms[k]; (m.e.kind == kIntent || m.e.kind == kConcept && lex.verbs[m.e.value]) && wanted(m) {
			for i := m.i; i < m.j; i++ {
				verbSpan[i] = true
			}
		}
	}
	for k := range a.ms {
		m := &a.ms[k]
		switch m.e.kind {
		case kConcept:
			p.Concepts = refAddUnique(p.Concepts, m.e.value)
			if lex.verbs[m.e.value] && wanted(m) {
				verbs = refAddUnique(verbs, m.e.value)
			}
		case kIntent:
			if wanted(m) {
				verbs = refAddUnique(verbs, m.e.value)
			}
		case kEntity:
			if slices.Contains(verbSpan[m.i:m.j], false) && !a.namedAsSuch(m) {
				p.Entities = refAddUnique(p.Entities, m.e.value)
			}
		case kSymptom:
			p.Symptoms = refAddUnique(p.Symptoms, m.e.value)
		case kAlias:
			p.Symptoms = refAddUnique(p.Symptoms, m.e.values...)
		}
	}

	// Constraints.
	readFirst := a.has(cueReadFirst)
	for _, x := range a.cues(cueXian) { // 先 + a read verb
		if v := a.verbAt(a.skipFiller(x.j, a.clause[x.i])); v != nil && lex.IsRead(v.e.value) {
			readFirst = true
		}
	}
	for _, f := range a.cues(cueFirst) { // a read verb + "first"
		if f.i > 0 && a.clause[f.i-1] == a.clause[f.i] {
			for q := f.i - 1; q >= 0 && q >= f.i-3; q-- {
				if v := a.verbAt(q); v != nil && lex.IsRead(v.e.value) {
					readFirst = true
				}
			}
		}
	}
	if readFirst {
		p.Constraints = refAddUnique(p.Constraints, "read_first")
	}
	if readFirst || a.has(cueWhy) || a.has(cueSuspect) {
		// Asking why, or describing a state that seems wrong, asks for a diagnosis.
		if !slices.Contains(forbidden, "diagnose") {
			verbs = refAddUnique(verbs, "diagnose")
		}
	}
	if a.has(cueHowTo) && !slices.Contains(forbidden, "explain") {
		// "how do I …", "给我排查步骤": the user wants to be shown how, a guide.
		verbs = refAddUnique(verbs, "explain")
		p.HowTo = true
	}
	for _, c := range []string{cueDryRun, cueReadOnly, cueConfirm, cueOffline} {
		if a.has(c) {
			p.Constraints = refAddUnique(p.Constraints, c)
		}
	}
	for _, c := range forbidConcepts {
		p.Constraints = refAddUnique(p.Constraints, "no_"+c)
	}

	// Intents: the verbs, expanded with the registry values sharing their concept.
	for _, v := range verbs {
		p.Intents = refAddUnique(p.Intents, v)
	}
	for _, v := range verbs {
		for _, x := range lex.intentVals[v] {
			if !slices.Contains(forbidden, x) {
				p.Intents = refAddUnique(p.Intents, x)
			}
		}
	}

	p.IDs = a.ids()
	a.browse(p)
	a.within(p)
	p.Outcome = a.outcome()
	p.ExplicitWrite = a.explicitWrite(p, verbs)
	p.Vague = a.vague(p, verbs, wanted)
}

// refLang says "zh", "en" or "mixed" from the share of CJK characters and Latin words.
func refLang(toks []refToken) string {
	c, l := 0, 0
	for i := range toks {
		switch {
		case toks[i].cjk:
			c++
		case refHasLetter(toks[i].word):
			l++
		}
	}
	switch {
	case c == 0:
		return "en"
	case l == 0 || c >= 4*l:
		return "zh"
	case l >= 2*c:
		return "en"
	}
	return "mixed"
}

func refHasLetter(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'a' && c <= 'z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// ids finds explicit ids and tool names: runs of [a-z0-9_.:@/-] holding a separator, looked
// up in the lexicon (an "@N" pin is kept). With an empty registry, a run that is a valid
// id with two or more dots counts on its own.
func (a *refAnalysis) ids() []string {
	var out []string
	s, ascii := a.s, refIsASCII(a.s)
	if !ascii {
		s = text.Fold(s) // full-width letters and digits may spell an id
	}
	isID := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '@' || c == '-' || c == '/' ||
			ascii && c >= 'A' && c <= 'Z'
	}
	var buf []byte
	for i := 0; i < len(s); {
		if !isID(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isID(s[j]) {
			j++
		}
		run := strings.Trim(s[i:j], ".:-/@")
		i = j
		if !strings.ContainsAny(run, "._:-") {
			continue
		}
		if ascii { // fold only the runs that may be ids
			buf = append(buf[:0], run...)
			for k, c := range buf {
				if c >= 'A' && c <= 'Z' {
					buf[k] = c + 'a' - 'A'
				}
			}
			run = string(buf)
		}
		base, pin := run, ""
		if k := strings.IndexByte(run, '@'); k > 0 {
			if _, v, err := registry.SplitVersion(run); err == nil {
				base, pin = run[:k], fmt.Sprintf("@%d", v)
			} else {
				base = run[:k]
			}
		}
		found := a.lex.ids[base]
		if found == nil {
			if _, after, ok := strings.Cut(base, "::"); ok {
				found = a.lex.ids[after]
			}
		}
		if found == nil && a.lex.ncaps == 0 && strings.Count(base, ".") >= 2 && registry.ValidID(base) {
			found = []string{base}
		}
		for _, id := range found {
			out = refAddUnique(out, id+pin)
		}
	}
	return out
}

func refIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// browse detects a browse request and its scope.
func (a *refAnalysis) browse(p *Parsed) {
	browse := false
	for _, m := range a.cues(cueBrowse) {
		if a.singularGeneric(m.i, m.j) {
			continue
		}
		if m.j < len(a.toks) && a.clause[m.j] == a.clause[m.i] && a.toks[m.j-1].word == "do" && a.toks[m.j].word == "to" {
			continue // "what can I do to …" asks for advice
		}
		browse = true
	}
	if !browse {
		generic := a.cues(cueGeneric)
	outer:
		for _, q := range a.cues(cueBrowseQ) {
			for _, g := range generic {
				if a.clause[g.i] != a.clause[q.i] || g.i == q.i {
					continue
				}
				if t := a.toks[g.i]; !t.cjk {
					// English: the cue comes first, at most five words before a plural noun
					// ("list the tools", "show me all the npm maintenance tools").
					if g.i < q.j || g.i-q.j > 5 || a.toks[q.i].cjk || !slices.Contains(browseNouns, t.word) {
						continue
					}
				} else if d := max(g.i-q.j, q.i-g.j); !a.toks[q.i].cjk || d > 8 {
					continue
				}
				browse = true
				break outer
			}
		}
	}
	if !browse {
		return
	}
	p.Browse = true
	if p.Scope == "" {
		for _, id := range p.IDs {
			if a.lex.isPack(id) {
				p.Scope = id
				return
			}
		}
		p.Scope = a.lex.refBestPack(a.without(cueBrowse, cueBrowseQ, cueGeneric, cueRequest, cueQuestion), 1)
	}
}

// singularGeneric reports whether tokens [i, j) hold a generic noun in the singular
// ("which tool"): a question about one capability, not a browse.
func (a *refAnalysis) singularGeneric(i, j int) bool {
	for k := i; k < j && k < len(a.toks); k++ {
		if t := a.toks[k]; !t.cjk && slices.Contains(genericNouns, t.key) && !strings.HasSuffix(t.word, "s") {
			return true
		}
	}
	return false
}

// within reads "within X" / "inside X" / "在 X 里" as a scope.
func (a *refAnalysis) within(p *Parsed) {
	span := func(i, j int) string {
		if i >= j {
			return ""
		}
		return a.s[a.toks[i].start:a.toks[j-1].end]
	}
	for _, w := range a.cues(cueWithin) {
		end := w.j
		for end < len(a.toks) && a.clause[end] == a.clause[w.i] {
			end++
		}
		if sc := a.scopeOf(span(w.j, end)); sc != "" {
			p.Scope = sc
			// The id names where to look, not what to find.
			p.IDs = slices.DeleteFunc(p.IDs, func(id string) bool { return id == sc })
			return
		}
	}
	for i, t := range a.toks {
		if !t.cjk || t.word != "在" || a.covered[i] {
			continue
		}
		if prev := a.prevAdjacentCJK(i); prev != "" && strings.Contains("现正存实所自好内", prev) {
			continue
		}
		for j := i + 1; j < len(a.toks) && j <= i+12 && a.clause[j] == a.clause[i]; j++ {
			if w := a.toks[j].word; w == "里" || w == "中" || w == "下" || w == "内" {
				if sc := a.scopeOf(span(i+1, j)); sc != "" {
					p.Scope = sc
					return
				}
				break
			}
		}
	}
}

// scopeOf returns the pack a scope text names: a written id, else the best pack by words.
func (a *refAnalysis) scopeOf(s string) string {
	if s == "" {
		return ""
	}
	f := strings.TrimSpace(text.Fold(s))
	for _, w := range strings.Fields(f) {
		w = strings.Trim(w, ".,;:!?\"'()")
		if id, _, err := registry.SplitVersion(w); err == nil && registry.ValidID(id) && strings.Contains(id, ".") {
			if a.lex.ncaps == 0 || a.lex.isPack(id) {
				return id
			}
		}
		if a.lex.isPack(w) {
			return w
		}
	}
	return a.lex.refBestPack(s, 1)
}

// without returns the text with the tokens of the named cues left out.
func (a *refAnalysis) without(names ...string) string {
	drop := make([]bool, len(a.toks))
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.kind == kCue && slices.Contains(names, m.e.value) {
			for i := m.i; i < m.j; i++ {
				drop[i] = true
			}
		}
	}
	var sb strings.Builder
	prevKept := -2
	for i, t := range a.toks {
		if drop[i] {
			continue
		}
		if sb.Len() > 0 && !(prevKept == i-1 && t.cjk && a.toks[i-1].cjk && a.toks[i-1].end == t.start) {
			sb.WriteByte(' ')
		}
		sb.WriteString(a.s[t.start:t.end])
		prevKept = i
	}
	return sb.String()
}

// outcomeSpan returns the tokens after the first outcome cue, to the end of its clause
// ([-1, -1] when none).
func (a *refAnalysis) outcomeSpan() (int, int) {
	for _, m := range a.cues(cueOutcome) {
		if m.j >= len(a.toks) || a.clause[m.j] != a.clause[m.i] || a.covered[m.i] {
			continue
		}
		end := m.j + 1
		for end < len(a.toks) && a.clause[end] == a.clause[m.i] {
			end++
		}
		if out := a.s[a.toks[m.j].start:a.toks[end-1].end]; utf8.RuneCountInString(out) >= 2 {
			return m.j, end
		}
	}
	return -1, -1
}

// outcome returns the text of the outcome span.
func (a *refAnalysis) outcome() string {
	i, j := a.outcomeSpan()
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(a.s[a.toks[i].start:a.toks[j-1].end])
}

// namedAsSuch reports whether m names its entity through a concept member whose words
// also name an entity as such: one word is one entity ("docker" is the entity docker, not
// also the entity container).
func (a *refAnalysis) namedAsSuch(m *refMatch) bool {
	if !m.e.member {
		return false
	}
	for k := range a.ms {
		o := &a.ms[k]
		if o.e.kind == kEntity && !o.e.member && o.i == m.i && o.j == m.j {
			return true
		}
	}
	return false
}

// vague reports whether a request names verbs but not their object: no entity or symptom
// (besides the verbs' own words), no id, scope or browse, and at most one content word
// once stop words, cue words (fillers, requests, time words, pronouns …) and the wanted
// verbs themselves are left out; a CJK character counts as half a word.
func (a *refAnalysis) vague(p *Parsed, verbs []string, wanted func(*refMatch) bool) bool {
	if len(verbs) == 0 || len(p.IDs) > 0 || p.Scope != "" || p.Browse {
		return false
	}
	skip := make([]bool, len(a.toks))
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.kind == kCue || (m.e.kind == kIntent || m.e.kind == kConcept && a.lex.verbs[m.e.value]) && wanted(m) {
			for i := m.i; i < m.j; i++ {
				skip[i] = true
			}
		}
	}
	for k := range a.ms {
		// An entity or symptom named outside the verbs ("book" is also the entity
		// "booking") is an object.
		if m := &a.ms[k]; m.e.kind == kEntity || m.e.kind == kSymptom || m.e.kind == kAlias {
			for i := m.i; i < m.j; i++ {
				if !skip[i] {
					return false
				}
			}
		}
	}
	n := 0.0
	for i, t := range a.toks {
		switch {
		case skip[i]:
		case t.cjk:
			if !strings.Contains(refCjkParticles, t.word) {
				n += 0.5
			}
		case !text.IsStopWord(t.word) && refHasLetter(t.word) && !strings.ContainsAny(t.word, "0123456789"):
			n++
		}
	}
	return n <= 1
}

// refCjkParticles are Chinese particles that carry no content.
const refCjkParticles = "的了吗呢吧啊呀哦么个一把"

// explicitWrite: a write verb is asked for, by a request cue (帮我, please) or in the
// imperative (a clause starting with it), not as a question (how to, 怎么) and not under a
// dry-run or read-only constraint.
func (a *refAnalysis) explicitWrite(p *Parsed, verbs []string) bool {
	write := false
	for _, v := range verbs {
		if !a.lex.IsRead(v) && !slices.Contains(metaVerbs, v) {
			write = true
		}
	}
	if !write || slices.Contains(p.Constraints, cueDryRun) || slices.Contains(p.Constraints, cueReadOnly) {
		return false
	}
	request := a.has(cueRequest)
	if a.has(cueQuestion) && !request {
		return false
	}
	if request {
		return true
	}
	for i := range a.toks {
		if i > 0 && a.clause[i-1] == a.clause[i] {
			continue
		}
		q := a.skipFiller(i, a.clause[i])
		if v := a.verbAt(q); v != nil && !a.lex.IsRead(v.e.value) && !slices.Contains(metaVerbs, v.e.value) && slices.Contains(verbs, v.e.value) {
			return true
		}
	}
	return false
}

// refToken is one unit of matching: a Latin word (matched by its stem) or one CJK character.
type refToken struct {
	key        string // stem of a word, or the CJK character
	word       string // folded word, or the CJK character
	start, end int    // byte offsets in the tokenised text
	cjk        bool
}

// refTokenize appends the tokens of s to dst. Joined forms of case-split words are skipped:
// phrases are matched on their parts.
func refTokenize(dst []refToken, s string) []refToken {
	var sc text.Scanner
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			w := sc.Folded()
			start := sc.Offset()
			dst = append(dst, refToken{key: text.Stem(w), word: w, start: start, end: start + len(sc.Text())})
		case text.KindCJK:
			run, off := sc.Text(), sc.Offset()
			for i := 0; i < len(run); {
				_, n := utf8.DecodeRuneInString(run[i:])
				ch := run[i : i+n]
				dst = append(dst, refToken{key: ch, word: ch, start: off + i, end: off + i + n, cjk: true})
				i += n
			}
		}
	}
	return dst
}

// refKeys returns the refMatch refKeys of a phrase ("sign_in" → [sign in], "删除日程" → 删 除 日 程).
func refKeys(s string) []string {
	toks := refTokenize(nil, s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.key
	}
	return out
}

// refJoinable reports whether tokens a and b (a before b) are adjacent parts of one phrase:
// CJK characters of one run, or words separated only by spaces, "_", "-", "." or "/".
func refJoinable(s string, a, b *refToken) bool {
	if a.end > b.start {
		return false
	}
	gap := s[a.end:b.start]
	if a.cjk && b.cjk {
		return gap == ""
	}
	if len(gap) > 3 {
		return false
	}
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', '_', '-', '.', '/':
		default:
			return false
		}
	}
	return true
}

// refSanitize truncates s to MaxQueryBytes, repairs invalid UTF-8 (each bad sequence becomes
// U+FFFD in raw) and returns the cleaned text: ANSI escape sequences, control and format
// characters dropped,
// white space (and U+FFFD) turned into single spaces, trimmed.
func refSanitize(s string) (raw, clean string, truncated bool) {
	if len(s) > MaxQueryBytes {
		i := MaxQueryBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, truncated = s[:i], true
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if refCleanASCII(s) {
		return s, s, truncated
	}
	return s, refCleanText(s), truncated
}

// refCleanText drops ANSI escape sequences, control and format characters from s, turns
// white space (and U+FFFD) into single spaces and trims it.
func refCleanText(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == 0x1b && i < len(s) && s[i] == '[' {
			// An ANSI escape sequence (pasted terminal output): ESC [ params final-byte.
			i++
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			i++
			continue
		}
		switch {
		case unicode.IsSpace(r) || r == utf8.RuneError:
			space = sb.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) || r == 0xFFFE || r == 0xFFFF:
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// refCleanASCII reports whether s is printable ASCII already as refSanitize leaves it: no control
// characters, single spaces between words, none at either end.
func refCleanASCII(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == ' ' && s[i+1] == ' ' {
			return false
		}
	}
	return true
}

// refScopeKeys returns the unique refKeys a text offers for scope matching: word stems, CJK
// bigrams (a lone CJK character as itself) and "~concept" names. With query set, generic
// and stop words are left out.
func refScopeKeys(dst []string, s string, query bool) []string {
	toks := refTokenize(nil, s)
	for i := range toks {
		t := &toks[i]
		if !t.cjk {
			if query && (text.IsStopWord(t.word) || slices.Contains(genericWords, t.key)) {
				continue
			}
			dst = refAddUnique(dst, t.key)
			continue
		}
		next := i+1 < len(toks) && toks[i+1].cjk && toks[i+1].start == t.end
		prev := i > 0 && toks[i-1].cjk && toks[i-1].end == t.start
		switch {
		case next:
			dst = refAddUnique(dst, s[t.start:toks[i+1].end])
		case !prev:
			dst = refAddUnique(dst, t.key)
		}
	}
	for _, c := range text.ConceptsIn(s) {
		dst = refAddUnique(dst, "~"+c)
	}
	return dst
}

// refBestPack returns the pack whose refKeys best cover the text's scope refKeys: the highest
// weight of refKeys in common; among equals, a pack that is an ancestor of all the others
// (they matched through words it shares with them), else the one with fewest refKeys of its
// own (the most specific), then the smallest id. It needs at least minHits refKeys in common.
func (l *Lexicon) refBestPack(s string, minHits int) string {
	if len(l.packs) == 0 {
		return ""
	}
	qk := refScopeKeys(nil, s, true)
	score := make(map[int32]int32)
	hits := make(map[int32]int)
	for _, k := range qk {
		for _, pk := range l.packKeys[k] {
			score[pk.pack] += pk.w
			hits[pk.pack]++
		}
	}
	var top []int32
	bestScore := int32(0)
	for p, sc := range score {
		if hits[p] < minHits {
			continue
		}
		switch {
		case sc > bestScore:
			bestScore, top = sc, append(top[:0], p)
		case sc == bestScore:
			top = append(top, p)
		}
	}
	if len(top) == 0 {
		return ""
	}
	slices.Sort(top)
	for _, p := range top {
		anc := true
		for _, q := range top {
			if q != p && !strings.HasPrefix(l.packs[q].id, l.packs[p].id+".") {
				anc = false
				break
			}
		}
		if anc {
			return l.packs[p].id
		}
	}
	best := top[0]
	for _, p := range top[1:] {
		if l.packs[p].nkeys < l.packs[best].nkeys || l.packs[p].nkeys == l.packs[best].nkeys && l.packs[p].id < l.packs[best].id {
			best = p
		}
	}
	return l.packs[best].id
}

// refMatch is one lexicon entry found in a refToken stream, over tokens [i, j).
type refMatch struct {
	e    *entry
	i, j int
}

// refScan finds every entry in toks. Concept members are matched longest first, left to right,
// without overlap (as index/text does); other entries are all reported, overlapping freely.
func (l *Lexicon) refScan(s string, toks []refToken, dst []refMatch) []refMatch {
	conceptEnd := 0
	for i := range toks {
		var bestConcept *entry
		bestLen := 0
		for _, ei := range l.first[toks[i].key] {
			e := &l.entries[ei]
			n := len(e.toks)
			if i+n > len(toks) {
				continue
			}
			ok := true
			for k := 1; k < n; k++ {
				if toks[i+k].key != e.toks[k] || !refJoinable(s, &toks[i+k-1], &toks[i+k]) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if e.kind == kConcept {
				if i >= conceptEnd && n > bestLen {
					bestConcept, bestLen = e, n
				}
				continue
			}
			dst = append(dst, refMatch{e: e, i: i, j: i + n})
		}
		if bestConcept != nil {
			dst = append(dst, refMatch{e: bestConcept, i: i, j: i + bestLen})
			conceptEnd = i + bestLen
		}
	}
	return dst
}

// refAddUnique appends v to list unless it is empty or present.
func refAddUnique(list []string, v ...string) []string {
	for _, x := range v {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}
