package rank

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// TermCache holds the analysed when_to_use and when_not_to_use entries, alias phrases and
// descriptive text of every capability of one index generation, so Rerank compares lists of
// term numbers instead of analysing text on every call. It is immutable after NewTermCache
// and safe for concurrent use.
//
// Rerank reads it for every candidate of every search, documents spread over the whole
// catalogue, so the layout is flat: one small record per document (docs) and all of a
// document's numbers side by side in one shared array (nums). A candidate costs a cache miss
// for its record and a short sequential read, rather than a miss per per-document slice. The
// record also holds what Rerank compares with the query's intents, entities and symptoms, as
// value numbers, so Rerank does not read the capability at all.
type TermCache struct {
	docs []docTerms
	// nums holds every document's numbers, one document after the other: see docTerms.
	nums []uint32
	// aliasKey holds every document's alias phrases: the PhraseKey of each alias of two
	// words or more.
	aliasKey []string
	seed     maphash.Seed
	terms    *termIndex // term → number
	// idf[term] is the term's inverse document frequency over the descriptive texts (see
	// descriptiveText) and maxIDF the idf of a term no capability uses.
	idf    []float32
	maxIDF float32
	// values holds every distinct intent, entity and symptom of the capabilities, by value
	// number; folds maps the foldKey of a value to the numbers of the values with that key.
	values []string
	folds  map[string][]uint32
	// byID: the capabilities' ids increase with their docIDs (as in a registry.Snapshot), so
	// comparing docIDs compares ids.
	byID bool
	// an is every document's analysis, by docID, kept for Next (nil in a cache made by
	// NewTermCache), its terms numbered in voc.
	an  []*analysed
	voc *text.Vocab
	// chain is what a cache kept for Next (an not nil) holds besides: see chainTerms.
	chain *chainTerms
}

// chainTerms is what a term cache of a Next chain keeps so that the next cache can be
// patched (terms_patch.go). In such a cache a term's number is its number in the chain's
// vocabulary, so a change never renumbers a term: numbers of terms no capability holds any
// longer stay unused (their idf is deadIDF, and the term index answers none for them).
type chainTerms struct {
	// df[v] is how many descriptive texts hold term v, refs[v] how many capabilities hold
	// it anywhere (entries or text), live how many terms have refs.
	df, refs []uint32
	live     int
	// more indexes the terms numbered since terms was built (nil: none); added lists them.
	more  *termIndex
	added []uint32
	// arena is shared by the caches of a chain whose nums and aliasKey share a backing
	// array; garbage counts the numbers in nums no record points to any longer.
	arena   *numArena
	garbage int
	// patched: this cache was patched from the previous one, not assembled.
	patched bool
}

// deadIDF is the idf of a term number of a chain's cache that no capability holds: the
// term index's answer for it is dropped (see TermCache.lookup), so the cache answers as
// one built without the term.
const deadIDF = -1

// docTerms is what a TermCache holds of one document. Its numbers are nums[off:end], in the
// order Rerank reads them, each part from the position the record names to the next:
//
//	from off, the when_to_use entries: each entry's length, then its sorted unique term
//	numbers;
//	from notUse, the when_not_to_use entries, likewise;
//	from refer, the docIDs of the other capabilities its when_not_to_use entries name
//	("… (use maintenance.codex.diagnose)"), where it defers to them;
//	from values, how many intents, entities and symptoms the capability has, then their
//	value numbers (see TermCache.values), each list in the capability's order;
//	from heads, the hash of the first two words of each alias phrase, low and high halves:
//	an alias can only be in a query holding that pair (see wordPairs);
//	from text, the sorted unique term numbers of the descriptive text.
//
// The alias phrases themselves are aliasKey[alias:], one per head. The attributes Rerank
// tests on every candidate are copied here, so it need not read them from the capability.
type docTerms struct {
	cap                                          *registry.Capability // the capability analysed: a candidate with another is from another generation
	off, notUse, refer, values, heads, text, end uint32
	alias                                        uint32
	attrs                                        attrs
}

// aliases returns how many alias phrases d has.
func (d *docTerms) aliases() uint32 { return (d.text - d.heads) / 2 }

// attrs are the attributes of a capability Rerank tests on every candidate.
type attrs struct {
	flags      uint8 // attr* bits
	side, risk int8  // SideEffect.Level and RiskLevel.Level
}

const (
	attrPack         uint8 = 1 << iota // ResourceType pack
	attrRecipe                         // ResourceType recipe
	attrWhenNotToUse                   // has when_not_to_use entries
)

// attrsOf computes a capability's attrs.
func attrsOf(c *registry.Capability) attrs {
	a := attrs{side: int8(c.SideEffect.Level()), risk: int8(c.RiskLevel.Level())}
	set := func(bit uint8, on bool) {
		if on {
			a.flags |= bit
		}
	}
	set(attrPack, c.ResourceType == registry.TypePack)
	set(attrRecipe, c.ResourceType == registry.TypeRecipe)
	set(attrWhenNotToUse, len(c.WhenNotToUse) > 0)
	return a
}

func (a attrs) has(bit uint8) bool { return a.flags&bit != 0 }

