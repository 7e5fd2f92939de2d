package index

import (
	"iter"
	mathbits "math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Metadata fields, their names (the prefix of a Matched entry such as "intents:diagnose") and
// weights: the score of a document is the weighted count of the query values it matches.
const (
	mIntents = iota
	mEntities
	mSymptoms
	mDomain
	mScenario
	mCapType
	mRisk
	mSideEffect
	numMeta
)

var metaNames = [numMeta]string{"intents", "entities", "symptoms", "domain", "scenarios", "capability_type", "risk_signals", "side_effect"}

var metaWeights = [numMeta]float32{1.5, 1, 2, 0.5, 1, 0.5, 0.5, 0.3}

// metaPost is the set of documents with one normalised value of one field: docs carry the
// value itself, cdocs only a synonym of it (a value of the same concept: "inspect" for
// diagnose). Both are sorted doc ids, read whole by every query that names the value.
type metaPost struct {
	label string // "intents:diagnose"
	field int
	docs  []uint32
	cdocs []uint32
	// docBits and cdocBits hold docs and cdocs again as bitsets of the generation's
	// documents (bit d for doc d), which metaByClass reads, when they are dense enough
	// (denseDocs), else nil.
	docBits  []uint64
	cdocBits []uint64
}

// Metadata weights of a synonym (concept) match and of a pack, relative to a literal
// match on an action or recipe: a pack declares the vocabulary of its whole subtree.
const (
	metaConceptWeight = 0.7
	metaPackWeight    = 0.5
	// maxMetaKeys bounds the structured values of one query that are looked up.
	maxMetaKeys = 256
	// metaDenseDiv sets which postings have a bitset besides their array: those holding
	// at least one document in metaDenseDiv, whose bitset (n/8 bytes) then costs at most 8
	// bytes per posting (on the generated catalogues of 1k to 100k, 1.9 to 2.0 bytes per
	// posting of all the values). A query sets the bitsets of the others in scratch memory.
	metaDenseDiv = 64
)

// metaIndex maps (field, normalised value) to documents.
type metaIndex struct {
	fields [numMeta]map[string]*metaPost
	// named holds, for each value with a posting in a concept field (intents, entities),
	// the postings that value names in a query (see eachNamed), so that a query naming
	// values of the catalogue looks no concept up.
	named [numMeta]map[string][]*metaPost
}

// eachNamed calls fn with every posting a query value v of field f names: that of its
// normalised form nv, then with concepts those of v's concepts.
func (x *metaIndex) eachNamed(f int, v, nv string, concepts bool, fn func(*metaPost)) {
	if p, ok := x.fields[f][nv]; ok {
		fn(p)
	}
	if concepts {
		for _, c := range text.Concepts(v) {
			if p, ok := x.fields[f][c]; ok {
				fn(p)
			}
		}
	}
}

// metaKey is one query value resolved to a posting; docs is post.docs or post.cdocs, bits
// its bitset (nil when the posting has none).
type metaKey struct {
	post *metaPost
	docs []uint32
	bits []uint64
	w    float32
}

// normVal folds a metadata value and joins its words with "_": "Active Version-Mismatch" →
// "active_version_mismatch".
func normVal(s string) string {
	s = strings.TrimSpace(text.Fold(s))
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '-' }) < 0 {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '-' }), "_")
}

// riskSignals derives the risk-signal vocabulary of a capability: its risk level, side effect
// names, confirmation and network use.
func riskSignals(c *registry.Capability) []string {
	var out []string
	if c.RiskLevel != "" {
		out = append(out, string(c.RiskLevel))
		if c.RiskLevel.Level() >= 2 {
			out = append(out, "high_risk")
		}
	}
	switch c.SideEffect {
	case registry.SideEffectRead:
		out = append(out, "read_only")
	case registry.SideEffectWriteLocal:
		out = append(out, "write", "local_write")
	case registry.SideEffectWriteShared:
		out = append(out, "write", "shared_write")
	case registry.SideEffectImpact:
		out = append(out, "write", "high_impact", "irreversible")
	}
	if c.RequiresConfirmation {
		out = append(out, "requires_confirmation")
	}
	if c.NetworkPolicy == registry.NetworkAny || c.NetworkPolicy == registry.NetworkAllowlist {
		out = append(out, "network")
	}
	return out
}

