package index

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestVariantsMatchReference checks appendVariants (sorted vocabulary, binary search,
// the set of terms less their last letter, the memo) against variantsRef, the plain reading over the whole
// vocabulary, for every term of a generated catalogue and a few that are no terms.
func TestVariantsMatchReference(t *testing.T) {
	g := buildCaps(t, 1, testcat.GenerateCatalog(400, 7), cheap)
	x := &g.lex
	terms := append(slices.Clone(x.sortedTerms()), "scanning", "financ", "zzzz", "ab", "删除")
	found := 0
	for _, suf := range []int{0, 2, 4} {
		for _, term := range terms {
			got := x.appendVariants(nil, term, suf)
			want := variantsRef(x, term, suf)
			if suf == 0 {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Fatalf("variants of %q (suffix %d): %v, reference %v", term, suf, got, want)
			}
			if again := x.appendVariants([]uint32{7}, term, suf); !slices.Equal(again[1:], got) || again[0] != 7 {
				t.Fatalf("variants of %q (suffix %d) from the memo: %v, first time %v", term, suf, again, got)
			}
			found += len(got)
		}
	}
	if found == 0 {
		t.Fatal("no term of the catalogue has a variant: the test compares nothing")
	}
}

func TestVariantsAreWordFamilies(t *testing.T) {
	caps := []*registry.Capability{
		action("sec.scanner", "Site scanner", "Checks a site for malware"),
		action("news.tool", "NewsTool", "Headlines of the day"),
		action("rent.flat", "Flat rent", "Rent a flat in a city"),
		action("gov.congress", "Congress votes", "Votes cast in parliament"),
		action("misc.other", "Other", "Something else entirely"),
	}
	g := buildCaps(t, 1, caps, cheap)
	x := &g.lex
	names := func(t string) []string {
		var out []string
		for _, id := range x.appendVariants(nil, t, 4) {
			out = append(out, x.sortedTerms()[slices.IndexFunc(x.sortedTerms(), func(u string) bool { v, _ := x.termID(u); return v == id })])
		}
		return out
	}
	if got := names("scan"); !slices.Equal(got, []string{"scanner"}) {
		t.Errorf("variants of scan = %v, want [scanner]", got)
	}
	if got := names("rental"); !slices.Equal(got, []string{"rent"}) {
		t.Errorf("variants of rental = %v, want [rent]", got)
	}
	// "newstool" is news + tool, a compound (the joined form of NewsTool), not a variant
	if got := names("news"); len(got) != 0 {
		t.Errorf("variants of news = %v, want none", got)
	}

	if got := names("congression"); !slices.Equal(got, []string{"congress"}) {
		t.Errorf("variants of congression = %v, want [congress]", got)
	}

	// "congressional" (congression) shares no term, concept or other form with the tool
	q := &Query{Text: "congressional records"}
	p := DefaultLexicalParams()
	p.VariantWeight = 0
	withLexicalParams(t, p)
	g0 := buildCaps(t, 1, caps, cheap)
	off := retrieve(t, g0, Lexical, q, 5)
	if len(off) != 0 {
		t.Fatalf("without variants, %q finds %v: the fixture tests nothing", q.Text, ids(g0, off))
	}
	p.VariantWeight, p.VariantSuffix = 0.3, 4
	withLexicalParams(t, p)
	g = buildCaps(t, 1, caps, cheap)
	on := retrieve(t, g, Lexical, q, 5)
	if len(on) != 1 || ids(g, on)[0] != "gov.congress" || !slices.Contains(on[0].Matched, "variants") {
		t.Fatalf("with variants, %q finds %v, want gov.congress through variants", q.Text, on)
	}
	// a variant weighs less than the word itself
	exact := retrieve(t, g, Lexical, &Query{Text: "congress records"}, 5)
	if exact[0].Score <= on[0].Score {
		t.Errorf("congress scores %v, its variant congressional %v: a variant must weigh less", exact[0].Score, on[0].Score)
	}
}
