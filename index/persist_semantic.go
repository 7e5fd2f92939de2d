package index

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"

	"github.com/capdex/capdex/index/embed"
)

// The semantic section (Persist) holds the sparse semantic index in the compacted form a
// build from scratch lays out: every list's postings in one arena, whatever patch arena a
// chain of patched builds left. The forward postings, the common lists and the scales are
// derived again at load, as a build derives them, so a loaded index is the one a build of
// the same snapshot makes (common ids included):
//
//	format (uvarint) | embedder id (uvarint length, bytes) | dimension (uvarint)
//	| embedder fingerprint (8 bytes) | documents | table words | table words × 8 bytes
//	| map features | their raw features (uvarints, in feature id order) | lists | postings
//	| per feature, in feature id order: its list (uvarint: 0 for the next list not yet
//	  used, else how many lists back), its largest absolute value (4 bytes, float32 bits)
//	| per list: its postings (uvarint), then per posting the document (the first, then each
//	  gap minus one, uvarint) and the quantised value (1 byte)
//
// Features are numbered through the rank table (the features of the table's words, in
// increasing order) and then the map (the features beyond the table, or all of them when
// the dimension is too large for one); lists are numbered in the order of their first
// feature, as shareLists and patchSparse number them. The section is loaded only when the
// embedder has the same id and dimension and embeds persistProbes to the same vectors (the
// embedder fingerprint); a build with a dense embedder writes no section.

// semPersistFormat is the version of the semantic section's layout.
const semPersistFormat = 1

// embedderFingerprint hashes the sparse vectors e gives persistProbes.
func embedderFingerprint(e embed.SparseEmbedder) uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, s := range persistProbes {
		v := e.EmbedSparse(s)
		buf = binary.AppendUvarint(buf[:0], uint64(len(v.Idx)))
		for i, f := range v.Idx {
			buf = binary.AppendUvarint(buf, uint64(f))
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v.Val[i]))
		}
		h.Write(buf)
	}
	return h.Sum64()
}

// appendSemanticHeader appends the section's format and the identity of embedder e.
func appendSemanticHeader(b []byte, e embed.SparseEmbedder) []byte {
	b = binary.AppendUvarint(b, semPersistFormat)
	b = appendString(b, e.ID())
	b = binary.AppendUvarint(b, uint64(max(e.Dim(), 0)))
	return binary.LittleEndian.AppendUint64(b, embedderFingerprint(e))
}

// persistable reports whether x is a sparse index the semantic section can hold.
func (x *semIndex) persistable() bool { return x.sparse != nil && x.err == nil }

// appendPersisted appends the semantic section of x, an index over n documents, to b.
func (x *semIndex) appendPersisted(b []byte, n int) []byte {
	b = appendSemanticHeader(b, x.sparse)
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(len(x.ftab)))
	for _, w := range x.ftab {
		b = binary.LittleEndian.AppendUint64(b, w.bits)
	}
	inTable := 0
	for _, w := range x.ftab {
		inTable += bits.OnesCount64(w.bits)
	}
	raws := make([]uint32, len(x.feats)-inTable) // the map's features, by id
	for f, id := range x.fmap {
		raws[int(id)-inTable] = f
	}
	b = binary.AppendUvarint(b, uint64(len(raws)))
	for _, f := range raws {
		b = binary.AppendUvarint(b, uint64(f))
	}
	total := 0
	for l := range x.lists {
		total += int(x.lists[l].df)
	}
	b = binary.AppendUvarint(b, uint64(len(x.lists)))
	b = binary.AppendUvarint(b, uint64(total))
	next := uint32(0)
	for id, fe := range x.feats {
		if fe.list == next {
			b = binary.AppendUvarint(b, 0)
			next++
		} else {
			b = binary.AppendUvarint(b, uint64(next-fe.list))
		}
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x.absMax[id]))
	}
	for l := range x.lists {
		p := x.postings(&x.lists[l])
		b = binary.AppendUvarint(b, uint64(len(p)))
		prev := uint32(0)
		for i, v := range p {
			d := v >> 8
			if i == 0 {
				b = binary.AppendUvarint(b, uint64(d))
			} else {
				b = binary.AppendUvarint(b, uint64(d-prev-1))
			}
			b = append(b, byte(v))
			prev = d
		}
	}
	return b
}