// doc returns c's record, or nil without a cache for c's generation.
func (t *TermCache) doc(c *Candidate) *docTerms {
	if t == nil || int(c.Doc) >= len(t.docs) {
		return nil
	}
	if d := &t.docs[c.Doc]; d.cap == c.Cap {
		return d
	}
	return nil
}

// The kinds of values a record holds (docNums.values) and the query marks
// (queryTerms.marks, as bits 1<<kind).
const (
	valueIntent = iota
	valueEntity
	valueSymptom
	valueKinds
)

// markForbidden marks the values equal to one of the query's forbidden intents.
const markForbidden uint8 = 1 << valueKinds

// docNums is a record's numbers, decoded (see docTerms).
type docNums struct {
	// use and notUse are the encoded when_to_use and when_not_to_use entries.
	use, notUse []uint32
	// refer holds the docIDs the when_not_to_use entries name.
	refer []uint32
	// values holds the value numbers of the intents, entities and symptoms (by value kind).
	values [valueKinds][]uint32
	// heads holds the hashes of the alias phrases' first word pairs, two numbers each.
	heads []uint32
	// text holds the sorted unique term numbers of the descriptive text.
	text []uint32
}

// termsOf decodes d's numbers.
func (t *TermCache) termsOf(d *docTerms) docNums {
	return docNums{
		use: t.nums[d.off:d.notUse], notUse: t.nums[d.notUse:d.refer], refer: t.nums[d.refer:d.values],
		values: t.valuesOf(d), heads: t.nums[d.heads:d.text], text: t.nums[d.text:d.end],
	}
}

// symptomValues returns the symptoms Rerank compares with the query's for c: its own,
// then the symptom concepts (text.IsSymptom) that its aliases, when_to_use entries and
// symptoms name, each once, so an alias "cannot connect to the docker daemon" documents the
// symptom "unreachable" that a query "docker 连不上" reports.
func symptomValues(c *registry.Capability) []string {
	out := c.Symptoms
	add := func(s string) {
		for _, name := range text.ConceptsIn(s) {
			if text.IsSymptom(name) && !slices.Contains(out, name) {
				out = append(slices.Clip(out), name) // never into c's own array
			}
		}
	}
	for _, list := range [][]string{c.Aliases, c.WhenToUse} {
		for _, s := range list {
			add(s)
		}
	}
	for _, s := range c.Symptoms {
		add(idWords.Replace(s))
	}
	return out
}

// valuesOf returns d's value numbers, by value kind.
func (t *TermCache) valuesOf(d *docTerms) (v [valueKinds][]uint32) {
	p := d.values + valueKinds
	for k := range v {
		n := t.nums[d.values+uint32(k)]
		v[k] = t.nums[p : p+n]
		p += n
	}
	return v
}

// idWords turns an id's separators into spaces ("maintenance.codex.path_repair").
var idWords = strings.NewReplacer(".", " ", "_", " ", "-", " ", ":", " ")

// descriptiveText joins, one a line, the texts that say what a capability is for: its id
// words, title, aliases, summary, when_to_use, intents, entities, symptoms, tags, domain
// and scenarios. Schemas, guidance and steps are left out: they describe how, not what.
func descriptiveText(sb *strings.Builder, c *registry.Capability) string {
	sb.Reset()
	line := func(s string) {
		if s != "" {
			sb.WriteString(s)
			sb.WriteByte('\n')
		}
	}
	line(idWords.Replace(c.ID))
	line(c.Title)
	for _, x := range c.Aliases {
		line(x)
	}
	line(c.Summary)
	for _, x := range c.WhenToUse {
		line(x)
	}
	for _, list := range [][]string{c.Intents, c.Entities, c.Symptoms, c.Tags, c.Scenarios} {
		for _, x := range list {
			line(idWords.Replace(x))
		}
	}
	line(c.Domain)
	return sb.String()
}

// analysed is what NewTermCache's parallel pass gets from one capability.
type analysed struct {
	use, notUse [][]string
	alias       []string
	text        []string
	values      [valueKinds][]string // haves
	// seq is use, notUse and text as a cache kept for Next holds them (use and notUse then
	// nil): the terms' numbers in the chain's vocabulary (see vocab), laid out as the number
	// of use entries, each entry's length and terms, the same for notUse, then the text's
	// terms.
	seq []uint32
}

// analyse analyses one capability (sb is scratch space).
func analyse(sb *strings.Builder, c *registry.Capability, analyze func(string) []string) analysed {
	a := analysed{text: analyze(descriptiveText(sb, c)), values: haves(c)}
	for _, e := range ownEntries(c.WhenToUse, c.Summary) {
		a.use = append(a.use, analyze(e))
	}
	for _, e := range c.WhenNotToUse {
		a.notUse = append(a.notUse, analyze(e))
	}
	for _, al := range c.Aliases {
		if k := PhraseKey(al); phraseWords(k) >= 2 {
			a.alias = append(a.alias, k)
		}
	}
	return a
}

