package index

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Lexical fields, their names (as reported in Hit.Matched) and BM25F weights.
// when_not_to_use is deliberately not indexed: words that say when NOT to pick a
// capability must not attract the queries that contain them.
const (
	fTitle = iota
	fAliases
	fID
	fSummary
	fWhenToUse
	fEntities
	fIntents
	fSymptoms
	fTags
	fParams
	fGuidance
	fSteps
	numFields
)

var fieldNames = [numFields]string{"title", "aliases", "id", "summary", "when_to_use", "entities",
	"intents", "symptoms", "tags", "params", "guidance", "steps"}

var fieldWeights = [numFields]float32{3, 2.5, 2, 1, 1, 1.5, 1.5, 1.5, 1, 0.5, 0.5, 0.5}

// Bounds of the lexical query; BM25F's parameters are LexicalParams.
const (
	// conceptWeight is the weight of a term added by concept expansion, relative to a term
	// of the query itself.
	conceptWeight = 0.3
	// maxQueryTerms and maxConceptTerms bound the work of one lexical query; the terms with
	// the highest idf are kept.
	maxQueryTerms   = 64
	maxConceptTerms = 48
)

// maskConcept marks a lexical candidate matched through concept expansion.
const maskConcept = 1 << 15

// lexIndex is the BM25F index. Every term has one list in a shared arena: its postings,
// one per document it occurs in (the documents ascending), and its entries, one per
// (document, field), the posting's entries consecutive in field order (ftfField, ftfMore):
// the field and the term's frequency in it. The scores are computed from these integers,
// the documents' field lengths and the collection's sums of them (lexNorms), so that
// nothing stored depends on another document than its own but the norms, df and idf (see
// lexical_score.go: a score does not depend on term ids or on the order terms are summed in).
type lexIndex struct {
	dict map[string]uint32
	// more holds the terms new since the arena was built, patch the lists of the terms
	// changed since (lexical_patch.go), patched the postings patch holds; nil and 0 in a
	// generation built from scratch
	more    map[string]uint32
	patch   map[uint32]lexList
	patched int
	off     []uint32 // term t's postings are docs[off[t]:off[t+1]], unless patch holds t
	docs    []uint32 // posting's document
	eoff    []uint32 // term t's entries are ftf[eoff[t]:eoff[t+1]], unless patch holds t
	ftf     []uint32 // entry's field<<ftfField | term frequency in the field, | ftfMore
	df      []uint32 // documents per term
	idf     []float32
	// cache holds the terms' lists as the scorer reads them (impacts)
	cache lexImpactCache

	// norms are the field lengths and the length normalisation
	norms lexNorms

	// params are the parameters the index was built with
	params LexicalParams

	// vocab is the sorted vocabulary the variants of a query term are found in
	vocab *lexVocab

	// concepts holds, by concept id (text.ConceptID), the term ids of the concept's
	// members, filled on first use
	concepts []atomic.Pointer[[]uint32]
}

// list returns term t's postings (documents) and entries.
func (x *lexIndex) list(t uint32) ([]uint32, []uint32) {
	if x.patch != nil {
		if l, ok := x.patch[t]; ok {
			return l.docs, l.ftf
		}
	}
	a, b := x.off[t], x.off[t+1]
	c, d := x.eoff[t], x.eoff[t+1]
	return x.docs[a:b:b], x.ftf[c:d:d]
}

// fieldTexts calls fn with every text of c per lexical field.
func fieldTexts(c *registry.Capability, fn func(field int, s string)) {
	fn(fTitle, c.Title)
	for _, a := range c.Aliases {
		fn(fAliases, a)
	}
	fn(fID, c.ID)
	if c.ExternalID != "" {
		fn(fID, c.ExternalID)
	}
	fn(fSummary, c.Summary)
	for _, s := range c.WhenToUse {
		fn(fWhenToUse, s)
	}
	for _, s := range c.Entities {
		fn(fEntities, s)
	}
	for _, s := range c.Intents {
		fn(fIntents, s)
	}
	for _, s := range c.Symptoms {
		fn(fSymptoms, s)
	}
	for _, s := range c.Tags {
		fn(fTags, s)
	}
	fn(fTags, c.Domain)
	for _, s := range c.Scenarios {
		fn(fTags, s)
	}
	schemaTexts(c.ArgumentsSchema, func(s string) { fn(fParams, s) })
	for _, s := range c.Produces {
		fn(fParams, s)
	}
	fn(fGuidance, c.Guidance)
	for _, st := range c.Steps {
		fn(fSteps, st.Title)
		fn(fSteps, st.Note)
		fn(fSteps, st.Command)
	}
}

