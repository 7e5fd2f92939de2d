package embed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// countingEmbedder records every batch it is asked to embed.
type countingEmbedder struct {
	mu      sync.Mutex
	batches [][]string
	err     error
	short   bool // answer one vector too few
}

func (c *countingEmbedder) ID() string { return "counting-v1" }
func (c *countingEmbedder) Dim() int   { return 2 }
func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.batches = append(c.batches, slices.Clone(texts))
	c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1}
	}
	if c.short {
		out = out[1:]
	}
	return out, nil
}

func TestWithCache(t *testing.T) {
	inner := &countingEmbedder{}
	mc := NewMemoryCache(100)
	e := WithCache(inner, mc)
	if e.ID() != inner.ID() || e.Dim() != 2 {
		t.Fatalf("ID %q Dim %d", e.ID(), e.Dim())
	}
	if _, ok := e.(SparseEmbedder); ok {
		t.Fatal("a dense embedder became sparse")
	}
	ctx := context.Background()

	steps := []struct {
		name        string
		texts       []string
		wantBatches [][]string
	}{
		{name: "all misses, duplicates sent once", texts: []string{"a", "bb", "a"}, wantBatches: [][]string{{"a", "bb"}}},
		{name: "all hits", texts: []string{"bb", "a"}, wantBatches: [][]string{{"a", "bb"}}},
		{name: "only misses sent, in one batch", texts: []string{"a", "ccc", "bb", "dddd"}, wantBatches: [][]string{{"a", "bb"}, {"ccc", "dddd"}}},
		{name: "empty", texts: nil, wantBatches: [][]string{{"a", "bb"}, {"ccc", "dddd"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := e.Embed(ctx, st.texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(st.texts) {
				t.Fatalf("%d vectors for %d texts", len(got), len(st.texts))
			}
			for i, s := range st.texts {
				if got[i][0] != float32(len(s)) {
					t.Errorf("vector %d = %v, not the one of %q", i, got[i], s)
				}
			}
			if !slices.EqualFunc(inner.batches, st.wantBatches, slices.Equal) {
				t.Errorf("batches %q, want %q", inner.batches, st.wantBatches)
			}
		})
	}
	if mc.Len() != 4 {
		t.Errorf("cache holds %d vectors, want 4", mc.Len())
	}
	key := CacheKey(inner, "a")
	if !strings.HasPrefix(key, "counting-v1:") || len(key) != len("counting-v1:")+64 {
		t.Errorf("CacheKey = %q", key)
	}
	// A stale vector of another dimension is a miss.
	if err := mc.Put(CacheKey(inner, "zz"), []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Embed(ctx, []string{"zz"}); err != nil || len(got[0]) != 2 {
		t.Fatalf("stale entry served: %v %v", got, err)
	}
}

func TestWithCacheErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, err := WithCache(&countingEmbedder{err: boom}, NewMemoryCache(4)).Embed(context.Background(), []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("inner error = %v", err)
	}
	if _, err := WithCache(&countingEmbedder{short: true}, NewMemoryCache(4)).Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, ErrResponse) {
		t.Fatalf("short answer error = %v", err)
	}
	inner := &countingEmbedder{}
	if WithCache(inner, nil) != Embedder(inner) {
		t.Fatal("WithCache with a nil cache does not return the embedder")
	}
}

func TestWithCacheKeepsSparse(t *testing.T) {
	h := NewHashed()
	e := WithCache(h, NewMemoryCache(4))
	se, ok := e.(SparseEmbedder)
	if !ok {
		t.Fatal("WithCache(Hashed) is not a SparseEmbedder")
	}
	if d := se.EmbedSparse("删除日程").Dot(h.EmbedSparse("删除日程")); d < 0.9999 {
		t.Fatalf("EmbedSparse through the cache differs (cos %v)", d)
	}
	if e.ID() != h.ID() {
		t.Fatalf("ID %q", e.ID())
	}
}

func TestMemoryCacheLRU(t *testing.T) {
	c := NewMemoryCache(2)
	put := func(k string, x float32) {
		t.Helper()
		if err := c.Put(k, []float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 1)
	put("b", 2)
	if _, ok := c.Get("a"); !ok { // a is now most recent
		t.Fatal("a missing")
	}
	put("c", 3) // evicts b
	if _, ok := c.Get("b"); ok {
		t.Error("b was not evicted")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	put("a", 10) // overwrite keeps the size
	if v, _ := c.Get("a"); v[0] != 10 || c.Len() != 2 {
		t.Errorf("overwrite: %v, len %d", v, c.Len())
	}
	v := []float32{5}
	put("d", 0)
	if err := c.Put("e", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 99 // the cache keeps a copy
	if got, _ := c.Get("e"); got[0] != 5 {
		t.Errorf("cache shares the caller's slice: %v", got)
	}
	if NewMemoryCache(0).n != 1 {
		t.Error("NewMemoryCache(0) does not hold at least one vector")
	}

	var wg sync.WaitGroup
	cc := NewMemoryCache(16)
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; i < 500; i++ {
				k := string(rune('a' + (g*7+i)%26))
				_ = cc.Put(k, []float32{float32(i)})
				cc.Get(k)
			}
		})
	}
	wg.Wait()
	if cc.Len() > 16 {
		t.Errorf("concurrent cache holds %d vectors, cap 16", cc.Len())
	}
}
