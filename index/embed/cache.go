package embed

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
)

// Cache stores vectors by key. Implementations are safe for concurrent use; callers must
// not modify a vector after Put or one returned by Get.
type Cache interface {
	Get(key string) ([]float32, bool)
	Put(key string, v []float32) error
}

// CacheKey is the cache key of a text for an embedder: e.ID() + ":" + hex(sha256(text)).
func CacheKey(e Embedder, text string) string {
	sum := sha256.Sum256([]byte(text))
	return e.ID() + ":" + hex.EncodeToString(sum[:])
}

// WithCache returns e with c in front: texts found in c are not embedded again, and all
// misses of a call go to e in one Embed call (duplicates sent once). A cached vector whose
// length differs from e.Dim() is treated as a miss. When e is a SparseEmbedder, so is the
// result (EmbedSparse is passed through uncached). A nil c returns e.
func WithCache(e Embedder, c Cache) Embedder {
	if c == nil {
		return e
	}
	ce := &cached{e: e, c: c}
	if se, ok := e.(SparseEmbedder); ok {
		return &cachedSparse{cached: ce, se: se}
	}
	return ce
}

type cached struct {
	e Embedder
	c Cache
}

type cachedSparse struct {
	*cached
	se SparseEmbedder
}

// EmbedSparse is the wrapped embedder's, uncached.
func (c *cachedSparse) EmbedSparse(text string) SparseVector { return c.se.EmbedSparse(text) }

// ID is the wrapped embedder's.
func (c *cached) ID() string { return c.e.ID() }

// Dim is the wrapped embedder's.
func (c *cached) Dim() int { return c.e.Dim() }

// Embed serves hits from the cache and embeds the misses in one call.
func (c *cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([]string, len(texts))
	var missTexts []string
	missAt := map[string][]int{} // text → positions waiting for it
	dim := c.e.Dim()
	for i, t := range texts {
		keys[i] = CacheKey(c.e, t)
		if v, ok := c.c.Get(keys[i]); ok && (dim == 0 || len(v) == dim) {
			out[i] = v
			continue
		}
		if _, seen := missAt[t]; !seen {
			missTexts = append(missTexts, t)
		}
		missAt[t] = append(missAt[t], i)
	}
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := c.e.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missTexts) {
		return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrResponse, c.e.ID(), len(vecs), len(missTexts))
	}
	for k, t := range missTexts {
		at := missAt[t]
		// A failed cache write costs a recomputation later, never a wrong vector, so
		// the error does not fail the search.
		_ = c.c.Put(keys[at[0]], vecs[k])
		for _, i := range at {
			out[i] = vecs[k]
		}
	}
	return out, nil
}

// MemoryCache is an in-memory LRU Cache of at most n vectors. It is safe for concurrent
// use.
type MemoryCache struct {
	mu    sync.Mutex // guards everything below
	n     int
	ll    *list.List // front: most recently used; values are *memEntry
	items map[string]*list.Element
}

type memEntry struct {
	key string
	v   []float32
}

// NewMemoryCache returns an LRU cache holding at most n vectors (at least 1).
func NewMemoryCache(n int) *MemoryCache {
	return &MemoryCache{n: max(n, 1), ll: list.New(), items: map[string]*list.Element{}}
}

// Get returns the vector stored under key and marks it recently used.
func (m *MemoryCache) Get(key string) ([]float32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, false
	}
	m.ll.MoveToFront(el)
	return el.Value.(*memEntry).v, true
}

// Put stores a copy of v under key, evicting the least recently used vector when full.
func (m *MemoryCache) Put(key string, v []float32) error {
	v = slices.Clone(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		el.Value.(*memEntry).v = v
		m.ll.MoveToFront(el)
		return nil
	}
	m.items[key] = m.ll.PushFront(&memEntry{key: key, v: v})
	for m.ll.Len() > m.n {
		last := m.ll.Back()
		m.ll.Remove(last)
		delete(m.items, last.Value.(*memEntry).key)
	}
	return nil
}

// Len is the number of vectors held.
func (m *MemoryCache) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len()
}
