package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// persisted returns the bytes g.Persist writes.
func persisted(t testing.TB, g *Generation) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := g.Persist(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// persistQueries are queries on the texts of snap (and a few others) for comparing answers.
func persistQueries(snap *registry.Snapshot, r *rand.Rand, k int) []string {
	qs := []string{"restart the deployment", "查询订单", "codex diagnose", "send an email to the team"}
	for range k {
		c := snap.Caps[r.IntN(len(snap.Caps))]
		qs = append(qs, c.Summary, c.Title+". "+c.Summary, c.ID, registry.ToolName(c.ID))
		if len(c.Aliases) > 0 {
			qs = append(qs, c.Aliases[0])
		}
	}
	return qs
}

// sameAnswers fails unless a and b answer every query alike through every retriever.
func sameAnswers(t *testing.T, a, b *Generation, queries []string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, q := range queries {
		for k := range NumKinds {
			ha, err := a.Retrieve(ctx, k, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.Retrieve(ctx, k, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ha, hb) {
				t.Fatalf("%s %q: %v, built %v", k, q, ha, hb)
			}
			n++
		}
	}
	return n
}

// TestPersistSameAsBuild builds a generation from persisted state (written by a
// generation built from scratch, and by one at the end of a chain of patched builds) and
// compares it with a build from scratch of the same snapshot: every loaded structure by
// content, and the answers of every retriever to queries on the catalogue's texts.
func TestPersistSameAsBuild(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(20, 4))
	emb := embed.NewHashed()
	snap, err := registry.NewSnapshot(3, testcat.GenerateCatalog(600, 5))
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	// a chain of text changes that keep every docID: the last generation's lexical index
	// is patched (terms of other ids, lists outside the arena, terms no document holds),
	// and its semantic index (lists in the patch arena, never compacted here, and common
	// ids numbered otherwise than a build numbers them)
	defer func(s int) { semPatchShare = s }(semPatchShare)
	semPatchShare = 0
	prev, err := Build(ctx, snap, Options{Embedder: emb, Reuse: scratch})
	if err != nil {
		t.Fatal(err)
	}
	chain := snap
	for step := range 4 {
		var put []*registry.Capability
		for range 3 {
			x := chain.Caps[r.IntN(len(chain.Caps))].Clone()
			x.Version++
			x.Summary = fmt.Sprintf("fresh words zqv%d only here", step)
			put = append(put, x)
		}
		put, _ = dedupeChange(put, nil)
		if chain, err = chain.Apply(chain.Generation+1, put, nil); err != nil {
			t.Fatal(err)
		}
		if prev, err = Build(ctx, chain, Options{Embedder: emb, Reuse: prev}); err != nil {
			t.Fatal(err)
		}
	}
	if !prev.Stats().LexicalPatched || !prev.Stats().SemanticPatched {
		t.Fatal("the chain did not patch the lexical and semantic indexes")
	}
	if len(prev.sem.xpost) == 0 {
		t.Fatal("the patched semantic index holds no list in its patch arena")
	}
	compared := 0
	for _, c := range []struct {
		name string
		from *Generation
	}{{"from scratch", scratch}, {"patched", prev}} {
		s := c.from.Snapshot()
		got, err := Build(ctx, s, Options{Embedder: emb, Persisted: persisted(t, c.from)})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Build(ctx, s, Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		p := got.Stats().Persist
		if p.Err != nil || !slices.Equal(p.Loaded, []string{secLexical, secExact, secSemantic}) {
			t.Fatalf("%s: loaded %v, err %v", c.name, p.Loaded, p.Err)
		}
		if d := lexDiff(&got.lex, &want.lex); d != "" {
			t.Fatalf("%s: the loaded lexical index differs from a build: %s", c.name, d)
		}
		if !reflect.DeepEqual(&got.exact, &want.exact) {
			t.Fatalf("%s: the loaded exact index differs from a build", c.name)
		}
		if d := semDiff(&got.sem, &want.sem); d != "" {
			t.Fatalf("%s: the loaded semantic index differs from a build: %s", c.name, d)
		}
		// one arena, and the common lists numbered as a build numbers them
		if got.sem.xpost != nil || !slices.Equal(got.sem.post, want.sem.post) || !slices.Equal(got.sem.lists, want.sem.lists) ||
			!slices.Equal(got.sem.fwd, want.sem.fwd) || !slices.Equal(got.sem.fwdOff, want.sem.fwdOff) ||
			got.sem.ncommon != want.sem.ncommon || got.sem.fwdExcess != want.sem.fwdExcess {
			t.Fatalf("%s: the loaded semantic index is not laid out as a build lays it out", c.name)
		}
		if got.Stats().Terms != want.Stats().Terms || got.Stats().Postings != want.Stats().Postings {
			t.Fatalf("%s: %d terms %d postings, built %d %d", c.name, got.Stats().Terms, got.Stats().Postings, want.Stats().Terms, want.Stats().Postings)
		}
		compared += sameAnswers(t, got, want, persistQueries(s, r, 30))
		// what a loaded generation writes is what it loaded
		if !bytes.Equal(persisted(t, got), persisted(t, c.from)) {
			t.Fatalf("%s: a loaded generation persists other bytes than it loaded", c.name)
		}
	}
	t.Logf("%d answers compared", compared)
}

// TestPersistFallsBack damages persisted state in each way Build must notice (another
// generation, other capabilities, another format, another build, a flipped byte in the
// header or in a section, truncation, other lexical parameters) and checks that Build
// reports it and builds what it could not load, answering as a build from scratch.
func TestPersistFallsBack(t *testing.T) {
	ctx := context.Background()
	emb := embed.NewHashed()
	caps := testcat.GenerateCatalog(300, 9)
	snap, err := registry.NewSnapshot(7, caps)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	good := persisted(t, want)
	lexLen, exactLen := len(want.lex.appendPersisted(nil)), len(want.exact.appendPersisted(nil, want.n))
	hdr := len(good) - lexLen - exactLen - len(want.sem.appendPersisted(nil, want.n))
	queries := persistQueries(snap, rand.New(rand.NewPCG(1, 2)), 10)
	check := func(name string, s *registry.Snapshot, b []byte, loaded []string, wantErr error) {
		t.Helper()
		g, err := Build(ctx, s, Options{Embedder: emb, Persisted: b})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := g.Stats().Persist
		if !slices.Equal(p.Loaded, loaded) {
			t.Fatalf("%s: loaded %v, want %v (err %v)", name, p.Loaded, loaded, p.Err)
		}
		if !errors.Is(p.Err, wantErr) || (wantErr == nil) != (p.Err == nil) {
			t.Fatalf("%s: err %v, want %v", name, p.Err, wantErr)
		}
		if s == snap {
			sameAnswers(t, g, want, queries)
		}
	}
	all := []string{secLexical, secExact, secSemantic}
	check("intact", snap, good, all, nil)
	check("none", snap, nil, nil, nil)
	other, err := registry.NewSnapshot(8, caps)
	if err != nil {
		t.Fatal(err)
	}
	check("another generation", other, good, nil, ErrPersistStale)
	changed := slices.Clone(caps)
	x := changed[10].Clone()
	x.Version++
	changed[10] = x
	same, err := registry.NewSnapshot(7, changed)
	if err != nil {
		t.Fatal(err)
	}
	check("other capabilities", same, good, nil, ErrPersistStale)
	fewer, err := registry.NewSnapshot(7, caps[:299])
	if err != nil {
		t.Fatal(err)
	}
	check("fewer capabilities", fewer, good, nil, ErrPersistStale)

	b := slices.Clone(good)
	b[len(persistMagic)]++ // the format version (a one-byte varint)
	check("another format", snap, b, nil, ErrPersistFormat)
	b = slices.Clone(good)
	b[len(persistMagic)+3] ^= 0x10 // inside the generation/documents/fingerprints
	check("header byte", snap, b, nil, ErrPersistChecksum)
	b = slices.Clone(good)
	b[hdr+5] ^= 1 // in the lexical section
	check("lexical byte", snap, b, []string{secExact, secSemantic}, ErrPersistChecksum)
	b = slices.Clone(good)
	b[hdr+lexLen+exactLen-3] ^= 1 // in the exact section
	check("exact byte", snap, b, []string{secLexical, secSemantic}, ErrPersistChecksum)
	b = slices.Clone(good)
	b[len(b)-3] ^= 1 // in the semantic section (a posting)
	check("semantic byte", snap, b, []string{secLexical, secExact}, ErrPersistChecksum)
	check("truncated", snap, good[:len(good)-1], nil, ErrPersistCorrupt)
	check("truncated header", snap, good[:hdr/2], nil, ErrPersistCorrupt)
	check("not persisted state", snap, []byte("{\"json\": true}"), nil, ErrPersistCorrupt)

	// another build: the fingerprint of the analysis differs
	b = slices.Clone(good)
	fp := buildFingerprint()
	i := bytes.Index(b, leU64(fp))
	if i < 0 {
		t.Fatal("build fingerprint not in the header")
	}
	copy(b[i:], leU64(fp+1))
	check("another build", snap, withHeaderSum(b, hdr), nil, ErrPersistFormat)

	// another embedder: the semantic section is rebuilt with it (and answers as a build
	// with it); another instance of the same embedder (a reopen) loads it
	for _, c := range []struct {
		name   string
		emb    embed.Embedder
		loaded []string
		err    error
	}{
		{"another instance of the embedder", embed.NewHashed(), all, nil},
		{"another dimension", embed.NewHashedDim(1 << 16), []string{secLexical, secExact}, ErrPersistFormat},
		{"the same id, other vectors", otherVectors{embed.NewHashed()}, []string{secLexical, secExact}, ErrPersistFormat},
		{"a dense embedder", denseOnly{embed.NewHashedDim(64)}, []string{secLexical, secExact}, ErrPersistFormat},
	} {
		g, err := Build(ctx, snap, Options{Embedder: c.emb, Persisted: good})
		if err != nil {
			t.Fatal(err)
		}
		if r := g.Stats().Persist; !slices.Equal(r.Loaded, c.loaded) || !errors.Is(r.Err, c.err) || (c.err == nil) != (r.Err == nil) {
			t.Fatalf("%s: loaded %v, err %v", c.name, r.Loaded, r.Err)
		}
		built, err := Build(ctx, snap, Options{Embedder: c.emb})
		if err != nil {
			t.Fatal(err)
		}
		if _, dense := c.emb.(denseOnly); !dense {
			if d := semDiff(&g.sem, &built.sem); d != "" {
				t.Fatalf("%s: the semantic index differs from a build with the embedder: %s", c.name, d)
			}
		}
		sameAnswers(t, g, built, queries)
	}
	// state written with a dense embedder holds no semantic section, and is loaded whole
	dense, err := Build(ctx, snap, Options{Embedder: denseOnly{embed.NewHashedDim(64)}})
	if err != nil {
		t.Fatal(err)
	}
	fromDense, err := Build(ctx, snap, Options{Embedder: denseOnly{embed.NewHashedDim(64)}, Persisted: persisted(t, dense)})
	if err != nil {
		t.Fatal(err)
	}
	if r := fromDense.Stats().Persist; !slices.Equal(r.Loaded, []string{secLexical, secExact}) || r.Err != nil {
		t.Fatalf("state of a dense embedder: loaded %v, err %v", r.Loaded, r.Err)
	}
	sameAnswers(t, fromDense, dense, queries)

	// other lexical parameters: the lexical section is rebuilt with the new ones
	p := DefaultLexicalParams()
	p.K1 += 0.1
	old, err := SetLexicalParams(p)
	if err != nil {
		t.Fatal(err)
	}
	defer SetLexicalParams(old)
	g, err := Build(ctx, snap, Options{Embedder: emb, Persisted: good})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Stats().Persist; !slices.Equal(r.Loaded, []string{secExact, secSemantic}) || !errors.Is(r.Err, ErrPersistFormat) {
		t.Fatalf("other lexical parameters: loaded %v, err %v", r.Loaded, r.Err)
	}
	if g.lex.params != p {
		t.Fatal("the lexical index was not rebuilt with the current parameters")
	}
}

// otherVectors is the default embedder under its id, but whose vectors differ: only the
// embedder fingerprint tells it from the one that wrote persisted state.
type otherVectors struct{ *embed.Hashed }

func (o otherVectors) EmbedSparse(s string) embed.SparseVector {
	return o.Hashed.EmbedSparse(s + " extra")
}

// denseOnly offers the dense vectors of an embedder only.
type denseOnly struct{ embed.Embedder }

func leU64(v uint64) []byte {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b[:]
}

// withHeaderSum rewrites the header checksum of b (whose header is hdr bytes long).
func withHeaderSum(b []byte, hdr int) []byte {
	sum := crc32c(b[:hdr-4])
	copy(b[hdr-4:], []byte{byte(sum), byte(sum >> 8), byte(sum >> 16), byte(sum >> 24)})
	return b
}

// TestPersistEveryByte flips each byte of a small generation's persisted state in turn:
// the loading must report an error and never panic, and a section it still loads (a
// flip the checksums cannot see does not exist: each byte is under one) is the built one.
// The embedder has 2^10 dimensions, so that the semantic section's feature table (8 bytes
// per 64 dimensions) does not make the bytes to flip 32 KB.
func TestPersistEveryByte(t *testing.T) {
	ctx := context.Background()
	snap, err := registry.NewSnapshot(2, testcat.GenerateCatalog(40, 3))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(ctx, snap, Options{Embedder: embed.NewHashedDim(1 << 10)})
	if err != nil {
		t.Fatal(err)
	}
	good := persisted(t, want)
	// where each section's body is: a section loaded while a byte of another was flipped
	// decodes the same bytes every time, so it is compared with the built one once
	var spans []int
	for _, s := range want.persistSections() {
		spans = append(spans, len(s.body))
	}
	end := map[string]int{}
	at := len(good)
	for k, name := range []string{secSemantic, secExact, secLexical} {
		end[name] = at
		at -= spans[len(spans)-1-k]
	}
	compared := map[string]bool{}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		g := &Generation{snap: snap, n: len(snap.Caps), emb: want.emb}
		g.loadPersisted(b)
		p := g.stats.Persist
		if p.Err == nil {
			t.Fatalf("byte %d flipped: no error, loaded %v", i, p.Loaded)
		}
		for k, s := range []struct {
			name string
			diff func() string
		}{
			{secLexical, func() string { return lexDiff(&g.lex, &want.lex) }},
			{secExact, func() string {
				if !reflect.DeepEqual(&g.exact, &want.exact) {
					return "differs"
				}
				return ""
			}},
			{secSemantic, func() string { return semDiff(&g.sem, &want.sem) }},
		} {
			inside := i >= end[s.name]-spans[k] && i < end[s.name]
			if !g.loaded(s.name) || (compared[s.name] && !inside) {
				continue
			}
			compared[s.name] = true
			if d := s.diff(); d != "" {
				t.Fatalf("byte %d flipped: %s loaded and differs: %s", i, s.name, d)
			}
		}
	}
	if len(compared) != 3 {
		t.Fatalf("sections loaded and compared: %v", compared)
	}
}

// fuzzEmb is the embedder of the fuzz targets' generations: 2^10 dimensions keep the
// semantic section's feature table (8 bytes per 64 dimensions) to 128 bytes.
var fuzzEmb = embed.NewHashedDim(1 << 10)

// fuzzSeeds returns persisted state of small catalogues: the whole, and its sections.
func fuzzSeeds(f *testing.F) (whole, lex, exact, sem [][]byte) {
	for _, n := range []int{1, 12, 60} {
		snap, err := registry.NewSnapshot(uint64(n), testcat.GenerateCatalog(n, 2))
		if err != nil {
			f.Fatal(err)
		}
		g, err := Build(context.Background(), snap, Options{Embedder: fuzzEmb})
		if err != nil {
			f.Fatal(err)
		}
		whole = append(whole, persisted(f, g))
		lex = append(lex, g.lex.appendPersisted(nil))
		exact = append(exact, g.exact.appendPersisted(nil, g.n))
		sem = append(sem, g.sem.appendPersisted(nil, g.n))
	}
	return whole, lex, exact, sem
}

// persistFuzzGen is an empty generation of n documents to load sections into.
func persistFuzzGen(n int) *Generation {
	return &Generation{snap: &registry.Snapshot{Generation: uint64(n)}, n: n, emb: fuzzEmb}
}

// FuzzPersisted feeds arbitrary bytes to the loading of persisted state: it must report an
// error or load, never panic.
func FuzzPersisted(f *testing.F) {
	whole, _, _, _ := fuzzSeeds(f)
	for _, b := range whole {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	snap, err := registry.NewSnapshot(12, testcat.GenerateCatalog(12, 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &Generation{snap: snap, n: len(snap.Caps), emb: fuzzEmb}
		g.loadPersisted(b)
		if len(g.stats.Persist.Loaded) == 0 && g.stats.Persist.Err == nil && len(b) > 0 {
			t.Fatal("nothing loaded and no error")
		}
	})
}

// FuzzLoadLexical feeds arbitrary bytes to the lexical section's decoder (past the
// checksum): an error or an index whose lists are in range, never a panic.
func FuzzLoadLexical(f *testing.F) {
	_, lex, _, _ := fuzzSeeds(f)
	for _, b := range lex {
		f.Add(b, uint8(60))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		g := persistFuzzGen(int(n))
		if g.loadLexical(b) != nil {
			return
		}
		x := &g.lex
		for id := range x.df {
			x.deriveImpacts(uint32(id)) // reads every entry, norm and document
		}
	})
}

// FuzzLoadExact feeds arbitrary bytes to the exact section's decoder (past the checksum).
func FuzzLoadExact(f *testing.F) {
	_, _, exact, _ := fuzzSeeds(f)
	for _, b := range exact {
		f.Add(b, uint8(60))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		g := persistFuzzGen(int(n))
		if g.loadExact(b) != nil {
			return
		}
		var buf [1]exactRef
		for _, v := range g.exact.names {
			for _, r := range g.exact.refs(v, &buf) {
				if int(r.doc) >= g.n {
					t.Fatalf("reference to document %d of %d", r.doc, g.n)
				}
			}
		}
	})
}