// encode sets a.seq from a's use, notUse and text, numbered in v, and drops those.
func encode(v *text.Vocab, a *analysed) {
	seq := make([]uint32, 0, 2+len(a.use)+len(a.notUse)+len(a.text))
	add := func(terms []string) {
		for _, x := range terms {
			seq = append(seq, v.Number(x))
		}
	}
	for _, list := range [][][]string{a.use, a.notUse} {
		seq = append(seq, uint32(len(list)))
		for _, terms := range list {
			seq = append(seq, uint32(len(terms)))
			add(terms)
		}
	}
	add(a.text)
	a.seq, a.use, a.notUse, a.text = slices.Clip(seq), nil, nil, nil
}

// NewTermCache analyses the entries of caps, whose positions are their docIDs (as in
// registry.Snapshot.Caps). analyze should return the same kind of terms as the query's
// Signals.Terms (for example text.Analyze plus "~"-prefixed concept names) and be safe for
// concurrent use: the capabilities are analysed on every core, then their terms numbered.
func NewTermCache(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	return newTermCache(caps, analyze, maphash.MakeSeed(), nil)
}

// Next returns the term cache of caps (as NewTermCache(caps, analyze) does, analyze being
// the function t was made with) reusing t's analysis of every capability both hold (the
// same *registry.Capability, found by id when both are sorted by id as in a
// registry.Snapshot). The first cache of a chain made by Next analyses everything and keeps
// its analysis for the next one; a cache made by NewTermCache keeps none. The result does
// not refer to t.
func (t *TermCache) Next(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	return newTermCache(caps, analyze, t.seed, t)
}

// reuseOf returns, for every capability of caps, the docID of the same capability in
// prev's analysis, or -1; nil when prev keeps none. Both are walked in id order, so a
// capability out of order is analysed again, not mistaken.
func reuseOf(prev *TermCache, caps []*registry.Capability) []int32 {
	if prev == nil || prev.an == nil {
		return nil
	}
	out := make([]int32, len(caps))
	j := 0
	for d, c := range caps {
		out[d] = -1
		for j < len(prev.docs) && prev.docs[j].cap.ID < c.ID {
			j++
		}
		if j < len(prev.docs) && prev.docs[j].cap == c && prev.an[j] != nil {
			out[d] = int32(j)
		}
	}
	return out
}

// NewTermChain is NewTermCache for the first cache of a Next chain that keeps no analysis
// (as Open makes it): its terms are numbered in a chain vocabulary as Next's are, so that
// the first Next patches it, reading a changed capability's old terms from its record
// (recordTerms), where a cache made by NewTermCache is assembled again. It answers as
// NewTermCache's does.
func NewTermChain(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	return assembleTermCache(caps, analyze, maphash.MakeSeed(), nil, true)
}

// newTermCache is NewTermCache with the hash seed given and, when prev is not nil, the
// analysis of prev reused and the new analysis kept (Next).
func newTermCache(caps []*registry.Capability, analyze func(string) []string, seed maphash.Seed, prev *TermCache) *TermCache {
	if prev != nil && prev.chain != nil && !prev.voc.Outgrown(prev.chain.live) {
		if p := prev.patch(caps, analyze); p != nil {
			return p
		}
	}
	return assembleTermCache(caps, analyze, seed, prev, prev != nil)
}

