package index

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// semDiff describes how two sparse semantic indexes differ in what a search reads, "" when
// they do not: the features and their ids, scales and largest values, the lists (ids,
// postings wherever they are held, document frequencies, which are common), the
// parameters, and each document's
// forward postings as the set of (list, value) of its live common lists. The common ids
// themselves, and records of ids no list has, are not compared: scores do not depend on
// them.
func semDiff(a, b *semIndex) string {
	switch {
	case a.sparse != b.sparse || a.params != b.params || a.err != b.err:
		return "embedder, parameters or error"
	case !reflect.DeepEqual(a.ftab, b.ftab) || !reflect.DeepEqual(a.fmap, b.fmap):
		return "feature table"
	case !slices.Equal(a.feats, b.feats):
		return "features (lists or scales)"
	case !slices.Equal(a.absMax, b.absMax):
		return "largest values"
	case a.commonDF != b.commonDF || a.commonPost != b.commonPost:
		return fmt.Sprintf("common df %d postings %d, want %d %d", a.commonDF, a.commonPost, b.commonDF, b.commonPost)
	case len(a.lists) != len(b.lists):
		return fmt.Sprintf("%d lists, want %d", len(a.lists), len(b.lists))
	case a.dim != b.dim || !slices.Equal(a.vecs, b.vecs) || a.graph != b.graph:
		return "dense vectors"
	}
	for l := range a.lists {
		sa, sb := a.lists[l], b.lists[l]
		if sa.df != sb.df || (sa.cid == 0) != (sb.cid == 0) || !slices.Equal(a.postings(&sa), b.postings(&sb)) {
			return fmt.Sprintf("list %d: %+v, want %+v, or other postings", l, sa, sb)
		}
	}
	if len(a.fwdOff) != len(b.fwdOff) {
		return "forward offsets"
	}
	fa, fb := a.forwardSets(), b.forwardSets()
	for d := range fa {
		if !slices.Equal(fa[d], fb[d]) {
			return fmt.Sprintf("doc %d: forward postings %v, want %v", d, fa[d], fb[d])
		}
	}
	return ""
}

// forwardSets decodes every document's forward postings as list<<8 | q, sorted, keeping
// the records of common ids that a list has.
func (x *semIndex) forwardSets() [][]uint32 {
	listOf := map[uint32]uint32{}
	for l, sl := range x.lists {
		if sl.cid != 0 {
			listOf[sl.cid-1] = uint32(l)
		}
	}
	out := make([][]uint32, len(x.fwdOff)-1)
	for d := range out {
		c := uint32(0)
		for _, r := range x.fwd[x.fwdOff[d]:x.fwdOff[d+1]] {
			c += uint32(r & 0xff)
			if r == fwdSkip {
				continue
			}
			if l, ok := listOf[c]; ok {
				out[d] = append(out[d], l<<8|uint32(r>>8))
			}
		}
		slices.Sort(out[d])
	}
	return out
}

// TestSparsePatchRegroups makes the changes that move features between lists: a word
// taken out of a document (its features then have the postings of another document's
// own words, and join their list), a document growing much longer (its values shrink, so
// features whose largest value it held are quantised again), and back. Every patched
// index must be the one a full build gives, and answer the same.
func TestSparsePatchRegroups(t *testing.T) {
	t.Run("kept ids", testSparsePatchRegroups)
	t.Run("numbered again", func(t *testing.T) {
		semRenumberEveryPatch = true
		defer func() { semRenumberEveryPatch = false }()
		testSparsePatchRegroups(t)
	})
}

