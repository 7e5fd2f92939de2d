package index

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// hiddenCatalogue mixes the fixture with a generated catalogue, so every kind of hidden
// capability appears among many visible ones.
func hiddenCatalogue(n int) []*registry.Capability {
	caps := fixtureCaps()
	have := map[string]bool{}
	for _, c := range caps {
		have[c.ID] = true
	}
	for _, c := range testcat.GenerateCatalog(n, 99) {
		if !have[c.ID] {
			caps = append(caps, c)
		}
	}
	return caps
}

// TestHiddenNeverRetrieved draws random callers and queries — many of them naming a
// capability the caller may not see, by id, tool name, alias, title or scope — and checks
// that no retriever ever returns a document outside the caller's filter.
func TestHiddenNeverRetrieved(t *testing.T) {
	n := 800
	rounds := 200
	if testing.Short() {
		n, rounds = 400, 100
	}
	caps := hiddenCatalogue(n)
	hist := fakeHistory{}
	for i, c := range caps {
		if i%3 == 0 {
			hist[c.ID] = float64(i%7 + 1)
		}
	}
	g := buildCaps(t, 1, caps, Options{History: hist})
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	checked := 0
	for round := range rounds {
		rc, spec := randomContext(r)
		rc.User = "alice"
		if round%5 == 0 {
			spec.Within = registry.Parent(g.Doc(uint32(r.IntN(g.Len()))).ID)
		}
		allow := g.Filter(rc, spec)
		var hidden []*registry.Capability
		for d, c := range g.Snapshot().Caps {
			if !allow.Contains(uint32(d)) {
				hidden = append(hidden, c)
			}
		}
		if len(hidden) == 0 {
			continue
		}
		h := hidden[r.IntN(len(hidden))]
		texts := []string{h.ID, registry.ToolName(h.ID), h.Title, h.Summary, registry.Leaf(h.ID), "please run " + h.ID}
		texts = append(texts, h.Aliases...)
		for _, txt := range texts {
			q := &Query{Text: txt, IDs: []string{h.ID}, Intents: h.Intents, Entities: h.Entities, Symptoms: h.Symptoms,
				Within: registry.Parent(h.ID), Browse: round%2 == 0, User: "alice",
				Match: &registry.StructuredMatch{Domain: h.Domain, Intents: h.Intents, RiskSignals: []string{"irreversible", "read_only"}}}
			if round%3 == 0 {
				q.Within = ""
			}
			for k := Kind(0); k < NumKinds; k++ {
				hits, err := g.Retrieve(ctx, k, q, allow, 20)
				if err != nil {
					t.Fatal(err)
				}
				for _, hit := range hits {
					if !allow.Contains(hit.Doc) {
						t.Fatalf("%v returned hidden %s for %q (caller %+v, spec %+v)", k, g.Doc(hit.Doc).ID, txt, rc, spec)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d retrievals checked", checked)
}

// TestGenerationSwapUnderLoad swaps generations while searches run (go test -race): every
// search sees one consistent generation.
func TestGenerationSwapUnderLoad(t *testing.T) {
	gens := []*Generation{
		buildCaps(t, 1, fixtureCaps(), Options{}),
		buildCaps(t, 2, testcat.GenerateCatalog(300, 1), Options{}),
		buildCaps(t, 3, hiddenCatalogue(200), Options{}),
	}
	var cur Current
	if cur.Load() != nil {
		t.Fatal("zero Current holds a generation")
	}
	cur.Swap(gens[0])
	var (
		stop     atomic.Bool
		searches atomic.Int64
		wg       sync.WaitGroup
		failed   atomic.Value
	)
	queries := []string{"codex path conflict", "删除日程", "maintenance.codex.diagnose", "create invoice", "sync user"}
	rc := &registry.RuntimeContext{Scopes: []string{"dev"}, OS: "linux"}
	for w := range 4 {
		wg.Go(func() {
			ctx := context.Background()
			for i := w; !stop.Load(); i++ {
				g := cur.Load()
				allow := g.Filter(rc, FilterSpec{})
				q := &Query{Text: queries[i%len(queries)], Browse: true, Intents: []string{"create"}}
				for k := Kind(0); k < NumKinds; k++ {
					hits, err := g.Retrieve(ctx, k, q, allow, 10)
					if err != nil {
						failed.Store(err)
						return
					}
					for _, h := range hits {
						if int(h.Doc) >= g.Len() || !allow.Contains(h.Doc) || g.Doc(h.Doc) != g.Snapshot().Caps[h.Doc] {
							failed.Store(errors.New("hit outside its generation"))
							return
						}
					}
				}
				searches.Add(1)
			}
		})
	}
	for i := range 60 {
		old := cur.Swap(gens[(i+1)%len(gens)])
		if old == nil {
			t.Fatal("Swap returned nil")
		}
		for searches.Load() < int64(i) && failed.Load() == nil {
			// let the searchers make progress between swaps
			runtime.Gosched()
		}
	}
	stop.Store(true)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d searches across 60 swaps", searches.Load())
}

// nastyInputs are inputs a retriever must survive.
var nastyInputs = []string{
	"", " ", "\t\n\r ", "\x00\x01\x02\x1b[31m", "\xff\xfe\xfd", "a\xffb", ".*+?()[]{}|^$\\", "(((", "[a-",
	"..", ".", "@", "@@3", "a@", "__", "::", "a.b.", ".a.b", "\u200b\u200d\ufeff", "😀😀😀", "ＡＢＣ", "\u202e reversed",
	strings.Repeat("x", 10*1024), strings.Repeat("删除日程 ", 2048), strings.Repeat("a.b_c ", 2000),
	strings.Repeat("\xff", 5000), strings.Repeat("(", 10000),
}

func TestBadInputs(t *testing.T) {
	g := buildFixture(t, Options{History: fakeHistory{"myapp.schedule.list": 1}})
	ctx := context.Background()
	rc := &registry.RuntimeContext{Scopes: []string{"dev"}}
	for i, in := range nastyInputs {
		allow := g.Filter(&registry.RuntimeContext{Tenant: in, User: in, Scopes: []string{in}, OS: in}, FilterSpec{Within: in, SideEffectMax: registry.SideEffect(in), Types: []registry.ResourceType{registry.ResourceType(in)}})
		if allow == nil {
			t.Fatal("nil filter")
		}
		queries := []*Query{
			{Text: in},
			{Text: in, Terms: text.Analyze(in), IDs: []string{in, in}, Intents: []string{in}, Entities: []string{in}, Symptoms: []string{in},
				Within: in, Browse: true, User: "alice", Match: &registry.StructuredMatch{Domain: in, Scenario: in, Intents: []string{in}, RiskSignals: []string{in}, CapabilityTypes: []string{in}}},
			{Terms: []string{in}},
		}
		for _, q := range queries {
			for k := Kind(0); k < NumKinds; k++ {
				for _, a := range []*roaring.Bitmap{nil, g.Filter(rc, FilterSpec{}), allow} {
					hits, err := g.Retrieve(ctx, k, q, a, 10)
					if err != nil {
						t.Fatalf("input %d, %v: %v", i, k, err)
					}
					if len(hits) > 10 {
						t.Fatalf("input %d, %v: %d hits", i, k, len(hits))
					}
					for _, h := range hits {
						if a != nil && !a.Contains(h.Doc) {
							t.Fatalf("input %d, %v: hit outside allow", i, k)
						}
					}
				}
			}
		}
	}
	// empty and blank queries find nothing by text
	for _, in := range []string{"", "   ", "\t"} {
		for _, k := range []Kind{Exact, Lexical, Semantic} {
			if hits := retrieve(t, g, k, &Query{Text: in}, 5); len(hits) != 0 {
				t.Errorf("%v %q: %v", k, in, ids(g, hits))
			}
		}
	}
}

var (
	fuzzOnce sync.Once
	fuzzGen  *Generation
)

func FuzzRetrieve(f *testing.F) {
	for _, s := range nastyInputs[:22] {
		f.Add(s, uint8(0))
	}
	for _, s := range []string{"maintenance.codex.diagnose", "删除日程", "codex path conflict", "myapp.schedule", "schedule_create@2"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, flags uint8) {
		fuzzOnce.Do(func() {
			snap, err := registry.NewSnapshot(1, fixtureCaps())
			if err != nil {
				panic(err)
			}
			fuzzGen, err = Build(context.Background(), snap, Options{History: fakeHistory{"myapp.schedule.list": 1}})
			if err != nil {
				panic(err)
			}
		})
		g := fuzzGen
		rc := &registry.RuntimeContext{Tenant: s, User: "alice", Scopes: []string{s, "dev"}}
		spec := FilterSpec{}
		if flags&1 != 0 {
			spec.Within = s
		}
		allow := g.Filter(rc, spec)
		q := &Query{Text: s, IDs: []string{s}, Intents: []string{s}, Entities: []string{s}, Browse: flags&2 != 0, User: "alice"}
		if flags&4 != 0 {
			q.Within = s
		}
		if flags&8 != 0 {
			q.Match = &registry.StructuredMatch{Domain: s, RiskSignals: []string{s}}
		}
		limit := int(flags>>4) + 1
		for k := Kind(0); k < NumKinds; k++ {
			hits, err := g.Retrieve(context.Background(), k, q, allow, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) > limit {
				t.Fatalf("%v: %d hits over limit %d", k, len(hits), limit)
			}
			for i, h := range hits {
				if !allow.Contains(h.Doc) {
					t.Fatalf("%v: hit outside allow", k)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Fatalf("%v: hits not ordered", k)
				}
			}
		}
		_ = utf8.ValidString(s)
	})
}

// hashDense is a deterministic dense test embedder: signed hashed word features.
type hashDense struct {
	dim  int
	fail bool
	bad  bool
}

func (h hashDense) ID() string { return "test-dense" }
func (h hashDense) Dim() int   { return h.dim }
func (h hashDense) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if h.fail {
		return nil, errors.New("backend down")
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, h.dim)
		if h.bad {
			v = v[:h.dim-1]
		}
		for _, w := range text.Analyze(s) {
			f := fnv.New64a()
			f.Write([]byte(w))
			x := f.Sum64()
			v[int(x%uint64(len(v)))] += float32(int(x>>32&1)*2 - 1)
			v[int((x>>20)%uint64(len(v)))] += 0.5
		}
		out[i] = v
	}
	return out, nil
}

// gaussDense is a deterministic dense test embedder closer to a model's vectors: every word
// adds its own pseudo-random Gaussian vector.
type gaussDense struct{ dim int }

func (h gaussDense) ID() string { return "test-gauss" }
func (h gaussDense) Dim() int   { return h.dim }
func (h gaussDense) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, h.dim)
		for _, w := range text.Analyze(s) {
			f := fnv.New64a()
			f.Write([]byte(w))
			r := rand.New(rand.NewPCG(f.Sum64(), 7))
			for j := range v {
				v[j] += float32(r.NormFloat64())
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestSemanticDense(t *testing.T) {
	caps := testcat.GenerateCatalog(800, 8)
	brute := buildCaps(t, 1, caps, Options{Embedder: gaussDense{dim: 48}, HNSWThreshold: -1})
	graph := buildCaps(t, 1, testcat.GenerateCatalog(800, 8), Options{Embedder: gaussDense{dim: 48}, HNSWThreshold: 300, EmbedBatch: 100})
	if brute.sem.graph != nil || graph.sem.graph == nil {
		t.Fatal("HNSWThreshold did not choose the structure")
	}
	r := rand.New(rand.NewPCG(1, 1))
	rc := &registry.RuntimeContext{Scopes: []string{"dev"}}
	allow := graph.Filter(rc, FilterSpec{})
	var found, total int
	for range 40 {
		c := caps[r.IntN(len(caps))]
		q := &Query{Text: c.Title + " " + c.Summary}
		for _, a := range []*roaring.Bitmap{nil, allow} {
			want, err := brute.Retrieve(context.Background(), Semantic, q, a, 10)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graph.Retrieve(context.Background(), Semantic, q, a, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range got {
				if a != nil && !a.Contains(h.Doc) {
					t.Fatal("HNSW returned a doc outside allow")
				}
			}
			// ties make ids ambiguous: a hit counts when it scores at least the exact k-th score
			if len(want) > 0 {
				kth := want[len(want)-1].Score
				total += len(want)
				for _, h := range got {
					if h.Score >= kth-1e-5 {
						found++
					}
				}
			}
			for i := 1; i < len(want); i++ {
				if want[i].Score > want[i-1].Score {
					t.Fatal("brute force not ordered")
				}
			}
		}
	}
	if recall := float64(found) / float64(total); recall < 0.7 {
		t.Fatalf("HNSW recall@10 against brute force = %.3f, want ≥ 0.7", recall)
	} else {
		t.Logf("HNSW recall@10 against brute force: %.3f", recall)
	}

	snap, _ := registry.NewSnapshot(1, fixtureCaps())
	// An embedder that fails during Build costs the semantic retriever only: the
	// generation is built, semantic searches fail with ErrEmbed, lexical ones answer.
	for _, e := range []hashDense{{dim: 16, fail: true}, {dim: 16, bad: true}} {
		g, err := Build(context.Background(), snap, Options{Embedder: e})
		if err != nil {
			t.Fatalf("embedder %+v: Build failed: %v", e, err)
		}
		if !errors.Is(g.SemanticErr(), ErrEmbed) {
			t.Errorf("embedder %+v: SemanticErr %v, want ErrEmbed", e, g.SemanticErr())
		}
		if _, err := g.Retrieve(context.Background(), Semantic, &Query{Text: "codex"}, nil, 5); !errors.Is(err, ErrEmbed) {
			t.Errorf("embedder %+v: semantic search err %v, want ErrEmbed", e, err)
		}
		if hits, err := g.Retrieve(context.Background(), Lexical, &Query{Text: "codex"}, nil, 5); err != nil || len(hits) == 0 {
			t.Errorf("embedder %+v: lexical search %v, %v", e, hits, err)
		}
	}
	g := buildFixture(t, Options{Embedder: hashDense{dim: 16}})
	g.emb = hashDense{dim: 16, fail: true}
	if _, err := g.Retrieve(context.Background(), Semantic, &Query{Text: "codex"}, nil, 5); !errors.Is(err, ErrEmbed) {
		t.Errorf("query embedding failure: %v", err)
	}
}