// assembleTermCache makes the cache of caps from every capability's analysis (prev's where
// it keeps it). With chain, the terms are numbered in a chain vocabulary (prev's, unless
// outgrown) and the chain's counts kept, so that Next can patch the result; the analysis
// is kept only with prev (Next).
func assembleTermCache(caps []*registry.Capability, analyze func(string) []string, seed maphash.Seed, prev *TermCache, chain bool) *TermCache {
	prevDoc := reuseOf(prev, caps)
	t := &TermCache{docs: make([]docTerms, len(caps)), seed: seed, folds: make(map[string][]uint32), byID: true}
	var stamp []uint32 // in a kept cache: the last document (+1) that counted each term in refs
	if chain {
		t.chain = new(chainTerms)
		if prev != nil {
			t.an = make([]*analysed, len(caps))
			t.voc = prev.voc
		}
		if t.voc == nil || prevDoc == nil || prev.chain == nil || t.voc.Outgrown(prev.chain.live) {
			t.voc, prevDoc = text.NewVocab(), nil
		}
		t.voc.Lock()
		defer t.voc.Unlock()
	}
	ids := make(map[string]uint32) // term → number
	valueIDs := make(map[string]uint32)
	refer := referrals(caps)
	// Pass 1, in parallel: analyse, in chunks so the temporary terms stay small.
	const chunk = 4096
	res := make([]analysed, min(chunk, len(caps)))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(res)))
	var df []uint32
	var buf []uint32
	number := func(terms []string, dst []uint32) []uint32 {
		for _, x := range terms {
			id, ok := ids[x]
			if !ok {
				id = uint32(len(ids))
				ids[strings.Clone(x)] = id
			}
			dst = append(dst, id)
		}
		slices.Sort(dst)
		return slices.Compact(dst)
	}
	// numberSeq is number for terms given by their vocabulary numbers, which are their
	// numbers in a kept cache; it counts document d in refs.
	numberSeq := func(terms []uint32, dst []uint32, d int) []uint32 {
		dst = append(dst, terms...)
		slices.Sort(dst)
		dst = slices.Compact(dst)
		for _, v := range dst {
			for int(v) >= len(stamp) {
				stamp = append(stamp, 0)
				t.chain.refs = append(t.chain.refs, 0)
			}
			if stamp[v] != uint32(d)+1 {
				stamp[v] = uint32(d) + 1
				t.chain.refs[v]++
			}
		}
		return dst
	}
	// entries appends a list of entries to the numbers as docTerms encodes them: each
	// entry's length and its numbers.
	entries := func(list [][]string) {
		for _, terms := range list {
			buf = number(terms, buf[:0])
			t.nums = append(t.nums, uint32(len(buf)))
			t.nums = append(t.nums, buf...)
		}
	}
	// entriesSeq is entries for a list in analysed.seq from p; it returns the position after.
	entriesSeq := func(seq []uint32, p, d int) int {
		n := int(seq[p])
		p++
		for range n {
			l := int(seq[p])
			buf = numberSeq(seq[p+1:p+1+l], buf[:0], d)
			t.nums = append(t.nums, uint32(len(buf)))
			t.nums = append(t.nums, buf...)
			p += 1 + l
		}
		return p
	}
	for base := 0; base < len(caps); base += chunk {
		part := caps[base:min(base+chunk, len(caps))]
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var sb strings.Builder
				for i := w; i < len(part); i += workers {
					c := part[i]
					if prevDoc != nil && prevDoc[base+i] >= 0 {
						res[i] = *prev.an[prevDoc[base+i]]
						continue
					}
					res[i] = analyse(&sb, c, analyze)
				}
			}()
		}
		wg.Wait()
		// Pass 2, in order: number the terms (each capability's entries before its text) and
		// count document frequencies.
		for i := range part {
			d, a := base+i, &res[i]
			rec := &t.docs[d]
			c := caps[d]
			*rec = docTerms{cap: c, off: uint32(len(t.nums)), alias: uint32(len(t.aliasKey)), attrs: attrsOf(c)}
			p := 0
			if t.chain != nil {
				if a.seq == nil { // analysed now, not reused
					encode(t.voc, a)
				}
				p = entriesSeq(a.seq, p, d)
				rec.notUse = uint32(len(t.nums))
				p = entriesSeq(a.seq, p, d)
			} else {
				entries(a.use)
				rec.notUse = uint32(len(t.nums))
				entries(a.notUse)
			}
			rec.refer = uint32(len(t.nums))
			if refer != nil {
				t.nums = append(t.nums, refer[d]...)
			}
			rec.values = uint32(len(t.nums))
			lists := a.values
			for _, list := range lists {
				t.nums = append(t.nums, uint32(len(list)))
			}
			for _, list := range lists {
				for _, v := range list {
					t.nums = append(t.nums, t.value(valueIDs, v))
				}
			}
			if d > 0 && caps[d-1].ID >= c.ID {
				t.byID = false
			}
			t.appendHeads(rec, a.alias)
			rec.text = uint32(len(t.nums))
			if t.chain != nil {
				buf = numberSeq(a.seq[p:], buf[:0], d)
			} else {
				buf = number(a.text, buf[:0])
			}
			t.nums = append(t.nums, buf...)
			rec.end = uint32(len(t.nums))
			for _, id := range buf {
				for int(id) >= len(df) {
					df = append(df, 0)
				}
				df[id]++
			}
			if t.an != nil {
				kept := *a
				t.an[d] = &kept
			}
			*a = analysed{}
		}
	}
	if t.chain != nil {
		// every term of the vocabulary keeps its number; the index holds the live ones
		ch := t.chain
		nv := t.voc.Len()
		for len(ch.refs) < nv {
			ch.refs = append(ch.refs, 0)
		}
		for len(df) < nv {
			df = append(df, 0)
		}
		for v, r := range ch.refs {
			if r > 0 {
				ids[t.voc.Term(uint32(v))] = uint32(v)
			}
		}
		ch.df, ch.live = df, len(ids)
		ch.arena = &numArena{nums: len(t.nums), keys: len(t.aliasKey)}
		t.terms = newTermIndex(ids)
		t.idf = make([]float32, nv)
		for v := range t.idf {
			t.idf[v] = termIDF(len(caps), df[v], ch.refs[v])
		}
		t.maxIDF = termIDF(len(caps), 0, 1)
		return t
	}
	t.terms = newTermIndex(ids)
	t.idf = make([]float32, len(ids))
	for id := range t.idf {
		d := uint32(0)
		if id < len(df) {
			d = df[id]
		}
		t.idf[id] = termIDF(len(caps), d, 1)
	}
	t.maxIDF = termIDF(len(caps), 0, 1)
	t.nums = slices.Clip(t.nums)
	return t
}

// termIDF is the idf of a term that df of n descriptive texts hold, deadIDF when no
// capability holds it (refs 0).
func termIDF(n int, df, refs uint32) float32 {
	if refs == 0 {
		return deadIDF
	}
	N, d := float64(n), float64(df)
	return float32(math.Log(1 + (N-d+0.5)/(d+0.5)))
}

// appendHeads appends the alias phrases of a record to t's alias keys and their heads to
// its numbers, and sets rec.heads.
func (t *TermCache) appendHeads(rec *docTerms, alias []string) {
	rec.heads = uint32(len(t.nums))
	for _, k := range alias {
		t.aliasKey = append(t.aliasKey, k)
		h := t.pairAt(k, 0)
		t.nums = append(t.nums, uint32(h), uint32(h>>32))
	}
}