// schemaTexts calls fn with the property names, titles and descriptions of a JSON Schema,
// following nested properties and items a few levels deep.
func schemaTexts(raw json.RawMessage, fn func(string)) {
	if len(raw) == 0 {
		return
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 4 {
			return
		}
		for _, k := range []string{"title", "description"} {
			if s, ok := m[k].(string); ok && depth > 0 {
				fn(s)
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fn(k)
				walk(props[k], depth+1)
			}
		}
		if items, ok := m["items"]; ok {
			walk(items, depth+1)
		}
		if e, ok := m["enum"].([]any); ok {
			for _, x := range e {
				if s, ok := x.(string); ok {
					fn(s)
				}
			}
		}
	}
	walk(v, 0)
}

// lexEntry is one (term, field) occurrence count of one document during Build.
type lexEntry struct {
	term  uint32
	field uint8
	tf    uint16
}

// docTerms is the analysis of one document: its terms with their fields, and the length of
// each field in terms.
type docTerms struct {
	terms  []string
	fields []uint8
	flen   [numFields]uint16
}

func (dt *docTerms) analyze(c *registry.Capability) {
	dt.terms, dt.fields, dt.flen = dt.terms[:0], dt.fields[:0], [numFields]uint16{}
	fieldTexts(c, func(field int, s string) {
		if s == "" {
			return
		}
		n := len(dt.terms)
		dt.terms = text.AppendTerms(dt.terms, s)
		for range len(dt.terms) - n {
			dt.fields = append(dt.fields, uint8(field))
		}
		dt.flen[field] = uint16(min(int(dt.flen[field])+len(dt.terms)-n, math.MaxUint16))
	})
}

// lexDoc is the analysis of one document as buildLexical merges it: its distinct terms in
// order of first occurrence, its (term, field) counts (lexEntry.term indexes terms) and
// the length of each field in terms. It reads only the document, so a later build may
// reuse it (Options.Reuse).
type lexDoc struct {
	terms []string
	ents  []lexEntry
	flen  [numFields]uint16
	// vterms are terms by their numbers in the chain's vocabulary (terms then nil), in an
	// analysis kept for the next build
	vterms []uint32
}

// lexScratch is a worker's temporary memory for lexDoc.analyze.
type lexScratch struct {
	dt    docTerms
	index map[string]uint32
	count map[uint64]uint16 // term index<<8 | field → tf
}

var lexScratchPool = sync.Pool{New: func() any {
	return &lexScratch{index: make(map[string]uint32, 128), count: make(map[uint64]uint16, 128)}
}}

// analyze fills ld with the analysis of c, reusing ld's memory.
func (ld *lexDoc) analyze(c *registry.Capability) {
	s := lexScratchPool.Get().(*lexScratch)
	defer lexScratchPool.Put(s)
	s.dt.analyze(c)
	clear(s.index)
	clear(s.count)
	ld.terms, ld.ents, ld.flen = ld.terms[:0], ld.ents[:0], s.dt.flen
	for i, t := range s.dt.terms {
		j, ok := s.index[t]
		if !ok {
			j = uint32(len(ld.terms))
			s.index[t] = j
			ld.terms = append(ld.terms, t)
		}
		k := uint64(j)<<8 | uint64(s.dt.fields[i])
		if s.count[k] < math.MaxUint16 {
			s.count[k]++
		}
	}
	for k, tf := range s.count {
		ld.ents = append(ld.ents, lexEntry{term: uint32(k >> 8), field: uint8(k), tf: tf})
	}
	clear(s.dt.terms)
}

// lexChunk is how many documents are analysed in parallel before their terms are merged.
const lexChunk = 1024

