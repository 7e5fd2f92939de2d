package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Persisted state (fast open). Persist writes the structures of a generation that are
// expensive to rebuild as a table of named sections; a later Build of the same registry
// generation (Options.Persisted) loads them instead of building them. The bytes are:
//
//	magic "capdxidx" | format (uvarint) | registry generation (uvarint) | documents (uvarint)
//	| snapshot fingerprint (8 bytes) | build fingerprint (8 bytes) | sections (uvarint)
//	| per section: name (uvarint length, bytes), length (uvarint), CRC-32C (4 bytes)
//	| CRC-32C of everything before (4 bytes) | the sections' bodies, in table order
//
// The header must match the snapshot being built (its generation, its number of documents,
// the fingerprint of its ids and versions) and this build of capdex (persistFormat, and the
// build fingerprint: the analysis of probe texts, the concept lexicon's size, the module's
// version and VCS revision, and for a development build the executable's build ID or
// content hash): otherwise nothing is loaded. A section whose checksum or
// decoding fails is rebuilt alone (the lexical section also when it was built with other
// LexicalParams, the semantic section with another embedder); a section of a name this
// build does not know is ignored. A section is added by giving it a name, an encoder
// (persistSections) and a loader (load); a reader of an older format version rebuilds
// everything.

// persistFormat is the version of the bytes Persist writes.
const persistFormat = 1

var persistMagic = [8]byte{'c', 'a', 'p', 'd', 'x', 'i', 'd', 'x'}

// Names of the persisted sections.
const (
	secLexical  = "lexical"
	secExact    = "exact"
	secSemantic = "semantic"
)

// Why persisted state was not used (BuildStats.PersistErr wraps one of them).
var (
	// ErrPersistCorrupt: the bytes do not decode (truncated, damaged, not Persist's).
	ErrPersistCorrupt = errors.New("index: persisted state corrupt")
	// ErrPersistChecksum: a checksum does not match the bytes.
	ErrPersistChecksum = errors.New("index: persisted state checksum mismatch")
	// ErrPersistFormat: written in another format version, or by a build of capdex that
	// analyses text differently.
	ErrPersistFormat = errors.New("index: persisted state of another format or build")
	// ErrPersistStale: written for another registry generation or other capabilities.
	ErrPersistStale = errors.New("index: persisted state of another generation")
)

// PersistResult says what Build did with Options.Persisted.
type PersistResult struct {
	// Loaded names the sections taken from Options.Persisted, in the order Build uses them.
	Loaded []string
	// Err is why the state, or a section of it, was not used (wrapping ErrPersistCorrupt,
	// ErrPersistChecksum, ErrPersistFormat or ErrPersistStale); nil when every section was
	// loaded or no state was given.
	Err error
}

// Persist writes the structures of g that a later Build of the same registry generation
// loads instead of building (Options.Persisted): the lexical and exact indexes and, with a
// sparse embedder, the semantic index. The column view (see ColumnSnapshot), the tree, the
// metadata index and dense vectors are not written: Build rebuilds them.
func (g *Generation) Persist(w io.Writer) error { return g.PersistWith(w, nil) }

// PersistWith is Persist with sections of the caller's besides (by name, written in name
// order after g's own; a name of g's is refused): structures derived from the same
// snapshot that Build does not build, such as the engine's term cache. Build ignores
// them; PersistedSections returns them.
func (g *Generation) PersistWith(w io.Writer, extra map[string][]byte) error {
	secs := g.persistSections()
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		if slices.ContainsFunc(secs, func(s persistSection) bool { return s.name == name }) {
			return fmt.Errorf("index: section %s is the index's", name)
		}
		secs = append(secs, persistSection{name, extra[name]})
	}
	hdr := slices.Clone(persistMagic[:])
	hdr = binary.AppendUvarint(hdr, persistFormat)
	hdr = binary.AppendUvarint(hdr, g.snap.Generation)
	hdr = binary.AppendUvarint(hdr, uint64(g.n))
	hdr = binary.LittleEndian.AppendUint64(hdr, snapshotFingerprint(g.snap))
	hdr = binary.LittleEndian.AppendUint64(hdr, buildFingerprint())
	hdr = binary.AppendUvarint(hdr, uint64(len(secs)))
	for _, s := range secs {
		hdr = appendString(hdr, s.name)
		hdr = binary.AppendUvarint(hdr, uint64(len(s.body)))
		hdr = binary.LittleEndian.AppendUint32(hdr, crc32c(s.body))
	}
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32c(hdr))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, s := range secs {
		if _, err := w.Write(s.body); err != nil {
			return err
		}
	}
	return nil
}

