package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
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
	// is patched (terms of other ids, lists outside the arena, terms no document holds)
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
	if !prev.Stats().LexicalPatched {
		t.Fatal("the chain did not patch the lexical index")
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
		if p.Err != nil || !slices.Equal(p.Loaded, []string{secLexical, secExact}) {
			t.Fatalf("%s: loaded %v, err %v", c.name, p.Loaded, p.Err)
		}
		if d := lexDiff(&got.lex, &want.lex); d != "" {
			t.Fatalf("%s: the loaded lexical index differs from a build: %s", c.name, d)
		}
		if !reflect.DeepEqual(&got.exact, &want.exact) {
			t.Fatalf("%s: the loaded exact index differs from a build", c.name)
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
	hdr := len(good) - len(want.lex.appendPersisted(nil)) - len(want.exact.appendPersisted(nil, want.n))
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
	both := []string{secLexical, secExact}
	check("intact", snap, good, both, nil)
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
	check("lexical byte", snap, b, []string{secExact}, ErrPersistChecksum)
	b = slices.Clone(good)
	b[len(b)-3] ^= 1 // in the exact section
	check("exact byte", snap, b, []string{secLexical}, ErrPersistChecksum)
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
	if r := g.Stats().Persist; !slices.Equal(r.Loaded, []string{secExact}) || !errors.Is(r.Err, ErrPersistFormat) {
		t.Fatalf("other lexical parameters: loaded %v, err %v", r.Loaded, r.Err)
	}
	if g.lex.params != p {
		t.Fatal("the lexical index was not rebuilt with the current parameters")
	}
}

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
func TestPersistEveryByte(t *testing.T) {
	ctx := context.Background()
	snap, err := registry.NewSnapshot(2, testcat.GenerateCatalog(40, 3))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	good := persisted(t, want)
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		g := &Generation{snap: snap, n: len(snap.Caps)}
		g.loadPersisted(b)
		p := g.stats.Persist
		if p.Err == nil {
			t.Fatalf("byte %d flipped: no error, loaded %v", i, p.Loaded)
		}
		if g.loaded(secLexical) {
			if d := lexDiff(&g.lex, &want.lex); d != "" {
				t.Fatalf("byte %d flipped: lexical loaded and differs: %s", i, d)
			}
		}
		if g.loaded(secExact) && !reflect.DeepEqual(&g.exact, &want.exact) {
			t.Fatalf("byte %d flipped: exact loaded and differs", i)
		}
	}
}

// fuzzSeeds returns persisted state of small catalogues: the whole, and its two sections.
func fuzzSeeds(f *testing.F) (whole, lex, exact [][]byte) {
	for _, n := range []int{1, 12, 60} {
		snap, err := registry.NewSnapshot(uint64(n), testcat.GenerateCatalog(n, 2))
		if err != nil {
			f.Fatal(err)
		}
		g, err := Build(context.Background(), snap, Options{})
		if err != nil {
			f.Fatal(err)
		}
		whole = append(whole, persisted(f, g))
		lex = append(lex, g.lex.appendPersisted(nil))
		exact = append(exact, g.exact.appendPersisted(nil, g.n))
	}
	return whole, lex, exact
}

// persistFuzzGen is an empty generation of n documents to load sections into.
func persistFuzzGen(n int) *Generation {
	return &Generation{snap: &registry.Snapshot{Generation: uint64(n)}, n: n}
}

// FuzzPersisted feeds arbitrary bytes to the loading of persisted state: it must report an
// error or load, never panic.
func FuzzPersisted(f *testing.F) {
	whole, _, _ := fuzzSeeds(f)
	for _, b := range whole {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	snap, err := registry.NewSnapshot(12, testcat.GenerateCatalog(12, 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &Generation{snap: snap, n: len(snap.Caps)}
		g.loadPersisted(b)
		if len(g.stats.Persist.Loaded) == 0 && g.stats.Persist.Err == nil && len(b) > 0 {
			t.Fatal("nothing loaded and no error")
		}
	})
}

// FuzzLoadLexical feeds arbitrary bytes to the lexical section's decoder (past the
// checksum): an error or an index whose lists are in range, never a panic.
func FuzzLoadLexical(f *testing.F) {
	_, lex, _ := fuzzSeeds(f)
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
	_, _, exact := fuzzSeeds(f)
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
	queries := persistQueries(snap, rand.New(rand.NewPCG(5, 6)), 40)
	wants := make([][]Hit, len(queries))
	for i, q := range queries {
		if wants[i], err = want.Retrieve(ctx, Lexical, &Query{Text: q}, nil, 10); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(queries))
	for w := range 4 {
		wg.Go(func() {
			for k := range queries {
				i := (k + w*len(queries)/4) % len(queries)
				hits, err := got.Retrieve(ctx, Lexical, &Query{Text: queries[i]}, nil, 10)
				if err != nil || !reflect.DeepEqual(hits, wants[i]) {
					errs <- fmt.Sprintf("%q: %v (%v), built %v", queries[i], hits, err, wants[i])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
