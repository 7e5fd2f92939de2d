package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry/store"
)

// Fast open: the index structures that are expensive to rebuild (index.Generation.Persist)
// are kept in the store with the registry generation they belong to, and a full build (Open,
// Reload) loads them instead of building them when they match (index.Options.Persisted).
// They are written by the first full build of a generation that found none, and by Close
// when the generation searched is not the one stored. See docs/generations.md, "Fast open".
//
// Badger keeps a value below its value log file size (64 MiB here), so the bytes are
// stored in chunks of persistChunk under index/state/<generation>/<i>, and index/state
// names the generation and the number of chunks (the commit point: the chunks are written
// first). Once the manifest is written, every chunk it does not name is deleted
// (deleteUnnamedChunks): the previous generation's, those a write cut off before its
// manifest left (a crash), and those past the end of a smaller rewrite of one generation.
// A write cut off before its manifest leaves the previous state named.

const (
	persistKey   = "index/state"
	persistChunk = 8 << 20
)

// persistManifest is the value of persistKey.
type persistManifest struct {
	gen    uint64
	chunks int
}

func (m persistManifest) encode() []byte {
	b := binary.AppendUvarint(nil, m.gen)
	return binary.AppendUvarint(b, uint64(m.chunks))
}

func decodeManifest(b []byte) (persistManifest, error) {
	gen, k := binary.Uvarint(b)
	if k <= 0 {
		return persistManifest{}, errors.New("bad generation")
	}
	n, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || k+k2 != len(b) || n > 1<<20 {
		return persistManifest{}, errors.New("bad chunk count")
	}
	return persistManifest{gen: gen, chunks: int(n)}, nil
}

func chunkKey(gen uint64, i int) string { return fmt.Sprintf("%s/%d/%d", persistKey, gen, i) }

// persisted returns the stored index state of registry generation gen, or nil (logging
// why) when there is none for it.
func (e *Engine) persisted(gen uint64) []byte {
	if e.opts.Dir == "" {
		return nil
	}
	b, err := e.store.GetBlob(persistKey)
	if errors.Is(err, store.ErrNotFound) {
		e.log.Info("index: no persisted index state, building", "generation", gen)
		return nil
	}
	if err != nil {
		e.log.Warn("index: reading the persisted index state failed, building", "generation", gen, "err", err)
		return nil
	}
	m, err := decodeManifest(b)
	if err != nil {
		e.log.Warn("index: persisted index state unreadable, building", "generation", gen, "err", err)
		return nil
	}
	if m.gen != gen {
		e.log.Info("index: persisted index state is of another generation, building", "generation", gen, "persisted", m.gen)
		return nil
	}
	var out, last []byte
	for i := range m.chunks {
		// the last chunk first: a damaged count names chunks that are not stored, and
		// nothing is allocated for them
		j := (i + m.chunks - 1) % m.chunks
		c, err := e.store.GetBlob(chunkKey(gen, j))
		if err != nil {
			e.log.Warn("index: persisted index state incomplete, building", "generation", gen, "chunk", j, "err", err)
			return nil
		}
		if i == 0 {
			last, out = c, make([]byte, 0, (m.chunks-1)*persistChunk+len(c))
			continue
		}
		out = append(out, c...)
	}
	return append(out, last...)
}

// logPersisted says what a full build did with the persisted state it was given.
func (e *Engine) logPersisted(g *index.Generation, given bool) {
	p := g.Stats().Persist
	switch {
	case !given:
	case p.Err != nil:
		e.log.Warn("index: persisted index state not used, rebuilding", "generation", g.Snapshot().Generation,
			"loaded", p.Loaded, "reason", p.Err)
	default:
		e.log.Info("index: persisted index state loaded", "generation", g.Snapshot().Generation, "sections", p.Loaded)
		e.persistedGen.Store(g.Snapshot().Generation)
	}
}

// keepPersisted stores g's index state (index.Generation.Persist), with the term cache and
// the query lexicon of the same snapshot as sections of it (persist_terms.go,
// persist_lexicon.go), as the store's, unless it is stored already. It is called with
// reloadMu held: two writes interleaved could delete each other's chunks
// (deleteUnnamedChunks).
func (e *Engine) keepPersisted(g *index.Generation, terms *rank.TermCache, lex *query.Lexicon) {
	gen := g.Snapshot().Generation
	if e.opts.Dir == "" || gen == 0 || e.persistedGen.Load() == gen {
		return
	}
	var b bytes.Buffer
	if err := g.PersistWith(&b, lexiconSections(lex, termSections(terms))); err != nil {
		e.log.Warn("index: persisting the index state failed", "generation", gen, "err", err)
		return
	}
	data := b.Bytes()
	m := persistManifest{gen: gen, chunks: (len(data) + persistChunk - 1) / persistChunk}
	for i := range m.chunks {
		if err := e.store.PutBlob(chunkKey(gen, i), data[i*persistChunk:min(len(data), (i+1)*persistChunk)]); err != nil {
			e.log.Warn("index: persisting the index state failed", "generation", gen, "err", err)
			return
		}
	}
	if err := e.store.PutBlob(persistKey, m.encode()); err != nil {
		e.log.Warn("index: persisting the index state failed", "generation", gen, "err", err)
		return
	}
	e.persistedGen.Store(gen)
	e.deleteUnnamedChunks(m)
	e.log.Debug("index: index state persisted", "generation", gen, "bytes", len(data), "chunks", m.chunks)
}

// deleteUnnamedChunks deletes every stored chunk of index state that m (the manifest just
// written) does not name. Keys under persistKey that are not chunk keys are left alone.
func (e *Engine) deleteUnnamedChunks(m persistManifest) {
	keys, err := e.store.BlobKeys(persistKey + "/")
	if err != nil {
		e.log.Warn("index: listing the stored index state failed", "err", err)
		return
	}
	for _, k := range keys {
		gen, i, ok := parseChunkKey(k)
		if !ok || gen == m.gen && i < uint64(m.chunks) {
			continue
		}
		if err := e.store.DeleteBlob(k); err != nil {
			e.log.Warn("index: deleting an unnamed index state chunk failed", "key", k, "err", err)
			return
		}
	}
}

// parseChunkKey returns the generation and index of chunk key k (chunkKey), or !ok.
func parseChunkKey(k string) (gen, i uint64, ok bool) {
	rest, ok := strings.CutPrefix(k, persistKey+"/")
	if !ok {
		return 0, 0, false
	}
	g, n, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, false
	}
	gen, err1 := strconv.ParseUint(g, 10, 64)
	i, err2 := strconv.ParseUint(n, 10, 64)
	return gen, i, err1 == nil && err2 == nil
}