// FuzzLoadSemantic feeds arbitrary bytes to the semantic section's decoder (past the
// checksum): an error, or an index whose lists, postings and forward postings are in range
// and that answers queries, never a panic.
func FuzzLoadSemantic(f *testing.F) {
	_, _, _, sem := fuzzSeeds(f)
	for _, b := range sem {
		f.Add(b, uint8(60))
		f.Add(b, uint8(12))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		g := persistFuzzGen(int(n))
		if g.loadSemantic(b) != nil {
			return
		}
		x := &g.sem
		if len(x.fwdOff) != g.n+1 || len(x.feats) != len(x.absMax) {
			t.Fatalf("%d forward offsets, %d features, %d largest values", len(x.fwdOff), len(x.feats), len(x.absMax))
		}
		for _, fe := range x.feats {
			if int(fe.list) >= len(x.lists) {
				t.Fatalf("feature of list %d of %d", fe.list, len(x.lists))
			}
		}
		for l := range x.lists {
			for _, p := range x.postings(&x.lists[l]) {
				if int(p>>8) >= g.n {
					t.Fatalf("posting of document %d of %d", p>>8, g.n)
				}
			}
		}
		for _, q := range []string{"restart the deployment", "send an email to the team about the invoice refund", "查询订单"} {
			for _, limit := range []int{1, 10} {
				for _, h := range g.semanticSparse(&Query{Text: q}, nil, limit) {
					if int(h.Doc) >= g.n {
						t.Fatalf("hit %d of %d documents", h.Doc, g.n)
					}
				}
			}
		}
	})
}

// TestPersistLoadedSearchedConcurrently searches a generation loaded from persisted state
// (its impacts derived lazily, per term at its first query) from four goroutines: run under
// -race, and every answer must be the built generation's.
func TestPersistLoadedSearchedConcurrently(t *testing.T) {
	ctx := context.Background()
	snap, err := registry.NewSnapshot(4, testcat.GenerateCatalog(300, 6))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Build(ctx, snap, Options{Persisted: persisted(t, want)})
	if err != nil {
		t.Fatal(err)
	}
	if !got.loaded(secLexical) {
		t.Fatalf("not loaded: %v", got.Stats().Persist.Err)
	}
	searchedConcurrently(t, got, want, persistQueries(snap, rand.New(rand.NewPCG(5, 6)), 40))
}
