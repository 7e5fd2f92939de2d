package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
)

// storedChunks returns the chunk keys of index state in the store that the manifest does
// not name, and the keys under persistKey that are not chunk keys.
func storedChunks(t *testing.T, e *Engine) (unnamed, other []string) {
	t.Helper()
	v, err := e.store.GetBlob(persistKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeManifest(v)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.store.BlobKeys(persistKey + "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		gen, i, ok := parseChunkKey(k)
		switch {
		case !ok:
			other = append(other, k)
		case gen != m.gen || i >= uint64(m.chunks):
			unnamed = append(unnamed, k)
		}
	}
	return unnamed, other
}

// TestPersistDeletesUnnamedChunks: chunks a write cut off before its manifest left (of the
// next generation), chunks past the end of a smaller rewrite of one generation and chunks
// of an older generation are deleted when the state is written next; the named chunks and
// keys under persistKey that are not chunks stay, and the state still loads.
func TestPersistDeletesUnnamedChunks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, Seed: testcat.GenerateCatalog(40, 1), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	gen := e.Generation()
	if unnamed, _ := storedChunks(t, e); len(unnamed) > 0 {
		t.Fatalf("after the first write: unnamed chunks %q", unnamed)
	}
	orphans := []string{chunkKey(gen, 5), chunkKey(gen, 6), chunkKey(gen+1, 0), chunkKey(gen+1, 1), chunkKey(gen-1, 0)}
	for _, k := range append(slices.Clone(orphans), persistKey+"/other") {
		if err := e.store.PutBlob(k, []byte("orphan")); err != nil {
			t.Fatal(err)
		}
	}
	if unnamed, _ := storedChunks(t, e); len(unnamed) != len(orphans) {
		t.Fatalf("planted %d orphans, found %q", len(orphans), unnamed)
	}

	// the same generation written again (Close when the stored one is not known to match)
	st := e.state.Load()
	e.persistedGen.Store(0)
	e.keepPersisted(st.gen, st.terms, st.lex)
	unnamed, other := storedChunks(t, e)
	if len(unnamed) > 0 {
		t.Errorf("after a rewrite of generation %d: unnamed chunks %q", gen, unnamed)
	}
	if !slices.Equal(other, []string{persistKey + "/other"}) {
		t.Errorf("keys under %s that are not chunks: %q, want the planted one kept", persistKey, other)
	}

	// a change, then Close writes the next generation's state
	if err := e.store.PutBlob(chunkKey(gen+7, 0), []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	d := e.Snapshot().Caps[3].Clone()
	d.Version++
	d.Eff = nil
	d.Summary += " changed"
	if err := e.Put(ctx, d, "test"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if unnamed, _ := storedChunks(t, e); len(unnamed) > 0 {
		t.Errorf("after a change and Close: unnamed chunks %q", unnamed)
	}
	if l := e.state.Load().gen.Stats().Persist.Loaded; len(l) == 0 {
		t.Errorf("the state written after the cleanup did not load: %v", e.state.Load().gen.Stats().Persist.Err)
	}
}
