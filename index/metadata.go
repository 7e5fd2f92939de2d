package index

import (
	"cmp"
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
}

// Metadata weights of a synonym (concept) match and of a pack, relative to a literal
// match on an action or recipe: a pack declares the vocabulary of its whole subtree.
const (
	metaConceptWeight = 0.7
	metaPackWeight    = 0.5
	// maxMetaKeys bounds the structured values of one query that are looked up.
	maxMetaKeys = 256
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

// metaKey is one query value resolved to a posting; docs is post.docs or post.cdocs.
type metaKey struct {
	post *metaPost
	docs []uint32
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
			x.fields[f][v] = &metaPost{label: metaNames[f] + ":" + v, field: f, docs: p.docs.ToArray(), cdocs: p.cdocs.ToArray()}
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

// metaKeys resolves the query's structured values to postings, each once.
func (g *Generation) metaKeys(s *scratch, q *Query) []metaKey {
	keys := s.keys[:0]
	use := func(p *metaPost) {
		if slices.ContainsFunc(keys, func(k metaKey) bool { return k.post == p }) {
			return
		}
		keys = append(keys, metaKey{post: p, docs: p.docs, w: metaWeights[p.field]})
		if len(p.cdocs) > 0 {
			keys = append(keys, metaKey{post: p, docs: p.cdocs, w: metaWeights[p.field] * metaConceptWeight})
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
	s := getScratch()
	defer putScratch(s)
	keys := g.metaKeys(s, q)
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
)

// classWork is the class tables of metaByClass, recycled through classWorkPool.
type classWork struct {
	class  []uint8             // class per document, zero between uses
	count  [maxClasses]int32   // documents per class; then the class's tier
	score  [maxClasses]float32 // score per class present
	ranked []uint8             // the classes present, best first
	tiers  []classTier         // runs of ranked classes of one score
}

// classTier is the classes of one score: how many of their documents to take still, and the
// hit index of the next one.
type classTier struct{ take, at int32 }

var classWorkPool = sync.Pool{New: func() any { return new(classWork) }}

// metaByClass ranks with at most maxClassKeys keys. It counts the documents of each class
// while it accumulates them, ranks the classes by score, decides how many documents each
// score takes, and reads the hits off the touched documents in doc order, which is the
// order of ties: no document is compared with another.
func (g *Generation) metaByClass(s *scratch, keys []metaKey, allow *roaring.Bitmap, limit int) []Hit {
	w := classWorkPool.Get().(*classWork)
	bits := s.allowBits(allow, g.n)
	if len(w.class) < g.n {
		w.class = make([]uint8, g.n)
	}
	class := w.class
	touched := touchedSet(s, g.n)
	pack := uint8(1) << len(keys)
	count := w.count[:2<<len(keys)] // the classes of len(keys) keys
	clear(count)
	for i, k := range keys {
		bit := uint8(1) << i
		for _, d := range k.docs {
			if !has(bits, d) {
				continue
			}
			c := class[d]
			if c == 0 {
				touched[d>>5] |= 1 << (d & 31)
				if g.isPack(d) {
					c = pack
				}
			} else {
				count[c]--
			}
			c |= bit
			class[d] = c
			count[c]++
		}
	}
	// rank the classes present; a class's count becomes its tier
	ranked := w.ranked[:0]
	for c, n := range count {
		if n > 0 {
			ranked = append(ranked, uint8(c))
			w.score[c] = classScore(keys, uint8(c))
		}
	}
	slices.SortFunc(ranked, func(a, b uint8) int { return cmp.Compare(w.score[b], w.score[a]) })
	tiers, taken := w.tiers[:0], int32(0)
	for i, c := range ranked {
		if i == 0 || w.score[c] != w.score[ranked[i-1]] {
			tiers = append(tiers, classTier{at: taken})
		}
		t := &tiers[len(tiers)-1]
		n := min(count[c], int32(limit)-taken)
		t.take += n
		taken += n
		count[c] = int32(len(tiers) - 1)
	}
	w.ranked, w.tiers = ranked, tiers
	if taken == 0 { // nothing touched: class is still zero
		classWorkPool.Put(w)
		return nil
	}
	hits := make([]Hit, taken)
	labels := make([]string, 0, int(taken)*min(len(keys), 4))
	for d := range setBits(touched) {
		c := class[d]
		class[d] = 0
		t := &tiers[count[c]]
		if t.take == 0 {
			continue
		}
		start := len(labels)
		for i, k := range keys {
			if c&(1<<i) != 0 {
				labels = append(labels, k.post.label)
			}
		}
		hits[t.at] = Hit{Doc: d, Score: float64(w.score[c]), Matched: labels[start:len(labels):len(labels)]}
		t.take--
		t.at++
	}
	classWorkPool.Put(w) // not deferred: after a panic, class may not be zero
	return hits
}

// classScore is the score of class c: the weights of its keys added in key order, as the
// scores of metaByHeap are, and halved for a pack.
func classScore(keys []metaKey, c uint8) float32 {
	var sc float32
	for i, k := range keys {
		if c&(1<<i) != 0 {
			sc += k.w
		}
	}
	if c>>len(keys) != 0 {
		sc *= metaPackWeight
	}
	return sc
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