// value returns the number of value v, numbering it when new (ids: the numbers so far).
func (t *TermCache) value(ids map[string]uint32, v string) uint32 {
	if id, ok := ids[v]; ok {
		return id
	}
	v = strings.Clone(v)
	id := uint32(len(t.values))
	ids[v] = id
	t.values = append(t.values, v)
	k := foldKey(v)
	t.folds[k] = append(t.folds[k], id)
	return id
}

// foldKey returns a key shared by exactly the strings that strings.EqualFold finds equal:
// EqualFold compares rune by rune, each rune equal to those of its case-folding orbit
// (unicode.SimpleFold), so the key replaces each rune by one member of its orbit: the
// smallest, lowercased when that is an ASCII capital (so that a folded ASCII string is its
// own key). Bytes that are not UTF-8 are U+FFFD for both.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		if 'A' <= m && m <= 'Z' {
			m += 'a' - 'A'
		}
		b = utf8.AppendRune(b, m)
	}
	return string(b)
}

// referrals returns, per capability, the docIDs of the other capabilities its
// when_not_to_use entries name by id.
func referrals(caps []*registry.Capability) [][]uint32 {
	var byID map[string]uint32
	var out [][]uint32
	for d, c := range caps {
		for _, e := range c.WhenNotToUse {
			if !strings.Contains(e, ".") {
				continue
			}
			if byID == nil {
				byID = make(map[string]uint32, len(caps))
				for i, x := range caps {
					byID[x.ID] = uint32(i)
				}
				out = make([][]uint32, len(caps))
			}
			for _, w := range strings.FieldsFunc(e, notIDRune) {
				w = strings.TrimRight(w, ".-")
				if r, ok := byID[w]; ok && r != uint32(d) && !slices.Contains(out[d], r) {
					out[d] = append(out[d], r)
				}
			}
		}
	}
	return out
}

// notIDRune reports whether r cannot be part of a capability id.
func notIDRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == ':')
}

// informative reports whether a query term no capability uses still says something the
// user needs: not a concept name (those only stand for words already counted), not a CJK
// bigram (an unknown one mostly spans two words; its characters count on their own) and
// not a value holding digits (an id, a date, an amount: an argument, not a need).
func informative(term string) bool {
	if term == "" || term[0] == '~' {
		return false
	}
	runes := 0
	for _, r := range term {
		if r >= '0' && r <= '9' {
			return false
		}
		if r > unicode.MaxLatin1 && unicode.Is(unicode.Han, r) {
			runes++
		}
	}
	return runes < 2
}

// docMatch is what a TermCache tells of one candidate for one query.
type docMatch struct {
	// use and notUse are the best coverage of one when_to_use and one when_not_to_use entry
	// by the query's terms (see queryTerms.coverage).
	use, notUse float64
	// alias: the query holds one of the capability's alias phrases (see aliasPhrase).
	alias bool
}

// match tells how the query (q, and p: its wordPairs) meets d's numbers; aliases only
// when aliases is set. d must not be nil.
func (t *TermCache) match(d *docTerms, q *queryTerms, p *phrasePairs, aliases bool) docMatch {
	var m docMatch
	if len(q.nums) > 0 {
		m.use, m.notUse = q.coverage(t.nums[d.off:d.notUse]), q.coverage(t.nums[d.notUse:d.refer])
	}
	m.alias = aliases && t.aliasIn(d, p)
	return m
}

// textCoverage returns the idf-weighted share of the query q found in the descriptive text
// of d's capability. Without a record (no cache for the candidate's generation), or without
// an informative query term, it is 1: unknown, so it blocks nothing.
func (t *TermCache) textCoverage(d *docTerms, q *queryTerms) float64 {
	if d == nil || q.weight <= 0 {
		return 1
	}
	text := t.nums[d.text:d.end]
	return min((t.textShare(text, q)+q.spelledShare(text)).value()/q.weight, 1)
}

// spelledShare returns the summed weight of the query's terms that spell a concept text
// (sorted unique term numbers) holds, leaving out those text holds itself (textShare
// counts them): a capability that holds a concept covers the words the query names it
// with, in whatever language. A term spelling several concepts counts once.
func (q *queryTerms) spelledShare(text []uint32) idfSum {
	if len(q.spelled) == 0 {
		return 0
	}
	extra := q.extra[:0]
	for _, sp := range q.spelled {
		if _, held := slices.BinarySearch(text, sp.concept); !held {
			continue
		}
		if sp.key >= 0 {
			if _, direct := slices.BinarySearch(text, uint32(sp.key)); direct {
				continue
			}
		}
		extra = append(extra, sp)
	}
	slices.SortFunc(extra, func(a, b spelling) int { return cmp.Compare(a.key, b.key) })
	var w idfSum
	for i, sp := range extra {
		if i == 0 || sp.key != extra[i-1].key {
			w.add(sp.weight)
		}
	}
	q.extra = extra[:0]
	return w
}