func (g *Generation) buildMeta() {
	x := &g.meta
	// the postings are gathered as bitmaps (a value can repeat within a document, and a
	// synonym match must not count where the value itself does), then kept as arrays
	type sets struct{ docs, cdocs *roaring.Bitmap }
	var build [numMeta]map[string]sets
	post := func(f int, v string) sets {
		if build[f] == nil {
			build[f] = map[string]sets{}
		}
		p, ok := build[f][v]
		if !ok {
			p = sets{roaring.New(), roaring.New()}
			build[f][v] = p
		}
		return p
	}
	add := func(f int, v string, d int) {
		if v = normVal(v); v != "" {
			post(f, v).docs.Add(uint32(d))
		}
	}
	withConcepts := func(f int, v string, d int) {
		add(f, v, d)
		for _, c := range text.Concepts(text.Fold(v)) {
			post(f, c).cdocs.Add(uint32(d))
		}
	}
	for d, c := range g.snap.Caps {
		for _, v := range c.Intents {
			withConcepts(mIntents, v, d)
		}
		for _, v := range c.Entities {
			withConcepts(mEntities, v, d)
		}
		for _, v := range c.Symptoms {
			add(mSymptoms, v, d)
		}
		add(mDomain, c.Domain, d)
		for _, v := range c.Scenarios {
			add(mScenario, v, d)
		}
		add(mCapType, c.CapabilityType, d)
		for _, v := range riskSignals(c) {
			add(mRisk, v, d)
		}
		add(mSideEffect, string(c.SideEffect), d)
	}
	for f := range x.fields {
		x.fields[f] = make(map[string]*metaPost, len(build[f]))
		for v, p := range build[f] {
			p.cdocs.AndNot(p.docs)
			mp := &metaPost{label: metaNames[f] + ":" + v, field: f, docs: p.docs.ToArray(), cdocs: p.cdocs.ToArray()}
			mp.docBits, mp.cdocBits = denseDocs(mp.docs, g.n), denseDocs(mp.cdocs, g.n)
			x.fields[f][v] = mp
		}
	}
	for _, f := range []int{mIntents, mEntities} {
		x.named[f] = make(map[string][]*metaPost, len(x.fields[f]))
		for v := range x.fields[f] {
			if normVal(v) == v { // a concept name may not be normalised; no query value is it then
				x.eachNamed(f, v, v, true, func(p *metaPost) { x.named[f][v] = append(x.named[f][v], p) })
			}
		}
	}
}

// denseDocs returns docs as a bitset of n documents when they are at least
// n/metaDenseDiv, else nil.
func denseDocs(docs []uint32, n int) []uint64 {
	if len(docs) == 0 || len(docs)*metaDenseDiv < n {
		return nil
	}
	bits := make([]uint64, (n+63)/64)
	setDocBits(bits, docs)
	return bits
}

// setDocBits sets the bits of docs in bits.
func setDocBits(bits []uint64, docs []uint32) {
	for _, d := range docs {
		bits[d>>6] |= 1 << (d & 63)
	}
}

// metaKeys resolves the query's structured values to postings, each once.
func (g *Generation) metaKeys(s *scratch, q *Query) []metaKey {
	keys := s.keys[:0]
	use := func(p *metaPost) {
		if slices.ContainsFunc(keys, func(k metaKey) bool { return k.post == p }) {
			return
		}
		keys = append(keys, metaKey{post: p, docs: p.docs, bits: p.docBits, w: metaWeights[p.field]})
		if len(p.cdocs) > 0 {
			keys = append(keys, metaKey{post: p, docs: p.cdocs, bits: p.cdocBits, w: metaWeights[p.field] * metaConceptWeight})
		}
	}
	add := func(f int, v string, concepts bool) {
		if len(keys) >= maxMetaKeys {
			return
		}
		nv := normVal(v)
		if nv == "" {
			return
		}
		if named, ok := g.meta.named[f][nv]; ok && nv == v {
			for _, p := range named {
				use(p)
			}
			return
		}
		g.meta.eachNamed(f, v, nv, concepts, use)
	}
	for _, v := range q.Intents {
		add(mIntents, v, true)
	}
	for _, v := range q.Entities {
		add(mEntities, v, true)
	}
	for _, v := range q.Symptoms {
		add(mSymptoms, v, false)
	}
	if m := q.Match; m != nil {
		add(mDomain, m.Domain, false)
		add(mScenario, m.Scenario, false)
		for _, v := range m.Intents {
			add(mIntents, v, true)
		}
		for _, v := range m.RiskSignals {
			add(mRisk, v, false)
			add(mSideEffect, v, false)
		}
		for _, v := range m.CapabilityTypes {
			add(mCapType, v, false)
		}
	}
	s.keys = keys
	return keys
}

