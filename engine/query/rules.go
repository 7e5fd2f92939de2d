package query

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Rules is the rule-based normaliser for Chinese and English (see the package doc). The
// zero value is ready; it is stateless and safe for concurrent use.
type Rules struct{}

// Normalize parses text with the lexicon (nil: the shared concept lexicon only). It
// returns ErrEmptyQuery for a text with nothing but white space and control characters;
// it never panics and never fails otherwise. ctx is not consulted: the rules do not block.
func (Rules) Normalize(_ context.Context, s string, lex *Lexicon) (*Parsed, error) {
	if lex == nil {
		lex = defaultLexicon()
	}
	raw, clean, truncated := sanitize(s)
	if clean == "" {
		return nil, ErrEmptyQuery
	}
	p := &Parsed{Raw: raw, Text: clean, Normalizer: "rules"}
	if truncated {
		p.Notes = append(p.Notes, fmt.Sprintf("truncated to %d bytes", MaxQueryBytes))
	}
	a := newAnalysis(clean, lex)
	a.run(p)
	a.release()
	return p, nil
}

// analysis holds the per-query state of the rules.
type analysis struct {
	s       string
	lex     *Lexicon
	sc      text.Scanner
	toks    []token
	terms   []string // text.Analyze(s), from the scan that gave toks
	termPre []uint64 // prefix8 of each term
	phrase  []byte   // rank.PhraseKey(s), from the same scan
	ms      []match
	// cueMask holds the cues of the matches: a cue it lacks is nowhere in the text.
	cueMask cueSet
	clause  []int // clause number per token
	// clauseEnd[i] is the index after the last token of token i's clause.
	clauseEnd []int
	// startAt[i] is the index of the first match starting at token i or later.
	startAt []int
	// concept[i] is the concept match starting at token i, nil when none.
	concept []*match
	// covered[i] is true when a concept match started before token i covers it.
	covered []bool
	// want[k] reports whether match k is a verb (an intent, or a concept that is a verb)
	// the user wants done; set by run once the forbidden verbs are known.
	want []bool
	// buffers of run: flags per token, and lists copied into the parse once complete
	// (collecting them here saves the parse's lists growing step by step); tildes are the
	// "~"-prefixed concepts, in the order of concepts
	quiet, verbSpan, skip                        []bool
	verbs, concepts, entities, symptoms, intents []string
	forbidden, negVerbs, constraints, ids        []string
	tildes                                       []string
	sortKeys                                     []uint64
	idBuf                                        []byte
	// ctoks are the text's tokens as the shared concept lexicon matches them (text.Token,
	// from scanText), and cids the concept ids found in them (see Parsed.ConceptIDs)
	ctoks []text.Token
	cids  []int32
}

// analysisPool recycles the per-query buffers of the rules (nothing of an analysis
// outlives Normalize: Parsed holds strings only).
var analysisPool = sync.Pool{New: func() any { return new(analysis) }}