// textShare returns the summed idf of the query's terms found in text (sorted unique term
// numbers), in fixed point: the same whatever the terms' numbers.
func (t *TermCache) textShare(text []uint32, q *queryTerms) idfSum {
	if len(q.nums) == 0 {
		return 0
	}
	var w idfSum
	for _, id := range text {
		if q.bits[id>>6]&(1<<(id&63)) != 0 { // q.has, but every id is below the cache's size
			w.add(q.idfOf(id))
		}
	}
	return w
}

// ownEntries returns the entries that say more than the summary: an entry the summary
// already contains (an importer's first sentence of a description, say) repeats what the
// retrievers matched and earns no when_to_use bonus of its own.
func ownEntries(entries []string, summary string) []string {
	n := 0
	for _, e := range entries {
		if e := strings.TrimSpace(e); e != "" && strings.Contains(summary, e) {
			n++
		}
	}
	if n == 0 {
		return entries
	}
	out := make([]string, 0, len(entries)-n)
	for _, e := range entries {
		if e := strings.TrimSpace(e); e == "" || !strings.Contains(summary, e) {
			out = append(out, e)
		}
	}
	return out
}

// queryTerms are a query's term numbers: a sorted list, and a bitset over the cache's
// numbers so an entry's share of them costs one test per term of the entry; and the values
// of the cache its intents, entities, symptoms and forbidden intents name.
type queryTerms struct {
	nums   []uint32
	bits   []uint64 // zero between uses
	weight float64  // the idf-weighted size of the terms (see number)
	// idf holds the idf of each of nums (TermCache.idf is mostly out of cache), and below[w]
	// how many of nums lie below word w of bits: a number's place in nums is found from
	// bits alone.
	idf   []float32
	below []uint32
	// marks holds, per value number, the bits 1<<kind of the value kinds whose query list
	// holds the value, and markForbidden; zero between uses, except at the numbers in marked.
	marks  []uint8
	marked []uint32
	// ids and hashes are the scratch space of termIndex.lookup.
	ids    []int32
	hashes []uint64
	// docs is Rerank's scratch space (without pointers: cheap to write and reuse), kept with
	// the query's to save a pool, and touch the
	// sum of the words read ahead (see touch; kept, so that its reads are not optimised away).
	docs  []candTerms
	touch uint32
	// hi, keys and sufmax are prune's scratch space.
	hi, sufmax []float64
	keys       []uint64
	// spelled holds, for each symptom concept of the query that some capability holds (by
	// the number of its "~" term), the query's own terms that spell one of its members
	// (see spell). extra is spelledShare's scratch space.
	spelled []spelling
	extra   []spelling
}

// spelling is one query term spelling a concept: the concept's number and the term's
// (its index in the query's terms, negated and minus one, when no capability uses it) and
// weight in the coverage's denominator.
type spelling struct {
	concept uint32
	key     int64
	weight  float32
}

var queryPool = sync.Pool{New: func() any { return new(queryTerms) }}

// query numbers and marks the query's terms, which must be sorted and unique (Rerank
// sorts them). Call release when done.
func (t *TermCache) query(terms []string) *queryTerms {
	q := queryPool.Get().(*queryTerms)
	q.number(t, terms)
	if len(q.nums) == 0 {
		return q
	}
	words := (len(t.idf) + 63) / 64
	if cap(q.bits) < words {
		q.bits = make([]uint64, words)
	}
	q.bits = q.bits[:words]
	for _, n := range q.nums {
		q.bits[n>>6] |= 1 << (n & 63)
	}
	q.below = slices.Grow(q.below[:0], words)[:words]
	k := 0
	for w, b := range q.bits {
		q.below[w] = uint32(k)
		k += bits.OnesCount64(b)
	}
	return q
}

// number sets q's numbers of the terms t knows, sorted and unique, and q's weight: the
// idf-weighted size of all the terms, the denominator of Candidate.Coverage, where terms no
// capability uses weigh the most.
func (q *queryTerms) number(t *TermCache, terms []string) {
	q.nums, q.idf, q.weight = q.nums[:0], q.idf[:0], 0
	if t == nil {
		return
	}
	q.ids = slices.Grow(q.ids[:0], len(terms))[:len(terms)]
	q.hashes = slices.Grow(q.hashes[:0], len(terms))[:len(terms)]
	q.touch += t.lookup(terms, q.ids, q.hashes)
	for i, id := range q.ids {
		if id >= 0 {
			q.nums = append(q.nums, uint32(id))
			q.weight += float64(t.idf[id])
		} else if informative(terms[i]) {
			q.weight += float64(t.maxIDF)
		}
	}
	slices.Sort(q.nums)
	q.nums = slices.Compact(q.nums)
	for _, n := range q.nums {
		q.idf = append(q.idf, t.idf[n])
	}
	q.spell(t, terms)
}