func testSparsePatchRegroups(t *testing.T) {
	ctx := context.Background()
	emb := embed.NewHashed()
	caps := testcat.GenerateCatalog(300, 5)
	var a, b int
	for i, c := range caps {
		if c.ResourceType != registry.TypePack {
			if a == 0 {
				a = i
			} else if b == 0 {
				b = i
				break
			}
		}
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(c *registry.Capability, summary string) *registry.Capability {
		x := c.Clone()
		x.Version++
		x.Summary = summary
		return x
	}
	sa, sb := caps[a].Summary, caps[b].Summary
	long := sa
	for i := range 40 {
		long += fmt.Sprintf(" %s", caps[(i*7)%len(caps)].Title)
	}
	steps := [][]*registry.Capability{
		{edit(caps[a], sa+" kumquat walrus"), edit(caps[b], sb+" kumquat zebra")},
		{edit(caps[b], sb+" zebra")}, // kumquat's features: now a's alone, as walrus's
		{edit(caps[a], long)},        // a's values shrink
		{edit(caps[a], sa)},
		{edit(caps[b], sb+" kumquat walrus")},
	}
	patched := 0
	for i, put := range steps {
		next, err := snap.Apply(snap.Generation+1, put, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Build(ctx, next, Options{Embedder: emb, Reuse: prev})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Build(ctx, next, Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if d := semDiff(&got.sem, &want.sem); d != "" {
			t.Fatalf("step %d: %s", i, d)
		}
		if got.stats.SemanticPatched {
			patched++
		}
		for _, q := range []string{"kumquat", "walrus zebra", long, sa + " " + sb} {
			ha, hb := retrieve(t, got, Semantic, &Query{Text: q}, 10), retrieve(t, want, Semantic, &Query{Text: q}, 10)
			if !reflect.DeepEqual(ha, hb) {
				t.Fatalf("step %d: %q: %v, full build %v", i, q, ha, hb)
			}
		}
		prev, snap = got, next
	}
	if patched < len(steps)-1 { // the first build of the chain keeps no analysis
		t.Fatalf("%d of %d changes patched", patched, len(steps))
	}
}

// TestSparsePatchSharedArena searches a patched generation from several goroutines while
// two changes are patched from it at once (one extends the patch arena it shares, the
// other copies it): every answer must equal a full build's, under -race too.
func TestSparsePatchSharedArena(t *testing.T) {
	defer func(s int) { semPatchShare = s }(semPatchShare)
	semPatchShare = 0 // never compact: one document's lists hold much of a small catalogue's postings
	ctx := context.Background()
	emb := embed.NewHashed()
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 9))
	if err != nil {
		t.Fatal(err)
	}
	first, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	change := func(s *registry.Snapshot, d int, word string) *registry.Snapshot {
		x := s.Caps[d].Clone()
		x.Version++
		x.Summary += " " + word
		next, err := s.Apply(s.Generation+1, []*registry.Capability{x}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	base, err := Build(ctx, snap, Options{Embedder: emb, Reuse: first})
	if err != nil {
		t.Fatal(err)
	}
	s1 := change(snap, 17, "gravel")
	g1, err := Build(ctx, s1, Options{Embedder: emb, Reuse: base})
	if err != nil || !g1.stats.SemanticPatched {
		t.Fatalf("not patched: %v", err)
	}
	if g1.sem.xbuf == nil {
		t.Fatal("the patched generation holds no patch arena (compacted at once)")
	}
	queries := []string{s1.Caps[17].Summary, s1.Caps[40].Summary + " " + s1.Caps[90].Summary, "gravel"}
	want := make([][]Hit, len(queries))
	full, err := Build(ctx, s1, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		want[i] = retrieve(t, full, Semantic, &Query{Text: q}, 10)
	}
	done := make(chan struct{})
	errs := make(chan string, 8)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- ""
					return
				default:
				}
				for i, q := range queries {
					if got := retrieve(t, g1, Semantic, &Query{Text: q}, 10); !reflect.DeepEqual(got, want[i]) {
						errs <- fmt.Sprintf("%q: %v, want %v", q, got, want[i])
						return
					}
				}
			}
		}()
	}
	var next [2]*Generation
	nsnap := [2]*registry.Snapshot{change(s1, 33, "pebble"), change(s1, 200, "boulder")}
	built := make(chan int, 2)
	for i := range 2 {
		go func() {
			g, err := Build(ctx, nsnap[i], Options{Embedder: emb, Reuse: g1})
			if err != nil {
				t.Error(err)
			}
			next[i] = g
			built <- i
		}()
	}
	<-built
	<-built
	close(done)
	for range 3 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	for i, g := range next {
		full, err := Build(ctx, nsnap[i], Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if d := semDiff(&g.sem, &full.sem); d != "" {
			t.Fatalf("change %d: %s", i, d)
		}
		for _, q := range append(queries, "pebble boulder") {
			if a, b := retrieve(t, g, Semantic, &Query{Text: q}, 10), retrieve(t, full, Semantic, &Query{Text: q}, 10); !reflect.DeepEqual(a, b) {
				t.Fatalf("change %d: %q: %v, want %v", i, q, a, b)
			}
		}
	}
	if (next[0].sem.xbuf == g1.sem.xbuf) == (next[1].sem.xbuf == g1.sem.xbuf) {
		t.Fatal("not exactly one of two patches of one generation extends its patch arena")
	}
}