func newAnalysis(s string, lex *Lexicon) *analysis {
	a := analysisPool.Get().(*analysis)
	a.s, a.lex = s, lex
	a.scanText()
	a.ms = lex.scan(s, a.toks, a.ms[:0])
	n := len(a.toks)
	a.clause = resize(a.clause, n)
	for i := 1; i < n; i++ {
		a.clause[i] = a.clause[i-1]
		if breaksClause(s[a.toks[i-1].end:a.toks[i].start]) {
			a.clause[i]++
		}
	}
	a.clauseEnd = resize(a.clauseEnd, n)
	for i := n - 1; i >= 0; i-- {
		if i+1 < n && a.clause[i+1] == a.clause[i] {
			a.clauseEnd[i] = a.clauseEnd[i+1]
		} else {
			a.clauseEnd[i] = i + 1
		}
	}
	a.startAt = resize(a.startAt, n+1)
	k := 0
	for i := 0; i <= n; i++ {
		for k < len(a.ms) && a.ms[k].i < i {
			k++
		}
		a.startAt[i] = k
	}
	a.concept = resize(a.concept, n)
	a.covered = resize(a.covered, n)
	a.cueMask = 0
	for k := range a.ms {
		m := &a.ms[k]
		a.cueMask |= m.e.cue
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
func (a *analysis) release() {
	if cap(a.toks) > 1024 { // a pathological query: let its buffers go
		return
	}
	// keep the arrays, not what they point to (the query's text, the lexicon's entries);
	// what lies beyond the lengths was cleared by earlier releases
	clear(a.toks)
	clear(a.terms)
	clear(a.ms)
	clear(a.concept)
	clear(a.verbs)
	clear(a.concepts)
	clear(a.entities)
	clear(a.symptoms)
	clear(a.intents)
	clear(a.forbidden)
	clear(a.negVerbs)
	clear(a.constraints)
	clear(a.ids)
	clear(a.tildes)
	clear(a.ctoks)
	a.s, a.lex = "", nil
	analysisPool.Put(a)
}

// resize returns s with length n and every element zero, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// breaksClause reports whether the text between two tokens ends a clause.
func breaksClause(gap string) bool {
	if len(gap) <= 1 && (gap == "" || gap[0] == ' ') { // the common gaps
		return false
	}
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

// cueAt returns the longest match of cue c (one bit) starting at token i, or nil.
func (a *analysis) cueAt(i int, c cueSet) *match {
	if i < 0 || i >= len(a.toks) || a.cueMask&c == 0 {
		return nil
	}
	var best *match
	for k := a.startAt[i]; k < len(a.ms) && a.ms[k].i == i; k++ {
		m := &a.ms[k]
		if m.e.cue == c && (best == nil || m.j > best.j) {
			best = m
		}
	}
	return best
}

// cues yields every match of cue c (one bit), in order.
func (a *analysis) cues(c cueSet) iter.Seq[*match] {
	return func(yield func(*match) bool) {
		if a.cueMask&c == 0 {
			return
		}
		for k := range a.ms {
			if m := &a.ms[k]; m.e.cue == c && !yield(m) {
				return
			}
		}
	}
}

// has reports whether the text holds cue c (one bit).
func (a *analysis) has(c cueSet) bool { return a.cueMask&c != 0 }

// verbAt returns the verb concept (or registry intent) match starting at token i.
func (a *analysis) verbAt(i int) *match {
	if i < 0 || i >= len(a.toks) {
		return nil
	}
	if c := a.concept[i]; c != nil && c.e.verb {
		return c
	}
	for k := a.startAt[i]; k < len(a.ms) && a.ms[k].i == i; k++ {
		if m := &a.ms[k]; m.e.kind == kIntent {
			return m
		}
	}
	return nil
}

// skipFiller moves past (at most maxFiller) filler words inside clause c.
func (a *analysis) skipFiller(p, c int) int {
	for n := 0; n < maxFiller && p < len(a.toks) && a.clause[p] == c; n++ {
		if a.verbAt(p) != nil {
			return p // a verb wins over a filler reading ("要" in "要更新" is filler, "更新" is not)
		}
		f := a.cueAt(p, csFiller)
		if f == nil {
			return p
		}
		p = f.j
	}
	return p
}

// maxFiller bounds the filler words between a cue and its verb.
const maxFiller = 6

// prevAdjacentCJK returns the CJK character right before token i, or "".
func (a *analysis) prevAdjacentCJK(i int) string {
	if i > 0 && a.toks[i].cjk && a.toks[i-1].cjk && a.toks[i-1].end == a.toks[i].start {
		return a.toks[i-1].word
	}
	return ""
}

func (a *analysis) nextAdjacentCJK(j int) string {
	if j < len(a.toks) && j > 0 && a.toks[j].cjk && a.toks[j-1].cjk && a.toks[j-1].end == a.toks[j].start {
		return a.toks[j].word
	}
	return ""
}

// wish reports whether a negation cue states a wish (不想, 不需要, bare 不) rather than an
// order (不要, 别): with 再 or a closing 了 it means "no longer".
func (a *analysis) wish(m *match) bool {
	return m.e.value == cueNegBare || slices.Contains(wishNeg, a.s[a.toks[m.i].start:a.toks[m.j-1].end])
}

// negationValid applies the guards of the bare 不 and of 别.
func (a *analysis) negationValid(m *match) bool {
	if a.covered[m.i] {
		return false // inside a word: 识别, 不一致 …
	}
	if a.wish(m) && m.e.value != cueNegBare {
		end := m.j // the end of the negation's clause, or of the cue when it ends the clause
		if end < len(a.toks) && a.clause[end] == a.clause[m.i] {
			end = a.clauseEnd[end]
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

// negCues are the negation cues.
const negCues = csNeg | csNegBare | csBie | csNegStart

// negated returns the verb concepts under a negation, in order.
func (a *analysis) negated() []string {
	if a.cueMask&negCues == 0 {
		return nil
	}
	out := a.negVerbs[:0]
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.cue&negCues == 0 || !a.negationValid(m) {
			continue
		}
		c := a.clause[m.i]
		p := m.j
		if a.wish(m) {
			if q := a.skipFiller(p, c); slices.ContainsFunc(a.toks[p:q], func(t token) bool { return t.word == "再" }) {
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
			out = addUnique(out, v.e.value)
			// A coordinator within a few tokens carries the negation to the next verb.
			next := -1
			for q := v.j; q < len(a.toks) && q < v.j+5 && a.clause[q] == c; q++ {
				if a.cueAt(q, csStop) != nil {
					break
				}
				if gap := a.s[a.toks[q-1].end:a.toks[q].start]; strings.ContainsAny(gap, "、/") {
					next = q
					break
				}
				if co := a.cueAt(q, csCoord); co != nil {
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
	a.negVerbs = out
	return out
}

// isEvent reports whether a verb match describes something that happened ("更新后",
// "after updating", "updated") rather than something wanted.
func (a *analysis) isEvent(v *match) bool {
	if prev := a.prevAdjacentCJK(v.i); prev != "" && strings.Contains(statePrefix, prev) {
		return true // 待合并, 未支付, 已删除: a state, not a request
	}
	if a.yesNoQuestion(v.i) {
		return true // "退款到账了吗": asks whether it happened, not for it to happen
	}
	if v.j < len(a.toks) && a.toks[v.j].cjk && a.toks[v.j-1].cjk && a.toks[v.j-1].end == a.toks[v.j].start {
		if t := a.cueAt(v.j, csEventTail); t != nil {
			if c := a.concept[v.j]; c == nil || c.j <= t.j {
				return true
			}
		}
	}
	if last := a.toks[v.j-1]; !last.cjk && len(last.word) > 4 && strings.HasSuffix(last.word, "ed") {
		return true
	}
	if a.triedFailed(v) {
		return true // "reinstalling didn't help": what was tried, not what is asked
	}
	c := a.clause[v.i]
	for q := v.i - 1; q >= 0 && q >= v.i-3 && a.clause[q] == c; q-- {
		if a.cueAt(q, csAfter) != nil {
			return true
		}
	}
	return false
}

// failedTail are the English words that, right after a verb's -ing form, say it was tried
// and did not work ("reinstalling didn't help", "updating does not fix it").
var failedTail = []string{"didnt", "doesnt", "did", "does", "wont", "hasnt", "havent", "failed", "never"}

// triedFailed reports whether the English verb v is in its -ing form and followed, within
// three words of its clause (its object between: "restarting docker didn't help"), by a
// word of failedTail.
func (a *analysis) triedFailed(v *match) bool {
	last := a.toks[v.j-1]
	if last.cjk || len(last.word) <= 5 || !strings.HasSuffix(last.word, "ing") {
		return false
	}
	for q := v.j; q < len(a.toks) && q < v.j+3 && a.clause[q] == a.clause[v.i]; q++ {
		if t := a.toks[q]; !t.cjk && slices.Contains(failedTail, strings.ReplaceAll(t.word, "'", "")) {
			return true
		}
	}
	return false
}

// stateBefore are adverbs that, before a verb's third-person form, make it a description
// ("still shows", "always returns").
var stateBefore = []string{"still", "now", "always", "also", "sometimes", "often", "again", "never", "only"}

// isState reports whether the English verb v describes how things are rather than asking
// for anything: a one-word verb in its third-person form ("shows", "says", "returns")
// right after a thing the request names or an adverb of stateBefore, in one clause
// ("codex still shows 0.140", "my PATH picks up an old binary"). A plural noun after a
// verb ("leave comments") is not one. It is neither an intent nor a past event.
func (a *analysis) isState(v *match) bool {
	if v.j-v.i != 1 || v.i == 0 {
		return false
	}
	t := a.toks[v.i]
	if t.cjk || len(t.word) < 5 || !strings.HasSuffix(t.word, "s") || strings.HasSuffix(t.word, "ss") || a.clause[v.i-1] != a.clause[v.i] {
		return false
	}
	if prev := a.toks[v.i-1]; !prev.cjk && slices.Contains(stateBefore, prev.word) {
		return true
	}
	for k := range a.ms {
		if m := &a.ms[k]; m.e.kind == kEntity && m.i <= v.i-1 && v.i-1 < m.j {
			return true
		}
	}
	return false
}

// yesNoQuestion reports whether token i is in a Chinese clause that ends with a yes/no
// question particle (吗, 么, 没, 没有) and holds no request cue ("能帮我退款吗" asks for
// it; "退款到账了吗" asks about it).
func (a *analysis) yesNoQuestion(i int) bool {
	c := a.clause[i]
	end := a.clauseEnd[i] - 1
	last := a.toks[end]
	if !last.cjk || !strings.Contains("吗么没", last.word) && !(last.word == "有" && end > 0 && a.toks[end-1].word == "没") {
		return false
	}
	for m := range a.cues(csRequest) {
		if a.clause[m.i] == c {
			return false
		}
	}
	return true
}

// isNoun reports whether an English verb match is used as a noun: a one-word match with a
// noun suffix ("payment", "confirmation") or right after a determiner ("the refund", "a
// review"). "email the customer the refund confirmation" asks to send an email, not for a
// refund.
func (a *analysis) isNoun(v *match) bool {
	if a.setUpObject(v) || a.listedObject(v) {
		return true // 设个提醒, 有什么提醒: the object of a set-up verb or a which-question
	}
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
func (a *analysis) quietSpans() []bool {
	a.quiet = resize(a.quiet, len(a.toks))
	q := a.quiet
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
		case m.e.cue&(csDryRun|csReadOnly|csConfirm|csOffline) != 0:
			mark(m.i, m.j)
		}
	}
	if i, j := a.outcomeSpan(); i >= 0 {
		mark(i, j)
	}
	return q
}

// run fills p from the analysis.
func (a *analysis) run(p *Parsed) {
	lex := a.lex
	p.Lang = lang(a.toks)

	// Forbidden verbs first: intents exclude them.
	forbidConcepts := a.negated()
	forbidden := a.forbidden[:0]
	for _, c := range forbidConcepts {
		forbidden = addUnique(forbidden, c)
		forbidden = addUnique(forbidden, relatives[c]...)
	}
	for i, n := 0, len(forbidden); i < n; i++ {
		forbidden = addUnique(forbidden, lex.intentVals[forbidden[i]]...)
	}
	a.forbidden = forbidden

	// Concepts, intents, entities, symptoms. A verb inside a constraint cue ("dry run"),
	// a symptom or alias ("active version mismatch") or the outcome is not an intent.
	quiet := a.quietSpans()
	a.want = resize(a.want, len(a.ms))
	var events []string // verbs told as past events: context, not what is asked
	for k := range a.ms {
		if m := &a.ms[k]; m.e.kind == kIntent || m.e.verb {
			state := a.isState(m)
			event := !quiet[m.i] && !state && a.isEvent(m)
			a.want[k] = !slices.Contains(forbidden, m.e.value) && !quiet[m.i] && !event && !state && !a.isNoun(m)
			if event {
				events = addUnique(events, m.e.value)
			}
		}
	}
	p.Events = events
	verbs := a.verbs[:0] // concept-level intents, for the explicit-write test
	// verbSpan marks the tokens of wanted verbs: an entity named only by them ("book"
	// names the entity "booking", "review this PR" the entity "review") is the action, not
	// its object, and is left out of Entities.
	a.verbSpan = resize(a.verbSpan, len(a.toks))
	verbSpan := a.verbSpan
	for k := range a.ms {
		if m := &a.ms[k]; a.want[k] {
			for i := m.i; i < m.j; i++ {
				verbSpan[i] = true
			}
		}
	}
	concepts, tildes, entities, symptoms := a.concepts[:0], a.tildes[:0], a.entities[:0], a.symptoms[:0]
	for k := range a.ms {
		m := &a.ms[k]
		switch m.e.kind {
		case kConcept:
			if !slices.Contains(concepts, m.e.value) {
				concepts = append(concepts, m.e.value)
				tildes = append(tildes, m.e.tilde)
			}
			if a.want[k] {
				verbs = addUnique(verbs, m.e.value)
			}
			if (a.setUpObject(m) || a.listedObject(m)) && !a.namesEntity(m) {
				// 设个提醒, 有哪些出差行程: the object of a set-up verb or of a which-question
				// is a thing; naming no entity itself, it names those of its concept
				entities = addUnique(entities, lex.memberEntities[m.e.value]...)
			}
		case kIntent:
			if a.want[k] {
				verbs = addUnique(verbs, m.e.value)
			}
		case kEntity:
			if slices.Contains(verbSpan[m.i:m.j], false) && !a.namedAsSuch(m) && !a.fieldLabel(m) {
				entities = addUnique(entities, m.e.value)
			}
		case kSymptom:
			symptoms = addUnique(symptoms, m.e.value)
		case kAlias:
			symptoms = addUnique(symptoms, m.e.values...)
		}
	}
	a.concepts, a.tildes, a.entities, a.symptoms = concepts, tildes, entities, symptoms

	// Constraints.
	constraints := a.constraints[:0]
	readFirst := a.has(csReadFirst)
	for x := range a.cues(csXian) { // 先 + a read verb
		if v := a.verbAt(a.skipFiller(x.j, a.clause[x.i])); v != nil && lex.IsRead(v.e.value) {
			readFirst = true
		}
	}
	for f := range a.cues(csFirst) { // a read verb + "first"
		if f.i > 0 && a.clause[f.i-1] == a.clause[f.i] {
			for q := f.i - 1; q >= 0 && q >= f.i-3; q-- {
				if v := a.verbAt(q); v != nil && lex.IsRead(v.e.value) {
					readFirst = true
				}
			}
		}
	}
	if readFirst {
		constraints = append(constraints, "read_first")
	}
	if readFirst || a.has(csWhy) || a.has(csSuspect) {
		// Asking why, or describing a state that seems wrong, asks for a diagnosis.
		if !slices.Contains(forbidden, "diagnose") {
			verbs = addUnique(verbs, "diagnose")
		}
	}
	if a.has(csHowTo) && !slices.Contains(forbidden, "explain") {
		// "how do I …", "给我排查步骤": the user wants to be shown how, a guide.
		verbs = addUnique(verbs, "explain")
		p.HowTo = true
	}
	for _, c := range constraintCues {
		if a.has(c.cue) {
			constraints = append(constraints, c.name)
		}
	}
	for _, c := range forbidConcepts {
		constraints = addUnique(constraints, "no_"+c)
	}
	a.constraints = constraints

	if a.setsUp() && !slices.Contains(forbidden, "create") {
		verbs = addUnique(verbs, "create")
	}
	if len(verbs) == 0 && a.asksWhichThere() && !slices.Contains(forbidden, "list") {
		// "我下周有哪些出差行程", "what meetings do I have this week": asking which things
		// there are, with no verb of its own, asks to list them.
		verbs = append(verbs, "list")
	}

	// Intents: the verbs, expanded with the registry values sharing their concept.
	a.verbs = verbs
	intents := addUnique(a.intents[:0], verbs...)
	for _, v := range verbs {
		for _, x := range lex.intentVals[v] {
			if !slices.Contains(forbidden, x) {
				intents = addUnique(intents, x)
			}
		}
	}
	a.intents = intents

	a.ids = a.findIDs(a.ids[:0])
	a.browse(p)
	a.within(p)
	p.Outcome = a.outcome()
	p.ExplicitWrite = a.explicitWrite(verbs)
	p.Vague = a.vague(p, verbs)
	a.fill(p)
}

// setUpObject reports whether m is the object of a set-up verb: it follows a cueSetUp
// ("设个", "开个") in its clause.
func (a *analysis) setUpObject(m *match) bool {
	for c := range a.cues(csSetUp) {
		if c.j == m.i && a.clause[c.i] == a.clause[m.i] {
			return true
		}
	}
	return false
}

// fieldLabel reports whether m labels a value the user supplies in a list of fields after a
// colon ("verify this fapiao: code 044031900111, number 12345678"): one word followed in its
// clause by a number, opening a clause that a colon opens, or that a comma opens right after
// another such label and value. The label names an argument, not what the request is
// about; a colon elsewhere in the text ("Note: this is urgent. Verify invoice 2024") does
// not make one.
func (a *analysis) fieldLabel(m *match) bool {
	return m.j-m.i == 1 && a.labelAt(m.i)
}

// labelAt reports whether token i opens a field of a list after a colon (see fieldLabel).
func (a *analysis) labelAt(i int) bool {
	if i == 0 || i+1 >= len(a.toks) || a.toks[i].cjk || a.clause[i-1] == a.clause[i] ||
		a.clause[i+1] != a.clause[i] || !isNumber(a.toks[i+1].word) {
		return false
	}
	gap := a.s[a.toks[i-1].end:a.toks[i].start]
	if strings.ContainsAny(gap, ":：") {
		return true
	}
	// a later field: the clause before is one label and its value
	if !strings.ContainsAny(gap, ",，、;；") {
		return false
	}
	p := i - 1
	for p > 0 && a.clause[p-1] == a.clause[i-1] {
		p--
	}
	return p+1 == i-1 && a.labelAt(p)
}

// isNumber reports whether w is all digits.
func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// namesEntity reports whether an entity match covers a token of m.
func (a *analysis) namesEntity(m *match) bool {
	for k := range a.ms {
		if e := &a.ms[k]; e.e.kind == kEntity && e.i < m.j && m.i < e.j {
			return true
		}
	}
	return false
}

// listedObject reports whether m is what a Chinese which-question asks for: it follows a
// cueHave (有哪些, 有什么) in its clause, in a request that asks which things there are
// (asksWhichThere).
func (a *analysis) listedObject(m *match) bool {
	for h := range a.cues(csHave) {
		if h.j == m.i && a.toks[h.i].cjk && a.clause[h.i] == a.clause[m.i] && a.asksWhichThere() {
			return true
		}
	}
	return false
}

// setsUp reports whether the request sets something up with a light verb and a measure word
// ("明天和 bob 开个会", "设个提醒"): a cueSetUp with an object after it in its clause.
func (a *analysis) setsUp() bool {
	for c := range a.cues(csSetUp) {
		if c.j < len(a.toks) && a.clause[c.j] == a.clause[c.i] && a.toks[c.j].cjk {
			return true
		}
	}
	return false
}

// asksWhichThere reports whether the request asks which things of a kind there are: a
// cueHave in Chinese, or in English after "what" or "which" in its clause; not a browse
// request for capabilities (有哪些能力), which lists packs, not things.
func (a *analysis) asksWhichThere() bool {
	if !a.has(csHave) || a.has(csBrowse|csGeneric) {
		return false
	}
	for h := range a.cues(csHave) {
		if a.toks[h.i].cjk {
			return true
		}
		for q := range a.cues(csBrowseQ) {
			if w := a.toks[q.i].word; (w == "what" || w == "which") && q.j <= h.i && a.clause[q.i] == a.clause[h.i] {
				return true
			}
		}
	}
	return false
}

// constraintCues are the cues that are constraints of the same name, in the order
// Parsed.Constraints lists them.
var constraintCues = [...]struct {
	name string
	cue  cueSet
}{{cueDryRun, csDryRun}, {cueReadOnly, csReadOnly}, {cueConfirm, csConfirm}, {cueOffline, csOffline}}

// fill copies the lists of the analysis into p, carved from one array, and derives the
// ranking's view of the parse (derived).
func (a *analysis) fill(p *Parsed) {
	lists := [...]*[]string{&a.terms, &a.concepts, &a.intents, &a.entities, &a.symptoms, &a.constraints, &a.forbidden, &a.ids}
	n := len(a.terms) + len(a.tildes) // the signal terms, at most
	for _, l := range lists {
		n += len(*l)
	}
	arena := make([]string, n)
	take := func(list []string) []string {
		if len(list) == 0 {
			return nil
		}
		k := copy(arena, list)
		out := arena[:k:k]
		arena = arena[k:]
		return out
	}
	p.Terms, p.Concepts, p.Intents, p.Entities = take(a.terms), take(a.concepts), take(a.intents), take(a.entities)
	p.Symptoms, p.Constraints, p.Forbidden, p.IDs = take(a.symptoms), take(a.constraints), take(a.forbidden), take(a.ids)
	p.derived = derived{
		text: p.Text, terms: p.Terms, concepts: p.Concepts,
		phrase: string(a.phrase),
		signal: a.signalTerms(arena),
	}
	d := &p.derived
	switch ids := a.conceptIDs(); {
	case len(ids) == 0:
		d.conceptIDs = noConceptIDs
	case len(ids) <= len(d.idsBuf):
		n := copy(d.idsBuf[:], ids)
		d.conceptIDs = d.idsBuf[:n:n]
	default:
		d.conceptIDs = slices.Clone(ids)
	}
}

// noConceptIDs is the ConceptIDs of a text naming no concept: empty, not nil.
var noConceptIDs = []int32{}

// conceptIDs returns the ids of the shared lexicon's concepts named in the text, each once
// in order of first appearance: text.AppendConceptIDs of the text with its repeats
// removed, matched on the tokens scanText kept rather than on a second scan. The slice is
// the analysis' buffer.
func (a *analysis) conceptIDs() []int32 {
	all := text.DefaultLexicon().AppendTokenConceptIDs(a.cids[:0], a.ctoks)
	ids := all[:0]
	for _, c := range all {
		if !slices.Contains(ids, c) {
			ids = append(ids, c)
		}
	}
	a.cids = all
	return ids
}

// signalTerms returns Parsed.SignalTerms of the analysis in dst, which has room for the
// terms and the "~"-prefixed concepts. They are sorted as integers: the first six bytes of
// each (termPre, taken in the scan) above its index, so that no comparison reads a string
// but between terms whose first six bytes agree. (A query has far fewer than the 65,536
// terms an index can tell apart: MaxQueryBytes bounds it.)
func (a *analysis) signalTerms(dst []string) []string {
	nt := len(a.terms)
	str := func(k uint64) string {
		if i := int(k & 0xffff); i < nt {
			return a.terms[i]
		}
		return a.tildes[int(k&0xffff)-nt]
	}
	keys := a.sortKeys[:0]
	for i, p := range a.termPre {
		keys = append(keys, p&^0xffff|uint64(i))
	}
	for j, t := range a.tildes {
		keys = append(keys, prefix8(t)&^0xffff|uint64(nt+j))
	}
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j]>>16 == keys[i]>>16 {
			j++
		}
		if j-i > 1 { // terms that agree on six bytes: ordered by the whole string
			slices.SortFunc(keys[i:j], func(x, y uint64) int { return strings.Compare(str(x), str(y)) })
		}
		i = j
	}
	a.sortKeys = keys
	n := 0
	for i, k := range keys {
		if s := str(k); i == 0 || k>>16 != keys[i-1]>>16 || s != dst[n-1] {
			dst[n] = s
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return dst[:n:n]
}

// lang says "zh", "en" or "mixed" from the share of CJK characters and Latin words.
func lang(toks []token) string {
	c, l := 0, 0
	for i := range toks {
		switch {
		case toks[i].cjk:
			c++
		case hasLetter(toks[i].word):
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

func hasLetter(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'a' && c <= 'z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// findIDs appends to out the explicit ids and tool names: runs of [a-z0-9_.:@/-] holding a
// separator, looked up in the lexicon (an "@N" pin is kept). With an empty registry, a run
// that is a valid id with two or more dots counts on its own.
func (a *analysis) findIDs(out []string) []string {
	s, ascii := a.s, isASCII(a.s)
	if !ascii {
		s = text.Fold(s) // full-width letters and digits may spell an id
	}
	inID := idLower // the bytes of a run: upper case too when s was not folded
	if ascii {
		inID |= idUpper
	}
	buf := a.idBuf[:0]
	for i := 0; i < len(s); {
		if idClass[s[i]]&inID == 0 {
			i++
			continue
		}
		j := i
		var seen uint8
		for j < len(s) && idClass[s[j]]&inID != 0 {
			seen |= idClass[s[j]]
			j++
		}
		if seen&idSep == 0 { // a plain word, the common case: no separator to trim or keep
			i = j
			continue
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
			out = addUnique(out, id+pin)
		}
	}
	a.idBuf = buf
	return out
}

// idClass classifies the bytes of ids for ids: idLower for [a-z0-9_.:@/-], idUpper for
// [A-Z], and idSep too for the separators a run needs to be an id ("._:-").
var idClass = func() (t [256]uint8) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyz0123456789_.:@-/") {
		t[c] = idLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = idUpper
	}
	for _, c := range []byte("._:-") {
		t[c] |= idSep
	}
	return t
}()

const (
	idLower uint8 = 1 << iota
	idUpper
	idSep
)

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// browse detects a browse request and its scope.
func (a *analysis) browse(p *Parsed) {
	browse := false
	for m := range a.cues(csBrowse) {
		if a.singularGeneric(m.i, m.j) {
			continue
		}
		if m.j < len(a.toks) && a.clause[m.j] == a.clause[m.i] && a.toks[m.j-1].word == "do" && a.toks[m.j].word == "to" {
			continue // "what can I do to …" asks for advice
		}
		browse = true
	}
	if !browse {
		generic := slices.Collect(a.cues(csGeneric))
	outer:
		for q := range a.cues(csBrowseQ) {
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
		for _, id := range a.ids {
			if a.lex.isPack(id) {
				p.Scope = id
				return
			}
		}
		p.Scope = a.lex.bestPack(a.without(csBrowse|csBrowseQ|csGeneric|csRequest|csQuestion), 1)
	}
}

// singularGeneric reports whether tokens [i, j) hold a generic noun in the singular
// ("which tool"): a question about one capability, not a browse.
func (a *analysis) singularGeneric(i, j int) bool {
	for k := i; k < j && k < len(a.toks); k++ {
		if t := a.toks[k]; !t.cjk && slices.Contains(genericNouns, t.key) && !strings.HasSuffix(t.word, "s") {
			return true
		}
	}
	return false
}

// within reads "within X" / "inside X" / "在 X 里" as a scope.
func (a *analysis) within(p *Parsed) {
	span := func(i, j int) string {
		if i >= j {
			return ""
		}
		return a.s[a.toks[i].start:a.toks[j-1].end]
	}
	for w := range a.cues(csWithin) {
		end := w.j
		for end < len(a.toks) && a.clause[end] == a.clause[w.i] {
			end++
		}
		if sc := a.scopeOf(span(w.j, end)); sc != "" {
			p.Scope = sc
			// The id names where to look, not what to find.
			a.ids = slices.DeleteFunc(a.ids, func(id string) bool { return id == sc })
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
func (a *analysis) scopeOf(s string) string {
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
	return a.lex.bestPack(s, 1)
}

// without returns the text with the tokens of the cues in cs left out.
func (a *analysis) without(cs cueSet) string {
	drop := make([]bool, len(a.toks))
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.cue&cs != 0 {
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
func (a *analysis) outcomeSpan() (int, int) {
	for m := range a.cues(csOutcome) {
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
func (a *analysis) outcome() string {
	i, j := a.outcomeSpan()
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(a.s[a.toks[i].start:a.toks[j-1].end])
}

// namedAsSuch reports whether m names its entity through a concept member whose words
// also name an entity as such: one word is one entity ("docker" is the entity docker, not
// also the entity container).
func (a *analysis) namedAsSuch(m *match) bool {
	if !m.e.member {
		return false
	}
	for k := a.startAt[m.i]; k < len(a.ms) && a.ms[k].i == m.i; k++ {
		o := &a.ms[k]
		if o.e.kind == kEntity && !o.e.member && o.j == m.j {
			return true
		}
	}
	return false
}

// vague reports whether a request names verbs but not their object: no entity or symptom
// (besides the verbs' own words), no id, scope or browse, and at most one content word
// once stop words, cue words (fillers, requests, time words, pronouns …) and the wanted
// verbs themselves are left out; a CJK character counts as half a word.
func (a *analysis) vague(p *Parsed, verbs []string) bool {
	if len(verbs) == 0 || len(a.ids) > 0 || p.Scope != "" || p.Browse {
		return false
	}
	a.skip = resize(a.skip, len(a.toks))
	skip := a.skip
	for k := range a.ms {
		m := &a.ms[k]
		if m.e.kind == kCue || a.want[k] {
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
	for i := range a.toks {
		t := &a.toks[i]
		switch {
		case skip[i]:
		case t.cjk:
			if !text.IsParticle(t.word) && !strings.Contains(cjkFillers, t.word) {
				n += 0.5
			}
		case !t.stop && hasLetter(t.word) && !hasDigit(t.word):
			n++
		}
		if n > 1 {
			return false // two content words: not vague, whatever follows
		}
	}
	return true
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= '0' && c <= '9' {
			return true
		}
	}
	return false
}

// cjkFillers are Chinese measure words and numerals that, beside the particles (text.IsParticle),
// carry no content in a vague request ("看一把", "弄个").
const cjkFillers = "个一把"

// explicitWrite: a write verb is asked for, by a request cue (帮我, please) or in the
// imperative (a clause starting with it), not as a question (how to, 怎么) and not under a
// dry-run or read-only constraint.
func (a *analysis) explicitWrite(verbs []string) bool {
	write := false
	for _, v := range verbs {
		if !a.lex.IsRead(v) && !slices.Contains(metaVerbs, v) {
			write = true
		}
	}
	if !write || slices.Contains(a.constraints, cueDryRun) || slices.Contains(a.constraints, cueReadOnly) {
		return false
	}
	request := a.has(csRequest)
	if a.has(csQuestion) && !request {
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