func (g *Generation) buildLexical(ctx context.Context) error {
	if g.canPatch() {
		return g.patchLexical(ctx)
	}
	x := &g.lex
	x.params = currentLexicalParams()
	x.concepts = make([]atomic.Pointer[[]uint32], text.DefaultLexicon().Len())
	x.vocab = new(lexVocab)
	x.dict = make(map[string]uint32, g.n*4)
	var (
		entries  []lexEntry
		docStart = make([]uint32, g.n+1)
		flen     = make([]uint16, g.n*numFields)
		tids     []uint32 // a document's term ids, by lexDoc term
		df       []uint32
		chunk    []lexDoc
	)
	var (
		voc   *text.Vocab
		vnum  []uint32 // vocabulary number → 1 + term id (0: none yet)
		reuse bool     // the previous analysis is taken (its vocabulary is voc)
	)
	if g.an != nil {
		// kept for the next build: every document's analysis, reused or new
		g.an.lex = make([]lexDoc, g.n)
		if g.prev != nil && g.prev.voc != nil && g.prevDoc != nil && !g.prev.voc.Outgrown(g.prev.terms) {
			voc, reuse = g.prev.voc, true
		} else {
			voc = text.NewVocab()
		}
		voc.Lock()
		defer voc.Unlock()
		g.an.voc = voc
		vnum = make([]uint32, voc.Len(), voc.Len()+voc.Len()/8)
		defer func() { g.an.terms = len(x.dict) }()
	} else {
		chunk = make([]lexDoc, min(lexChunk, g.n))
	}
	doc := func(d int) *lexDoc {
		if g.an != nil {
			return &g.an.lex[d]
		}
		return &chunk[d%lexChunk]
	}
	for start := 0; start < g.n; start += lexChunk {
		end := min(start+lexChunk, g.n)
		err := parallelFor(ctx, start, end, func(d int) {
			if pd := g.reused(d); reuse && pd >= 0 && g.prev.lexKept(pd) {
				*doc(d) = g.prev.lex[pd]
			} else if ld := doc(d); g.an != nil {
				ld.analyze(g.snap.Caps[d])
				ld.ents = slices.Clip(ld.ents)
			} else {
				ld.analyze(g.snap.Caps[d])
			}
		})
		if err != nil {
			return err
		}
		for d := start; d < end; d++ {
			ld := doc(d)
			tids = tids[:0]
			if voc != nil {
				if ld.vterms == nil { // analysed now, not reused
					ld.vterms = make([]uint32, len(ld.terms))
					for i, t := range ld.terms {
						ld.vterms[i] = voc.Number(t)
					}
					ld.terms = nil
				}
				for _, v := range ld.vterms {
					for int(v) >= len(vnum) {
						vnum = append(vnum, 0)
					}
					id := vnum[v]
					if id == 0 {
						id = uint32(len(x.dict)) + 1
						vnum[v] = id
						x.dict[voc.Term(v)] = id - 1
						df = append(df, 0)
					}
					tids = append(tids, id-1)
				}
			}
			for _, t := range ld.terms {
				id, ok := x.dict[t]
				if !ok {
					id = uint32(len(x.dict))
					x.dict[t] = id
					df = append(df, 0)
				}
				tids = append(tids, id)
			}
			copy(flen[d*numFields:(d+1)*numFields], ld.flen[:])
			docStart[d] = uint32(len(entries))
			byTerm := func(a, b lexEntry) int {
				if a.term != b.term {
					return int(a.term) - int(b.term)
				}
				return int(a.field) - int(b.field)
			}
			if voc != nil {
				// A kept analysis is sorted in place, by this build's term ids: the next build
				// that reuses it finds it sorted already, unless its ids moved (its order
				// matters to no one else, and the builds that read it hold voc's lock).
				slices.SortFunc(ld.ents, func(a, b lexEntry) int {
					return byTerm(lexEntry{term: tids[a.term], field: a.field}, lexEntry{term: tids[b.term], field: b.field})
				})
			}
			for _, e := range ld.ents {
				entries = append(entries, lexEntry{term: tids[e.term], field: e.field, tf: e.tf})
			}
			de := entries[docStart[d]:]
			if voc == nil {
				slices.SortFunc(de, byTerm)
			}
			for i, e := range de {
				if i == 0 || de[i-1].term != e.term {
					df[e.term]++
				}
			}
		}
	}
	docStart[g.n] = uint32(len(entries))

	x.norms.init(flen, x.params)
	nt := len(df)
	x.df = df
	x.idf = make([]float32, nt)
	for t := range nt {
		x.idf[t] = lexIDF(g.n, df[t])
	}
	// postings and entries per term, then the lists in document order
	x.off, x.eoff = make([]uint32, nt+1), make([]uint32, nt+1)
	for t, n := range df {
		x.off[t+1] = x.off[t] + n
	}
	for _, e := range entries {
		x.eoff[e.term+1]++
	}
	for t := range nt {
		x.eoff[t+1] += x.eoff[t]
	}
	x.docs = make([]uint32, x.off[nt])
	x.ftf = make([]uint32, x.eoff[nt])
	fill, efill := slices.Clone(x.off[:nt]), slices.Clone(x.eoff[:nt])
	for d := range g.n {
		de := entries[docStart[d]:docStart[d+1]]
		for i, e := range de {
			if i == 0 || de[i-1].term != e.term {
				x.docs[fill[e.term]] = uint32(d)
				fill[e.term]++
			}
			p := efill[e.term]
			efill[e.term]++
			x.ftf[p] = uint32(e.field)<<ftfField | uint32(e.tf)
			if i+1 < len(de) && de[i+1].term == e.term {
				x.ftf[p] |= ftfMore
			}
		}
	}
	// a generation built from scratch derives every term's impacts now (in parallel), as
	// the index used to store them
	x.cache = make(lexImpactCache, nt)
	if err := parallelFor(ctx, 0, nt, func(t int) { x.cache[t].Store(x.deriveImpacts(uint32(t))) }); err != nil {
		return err
	}
	g.stats.Terms = nt
	g.stats.Postings = 0
	for _, n := range df {
		g.stats.Postings += int(n)
	}
	return nil
}

