package index

import (
	"context"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// A generation built without Options.Reuse (at Open, Reload, or loaded from persisted
// state) keeps no document's analysis, so that an engine that is only searched pays no
// memory for it. It keeps an empty one instead (keepDerivedAnalysis): a vocabulary for the
// chain it may start, and no document. A patch that needs the analysis of a document the
// previous generation did not keep derives it again from that generation's capability
// (the same *registry.Capability for a document the change kept): analysis and embedding
// are deterministic, and a section loaded from persisted state was written by a build that
// analyses text the same way (the build fingerprint) with the same embedder (the embedder
// fingerprint), so the derived analysis is the one the previous index holds. The first
// change after an open therefore patches the lexical and sparse semantic indexes as the
// later ones do, analysing only the changed documents (their old and new versions) and
// embedding the few unchanged ones a semantic patch reads (derivedVectors).

// keepDerivedAnalysis gives g, built without Reuse, an analysis that keeps no document's.
func (g *Generation) keepDerivedAnalysis() {
	g.an = &analysis{voc: text.NewVocab(), terms: g.stats.Terms, emb: g.emb}
}

// lexKept reports whether the analysis keeps document d's lexical analysis (an analysis
// kept for the next build always has vterms, empty or not).
func (a *analysis) lexKept(d int) bool { return d < len(a.lex) && a.lex[d].vterms != nil }

// oldLex returns the terms and field lengths of the previous generation's document d
// (c being its capability there): from the kept analysis when there is one, else analysed
// again. The caller holds the vocabulary's lock.
func (g *Generation) oldLex(d int, c *registry.Capability) ([]string, [numFields]uint16) {
	if g.prev.lexKept(d) {
		old := &g.prev.lex[d]
		terms := make([]string, len(old.vterms))
		for i, v := range old.vterms {
			terms[i] = g.prev.voc.Term(v)
		}
		return terms, old.flen
	}
	var ld lexDoc
	ld.analyze(c)
	return ld.terms, ld.flen
}

// derivedVectors are the sparse vectors of a semantic patch's documents: those the
// previous generation kept (or this patch embedded), and the others embedded when first
// asked. A document's vector is missing while its Idx is nil (an empty vector is embedded
// again when asked, which costs only the time).
type derivedVectors struct {
	vecs []embed.SparseVector
	caps []*registry.Capability
	emb  embed.SparseEmbedder
}

// at returns document d's vector, embedding it when missing.
func (v *derivedVectors) at(d int) embed.SparseVector {
	if v.vecs[d].Idx == nil {
		v.vecs[d] = v.emb.EmbedSparse(embedText(v.caps[d]))
	}
	return v.vecs[d]
}

// fill embeds the missing vectors of the documents of post (postings: document << 8 |
// value) that keep says to, on every core.
func (v *derivedVectors) fill(ctx context.Context, post []uint32, keep func(d int) bool) error {
	var miss []int
	for _, p := range post {
		if d := int(p >> 8); keep(d) && v.vecs[d].Idx == nil {
			miss = append(miss, d)
		}
	}
	return v.fillDocs(ctx, miss)
}

// fillDocs embeds the missing vectors of docs (distinct documents), on every core.
func (v *derivedVectors) fillDocs(ctx context.Context, docs []int) error {
	if len(docs) < 2 {
		for _, d := range docs {
			v.at(d)
		}
		return nil
	}
	return parallelFor(ctx, 0, len(docs), func(i int) { v.at(docs[i]) })
}
