package index

import (
	"slices"
	"strings"
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
// diagnose).
type metaPost struct {
	label string // "intents:diagnose"
	field int
	docs  *roaring.Bitmap
	cdocs *roaring.Bitmap
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
}

// metaKey is one query value resolved to a posting; docs is post.docs or post.cdocs.
type metaKey struct {
	post *metaPost
	docs *roaring.Bitmap
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
	for f := range x.fields {
		x.fields[f] = map[string]*metaPost{}
	}
	post := func(f int, v string) *metaPost {
		p, ok := x.fields[f][v]
		if !ok {
			p = &metaPost{label: metaNames[f] + ":" + v, field: f, docs: roaring.New(), cdocs: roaring.New()}
			x.fields[f][v] = p
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
		for _, p := range x.fields[f] {
			p.cdocs.AndNot(p.docs)
			p.docs.RunOptimize()
			p.cdocs.RunOptimize()
		}
	}
}

// metaKeys resolves the query's structured values to postings, each once.
func (g *Generation) metaKeys(s *scratch, q *Query) []metaKey {
	keys := s.keys[:0]
	add := func(f int, v string, concepts bool) {
		if len(keys) >= maxMetaKeys {
			return
		}
		nv := normVal(v)
		if nv == "" {
			return
		}
		vals := []string{nv}
		if concepts {
			vals = append(vals, text.Concepts(text.Fold(v))...)
		}
		for _, v := range vals {
			p, ok := g.meta.fields[f][v]
			if !ok {
				continue
			}
			if slices.ContainsFunc(keys, func(k metaKey) bool { return k.post == p }) {
				continue
			}
			keys = append(keys, metaKey{post: p, docs: p.docs, w: metaWeights[f]})
			if !p.cdocs.IsEmpty() {
				keys = append(keys, metaKey{post: p, docs: p.cdocs, w: metaWeights[f] * metaConceptWeight})
			}
		}
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
	bits := s.allowBits(allow, g.n)
	acc, seen := s.dense(g.n)
	buf := s.ids[:0]
	if cap(buf) < 256 {
		buf = make([]uint32, 256)
	}
	buf = buf[:cap(buf)]
	for _, k := range keys {
		it := k.docs.ManyIterator()
		for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
			for _, d := range buf[:n] {
				if !has(bits, d) {
					continue
				}
				if seen[d] == 0 {
					seen[d] = 1
					s.docs = append(s.docs, d)
				}
				acc[d] += k.w
			}
		}
	}
	s.ids = buf[:0]
	s.top.reset(limit)
	for _, d := range s.docs {
		sc := acc[d]
		if g.isPack(d) {
			sc *= metaPackWeight
		}
		s.top.push(cand{doc: d, score: sc})
	}
	s.clearTouched()
	best := s.top.best()
	if len(best) == 0 {
		return nil
	}
	hits := make([]Hit, len(best))
	labels := make([]string, 0, len(best)*min(len(keys), 4))
	for i, c := range best {
		start := len(labels)
		for _, k := range keys {
			if k.docs.Contains(c.doc) {
				labels = append(labels, k.post.label)
			}
		}
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score), Matched: labels[start:len(labels):len(labels)]}
	}
	return hits
}
