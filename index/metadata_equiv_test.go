package index

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// refMetaKeys and refRetrieveMetadata are the metadata retriever as it was before the key
// masks and the doc-ordered selection (a frozen reference, reading the postings as arrays
// where it read bitmaps): every touched document is pushed to the top n in the order it
// was touched, and labels come from a lookup per kept hit and key.
func refMetaKeys(g *Generation, q *Query) []metaKey {
	var keys []metaKey
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
			if len(p.cdocs) > 0 {
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
	return keys
}

func refRetrieveMetadata(g *Generation, q *Query, allow *roaring.Bitmap, limit int) []Hit {
	s := getScratch()
	defer putScratch(s)
	keys := refMetaKeys(g, q)
	if len(keys) == 0 {
		return nil
	}
	bits := s.allowBits(allow, g.n)
	acc, seen := s.dense(g.n)
	for _, k := range keys {
		for _, d := range k.docs {
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
			if has32(k.docs, c.doc) {
				labels = append(labels, k.post.label)
			}
		}
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score), Matched: labels[start:len(labels):len(labels)]}
	}
	return hits
}

// metaQueries derives structured queries from a catalogue's actions, as the engine's
// query parser would from their titles: the first intent, up to two entities, every
// third query a symptom, every fifth a Match on domain, risk and type.
func metaQueries(caps []*registry.Capability) []*Query {
	var out []*Query
	for i, c := range caps {
		if c.ResourceType != registry.TypeAction || i%7 != 0 {
			continue
		}
		q := &Query{Intents: c.Intents[:min(1, len(c.Intents))], Entities: c.Entities[:min(2, len(c.Entities))]}
		if len(out)%3 == 0 {
			q.Symptoms = c.Symptoms[:min(1, len(c.Symptoms))]
		}
		if len(out)%5 == 0 {
			q.Match = &registry.StructuredMatch{Domain: c.Domain, RiskSignals: []string{"read_only", "write"},
				CapabilityTypes: []string{c.CapabilityType}, Intents: c.Intents}
		}
		out = append(out, q)
	}
	return out
}

// TestMetadataSameAsReference compares the metadata retriever with the reference on the
// generated catalogue's queries, with and without a filter, at several limits, and on
// queries of every size: few keys (ranked by class), more than maxClassKeys and more than
// the mask bits (ranked by heap), and packs' own vocabulary (so that packs are hits).
func TestMetadataSameAsReference(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	g := buildCaps(t, 1, testcat.GenerateCatalog(n, 5), cheap)
	caps := g.Snapshot().Caps
	allow := g.Filter(&registry.RuntimeContext{Tenant: "acme", User: "alice", Scopes: []string{"dev"}, OS: "linux"}, FilterSpec{})
	qs := metaQueries(caps)
	packs := 0
	for _, c := range caps {
		if c.ResourceType == registry.TypePack && len(c.Intents)+len(c.Entities) > 0 && packs < 50 {
			qs = append(qs, &Query{Intents: c.Intents, Entities: c.Entities})
			packs++
		}
	}
	for _, size := range []int{3, 12, 200} { // values from this many capabilities
		q := &Query{}
		for _, c := range caps[len(caps)/2 : len(caps)/2+size] {
			q.Intents = append(q.Intents, c.Intents...)
			q.Entities = append(q.Entities, c.Entities...)
		}
		qs = append(qs, q)
	}
	// values as a caller might write them, not normalised
	qs = append(qs, &Query{Intents: []string{"Roll Back", " LIST ", "clean-up", "Diagnose"}, Entities: []string{"Shipment", "sign in"}})
	var byKeys [3]int // queries of at most maxClassKeys keys, of up to maskKeys, of more
	packHits := 0
	for _, q := range qs {
		switch k := len(refMetaKeys(g, q)); {
		case k <= maxClassKeys:
			byKeys[0]++
		case k <= maskKeys:
			byKeys[1]++
		default:
			byKeys[2]++
		}
		for _, a := range []*roaring.Bitmap{nil, allow} {
			for _, limit := range []int{1, 20, 50, n} {
				got, want := g.retrieveMetadata(q, a, limit), refRetrieveMetadata(g, q, a, limit)
				if !slices.EqualFunc(got, want, func(x, y Hit) bool {
					return x.Doc == y.Doc && x.Score == y.Score && slices.Equal(x.Matched, y.Matched)
				}) {
					t.Fatalf("query %+v limit %d filtered %v:\n got %v\nwant %v", *q, limit, a != nil, got, want)
				}
				for _, h := range got {
					if g.isPack(h.Doc) {
						packHits++
					}
				}
			}
		}
	}
	if byKeys[0] == 0 || byKeys[1] == 0 || byKeys[2] == 0 || packHits == 0 {
		t.Fatalf("queries by key count %v, pack hits %d: some path went untested", byKeys, packHits)
	}
}