// retrieveMetadata scores documents by the weighted count of structured query values they
// carry; Matched lists the field:value pairs.
func (g *Generation) retrieveMetadata(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	if limit < 1 { // Retrieve refuses such limits; no hit could be kept
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	// a key of no document (a value whose synonyms only are carried) matches nothing: it
	// would take a class bit for nothing
	keys := slices.DeleteFunc(g.metaKeys(s, q), func(k metaKey) bool { return len(k.docs) == 0 })
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > maxClassKeys {
		return g.metaByHeap(s, keys, allow, limit)
	}
	return g.metaByClass(s, keys, allow, limit)
}

// A document's metadata score depends only on its class: which keys it matches, and whether
// it is a pack. With k keys, a class is those key bits (bit i for keys[i]) and bit k for a
// pack, so there are 2<<k classes.
const (
	// maxClassKeys bounds the keys of a query ranked by class (metaByClass), so that a
	// class fits a byte; queries with more, which name many structured values, are ranked
	// by metaByHeap.
	maxClassKeys = 7
	maxClasses   = 2 << maxClassKeys
	// metaBlockWords bounds the words of bitsets (64 documents each) that metaByClass
	// reads between two updates of its floor. Its first blocks are shorter (1, 2, 4...
	// words), so that the floor rises before many documents are collected.
	metaBlockWords = 64
)

// classWork is the working memory of metaByClass, recycled through classWorkPool.
type classWork struct {
	score   [maxClasses]float32    // score per class
	count   [maxClasses]int32      // documents collected per class; then the class's tier
	ranked  []uint8                // the classes collected, best first
	tiers   []classTier            // runs of ranked classes of one score
	found   []classDoc             // the documents collected, in doc order
	matched [maxClasses][]string   // labels per class
	keyBits [][]uint64             // bitsets of the keys
	sets    []uint16               // the key sets of the documents that may enter (see admit)
	mask    [metaBlockWords]uint64 // the documents of a block that may enter
	term    [metaBlockWords]uint64 // those of a block holding all the keys of a set
	local   []uint64               // bitsets of the keys without one of their own
}

// classDoc is a document metaByClass collected, with its class.
type classDoc struct {
	doc   uint32
	class uint8
}

// classTier is the classes of one score: how many of their documents to take still, and the
// hit index of the next one.
type classTier struct{ take, at int32 }

var classWorkPool = sync.Pool{New: func() any { return new(classWork) }}

// metaByClass ranks with at most maxClassKeys keys. Rather than reading every posting of
// the keys, it reads their bitsets a word of 64 documents at a time in doc order: all
// scores are known beforehand (those of the classes), so once limit documents are
// collected, a later one can enter only with a class scoring above the limit-th best
// collected, the floor (at an equal score the earlier document ranks first), and the words
// of the keys are combined so as to leave only the documents holding keys enough for that
// (admit, block). The floor rises between blocks of words as better documents are
// collected; once it reaches the best score, reading stops. The collected documents are
// then ranked without comparing any two: counted per class, the classes ranked by score,
// each score given its number of documents, and the hits read off in doc order, which is
// the order of ties.
func (g *Generation) metaByClass(s *scratch, keys []metaKey, allow *roaring.Bitmap, limit int) []Hit {
	w := classWorkPool.Get().(*classWork)
	defer w.release(len(keys))
	w.scores(keys)
	count := w.count[:2<<len(keys)]
	clear(count)
	words := (g.n + 63) / 64
	keyBits := w.bitsets(keys, words)
	bits := s.allowBits(allow, g.n)
	found, ranked := w.found[:0], w.ranked[:0]
	floor := float32(0) // every class of a key scores above 0
	w.admit(len(keys), floor)
	for start, size := 0, 1; start < words && len(w.sets) > 0; start, size = start+size, min(2*size, metaBlockWords) {
		for j, word := range w.block(keyBits, bits, start, min(start+size, words)) {
			for ; word != 0; word &= word - 1 {
				d := uint32((start+j)<<6 | mathbits.TrailingZeros64(word))
				c := g.classOf(keyBits, d)
				if w.score[c] <= floor {
					continue
				}
				if count[c] == 0 {
					ranked = insertClass(ranked, c, &w.score)
				}
				count[c]++
				found = append(found, classDoc{doc: d, class: c})
			}
		}
		if f := limitScore(ranked, count, &w.score, limit); f > floor {
			floor = f
			w.admit(len(keys), floor)
		}
	}
	// a class's count becomes its tier; the labels of a class are listed once, for all
	// its hits
	tiers, taken, nl := w.tiers[:0], int32(0), 0
	for i, c := range ranked {
		if i == 0 || w.score[c] != w.score[ranked[i-1]] {
			tiers = append(tiers, classTier{at: taken})
		}
		t := &tiers[len(tiers)-1]
		n := min(count[c], int32(limit)-taken)
		t.take += n
		taken += n
		count[c] = int32(len(tiers) - 1)
		if n > 0 {
			nl += mathbits.OnesCount8(c &^ (1 << len(keys)))
		}
	}
	w.found, w.ranked, w.tiers = found, ranked, tiers
	if taken == 0 {
		return nil
	}
	hits := make([]Hit, taken)
	labels := make([]string, 0, nl)
	matched := w.matched[:2<<len(keys)]
	clear(matched)
	for _, f := range found {
		t := &tiers[count[f.class]]
		if t.take == 0 {
			continue
		}
		if matched[f.class] == nil {
			start := len(labels)
			for i, k := range keys {
				if f.class&(1<<i) != 0 {
					labels = append(labels, k.post.label)
				}
			}
			matched[f.class] = labels[start:len(labels):len(labels)]
		}
		hits[t.at] = Hit{Doc: f.doc, Score: float64(w.score[f.class]), Matched: matched[f.class]}
		t.take--
		t.at++
	}
	return hits
}

// release returns w to classWorkPool, keeping none of the references of a call with nk
// keys: the keys' bitsets belong to a generation that may be replaced, and the labels to
// the hits returned.
func (w *classWork) release(nk int) {
	clear(w.keyBits)
	clear(w.matched[:2<<nk])
	classWorkPool.Put(w)
}

// scores sets the score of every class of keys: the weights of its keys added in key
// order, as the scores of metaByHeap are, and halved for a pack. A class's sum is that of
// the class without its last key plus that key's weight, the same additions in the same
// order.
func (w *classWork) scores(keys []metaKey) {
	pack := 1 << len(keys)
	w.score[0], w.score[pack] = 0, 0
	for c := 1; c < pack; c++ {
		last := mathbits.Len(uint(c)) - 1
		w.score[c] = w.score[c&^(1<<last)] + keys[last].w
		w.score[c|pack] = w.score[c] * metaPackWeight
	}
}

// bitsets returns the bitsets of the keys, those of the keys without one of their own set
// in w.local.
func (w *classWork) bitsets(keys []metaKey, words int) [][]uint64 {
	need := 0
	for _, k := range keys {
		if k.bits == nil {
			need += words
		}
	}
	if cap(w.local) < need {
		w.local = make([]uint64, need)
	}
	local := w.local[:need]
	clear(local)
	keyBits := w.keyBits[:0]
	for _, k := range keys {
		b := k.bits
		if b == nil {
			b, local = local[:words:words], local[words:]
			setDocBits(b, k.docs)
		}
		keyBits = append(keyBits, b)
	}
	w.keyBits = keyBits
	return keyBits
}

// admit sets w.sets to the documents that may score above floor, as sets of keys (bit i for
// keys[i]) whose bitsets block intersects: the key sets with which a document that is not a
// pack scores above floor and that have no key to spare. A document scoring above floor
// holds all the keys of one of them (remove the keys it can spare one by one; a pack's
// halving only lowers a score), and one holding them scores above floor unless a pack
// (a score only grows with a key), which the class of the document then tells.
func (w *classWork) admit(nk int, floor float32) {
	pass := func(set uint16) bool { return w.score[set] > floor }
	sets := w.sets[:0]
	for set := uint16(1); set < 1<<nk; set++ {
		if !pass(set) {
			continue
		}
		spare := false
		for v := set; v != 0 && !spare; v &= v - 1 {
			spare = pass(set &^ (v & -v))
		}
		if !spare {
			sets = append(sets, set)
		}
	}
	w.sets = sets
}

// block returns the words start to end of the allowed documents that may enter: the union
// over w.sets of the intersection of their keys' bitsets.
func (w *classWork) block(keyBits [][]uint64, allow []uint64, start, end int) []uint64 {
	m := w.mask[:end-start]
	clear(m)
	var vs [maxClassKeys][]uint64
	for _, set := range w.sets {
		n := 0
		for ; set != 0; set &= set - 1 {
			vs[n] = keyBits[mathbits.TrailingZeros16(set)][start:end]
			n++
		}
		w.orAll(m, vs[:n])
	}
	if allow != nil {
		a := allow[start:end]
		for j := range m {
			m[j] &= a[j]
		}
	}
	return m
}

// orAll sets in m the bits set in all of vs, with a loop of its own for the commonest
// sizes of vs so as to read each word once.
func (w *classWork) orAll(m []uint64, vs [][]uint64) {
	a := vs[0][:len(m)]
	switch len(vs) {
	case 1:
		for j := range m {
			m[j] |= a[j]
		}
	case 2:
		b := vs[1][:len(m)]
		for j := range m {
			m[j] |= a[j] & b[j]
		}
	case 3:
		b, c := vs[1][:len(m)], vs[2][:len(m)]
		for j := range m {
			m[j] |= a[j] & b[j] & c[j]
		}
	default:
		b, c, t := vs[1][:len(m)], vs[2][:len(m)], w.term[:len(m)]
		for j := range t {
			t[j] = a[j] & b[j] & c[j]
		}
		for _, v := range vs[3:] {
			v = v[:len(t)]
			for j := range t {
				t[j] &= v[j]
			}
		}
		for j := range m {
			m[j] |= t[j]
		}
	}
}

// classOf returns the class of document d: its bits in the keys' bitsets, and the pack
// bit.
func (g *Generation) classOf(keyBits [][]uint64, d uint32) uint8 {
	w, b := d>>6, d&63
	c := uint8(0)
	if g.isPack(d) {
		c = 1 << len(keyBits)
	}
	for i, v := range keyBits {
		c |= uint8(v[w]>>b&1) << i
	}
	return c
}

// insertClass inserts class c into ranked, kept by decreasing score.
func insertClass(ranked []uint8, c uint8, score *[maxClasses]float32) []uint8 {
	i := len(ranked)
	for i > 0 && score[ranked[i-1]] < score[c] {
		i--
	}
	return slices.Insert(ranked, i, c)
}

// limitScore returns the score of the limit-th best document collected, ranked holding
// their classes best first, or 0 when fewer are collected.
func limitScore(ranked []uint8, count []int32, score *[maxClasses]float32, limit int) float32 {
	n := 0
	for _, c := range ranked {
		if n += int(count[c]); n >= limit {
			return score[c]
		}
	}
	return 0
}

// maskKeys is how many keys have a bit of their own in a document's mask in metaByHeap; the
// last bit stands for all the keys after them.
const maskKeys = 31

// keyBit is the bit of key i in a document's mask.
func keyBit(i int) uint32 { return 1 << min(i, maskKeys) }

// metaByHeap ranks with any number of keys: it adds each document's weights and matched
// keys up in the scratch's dense arrays, then offers the touched documents to the top n in
// doc order, where a document that does not beat the worst kept score is out without a
// call (at an equal score the earlier doc ranks first).
func (g *Generation) metaByHeap(s *scratch, keys []metaKey, allow *roaring.Bitmap, limit int) []Hit {
	bits := s.allowBits(allow, g.n)
	acc, mask := s.dense(g.n)
	touched := touchedSet(s, g.n)
	for i, k := range keys {
		bit := keyBit(i)
		for _, d := range k.docs {
			if has(bits, d) {
				acc[d] += k.w
				mask[d] |= bit
				touched[d>>5] |= 1 << (d & 31)
			}
		}
	}
	s.top.reset(limit)
	for d := range setBits(touched) {
		c := cand{doc: d, score: acc[d], mask: mask[d]}
		acc[d], mask[d] = 0, 0
		if g.isPack(d) {
			c.score *= metaPackWeight
		}
		if !s.top.full() || c.score > s.top.floor() {
			s.top.push(c)
		}
	}
	best := s.top.best()
	if len(best) == 0 {
		return nil
	}
	hits := make([]Hit, len(best))
	labels := make([]string, 0, len(best)*min(len(keys), 4))
	for i, c := range best {
		start := len(labels)
		for j, k := range keys {
			// the mask answers for the first keys; past them, its last bit only says that
			// one of the later keys matched
			if c.mask&keyBit(j) != 0 && (j < maskKeys || has32(k.docs, c.doc)) {
				labels = append(labels, k.post.label)
			}
		}
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score), Matched: labels[start:len(labels):len(labels)]}
	}
	return hits
}

// touchedSet returns a zeroed bitset of n documents (32 to a word) in s.ids. Reading it word
// by word gives the touched documents in doc order.
func touchedSet(s *scratch, n int) []uint32 {
	words := (n + 31) / 32
	if cap(s.ids) < words {
		s.ids = make([]uint32, words)
	}
	set := s.ids[:words]
	clear(set)
	return set
}

// setBits yields the documents of a bitset in increasing order.
func setBits(set []uint32) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for w, word := range set {
			for ; word != 0; word &= word - 1 {
				if !yield(uint32(w<<5 | mathbits.TrailingZeros32(word))) {
					return
				}
			}
		}
	}
}

// has32 reports whether the sorted docs hold d.
func has32(docs []uint32, d uint32) bool {
	_, ok := slices.BinarySearch(docs, d)
	return ok
}