type persistSection struct {
	name string
	body []byte
}

// persistSections encodes every section Persist writes.
func (g *Generation) persistSections() []persistSection {
	secs := []persistSection{
		{secLexical, g.lex.appendPersisted(nil)},
		{secExact, g.exact.appendPersisted(nil, g.n)},
	}
	if g.sem.persistable() {
		secs = append(secs, persistSection{secSemantic, g.sem.appendPersisted(nil, g.n)})
	}
	return secs
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openPersisted checks the header of b against g's snapshot and this build, and returns the
// bodies of the sections whose checksums match, by name, with the error of those that do
// not (nil when all match).
func (g *Generation) openPersisted(b []byte) (map[string][]byte, error) {
	d := &pdec{b: b}
	if m := d.bytes(len(persistMagic)); d.err != nil || string(m) != string(persistMagic[:]) {
		return nil, fmt.Errorf("%w: not persisted index state", ErrPersistCorrupt)
	}
	if f := d.uvarint(); d.err == nil && f != persistFormat {
		return nil, fmt.Errorf("%w: format %d, want %d", ErrPersistFormat, f, persistFormat)
	}
	gen, n := d.uvarint(), d.uvarint()
	snapFP, buildFP := d.u64(), d.u64()
	ns := d.count(3)
	type entry struct {
		name string
		size uint64
		sum  uint32
	}
	var ents []entry
	for range ns {
		ents = append(ents, entry{d.str(), d.uvarint(), d.u32()})
	}
	end := d.off
	sum := d.u32()
	if d.err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrPersistCorrupt, d.err)
	}
	if crc32c(b[:end]) != sum {
		return nil, fmt.Errorf("%w: header", ErrPersistChecksum)
	}
	switch {
	case buildFP != buildFingerprint():
		return nil, fmt.Errorf("%w: written by another build of capdex", ErrPersistFormat)
	case gen != g.snap.Generation || n != uint64(g.n):
		return nil, fmt.Errorf("%w: generation %d of %d documents, want %d of %d", ErrPersistStale, gen, n, g.snap.Generation, g.n)
	case snapFP != snapshotFingerprint(g.snap):
		return nil, fmt.Errorf("%w: other capabilities at generation %d", ErrPersistStale, gen)
	}
	out := make(map[string][]byte, len(ents))
	var errs []error
	for _, e := range ents {
		body := d.bytes(int(min(e.size, math.MaxInt32)))
		if d.err != nil {
			return nil, fmt.Errorf("%w: section %s: %w", ErrPersistCorrupt, e.name, d.err)
		}
		if crc32c(body) != e.sum {
			errs = append(errs, sectionErr{e.name, fmt.Errorf("%w: section %s", ErrPersistChecksum, e.name)})
			continue
		}
		out[e.name] = body
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after the sections", ErrPersistCorrupt, len(b)-d.off)
	}
	return out, errors.Join(errs...)
}

// PersistedSections checks persisted state b (PersistWith) as Build does, against snap and
// this build of capdex, and returns the bodies of its sections whose checksums match, by
// name (the index's and the caller's), with why the state or a section is not usable
// (wrapping ErrPersistCorrupt, ErrPersistChecksum, ErrPersistFormat or ErrPersistStale).
func PersistedSections(b []byte, snap *registry.Snapshot) (map[string][]byte, error) {
	g := &Generation{snap: snap, n: len(snap.Caps)}
	return g.openPersisted(b)
}

// loadPersisted loads into g the sections of b it can (Options.Persisted) and records
// which in g.stats.Persist; every structure not loaded is left for Build to build.
func (g *Generation) loadPersisted(b []byte) {
	p := &g.stats.Persist
	if len(b) == 0 {
		return
	}
	secs, err := g.openPersisted(b)
	errs := []error{ownSections(err, secLexical, secExact, secSemantic)}
	for _, s := range []struct {
		name string
		load func([]byte) error
	}{
		{secLexical, g.loadLexical},
		{secExact, g.loadExact},
		{secSemantic, g.loadSemantic},
	} {
		body, ok := secs[s.name]
		if s.name == secSemantic && !isSparse(g.emb) && !ok {
			continue // a dense embedder's vectors are not persisted
		}
		if !ok {
			if secs != nil && err == nil {
				errs = append(errs, fmt.Errorf("%w: no section %s", ErrPersistCorrupt, s.name))
			}
			continue
		}
		if err := s.load(body); err != nil {
			errs = append(errs, fmt.Errorf("section %s: %w", s.name, err))
			continue
		}
		p.Loaded = append(p.Loaded, s.name)
	}
	p.Err = errors.Join(errs...)
}

