package engine

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// logBuffer is a slog destination the test reads back.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReopenFromPersistedState closes a store after registry changes (so the state Close
// keeps is that of a patched lexical index), reopens it and checks that the engine loaded
// the persisted index state and answers a set of queries for two callers exactly as an
// engine that built everything (ranks, ids, scores, availability, the whole explanation).
// The term cache is loaded too (a section of the state). Then it damages the stored state
// in each way Open must notice (a flipped byte in the term cache's section and in the
// index's, another generation named, another format version) and checks that Open says so in its log,
// rebuilds, answers the same, and stores state the next Open loads.
func TestReopenFromPersistedState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	deadlines := map[string]time.Duration{}
	for _, name := range RetrieverNames() {
		deadlines[name] = time.Minute
	}
	opts := Options{Dir: dir, Seed: testcat.GenerateCatalog(800, 2), NoSync: true, Deadlines: deadlines}
	e, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	snap := e.Snapshot()
	for i, k := range []int{11, 97, 301} {
		d := snap.Caps[k].Clone()
		d.Version++
		d.Eff = nil
		d.Summary += fmt.Sprintf(" zqpersist%d ledger sweep", i)
		if err := e.Put(ctx, d, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if !e.state.Load().gen.Stats().LexicalPatched {
		t.Fatal("the changes did not patch the lexical index")
	}
	if err := e.SetStatus(ctx, snap.Caps[40].ID, registry.StatusDeprecated, "test"); err != nil {
		t.Fatal(err)
	}
	gen := e.Generation()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	rcs := []registry.RuntimeContext{
		{Tenant: "default", User: "u", Scopes: []string{"*", "admin"}},
		{Tenant: "default", User: "v", Scopes: []string{"dev"}},
	}
	queries := []string{"zqpersist1 ledger sweep", "send a notification to the team", "refund", "reconcile the ledger"}
	for _, k := range []int{3, 11, 40, 97, 250, 301, 555, 790} {
		c := snap.Caps[k]
		queries = append(queries, c.Title, c.Summary, c.ID, registry.ToolName(c.ID))
	}
	compared := 0
	reopen := func(name, wantLog string, wantLoaded bool, alsoLog ...string) {
		t.Helper()
		var log logBuffer
		o := opts
		o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		e, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if e.Generation() != gen {
			t.Fatalf("%s: generation %d, want %d", name, e.Generation(), gen)
		}
		for _, w := range append([]string{wantLog}, alsoLog...) {
			if !strings.Contains(log.String(), w) {
				t.Fatalf("%s: the log does not say %q:\n%s", name, w, log.String())
			}
		}
		st := e.state.Load()
		loaded := st.gen.Stats().Persist.Loaded
		if (len(loaded) > 0) != wantLoaded {
			t.Fatalf("%s: loaded %v", name, loaded)
		}
		got := rankings(t, e, st, queries, rcs)
		if err := e.store.DeleteBlob(persistKey); err != nil {
			t.Fatal(err)
		}
		full := fullState(t, e)
		if l := full.gen.Stats().Persist.Loaded; len(l) > 0 {
			t.Fatalf("%s: the full build loaded %v", name, l)
		}
		want := rankings(t, e, full, queries, rcs)
		if !reflect.DeepEqual(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: from persisted state\n%s\nbuilt\n%s", name, got[i], want[i])
				}
			}
		}
		compared += len(got)
		e.persistedGen.Store(0) // the full build deleted nothing but the name: Close writes it again
	}
	reopen("intact", "persisted index state loaded", true, "rank: persisted term cache loaded", "query: persisted lexicon loaded")
	reopen("again", "persisted index state loaded", true, "rank: persisted term cache loaded", "query: persisted lexicon loaded")

	damage := func(fn func(e *Engine)) {
		t.Helper()
		e, err := Open(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		fn(e)
		e.persistedGen.Store(gen) // Close must not write the state again
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(off func(n int) int) func(e *Engine) {
		return func(e *Engine) {
			key := chunkKey(gen, 0)
			b, err := e.store.GetBlob(key)
			if err != nil {
				t.Fatal(err)
			}
			b[off(len(b))] ^= 0x21
			if err := e.store.PutBlob(key, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	damage(flip(func(n int) int { return n - 10 })) // in the last section, the term cache's
	reopen("a flipped byte in the term cache", "rank: persisted term cache not used, building", true,
		"index: persisted index state loaded", "reason=\"index: persisted state checksum mismatch: section rank.terms",
		"query: persisted lexicon loaded")
	reopen("rewritten after the term cache's flip", "persisted index state loaded", true, "rank: persisted term cache loaded")
	damage(func(e *Engine) { // in the lexicon's section: found by its first bytes
		key := chunkKey(gen, 0)
		b, err := e.store.GetBlob(key)
		if err != nil {
			t.Fatal(err)
		}
		lex := e.state.Load().lex.AppendPersisted(nil)
		i := bytes.Index(b, lex[:64])
		if i < 0 {
			t.Fatal("the lexicon's section is not in the first chunk")
		}
		b[i+40] ^= 0x21
		if err := e.store.PutBlob(key, b); err != nil {
			t.Fatal(err)
		}
	})
	reopen("a flipped byte in the lexicon", "query: persisted lexicon not used, building", true,
		"index: persisted index state loaded", "rank: persisted term cache loaded",
		"reason=\"index: persisted state checksum mismatch: section query.lexicon")
	reopen("rewritten after the lexicon's flip", "persisted index state loaded", true, "query: persisted lexicon loaded",
		"rank: persisted term cache loaded")
	damage(flip(func(n int) int { return n / 3 })) // in the index's sections
	reopen("a flipped byte", "reason=\"index: persisted state checksum mismatch", true)
	reopen("rewritten after the flip", "persisted index state loaded", true)
	damage(flip(func(int) int { return 8 })) // the format version
	reopen("another format", "reason=\"index: persisted state of another format or build: format", false)
	damage(func(e *Engine) {
		if err := e.store.PutBlob(persistKey, persistManifest{gen: gen - 1, chunks: 1}.encode()); err != nil {
			t.Fatal(err)
		}
	})
	reopen("another generation", "persisted index state is of another generation", false)
	reopen("rewritten", "persisted index state loaded", true)
	t.Logf("%d rankings compared", compared)
}

// TestPersistedStateFollowsChanges checks that the state Close keeps is that of the
// generation searched, that the previous generation's chunks are deleted, and that an
// in-memory engine keeps none.
func TestPersistedStateFollowsChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, Seed: testcat.GenerateCatalog(120, 1), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	first := e.Generation()
	if _, err := e.store.GetBlob(chunkKey(first, 0)); err != nil {
		t.Fatalf("the first open kept no index state: %v", err)
	}
	d := e.Snapshot().Caps[7].Clone()
	d.Version++
	d.Eff = nil
	d.Summary += " changed"
	if err := e.Put(ctx, d, "test"); err != nil {
		t.Fatal(err)
	}
	now := e.Generation()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.store.GetBlob(persistKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeManifest(m); err != nil || got.gen != now {
		t.Fatalf("the stored state is of generation %d (%v), want %d", got.gen, err, now)
	}
	if _, err := e.store.GetBlob(chunkKey(first, 0)); err == nil {
		t.Fatal("the previous generation's state was not deleted")
	}
	if l := e.state.Load().gen.Stats().Persist.Loaded; len(l) == 0 {
		t.Fatal("the reopen loaded nothing")
	}

	mem, err := Open(ctx, Options{Seed: testcat.GenerateCatalog(30, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.store.GetBlob(persistKey); err == nil {
		t.Fatal("an in-memory engine kept index state")
	}
}

// TestReopenThenChangesSameAsRebuild reopens a store whose persisted state holds the
// semantic index (of a generation whose indexes were patched), then applies registry
// changes and compares the rankings after each with those of a full rebuild. A reopened
// generation keeps no per-document analysis (no build from scratch does), but every change
// after the reopen, the first included, patches the lexical and semantic indexes and the
// term cache (deriving the analysis it needs: index/reuse_derived.go, rank.NewTermChain).
func TestReopenThenChangesSameAsRebuild(t *testing.T) {
	ctx := context.Background()
	deadlines := map[string]time.Duration{}
	for _, name := range RetrieverNames() {
		deadlines[name] = time.Minute
	}
	opts := Options{Dir: t.TempDir(), Seed: testcat.GenerateCatalog(600, 4), NoSync: true, Deadlines: deadlines}
	e, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	put := func(e *Engine, k, i int) {
		t.Helper()
		d := e.Snapshot().Caps[k].Clone()
		d.Version++
		d.Eff = nil
		d.Summary += fmt.Sprintf(" zqreopen%d quarterly ledger", i)
		if err := e.Put(ctx, d, "test"); err != nil {
			t.Fatal(err)
		}
	}
	put(e, 5, 0)
	put(e, 77, 1)
	if !e.state.Load().gen.Stats().SemanticPatched {
		t.Fatal("the changes before the close did not patch the semantic index")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if l := e.state.Load().gen.Stats().Persist.Loaded; !slices.Contains(l, "semantic") {
		t.Fatalf("the reopen loaded %v", l)
	}
	rcs := []registry.RuntimeContext{{Tenant: "default", User: "u", Scopes: []string{"*", "admin"}}}
	compared := 0
	for i, k := range []int{5, 200, 431, 77} {
		put(e, k, 2+i)
		st := e.state.Load()
		if bs := st.gen.Stats(); !bs.SemanticPatched || !bs.LexicalPatched || !st.terms.Patched() {
			t.Fatalf("change %d after the reopen: semantic index patched %v, lexical %v, term cache %v",
				i, bs.SemanticPatched, bs.LexicalPatched, st.terms.Patched())
		}
		queries := []string{fmt.Sprintf("zqreopen%d quarterly ledger", 2+i), "quarterly ledger", "send a notification to the team"}
		for _, d := range []int{k, 3, 300} {
			c := st.gen.Snapshot().Caps[d]
			queries = append(queries, c.Title, c.Summary)
		}
		got := rankings(t, e, st, queries, rcs)
		full := fullState(t, e)
		if l := full.gen.Stats().Persist.Loaded; len(l) > 0 {
			t.Fatalf("change %d: the full build loaded %v", i, l)
		}
		want := rankings(t, e, full, queries, rcs)
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("change %d after the reopen:\n%s\nbuilt\n%s", i, got[j], want[j])
			}
		}
		compared += len(got)
	}
	t.Logf("%d rankings compared", compared)
}