// TestSparsePatchCompactsPatchArena patches a chain of summary edits until the patch arena
// has been laid out again both ways — alone (the main arena shared, the patch arena
// shrunk) and with everything (a new main arena) — comparing the index with a full build
// by content and by answers at every step. It fails unless both happened, and unless some
// feature of a changed document kept its list as it was (its postings unchanged: touch
// and regroup keep the list, no copy).
func TestSparsePatchCompactsPatchArena(t *testing.T) {
	ctx := context.Background()
	emb := embed.NewHashed()
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(900, 13))
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer func(s int) { semPatchShare = s }(semPatchShare)
	alone, full, kept := 0, 0, 0
	for step := 0; step < 60 && (alone < 2 || full < 1); step++ {
		// one document's lists hold a quarter of this small catalogue's postings: the
		// patch arena is laid out alone when it may hold as many as the main arena, and
		// everything when a quarter
		semPatchShare = 1
		if alone >= 2 {
			semPatchShare = 4
		}
		c := snap.Caps[337].Clone() // one document: the lists it touches stay in the patch arena
		c.Summary += fmt.Sprintf(" kept words wug%d", step)
		next, err := snap.Apply(snap.Generation+1, []*registry.Capability{c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Build(ctx, next, Options{Embedder: emb, Reuse: prev})
		if err != nil {
			t.Fatal(err)
		}
		if step > 0 && !got.stats.SemanticPatched {
			t.Fatalf("step %d: not patched", step)
		}
		px, x := &prev.sem, &got.sem
		if step > 0 {
			d, _ := next.DocID(c.ID)
			for _, f := range prev.an.sparse[d].Idx {
				oid, ok1 := px.feature(f)
				id, ok2 := x.feature(f)
				if !ok1 || !ok2 {
					continue
				}
				a, b := px.postings(&px.lists[px.feats[oid].list]), x.postings(&x.lists[x.feats[id].list])
				if _, held := valueOf(got.an.sparse[d], f); held && &a[0] == &b[0] {
					kept++
				}
			}
		}
		switch {
		case step == 0: // the first build of the chain assembles
		case &x.post[0] != &px.post[0]:
			full++
		case len(x.xpost) < len(px.xpost):
			alone++
		}
		want, err := Build(ctx, next, Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if d := semDiff(&got.sem, &want.sem); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
		for _, q := range []string{c.Summary, next.Caps[step%len(next.Caps)].Summary, "kept words"} {
			a, err := got.Retrieve(ctx, Semantic, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			b, err := want.Retrieve(ctx, Semantic, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("step %d: %q: %v, full build %v", step, q, a, b)
			}
		}
		prev, snap = got, next
	}
	if alone < 2 || full < 1 || kept == 0 {
		t.Fatalf("the patch arena was laid out alone %d times and with everything %d, %d lists of a changed document's features kept: want all", alone, full, kept)
	}
	t.Logf("patch arena laid out alone %d times, with everything %d; %d lists of a changed document's features kept", alone, full, kept)
}
