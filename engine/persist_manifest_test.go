package engine

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/capdex/capdex/index/testcat"
)

// TestPersistedManifestCountBounded damages the chunk count of the stored manifest (a
// count of 100 where one chunk of 4 MiB is stored): reading the state must fail on the
// missing chunk without allocating for the chunks the count claims (400 MiB); the chunks
// of a state of three are read back in order.
func TestPersistedManifestCountBounded(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: t.TempDir(), Seed: testcat.GenerateCatalog(20, 1), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	gen := e.Generation()
	if err := e.store.PutBlob(chunkKey(gen, 0), make([]byte, 4<<20)); err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutBlob(persistKey, persistManifest{gen: gen, chunks: 100}.encode()); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := e.persisted(gen)
	runtime.ReadMemStats(&after)
	if b != nil {
		t.Fatalf("%d bytes of state read with 99 chunks missing", len(b))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Fatalf("reading a manifest that names 100 chunks of which one exists allocated %d MiB", got>>20)
	}

	// three chunks are read back in order
	var want []byte
	for i, n := range []int{persistChunk, persistChunk, 10} {
		c := bytes.Repeat([]byte{byte(i + 1)}, n)
		want = append(want, c...)
		if err := e.store.PutBlob(chunkKey(gen, i), c); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.PutBlob(persistKey, persistManifest{gen: gen, chunks: 3}.encode()); err != nil {
		t.Fatal(err)
	}
	if got := e.persisted(gen); !bytes.Equal(got, want) {
		t.Fatalf("three chunks read back as %d bytes, want %d", len(got), len(want))
	}
}