// sectionErr is why the section name of persisted state is not usable.
type sectionErr struct {
	name string
	err  error
}

func (e sectionErr) Error() string { return e.err.Error() }
func (e sectionErr) Unwrap() error { return e.err }

// ownSections returns err (of openPersisted) without the errors of sections other than
// names: a section of the caller's (PersistWith) that fails is the caller's to report.
func ownSections(err error, names ...string) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var keep []error
	for _, e := range j.Unwrap() {
		if se, ok := e.(sectionErr); !ok || slices.Contains(names, se.name) {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// isSparse reports whether e is a sparse embedder (whose index the semantic section holds).
func isSparse(e embed.Embedder) bool {
	_, ok := e.(embed.SparseEmbedder)
	return ok
}

// loaded reports whether section name was loaded from Options.Persisted.
func (g *Generation) loaded(name string) bool { return slices.Contains(g.stats.Persist.Loaded, name) }

// snapshotFingerprint hashes the ids and versions of snap's capabilities in docID order: a
// store never holds two definitions of one id and version, so with the registry generation
// it names the capabilities a persisted state was built from.
func snapshotFingerprint(snap *registry.Snapshot) uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, c := range snap.Caps {
		buf = appendString(buf[:0], c.ID)
		buf = binary.AppendVarint(buf, int64(c.Version))
		h.Write(buf)
	}
	return h.Sum64()
}

// persistProbes are texts whose analysis enters the build fingerprint: a build that
// tokenises, folds or normalises them differently reads no state an older one wrote.
var persistProbes = []string{
	"Diagnose the Codex CLI: codex_diagnose --verbose fails with ECONNREFUSED (v2.3.1)",
	"查询微信读书排行榜，删除过期的订单；重新部署服务",
	"Ｆｕｌｌ-width ＡＢＣ, naïve café, straße, İstanbul, ΣΊΣΥΦΟΣ",
	"getUserProfile get-weread-rank queryViolation mcp::server::tool a.b.c_d",
	"restart rollback deploy send email invoice refund weather translate",
}

// buildFingerprint identifies how this build of capdex analyses and indexes text: the
// format, the analysis of persistProbes (terms, concepts, exact
// names), the concept lexicon's size, and the module version and VCS revision when the
// binary carries them; for a development build, the executable's identity
// (persist_build.go).
var buildFingerprint = sync.OnceValue(func() uint64 {
	h := fnv.New64a()
	var buf []byte
	buf = binary.AppendUvarint(buf, persistFormat)
	buf = binary.AppendUvarint(buf, uint64(text.DefaultLexicon().Len()))
	for _, s := range persistProbes {
		for _, t := range text.Analyze(s) {
			buf = appendString(buf, t)
		}
		for _, c := range text.AppendConceptIDs(nil, s) {
			buf = binary.AppendVarint(buf, int64(c))
		}
		buf = binary.LittleEndian.AppendUint64(buf, nameKey(normName(s)))
	}
	bi, ok := debug.ReadBuildInfo()
	buf = appendBuildIdentity(buf, bi, ok, exeIdentity)
	h.Write(buf)
	return h.Sum64()
})

// appendString appends s with its length.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// pdec decodes persisted bytes. The first error sticks: every later read returns zero
// values, so a decoder checks err once at the end (and before using a count).
type pdec struct {
	b   []byte
	off int
	err error
}

func (d *pdec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at byte %d", what, d.off)
	}
}

func (d *pdec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.off:])
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += k
	return v
}

// u32v reads a uvarint that must fit 32 bits.
func (d *pdec) u32v() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail("value out of range")
		return 0
	}
	return uint32(v)
}

// count reads a number of items each taking at least min bytes, refusing one the rest of
// the bytes cannot hold (so a damaged count allocates nothing large).
func (d *pdec) count(minBytes int) int {
	v := d.uvarint()
	if v > uint64(len(d.b)-d.off)/uint64(max(minBytes, 1)) {
		d.fail("count out of range")
		return 0
	}
	return int(v)
}

func (d *pdec) bytes(k int) []byte {
	if d.err != nil {
		return nil
	}
	if k < 0 || k > len(d.b)-d.off {
		d.fail("truncated")
		return nil
	}
	out := d.b[d.off : d.off+k : d.off+k]
	d.off += k
	return out
}

func (d *pdec) str() string { return string(d.bytes(d.count(1))) }

func (d *pdec) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *pdec) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// done fails unless every byte was read.
func (d *pdec) done() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrPersistCorrupt, d.err)
	}
	return nil
}

// crc32c is the CRC-32C (Castagnoli) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