// randomMetaQuery draws a query of one to eight values of random capabilities, through
// every field a query names values of.
func randomMetaQuery(r *rand.Rand, caps []*registry.Capability) *Query {
	pick := func(vs []string) string {
		if len(vs) == 0 {
			return ""
		}
		return vs[r.IntN(len(vs))]
	}
	q := &Query{}
	match := func() *registry.StructuredMatch {
		if q.Match == nil {
			q.Match = &registry.StructuredMatch{}
		}
		return q.Match
	}
	for range 1 + r.IntN(8) {
		c := caps[r.IntN(len(caps))]
		switch r.IntN(9) {
		case 0, 1, 2:
			q.Intents = append(q.Intents, pick(c.Intents))
		case 3, 4:
			q.Entities = append(q.Entities, pick(c.Entities))
		case 5:
			q.Symptoms = append(q.Symptoms, pick(c.Symptoms))
		case 6:
			match().Domain, match().Scenario = c.Domain, pick(c.Scenarios)
		case 7:
			match().RiskSignals = append(match().RiskSignals, pick(riskSignals(c)))
			match().CapabilityTypes = append(match().CapabilityTypes, c.CapabilityType)
		case 8:
			match().Intents = append(match().Intents, pick(c.Intents))
		}
	}
	return q
}

// TestMetadataSameAsReferenceRandom compares the metadata retriever with the reference on
// random queries, under filters that allow every document, the caller's, a random half, a
// few documents and none, at limits from 1 to beyond the matches (and 0, which finds
// nothing). It checks that the cases metaByClass treats apart came up: keys with and
// without a bitset of their own in one query, a single key (whose best score, once limit
// documents have it, ends the reading early), a hit at the cut tied with a document left
// out, a pack at the cut, and more than maxClassKeys keys.
func TestMetadataSameAsReferenceRandom(t *testing.T) {
	n, queries := 3000, 400
	if testing.Short() {
		n, queries = 800, 100
	}
	g := buildCaps(t, 1, testcat.GenerateCatalog(n, 11), cheap)
	caps := g.Snapshot().Caps
	r := rand.New(rand.NewPCG(3, 4))
	half, few := roaring.New(), roaring.New()
	for d := range uint32(n) {
		if r.IntN(2) == 0 {
			half.Add(d)
		}
		if r.IntN(n/8) == 0 {
			few.Add(d)
		}
	}
	allows := []struct {
		name string
		bm   *roaring.Bitmap
	}{{"all", nil}, {"caller", g.Filter(&registry.RuntimeContext{Tenant: "acme", User: "alice", Scopes: []string{"dev"}, OS: "linux"}, FilterSpec{})},
		{"half", half}, {"few", few}, {"none", roaring.New()}}
	var seen struct{ mixed, single, tie, packCut, heap int }
	for range queries {
		q := randomMetaQuery(r, caps)
		s := getScratch()
		keys := slices.DeleteFunc(g.metaKeys(s, q), func(k metaKey) bool { return len(k.docs) == 0 })
		dense := 0
		for _, k := range keys {
			if k.bits != nil {
				dense++
			}
		}
		if dense > 0 && dense < len(keys) {
			seen.mixed++
		}
		if len(keys) > maxClassKeys {
			seen.heap++
		}
		nk := len(keys)
		putScratch(s)
		for _, a := range allows {
			if got := g.retrieveMetadata(q, a.bm, 0); got != nil {
				t.Fatalf("query %+v match %+v limit 0: %v", *q, q.Match, got)
			}
			all := refRetrieveMetadata(g, q, a.bm, n)
			for _, limit := range []int{1, 2, 7, 50, 1 + r.IntN(n)} {
				got, want := g.retrieveMetadata(q, a.bm, limit), refRetrieveMetadata(g, q, a.bm, limit)
				if !slices.EqualFunc(got, want, func(x, y Hit) bool {
					return x.Doc == y.Doc && x.Score == y.Score && slices.Equal(x.Matched, y.Matched)
				}) {
					t.Fatalf("query %+v match %+v limit %d allow %s:\n got %v\nwant %v", *q, q.Match, limit, a.name, got, want)
				}
				if len(all) <= limit {
					continue
				}
				if nk == 1 {
					seen.single++
				}
				if all[limit].Score == all[limit-1].Score {
					seen.tie++
				}
				if g.isPack(all[limit-1].Doc) || g.isPack(all[limit].Doc) && all[limit].Score == all[limit-1].Score {
					seen.packCut++
				}
			}
		}
	}
	if seen.mixed == 0 || seen.single == 0 || seen.tie == 0 || seen.packCut == 0 || seen.heap == 0 {
		t.Fatalf("some case did not come up: %+v", seen)
	}
}
