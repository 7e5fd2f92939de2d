package rank

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// TestTermCacheNextSameAsNew changes random capabilities of a snapshot step after step —
// text changed (words added, removed and added back, referrals, intents, aliases), new ones,
// deletions — makes each step's cache with Next from the previous one, and compares it with
// a cache made from scratch (with the same hash seed): by content (sameCaches: every
// record's terms as strings, values, referrals, heads and attributes, every term's idf) and
// by the coverages and rankings they give. The steps that keep every id patch the previous
// cache (terms_patch.go); the test fails if none did.
func TestTermCacheNextSameAsNew(t *testing.T) {
	analyze := func(s string) []string {
		out := text.Analyze(s)
		for _, c := range text.ConceptsIn(s) {
			out = append(out, "~"+c)
		}
		return out
	}
	r := rand.New(rand.NewPCG(20, 4))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 9))
	if err != nil {
		t.Fatal(err)
	}
	prev := NewTermCache(snap.Caps, analyze)
	reused, patched, compared := 0, 0, 0
	for step := range 24 {
		var put []*registry.Capability
		var deleted []string
		seen := map[string]bool{}
		sameIDs := step > 0 && step%3 != 0
		var queries []string
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			if seen[c.ID] || c.ResourceType == registry.TypePack {
				continue
			}
			seen[c.ID] = true
			op := r.IntN(3)
			if sameIDs {
				op = 2 + r.IntN(2)
			}
			switch op {
			case 0:
				x := c.Clone()
				x.ID = fmt.Sprintf("%s_new%d", c.ID, step)
				x.Aliases = append(x.Aliases, "restart the stuck deployment")
				put = append(put, x)
			case 1:
				deleted = append(deleted, c.ID)
			case 2:
				x := c.Clone()
				x.Summary += fmt.Sprintf(" wug%d blorf%d", step, step%4)
				x.WhenNotToUse = append(x.WhenNotToUse, "to inspect it (use "+snap.Caps[r.IntN(len(snap.Caps))].ID+")")
				x.Intents = append(x.Intents, fmt.Sprintf("restart%d", step%3))
				x.Aliases = append(x.Aliases, fmt.Sprintf("bounce the zork%d pod", step%5))
				put = append(put, x)
				queries = append(queries, x.Summary, x.Aliases[len(x.Aliases)-1])
			default: // words removed: terms no capability holds any longer
				x := c.Clone()
				queries = append(queries, x.Summary+" "+strings.Join(x.WhenToUse, " "))
				x.Summary, x.WhenToUse, x.Aliases = fmt.Sprintf("blorf%d", step%4), nil, nil
				put = append(put, x)
			}
		}
		next, err := snap.Apply(snap.Generation+1, put, deleted)
		if err != nil {
			t.Fatal(err)
		}
		got := prev.Next(next.Caps, analyze)
		want := newTermCache(next.Caps, analyze, prev.seed, nil)
		if len(got.an) != len(next.Caps) {
			t.Fatalf("step %d: Next kept %d analyses of %d capabilities", step, len(got.an), len(next.Caps))
		}
		if got.chain.patched {
			patched++
		} else if sameIDs && prev.chain != nil {
			t.Fatalf("step %d: a change that kept every id was not patched", step)
		}
		for _, d := range reuseOf(prev, next.Caps) {
			if d >= 0 {
				reused++
			}
		}
		if err := sameCaches(got, want); err != nil {
			t.Fatalf("step %d (patched %v): %v", step, got.chain.patched, err)
		}
		for range 6 {
			c := next.Caps[r.IntN(len(next.Caps))]
			queries = append(queries, c.Summary, c.Title+" "+strings.Join(c.WhenToUse, " "), "docker 连不上 wug3 blorf1")
		}
		compared += sameAnswers(t, step, next, got, want, queries, analyze)
		prev, snap = got, next
	}
	if reused == 0 || !slices.ContainsFunc(prev.an, func(a *analysed) bool { return len(a.seq) > 0 }) {
		t.Fatal("no analysis was reused")
	}
	if patched < 8 {
		t.Fatalf("%d of 24 steps patched the previous cache", patched)
	}
	t.Logf("24 steps, %d patched, %d coverages and rankings compared", patched, compared)
}