// spell sets q.spelled: for each symptom concept term ("~name", text.IsSymptom) of the
// sorted terms that a capability's text holds, the terms among them that spell one of the
// concept's members (conceptSpelling), with their weights as number counted them. Other
// concepts are left out: a broad one ("food") held by a capability says little about how
// much of the request it speaks to, while a symptom is specific, and spelled in several
// words that one capability rarely shares in another language ("为什么连不上" and "cannot
// connect to the docker daemon").
func (q *queryTerms) spell(t *TermCache, terms []string) {
	q.spelled = q.spelled[:0]
	for i, term := range terms {
		if len(term) < 2 || term[0] != '~' || q.ids[i] < 0 || !text.IsSymptom(term[1:]) {
			continue
		}
		concept := uint32(q.ids[i])
		for _, m := range conceptSpelling(term[1:]) {
			j, found := slices.BinarySearch(terms, m)
			if !found {
				continue
			}
			sp := spelling{concept: concept, key: -int64(j) - 1}
			switch id := q.ids[j]; {
			case id >= 0:
				sp.key, sp.weight = int64(id), t.idf[id]
			case informative(m):
				sp.weight = t.maxIDF
			default:
				continue
			}
			q.spelled = append(q.spelled, sp)
		}
	}
}

// conceptSpellings memoises conceptSpelling by concept name.
var conceptSpellings sync.Map // string → []string

// conceptSpelling returns the sorted analysed terms of a shared-lexicon concept's members:
// the terms a text spells the concept with ("连不上" gives 连, 连不, 不, 不上, 上).
func conceptSpelling(name string) []string {
	if v, ok := conceptSpellings.Load(name); ok {
		return v.([]string)
	}
	var out []string
	for _, m := range text.ConceptMembers(name) {
		out = append(out, text.Analyze(strings.ReplaceAll(m, "_", " "))...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	v, _ := conceptSpellings.LoadOrStore(name, out)
	return v.([]string)
}

// idfOf returns the idf of n, one of the query's term numbers.
func (q *queryTerms) idfOf(n uint32) float32 {
	w := n >> 6
	return q.idf[q.below[w]+uint32(bits.OnesCount64(q.bits[w]&(1<<(n&63)-1)))]
}

// markValues marks the values of t that s names: those equal, as containsFold compares
// (same length, equal under strings.EqualFold), to one of its intents, entities or symptoms,
// and to one of its forbidden intents.
func (q *queryTerms) markValues(t *TermCache, s *Signals) {
	if t == nil {
		return
	}
	if len(q.marks) < len(t.values) {
		q.marks = make([]uint8, len(t.values))
	}
	lists := [...]struct {
		want []string
		bit  uint8
	}{
		{s.Intents, 1 << valueIntent}, {s.Entities, 1 << valueEntity}, {s.Symptoms, 1 << valueSymptom},
		{s.Forbidden, markForbidden},
	}
	for _, l := range lists {
		for _, w := range l.want {
			for _, id := range t.folds[foldKey(w)] {
				if len(t.values[id]) != len(w) {
					continue
				}
				if q.marks[id] == 0 {
					q.marked = append(q.marked, id)
				}
				q.marks[id] |= l.bit
			}
		}
	}
}

// marksAny reports whether one of the values (value numbers) has one of the bits.
func (q *queryTerms) marksAny(values []uint32, bits uint8) bool {
	if len(q.marked) == 0 {
		return false
	}
	for _, v := range values {
		if q.marks[v]&bits != 0 {
			return true
		}
	}
	return false
}

// release clears q and returns it to the pool; q must not be used afterwards.
func (q *queryTerms) release() {
	for _, n := range q.nums {
		q.bits[n>>6] = 0
	}
	for _, v := range q.marked {
		q.marks[v] = 0
	}
	q.nums, q.bits, q.marked = q.nums[:0], q.bits[:0], q.marked[:0]
	queryPool.Put(q)
}

// coverage returns the best share, over a record's encoded when_to_use (or when_not_to_use)
// entries (see docTerms), of an entry's terms found in the query q. Every number of a record
// is below the cache's size, which q.bits covers (q must hold a number: see query), so the
// test per term is a load, a shift and an add.
func (q *queryTerms) coverage(enc []uint32) float64 {
	best := 0.0
	bits := q.bits
	for len(enc) > 0 {
		n := enc[0]
		e := enc[1 : 1+n]
		enc = enc[1+n:]
		if n == 0 {
			continue
		}
		k := uint64(0)
		for _, t := range e {
			k += bits[t>>6] >> (t & 63) & 1
		}
		if v := float64(k) / float64(n); v > best {
			best = v
		}
	}
	return best
}

// rawCoverage is coverage without a cache: the best share, over the raw entries, of an
// entry's approximate terms that occur in it as substrings of the query's terms.
func rawCoverage(raw, terms []string) float64 {
	best := 0.0
	for _, e := range raw {
		size := approxTerms(e)
		if size == 0 {
			continue
		}
		n := 0
		for _, q := range terms {
			if q != "" && q[0] != '~' && containsFoldASCII(e, q) {
				n++
			}
		}
		if v := min(float64(n)/float64(size), 1); v > best {
			best = v
		}
	}
	return best
}

// aliasPhrase reports whether the query (p: its wordPairs) holds one of the aliases of two
// words or more (phraseWords) of d's capability as a phrase (false without a record).
func (t *TermCache) aliasPhrase(d *docTerms, p *phrasePairs) bool {
	if d == nil {
		return false
	}
	return t.aliasIn(d, p)
}

// aliasIn is aliasPhrase for a record.
func (t *TermCache) aliasIn(d *docTerms, p *phrasePairs) bool {
	if p.phrase == "" {
		return false
	}
	heads := t.nums[d.heads:d.text]
	for i := range d.aliases() {
		h := uint64(heads[2*i]) | uint64(heads[2*i+1])<<32
		if !p.mayHold(h) {
			continue
		}
		if _, ok := slices.BinarySearch(p.hashes, h); ok && strings.Contains(p.phrase, t.aliasKey[d.alias+i]) {
			return true
		}
	}
	return false
}

// phrasePairs is what alias matching needs of a query's phrase key: the key, the sorted
// hashes of every two adjacent words (an alias's first pair must be among them for the
// phrase to hold it, which rules most aliases out without searching the phrase), and a
// bitset of the hashes' low bytes, which rules most of them out without searching the
// hashes.
type phrasePairs struct {
	phrase string
	hashes []uint64
	bloom  [4]uint64
}

// mayHold reports whether h may be among p's hashes (false: it is not).
func (p *phrasePairs) mayHold(h uint64) bool {
	b := uint8(h)
	return p.bloom[b>>6]&(1<<(b&63)) != 0
}

// wordPairs returns the word pairs of a phrase key, their hashes appended to dst.
func (t *TermCache) wordPairs(dst []uint64, key string) phrasePairs {
	p := phrasePairs{phrase: key, hashes: dst}
	if t == nil {
		return p
	}
	for i := 0; ; {
		h, next, ok := t.pairFrom(key, i)
		if !ok {
			break
		}
		p.hashes = append(p.hashes, h)
		b := uint8(h)
		p.bloom[b>>6] |= 1 << (b & 63)
		i = next
	}
	slices.Sort(p.hashes)
	p.hashes = slices.Compact(p.hashes)
	return p
}

// pairAt returns the hash of the first two words of a phrase key from byte i (0 when it has
// fewer).
func (t *TermCache) pairAt(key string, i int) uint64 {
	h, _, _ := t.pairFrom(key, i)
	return h
}

// pairFrom hashes the two words of key (" w1 w2 w3 ") starting at the word after byte i,
// "w1 w2", and returns the position of the next word pair.
func (t *TermCache) pairFrom(key string, i int) (h uint64, next int, ok bool) {
	for i < len(key) && key[i] == ' ' {
		i++
	}
	a := strings.IndexByte(key[i:], ' ')
	if a < 0 {
		return 0, 0, false
	}
	b := i + a + 1
	e := strings.IndexByte(key[b:], ' ')
	if e <= 0 {
		return 0, 0, false
	}
	return maphash.String(t.seed, key[i:b+e]), b, true
}

// PhraseKey renders a text for phrase matching: its words folded and stemmed, English stop
// words and Chinese particles dropped, each CJK character on its own, separated and
// surrounded by single spaces. Text A holds text B as a phrase when PhraseKey(A) contains
// PhraseKey(B) ("Review this PR: #17" holds "review this pr").
func PhraseKey(s string) string {
	var sb strings.Builder
	sb.WriteByte(' ')
	var sc text.Scanner
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			w := sc.Folded()
			if text.IsStopWord(w) {
				continue
			}
			sb.WriteString(text.Stem(w))
			sb.WriteByte(' ')
		case text.KindCJK:
			for _, r := range sc.Text() {
				if text.IsParticle(string(r)) {
					continue
				}
				sb.WriteRune(r)
				sb.WriteByte(' ')
			}
		}
	}
	return sb.String()
}

