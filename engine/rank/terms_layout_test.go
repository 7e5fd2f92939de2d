package rank

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

// decodeEntries splits a record's encoded entries (see docTerms) into one list per entry.
func decodeEntries(enc []uint32) [][]uint32 {
	var out [][]uint32
	for len(enc) > 0 {
		n := enc[0]
		out = append(out, enc[1:1+n])
		enc = enc[1+n:]
	}
	return out
}

// number returns the number of one term in tc, -1 when tc lacks it.
func number(tc *TermCache, term string) int32 {
	ids := []int32{0}
	tc.terms.lookup([]string{term}, ids, []uint64{0})
	return ids[0]
}

// aliasKeys returns the alias phrase keys a TermCache holds for c.
func aliasKeys(tc *TermCache, c *Candidate) []string {
	d := tc.doc(c)
	if d == nil {
		return nil
	}
	return tc.aliasKey[d.alias : d.alias+d.aliases()]
}

// perDocTerms is a TermCache's content one slice per document, as NewTermCache built it
// before the flat layout, computed here the simple way (one capability after the other):
// the reference the flat layout must reproduce.
type perDocTerms struct {
	ids         map[string]uint32
	use, notUse [][][]uint32
	alias       [][]string
	text        [][]uint32
	refer       [][]uint32
	idf         []float32
}

func buildPerDoc(caps []*registry.Capability, analyze func(string) []string) *perDocTerms {
	p := &perDocTerms{ids: map[string]uint32{}, use: make([][][]uint32, len(caps)), notUse: make([][][]uint32, len(caps)),
		alias: make([][]string, len(caps)), text: make([][]uint32, len(caps)), refer: referrals(caps)}
	if p.refer == nil {
		p.refer = make([][]uint32, len(caps))
	}
	number := func(terms []string) []uint32 {
		out := []uint32{}
		for _, x := range terms {
			id, ok := p.ids[x]
			if !ok {
				id = uint32(len(p.ids))
				p.ids[x] = id
			}
			out = append(out, id)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var df []uint32
	var sb strings.Builder
	for d, c := range caps {
		for _, e := range ownEntries(c.WhenToUse, c.Summary) {
			p.use[d] = append(p.use[d], number(analyze(e)))
		}
		for _, e := range c.WhenNotToUse {
			p.notUse[d] = append(p.notUse[d], number(analyze(e)))
		}
		for _, al := range c.Aliases {
			if k := PhraseKey(al); phraseWords(k) >= 2 {
				p.alias[d] = append(p.alias[d], k)
			}
		}
		p.text[d] = number(analyze(descriptiveText(&sb, c)))
		for _, id := range p.text[d] {
			for int(id) >= len(df) {
				df = append(df, 0)
			}
			df[id]++
		}
	}
	n := float64(len(caps))
	p.idf = make([]float32, len(p.ids))
	for id := range p.idf {
		d := 0.0
		if id < len(df) {
			d = float64(df[id])
		}
		p.idf[id] = float32(math.Log(1 + (n-d+0.5)/(d+0.5)))
	}
	return p
}

// TestTermCacheLayout checks that the flat TermCache holds, for every capability of the
// built-in registry and of a generated catalogue, exactly the per-document data of the
// reference (same term numbers, entries, aliases, referrals, idf) and the attributes of the
// capability.
func TestTermCacheLayout(t *testing.T) {
	for name, snap := range recordCatalogues(t, 5) {
		t.Run(name, func(t *testing.T) {
			tc := NewTermCache(snap.Caps, simpleAnalyze)
			want := buildPerDoc(snap.Caps, simpleAnalyze)
			if len(tc.idf) != len(want.ids) || !slices.Equal(tc.idf, want.idf) {
				t.Fatalf("%d terms, want %d (or idf differs)", len(tc.idf), len(want.ids))
			}
			for x, id := range want.ids {
				if got := number(tc, x); got != int32(id) {
					t.Fatalf("term %q is %d, want %d", x, got, id)
				}
			}
			nonEmpty := map[string]int{}
			for doc, c := range snap.Caps {
				cand := &Candidate{Doc: uint32(doc), Cap: c}
				d := tc.doc(cand)
				if d == nil {
					t.Fatalf("%s: no record", c.ID)
				}
				n := tc.termsOf(d)
				use, notUse, refer, headNums, text := n.use, n.notUse, n.refer, n.heads, n.text
				check := func(what string, got, want any) {
					t.Helper()
					if !equalAny(got, want) {
						t.Fatalf("%s %s: %v, want %v", c.ID, what, got, want)
					}
				}
				check("text", text, want.text[doc])
				check("when_to_use", decodeEntries(use), want.use[doc])
				check("when_not_to_use", decodeEntries(notUse), want.notUse[doc])
				check("refer", refer, want.refer[doc])
				check("aliases", aliasKeys(tc, cand), want.alias[doc])
				var heads []uint64
				for _, k := range want.alias[doc] {
					heads = append(heads, tc.pairAt(k, 0))
				}
				var got []uint64
				for i := 0; i+1 < len(headNums); i += 2 {
					got = append(got, uint64(headNums[i])|uint64(headNums[i+1])<<32)
				}
				if len(headNums)%2 != 0 {
					t.Fatalf("%s: odd alias head numbers", c.ID)
				}
				check("alias heads", got, heads)
				check("attributes", d.attrs, attrsOf(c))
				if (d.attrs.side != int8(c.SideEffect.Level())) || (d.attrs.risk != int8(c.RiskLevel.Level())) ||
					d.attrs.has(attrPack) != (c.ResourceType == registry.TypePack) || d.attrs.has(attrRecipe) != (c.ResourceType == registry.TypeRecipe) ||
					d.attrs.has(attrWhenNotToUse) != (len(c.WhenNotToUse) > 0) {
					t.Fatalf("%s: attributes %+v", c.ID, d.attrs)
				}
				for what, n := range map[string]int{"when_to_use": len(want.use[doc]), "when_not_to_use": len(want.notUse[doc]), "aliases": len(want.alias[doc]), "refer": len(want.refer[doc])} {
					if n > 0 {
						nonEmpty[what]++
					}
				}
				// a candidate of another generation has no record
				if tc.doc(&Candidate{Doc: uint32(doc), Cap: &registry.Capability{ID: c.ID}}) != nil {
					t.Fatalf("%s: record for another capability", c.ID)
				}
			}
			if tc.doc(&Candidate{Doc: uint32(len(snap.Caps)), Cap: snap.Caps[0]}) != nil {
				t.Fatal("record past the end")
			}
			t.Logf("%d capabilities, with: %v", len(snap.Caps), nonEmpty)
			for _, what := range []string{"when_to_use", "when_not_to_use", "aliases"} {
				if nonEmpty[what] == 0 {
					t.Errorf("no capability has %s: the comparison proves little", what)
				}
			}
		})
	}
}

// equalAny compares the slices (or values) TestTermCacheLayout checks, nil equal to empty.
func equalAny(a, b any) bool {
	switch a := a.(type) {
	case []uint32:
		return slices.Equal(a, b.([]uint32))
	case []uint64:
		return slices.Equal(a, b.([]uint64))
	case []string:
		return slices.Equal(a, b.([]string))
	case [][]uint32:
		b := b.([][]uint32)
		return slices.EqualFunc(a, b, func(x, y []uint32) bool { return slices.Equal(x, y) })
	case attrs:
		return a == b.(attrs)
	}
	panic("equalAny: unexpected type")
}