// loadSemantic sets g's sparse semantic index from a semantic section. It fails (with
// ErrPersistFormat for another layout or another embedder, ErrPersistCorrupt otherwise)
// without touching g on anything but the section of an index over g's documents by g's
// embedder.
func (g *Generation) loadSemantic(b []byte) error {
	sp, ok := g.emb.(embed.SparseEmbedder)
	if !ok {
		return fmt.Errorf("%w: a sparse semantic index, for a dense embedder", ErrPersistFormat)
	}
	d := &pdec{b: b}
	if f := d.uvarint(); d.err == nil && f != semPersistFormat {
		return fmt.Errorf("%w: semantic format %d, want %d", ErrPersistFormat, f, semPersistFormat)
	}
	id, dim, fp := d.str(), d.uvarint(), d.u64()
	if d.err == nil && (id != sp.ID() || dim != uint64(max(sp.Dim(), 0)) || fp != embedderFingerprint(sp)) {
		return fmt.Errorf("%w: built with another embedder (%s of %d dimensions, not %s of %d, or other vectors)",
			ErrPersistFormat, id, dim, sp.ID(), sp.Dim())
	}
	if n := d.uvarint(); d.err == nil && (n != uint64(g.n) || g.n > maxSparseDocs) {
		d.fail("documents")
	}
	x := semIndex{sparse: sp, params: currentSemanticParams()}
	words := 0
	if sd := sp.Dim(); sd > 0 && sd <= maxDenseFeatureTable {
		words = (sd + 63) / 64
	}
	if nw := d.count(8); d.err == nil && nw != words {
		d.fail("feature table")
	}
	if d.err == nil && words > 0 {
		x.ftab = make([]rankWord, words)
	} else if d.err == nil {
		x.fmap = map[uint32]uint32{} // no table: every feature in the map, as a build has it
	}
	var r uint32
	for i := range x.ftab {
		x.ftab[i] = rankWord{bits: d.u64(), rank: r}
		r += uint32(bits.OnesCount64(x.ftab[i].bits))
	}
	nm := d.count(1)
	for i := 0; i < nm && d.err == nil; i++ {
		f := d.u32v()
		if x.fmap == nil {
			x.fmap = make(map[uint32]uint32, nm) // features beyond the table
		}
		if _, dup := x.fmap[f]; dup || int(f/64) < len(x.ftab) {
			d.fail("map feature")
		}
		x.fmap[f] = r + uint32(i)
	}
	nf := int(r) + nm
	nl, np := d.count(1), d.count(2)
	if d.err == nil && (nf > (len(d.b)-d.off)/5 || np >= semPatchArena) {
		d.fail("features or postings out of range")
	}
	if d.err == nil {
		x.feats, x.absMax = make([]semFeat, nf), make([]float32, nf)
	}
	next := uint32(0)
	for id := 0; id < nf && d.err == nil; id++ {
		back := d.uvarint()
		switch {
		case back == 0 && int(next) < nl:
			x.feats[id].list = next
			next++
		case back > 0 && back <= uint64(next):
			x.feats[id].list = next - uint32(back)
		default:
			d.fail("feature list")
		}
		m := math.Float32frombits(d.u32())
		if !(m >= 0) || math.IsInf(float64(m), 0) {
			d.fail("largest value")
		}
		x.absMax[id] = m
	}
	if d.err == nil && int(next) != nl {
		d.fail("lists without features")
	}
	if d.err == nil {
		x.lists, x.post = make([]semList, nl), make([]uint32, 0, np)
	}
	n := uint64(g.n)
	for l := 0; l < nl && d.err == nil; l++ {
		df := d.count(2)
		if df == 0 || df > cap(x.post)-len(x.post) {
			d.fail("list length")
			break
		}
		x.lists[l] = semList{start: uint32(len(x.post)), df: uint32(df)}
		least := uint64(0) // the least the next document can be
		for range df {
			doc := least + d.uvarint()
			q := d.bytes(1)
			if d.err != nil || doc >= n || doc < least {
				d.fail("document out of range")
				break
			}
			x.post = append(x.post, uint32(doc)<<8|uint32(q[0]))
			least = doc + 1
		}
	}
	if d.err == nil && len(x.post) != np {
		d.fail("posting total")
	}
	if err := d.done(); err != nil {
		return err
	}
	for id := range x.feats {
		fe := &x.feats[id]
		fe.scale = semScale(x.absMax[id], g.n, x.lists[fe.list].df)
	}
	x.markCommon(g.n)
	x.buildForward(g.n)
	x.fwdExcess = len(x.fwd) - x.commonPost
	g.sem = x
	return nil
}