// lexIDF is BM25's idf of a term in df of n documents.
func lexIDF(n int, df uint32) float32 {
	N, f := float64(n), float64(df)
	return float32(math.Log(1 + (N-f+0.5)/(f+0.5)))
}

// queryTerms returns the analysed terms of q.
func queryTerms(q *Query) []string {
	if q.Terms != nil {
		return q.Terms
	}
	return text.Analyze(q.Text)
}

// conceptTerms returns the term ids a concept expands to: the analysed terms of its members
// that occur in the index. A CJK member's single characters are left out (its bigrams carry
// it), so 删除 adds 删除 but not 删 or 除.
func (g *Generation) conceptTerms(name string) []uint32 {
	id, ok := text.ConceptID(name)
	if !ok {
		return nil
	}
	return g.conceptTermsOf(id)
}

// conceptTermsOf is conceptTerms by concept id, memoised per generation.
func (g *Generation) conceptTermsOf(c int32) []uint32 {
	x := &g.lex
	if p := x.concepts[c].Load(); p != nil {
		return *p
	}
	var ids []uint32
	name := text.ConceptName(c)
	members := append([]string{name}, text.ConceptMembers(name)...)
	for _, m := range members {
		long := utf8.RuneCountInString(m) > 1
		for _, t := range text.Analyze(m) {
			if long {
				if r, size := utf8.DecodeRuneInString(t); size == len(t) && text.IsCJK(r) {
					continue
				}
			}
			if id, ok := x.termID(t); ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	x.concepts[c].Store(&ids)
	return ids
}

// queryConcepts returns the concept names named by the query.
func queryConcepts(q *Query, terms []string) []string {
	var out []string
	for _, c := range appendQueryConcepts(nil, q, terms) {
		out = append(out, text.ConceptName(c))
	}
	return out
}

// appendQueryConcepts appends the ids of the concepts named by the query to dst, each once,
// in order of first appearance: those found in the text, else those of the terms.
func appendQueryConcepts(dst []int32, q *Query, terms []string) []int32 {
	n := len(dst)
	if q.Text != "" {
		dst = text.AppendConceptIDs(dst, q.Text)
	} else {
		for _, t := range terms {
			for _, c := range text.Concepts(t) {
				if id, ok := text.ConceptID(c); ok {
					dst = append(dst, id)
				}
			}
		}
	}
	return dedupeFrom(dst, n)
}

// queryAnalysis returns queryTerms(q) and appendQueryConcepts(concepts, q, terms); a query
// given by its text alone is scanned once for both. A query holding its concept ids
// (Query.ConceptIDs) is not scanned for them: they are returned as they are, not appended
// to concepts, and must not be modified.
func queryAnalysis(q *Query, concepts []int32) ([]string, []int32) {
	if q.ConceptIDs != nil {
		return queryTerms(q), q.ConceptIDs
	}
	if q.Terms != nil || q.Text == "" {
		terms := queryTerms(q)
		return terms, appendQueryConcepts(concepts, q, terms)
	}
	n := len(concepts)
	terms, concepts := text.AppendTermsConceptIDs(nil, concepts, q.Text)
	return terms, dedupeFrom(concepts, n)
}

// dedupeFrom removes the repeats in ids[n:], keeping first appearances in order.
func dedupeFrom(ids []int32, n int) []int32 {
	out := ids[:n]
	for i, c := range ids[n:] {
		if !slices.Contains(ids[n:n+i], c) {
			out = append(out, c)
		}
	}
	return out
}

// retrieveLexical scores documents by BM25F over the query terms plus their concept
// expansions (weighted conceptWeight), keeping the best limit with MaxScore pruning; the
// best match of each clause of a query of several is then lifted (see liftClauses).
func (g *Generation) retrieveLexical(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	if len(q.Terms) == 0 && q.Text == "" {
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	terms, concepts := queryAnalysis(q, s.concepts[:0])
	if q.ConceptIDs == nil { // the scratch's buffer, else the query's own (read only)
		s.concepts = concepts
	}
	s.src, s.srcConcepts = s.src[:0], s.srcConcepts[:0]
	if spans := sourceSpans(q.Text); spans != nil {
		s.sourceTerms(q.Text, spans)
	}
	if !g.lexQuery(s, terms, concepts) {
		return nil
	}
	bits := s.allowBits(allow, g.n)
	hits := lexHits(scoreLexical(s, bits, g.n, limit), s.lterms[0].scale)
	hits = g.liftClauses(s, q.Text, bits, hits, limit)
	if cap(s.lacc) > maxLexAcc { // do not keep huge buffers alive
		s.lacc = nil
	}
	return hits
}

// lexQuery fills s.lterms (and s.tids) with the lexical terms of a query: its terms that
// occur in the index, weight 1 (sourceWeight for s.src, the terms only its source nouns
// hold: sourceref.go), in the order they first occur in the query, then the terms its
// concepts (but s.srcConcepts) expand to, weight conceptWeight, in the concepts' order, each bounded by its
// count limit (the terms of highest idf are kept). Nothing of it depends on term ids. It
// reports whether there is any.
func (g *Generation) lexQuery(s *scratch, terms []string, concepts []int32) bool {
	x := &g.lex
	ids := s.tids[:0]
	s.lterms = s.lterms[:0]
	for _, t := range terms {
		if id, ok := x.termID(t); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
			w := float32(1)
			if slices.Contains(s.src, t) {
				w = sourceWeight
			}
			s.lterms = append(s.lterms, g.lexTerm(id, w, 0))
		}
	}
	if len(s.lterms) > maxQueryTerms {
		s.lterms = keepStrongest(s.lterms, maxQueryTerms)
	}
	nq, nids := len(s.lterms), len(ids)
	sorted := append(s.ids[:0], ids...)
	slices.Sort(sorted)
	s.ids = sorted
	if w := x.params.VariantWeight; w > 0 {
		vars := s.vids[:0]
		for _, t := range terms {
			vars = x.appendVariants(vars, t, x.params.VariantSuffix)
		}
		s.vids = vars
		for _, id := range vars {
			if _, found := slices.BinarySearch(sorted, id); found || slices.Contains(ids[nids:], id) {
				continue
			}
			ids = append(ids, id)
			s.lterms = append(s.lterms, g.lexTerm(id, float32(w), maskVariant))
		}
		if len(s.lterms)-nq > maxVariantTerms {
			s.lterms = append(s.lterms[:nq], keepStrongest(s.lterms[nq:], maxVariantTerms)...)
		}
	}
	nv := len(s.lterms)
	for _, c := range concepts {
		if slices.Contains(s.srcConcepts, c) {
			continue
		}
		for _, id := range g.conceptTermsOf(c) {
			if _, found := slices.BinarySearch(sorted, id); found || slices.Contains(ids[nids:], id) {
				continue
			}
			ids = append(ids, id)
			s.lterms = append(s.lterms, g.lexTerm(id, conceptWeight, maskConcept))
		}
	}
	s.tids = ids
	if len(s.lterms)-nv > maxConceptTerms {
		s.lterms = append(s.lterms[:nv], keepStrongest(s.lterms[nv:], maxConceptTerms)...)
	}
	if len(s.lterms) == 0 {
		return false
	}
	z := &x.norms
	scale := lexScale(termsWeight(s.lterms), z.kp1)
	for i := range s.lterms {
		t := &s.lterms[i]
		t.scale = scale
		// the greatest contribution
		t.ub = uint32(float32(t.w*t.max) * scale)
	}
	return true
}

// liftClauses serves a query of several clauses (text.Clauses: "Book a hotel in Paris.
// Then check the weather there."), a request of several tasks. BM25 over the whole text
// favours the documents of its wordiest task: near twins of one task's answer crowd the
// others' out of the head. Each clause is scored alone, and its best document is moved a
// fraction of the way from its score to the best score of hits (a document missing from
// hits starts from its clause score, a lower bound of its query score), each document
// once: LexicalParams.ClauseLift, scaled down for a clause of little weight (ClauseMass).
// The head then holds the best answer of every clause that carries a task. A text of one
// clause, or hits empty, is left as it is.
func (g *Generation) liftClauses(s *scratch, txt string, bits []uint64, hits []Hit, limit int) []Hit {
	p := &g.lex.params
	if p.ClauseLift == 0 || len(hits) == 0 {
		return hits
	}
	clauses := text.Clauses(txt)
	if len(clauses) < 2 {
		return hits
	}
	top, whole := hits[0].Score, termsWeight(s.lterms)
	// the whole query's terms, to score a clause's best document that hits lack exactly
	// as the unlimited answer would hold it
	wt := append(s.wterms[:0], s.lterms...)
	s.wterms = wt
	var lifted []uint32
	for _, c := range clauses {
		terms, concepts := text.AppendTermsConceptIDs(s.cterms[:0], s.cconcepts[:0], c)
		s.cterms, s.cconcepts = terms, dedupeFrom(concepts, 0)
		if !g.lexQuery(s, s.cterms, s.cconcepts) {
			continue
		}
		best := scoreLexical(s, bits, g.n, 1)
		if len(best) == 0 || slices.Contains(lifted, best[0].doc) {
			continue
		}
		d := best[0]
		lifted = append(lifted, d.doc)
		i := slices.IndexFunc(hits, func(h Hit) bool { return h.Doc == d.doc })
		if i < 0 {
			sc, mask := lexScoreOf(wt, d.doc)
			hits = append(hits, Hit{Doc: d.doc, Score: float64(sc) / float64(wt[0].scale), Matched: lexNames(mask)})
			i = len(hits) - 1
		}
		lift := p.ClauseLift
		if p.ClauseMass > 0 && whole > 0 {
			lift *= min(1, termsWeight(s.lterms)/whole/p.ClauseMass)
		}
		hits[i].Score += lift * (top - hits[i].Score)
	}
	if len(lifted) == 0 {
		return hits
	}
	sortHits(hits)
	return hits[:min(len(hits), limit)]
}

// lexScoreOf is the fixed-point score and match mask of document d over the terms ts.
func lexScoreOf(ts []lterm, d uint32) (uint32, uint32) {
	var sc, mask uint32
	for i := range ts {
		t := &ts[i]
		if p, ok := slices.BinarySearch(t.docs, d); ok {
			sc += t.contrib(p)
			mask |= t.flag | uint32(t.masks[p])
		}
	}
	return sc, mask
}

// termsWeight is the weight of a lexical query: the sum of its terms' weights (idf, times
// conceptWeight for a concept's), in their order.
func termsWeight(ts []lterm) float64 {
	var w float64
	for _, t := range ts {
		w += float64(t.w)
	}
	return w
}

func (g *Generation) lexTerm(id uint32, weight float32, flag uint32) lterm {
	x := &g.lex
	li := x.impacts(id)
	return lterm{docs: li.docs, imps: li.imps, masks: li.masks, max: li.max, w: x.idf[id] * weight, flag: flag}
}

// keepStrongest keeps the k terms of the highest weight (idf), the earlier at equal weights.
func keepStrongest(t []lterm, k int) []lterm {
	slices.SortStableFunc(t, func(a, b lterm) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	return t[:k]
}

// lexHits converts the best lexical candidates to hits, their scores out of fixed point.
func lexHits(cs []lcand, scale float32) []Hit {
	if len(cs) == 0 {
		return nil
	}
	hits := make([]Hit, len(cs))
	for i, c := range cs {
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score) / float64(scale), Matched: lexNames(c.mask)}
	}
	return hits
}

// lexNames names the fields of a lexical match mask.
var lexNames = newNameTable(func(b int) string {
	switch b {
	case 15:
		return "concepts"
	case 14:
		return "variants"
	}
	if b < numFields {
		return fieldNames[b]
	}
	return ""
}).of

// hitsOf converts the best candidates to hits.
func hitsOf(cs []cand, names func(uint32) []string) []Hit {
	if len(cs) == 0 {
		return nil
	}
	hits := make([]Hit, len(cs))
	for i, c := range cs {
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score), Matched: names(c.mask)}
	}
	return hits
}