// sameCaches reports how got differs in content from want (made from scratch), term
// numbers aside: each record's capability, attributes, when_to_use and when_not_to_use
// entries and descriptive text as terms, referrals, values, alias phrases and heads; the
// idf of every term each answers for (none for a term no capability holds), the idf of an
// unknown term, the order of the ids.
func sameCaches(got, want *TermCache) error {
	type doc struct {
		Cap         *registry.Capability
		Attrs       attrs
		Use, NotUse [][]string
		Refer       []uint32
		Values      [valueKinds][]string
		Heads       []uint32
		Aliases     []string
		Text        []string
	}
	content := func(tc *TermCache) ([]doc, map[string]float32, error) {
		idf := map[string]float32{}
		byNum := map[uint32]string{}
		for _, x := range []*termIndex{tc.terms, tc.chainMore()} {
			if x == nil {
				continue
			}
			for term, id := range termsOf(x) {
				byNum[id-1] = term
				ids := []int32{0}
				tc.lookup([]string{term}, ids, []uint64{0})
				if ids[0] >= 0 {
					idf[term] = tc.idf[ids[0]]
				}
			}
		}
		var bad error
		words := func(nums []uint32) []string {
			out := []string{}
			for _, n := range nums {
				w, ok := byNum[n]
				if _, live := idf[w]; !ok || !live {
					bad = fmt.Errorf("a record holds term number %d, which the cache does not answer for", n)
				}
				out = append(out, w)
			}
			slices.Sort(out)
			return out
		}
		entries := func(enc []uint32) [][]string {
			out := [][]string{}
			for len(enc) > 0 {
				n := enc[0]
				out = append(out, words(enc[1:1+n]))
				enc = enc[1+n:]
			}
			return out
		}
		var docs []doc
		for i := range tc.docs {
			d := &tc.docs[i]
			n := tc.termsOf(d)
			x := doc{Cap: d.cap, Attrs: d.attrs, Use: entries(n.use), NotUse: entries(n.notUse), Refer: n.refer, Heads: n.heads,
				Aliases: tc.aliasKey[d.alias : d.alias+d.aliases()], Text: words(n.text)}
			for k, vs := range n.values {
				for _, v := range vs {
					x.Values[k] = append(x.Values[k], tc.values[v])
				}
			}
			docs = append(docs, x)
		}
		return docs, idf, bad
	}
	gd, gi, err := content(got)
	if err != nil {
		return err
	}
	wd, wi, err := content(want)
	if err != nil {
		return err
	}
	for i := range max(len(gd), len(wd)) {
		if i >= len(gd) || i >= len(wd) || !reflect.DeepEqual(gd[i], wd[i]) {
			return fmt.Errorf("record %d differs", i)
		}
	}
	if !reflect.DeepEqual(gi, wi) {
		return fmt.Errorf("the terms' idf differ (%d and %d terms)", len(gi), len(wi))
	}
	if got.maxIDF != want.maxIDF || got.byID != want.byID {
		return fmt.Errorf("maxIDF %v/%v, byID %v/%v", got.maxIDF, want.maxIDF, got.byID, want.byID)
	}
	return nil
}

// chainMore returns the index of the terms numbered since the cache's term index was built
// (nil: none).
func (t *TermCache) chainMore() *termIndex {
	if t.chain == nil {
		return nil
	}
	return t.chain.more
}

// sameAnswers compares, for each query, the text coverage of every capability and the
// ranking of 60 random candidates that the two caches give, and returns how many it
// compared.
func sameAnswers(t *testing.T, step int, snap *registry.Snapshot, got, want *TermCache, queries []string, analyze func(string) []string) int {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(step), 7))
	n := 0
	for _, qs := range queries {
		terms := analyze(qs)
		slices.Sort(terms)
		terms = slices.Compact(terms)
		qg, qw := got.query(terms), want.query(terms)
		for d := range snap.Caps {
			a, b := got.textCoverage(&got.docs[d], qg), want.textCoverage(&want.docs[d], qw)
			if a != b {
				t.Fatalf("step %d, query %q: coverage of %s %v, from scratch %v", step, qs, snap.Caps[d].ID, a, b)
			}
			n++
		}
		qg.release()
		qw.release()
		cands := make([]Candidate, 60)
		for i := range cands {
			d := r.IntN(len(snap.Caps))
			cands[i] = Candidate{Doc: uint32(d), Cap: snap.Caps[d], Availability: registry.Available,
				Evidence: []Source{{Retriever: Lexical, Rank: 1 + r.IntN(60), Raw: r.Float64()}}}
		}
		c := snap.Caps[r.IntN(len(snap.Caps))]
		sig := Signals{Terms: terms, Phrase: PhraseKey(qs), Intents: c.Intents, Entities: c.Entities, Symptoms: c.Symptoms, Forbidden: []string{"delete"}}
		rank := func(tc *TermCache) []Candidate {
			cs := slices.Clone(cands)
			Fuse(cs, DefaultWeights())
			opts := DefaultRerankOptions()
			opts.Terms = tc
			Rerank(cs, sig, opts)
			Complete(cs)
			for i := range cs {
				cs[i].lazy = nil
			}
			return cs
		}
		if a, b := rank(got), rank(want); !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d, query %q: the rankings differ", step, qs)
		}
		n++
	}
	return n
}

// termsOf returns the terms of x by number.
func termsOf(x *termIndex) map[string]uint32 {
	out := map[string]uint32{}
	for _, s := range x.slots {
		if s.id != 0 {
			out[x.text[s.off:s.off+s.n]] = s.id
		}
	}
	return out
}

// TestTermCacheVocabularyRenewed changes one capability's words again and again: the
// patched caches compact their numbers, once the chain's vocabulary holds more than twice
// the live terms the next cache starts a new one, and the cache is still the one made from
// scratch.
func TestTermCacheVocabularyRenewed(t *testing.T) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(40, 17))
	if err != nil {
		t.Fatal(err)
	}
	prev := NewTermCache(snap.Caps, simpleAnalyze).Next(snap.Caps, simpleAnalyze)
	voc, renewed, compacted := prev.voc, false, false
	for step := range 12 {
		x := snap.Caps[3].Clone()
		x.Summary = ""
		for w := range 300 {
			x.Summary += fmt.Sprintf(" zq%dx%d", step, w)
		}
		next, err := snap.Apply(snap.Generation+1, []*registry.Capability{x}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := prev.Next(next.Caps, simpleAnalyze)
		want := newTermCache(next.Caps, simpleAnalyze, prev.seed, nil)
		if err := sameCaches(got, want); err != nil {
			t.Fatalf("step %d: the cache made by Next differs from one made from scratch: %v", step, err)
		}
		if got.voc != voc {
			renewed = true
		}
		if got.chain.patched && got.chain.garbage < prev.chain.garbage {
			compacted = true
		}
		voc, prev, snap = got.voc, got, next
	}
	if !renewed {
		t.Fatalf("the vocabulary was never renewed (%d terms, %d live)", voc.Len(), prev.chain.live)
	}
	if !compacted {
		t.Fatal("no patched cache compacted its numbers")
	}
}