// phraseWords counts the words of a phrase key, a CJK character as half a word (most
// Chinese words have two): "退款" is one word, "在 PR 上留言" three.
func phraseWords(key string) float64 {
	n := 0.0
	for _, f := range strings.Fields(key) {
		if r, _ := utf8.DecodeRuneInString(f); len(f) == utf8.RuneLen(r) && text.IsCJK(r) {
			n += 0.5
		} else {
			n++
		}
	}
	return n
}

// approxTerms estimates how many analysed terms a text yields: one per Latin word, a unigram
// and a bigram per CJK character.
func approxTerms(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case r > unicode.MaxLatin1 && unicode.Is(unicode.Han, r):
			n += 2
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	return n
}

// containsFoldASCII reports whether s contains sub, ignoring ASCII case (sub is lowercase).
func containsFoldASCII(s, sub string) bool {
	if len(sub) == 0 || len(sub) > len(s) {
		return len(sub) == 0
	}
	if !utf8.ValidString(sub) {
		return false
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// WithCaps returns a term cache for caps, a snapshot whose capabilities differ from the
// ones t was built from only in fields no record holds (status, health, enabled, version:
// availability), at the same docIDs: it shares every record's terms with t and points the
// records at the new capabilities. t is unchanged. Changing a field a record holds, or the
// docIDs, needs NewTermCache.
func (t *TermCache) WithCaps(caps []*registry.Capability) (*TermCache, error) {
	if len(caps) != len(t.docs) {
		return nil, fmt.Errorf("rank: term cache: %d capabilities, the cache has %d", len(caps), len(t.docs))
	}
	n := *t
	n.docs = slices.Clone(t.docs)
	for d, c := range caps {
		if old := n.docs[d].cap; old == nil || old.ID != c.ID {
			return nil, fmt.Errorf("rank: term cache: document %d is %s, not the capability the cache holds", d, c.ID)
		}
		n.docs[d].cap = c
	}
	return &n, nil
}
