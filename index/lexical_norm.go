package index

import "math"

// lexInvTab is the number of field lengths whose normalised field weight lexNorms tabulates
// (longer fields, rare, compute it).
const lexInvTab = 256

// lexRow is the stride of lexNorms.lens: a document's field lengths, a byte per field, 16
// bytes per document (four to a cache line).
const lexRow = 16

// lexLong is the byte of a field length that does not fit one: lexNorms.flen holds it.
const lexLong = 255

// Entry encoding of lexIndex.ftf: the term frequency in the low 16 bits, the field above,
// and ftfMore when the next entry is the same document's.
const (
	ftfField = 16
	ftfMore  = 1 << 31
)

// lexNorms is BM25F's length normalisation, computed at query time: the collection's sums
// of the field lengths (integers, so that they are the same whatever order documents were
// added or removed in), the average field lengths taken from the sums, and for every
// document the normalised weight of each of its fields (row). An entry's impact is a
// function of its term frequencies, its document's field lengths and the averages alone,
// computed the same way wherever it is computed (impact), with every float32 operation
// rounded explicitly (a conversion forbids fused multiply-adds), so a build from scratch
// and any other way of reaching the same documents give the same bits.
type lexNorms struct {
	lens []uint8  // d*lexRow+f: the length of field f of document d, or lexLong
	flen []uint16 // d*numFields+f: the length of field f of document d
	sum  [numFields]uint64
	docs [numFields]uint32 // documents with a non-empty field f
	avg  [numFields]float32
	b    [numFields]float32
	inv  [lexRow][lexInvTab]float32 // inv[f][l]: invOf(f, l), for l < lexLong (f < numFields)
	k1   float32
	kp1  float32 // k1 + 1
}

// init sets z over the field lengths flen (d*numFields+f) with the parameters p.
func (z *lexNorms) init(flen []uint16, p LexicalParams) {
	z.sum, z.docs = [numFields]uint64{}, [numFields]uint32{}
	for i, l := range flen {
		if l > 0 {
			f := i % numFields
			z.sum[f] += uint64(l)
			z.docs[f]++
		}
	}
	z.k1 = float32(p.K1)
	z.kp1 = float32(z.k1 + 1)
	for f := range numFields {
		switch f {
		case fTitle, fAliases, fID:
			z.b[f] = float32(p.BName)
		case fSummary:
			z.b[f] = float32(p.BSummary)
		default:
			z.b[f] = float32(p.BOther)
		}
	}
	z.averages()
	n := len(flen) / numFields
	z.flen = flen
	z.lens = make([]uint8, n*lexRow)
	for d := range n {
		z.setRow(d, flen[d*numFields:(d+1)*numFields])
	}
}

// averages computes the average field lengths from the sums, and the table of inv.
func (z *lexNorms) averages() {
	for f := range numFields {
		z.avg[f] = 0
		if z.docs[f] > 0 {
			z.avg[f] = float32(float64(z.sum[f]) / float64(z.docs[f]))
		}
		for l := range lexInvTab {
			z.inv[f][l] = z.invOf(f, uint16(l))
		}
	}
}

// setRow sets the row of document d from its field lengths.
func (z *lexNorms) setRow(d int, flen []uint16) {
	row := z.lens[d*lexRow : (d+1)*lexRow]
	for f, l := range flen[:numFields] {
		row[f] = uint8(min(l, lexLong))
	}
}

// weight is invOf(f, the length of field f of document d) for the byte l of its length.
func (z *lexNorms) weight(d, f uint32, l uint8) float32 {
	if l < lexLong {
		return z.inv[f&(lexRow-1)][l]
	}
	return z.invOf(int(f), z.flen[d*numFields+f])
}

// invOf is field f's weight divided by its length normalisation at length l.
func (z *lexNorms) invOf(f int, l uint16) float32 {
	norm := float32(1)
	if a := z.avg[f]; a > 0 {
		b := z.b[f]
		norm = float32(float32(1-b) + float32(b*float32(float32(l)/a)))
	}
	return float32(fieldWeights[f] / norm)
}

// impact returns the impact of document d's entries of ftf from p on (the saturated sum
// over its fields of the term frequency times the field's normalised weight), their field
// mask and the position after them.
func (z *lexNorms) impact(d uint32, ftf []uint32, p int) (float32, uint32, int) {
	row := z.lens[int(d)*lexRow : int(d+1)*lexRow : int(d+1)*lexRow]
	var wtf float32
	var mask uint32
	for {
		e := ftf[p]
		p++
		f := e >> ftfField & (lexRow - 1)
		wtf = float32(wtf + float32(float32(e&0xffff)*z.weight(d, f, row[f])))
		mask |= 1 << f
		if e&ftfMore == 0 {
			break
		}
	}
	return float32(float32(wtf*z.kp1) / float32(z.k1+wtf)), mask, p
}

// lexScale returns the fixed-point scale of a lexical query whose terms weigh ws in all:
// the greatest power of two at which the sum of every term's greatest contribution
// (weight × (k1+1), impacts being below k1+1) stays below 2^31.
func lexScale(ws float64, kp1 float32) float32 {
	top := ws * float64(kp1)
	if !(top > 0) || math.IsInf(top, 0) {
		return 1
	}
	_, e := math.Frexp(top) // top < 2^e
	return float32(math.Ldexp(1, min(max(31-e, -100), 100)))
}
