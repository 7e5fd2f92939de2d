package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/capdex/capdex/index/text"
)

// The lexical section (Persist) holds what a search reads of the lexical index but the
// derived numbers: the parameters, every term that occurs with its postings and entries,
// and the field lengths of every document. idf, the norms and the impacts are derived
// again at load (the impacts lazily, per term at its first query, as a patched index's):
//
//	parameters (6 × 8 bytes, float64 bits) | documents | terms | postings | entries
//	| per term: the term (uvarint length, bytes), its postings, its entries, the documents
//	  (the first, then each gap minus one, uvarints), the entries (uvarint
//	  tf<<5 | field<<1 | 1 when the document's next entry follows)
//	| field lengths (documents × numFields uvarints)
//
// Terms are written in term-id order, those no document holds left out (a patched index
// may keep some), so a loaded index numbers them 0, 1, ... whatever ids the written one
// had: scores do not depend on term ids (lexical_score.go).

// lexParamsBits returns p's values in the order the section holds them.
func lexParamsBits(p LexicalParams) [6]uint64 {
	var out [6]uint64
	for i, f := range [6]float64{p.K1, p.BName, p.BSummary, p.BOther, p.ClauseLift, p.ClauseMass} {
		out[i] = math.Float64bits(f)
	}
	return out
}

// appendPersisted appends the lexical section of x to b.
func (x *lexIndex) appendPersisted(b []byte) []byte {
	for _, v := range lexParamsBits(x.params) {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(x.norms.flen)/numFields))
	names := make([]string, len(x.df))
	for _, m := range []map[string]uint32{x.dict, x.more} {
		for t, id := range m {
			names[id] = t
		}
	}
	var nt, np, ne int
	for id, df := range x.df {
		if df > 0 {
			docs, ftf := x.list(uint32(id))
			nt, np, ne = nt+1, np+len(docs), ne+len(ftf)
		}
	}
	b = binary.AppendUvarint(b, uint64(nt))
	b = binary.AppendUvarint(b, uint64(np))
	b = binary.AppendUvarint(b, uint64(ne))
	for id, df := range x.df {
		if df == 0 {
			continue
		}
		docs, ftf := x.list(uint32(id))
		b = appendString(b, names[id])
		b = binary.AppendUvarint(b, uint64(len(docs)))
		b = binary.AppendUvarint(b, uint64(len(ftf)))
		for i, d := range docs {
			if i == 0 {
				b = binary.AppendUvarint(b, uint64(d))
			} else {
				b = binary.AppendUvarint(b, uint64(d-docs[i-1]-1))
			}
		}
		for _, e := range ftf {
			v := uint64(e&0xffff)<<5 | uint64(e>>ftfField&0xf)<<1
			if e&ftfMore != 0 {
				v |= 1
			}
			b = binary.AppendUvarint(b, v)
		}
	}
	for _, l := range x.norms.flen {
		b = binary.AppendUvarint(b, uint64(l))
	}
	return b
}

// loadLexical sets g's lexical index from a lexical section. It fails (with
// ErrPersistCorrupt, or ErrPersistFormat for other parameters) without touching g on
// anything but the section of a lexical index over g's documents.
func (g *Generation) loadLexical(b []byte) error {
	d := &pdec{b: b}
	params := currentLexicalParams()
	for _, v := range lexParamsBits(params) {
		if d.u64() != v && d.err == nil {
			return fmt.Errorf("%w: built with other lexical parameters", ErrPersistFormat)
		}
	}
	if n := d.uvarint(); d.err == nil && n != uint64(g.n) {
		d.fail("documents")
	}
	nt, np, ne := d.count(3), d.count(1), d.count(1)
	x := lexIndex{
		dict: make(map[string]uint32, nt),
		off:  make([]uint32, 1, nt+1),
		eoff: make([]uint32, 1, nt+1),
		docs: make([]uint32, 0, np),
		ftf:  make([]uint32, 0, ne),
		df:   make([]uint32, 0, nt),
	}
	n := uint64(g.n)
	for t := 0; t < nt && d.err == nil; t++ {
		term := d.str()
		if _, dup := x.dict[term]; dup {
			d.fail("repeated term")
		}
		x.dict[term] = uint32(t)
		tp, te := d.count(1), d.count(1)
		if tp == 0 || te < tp || tp > cap(x.docs)-len(x.docs) || te > cap(x.ftf)-len(x.ftf) {
			d.fail("list length")
			break
		}
		next := uint64(0) // the least the next document can be
		for range tp {
			doc := next + d.uvarint()
			if doc >= n || doc < next {
				d.fail("document out of range")
				break
			}
			x.docs = append(x.docs, uint32(doc))
			next = doc + 1
		}
		ends := 0
		for i := range te {
			v := d.uvarint()
			tf, f, more := v>>5, v>>1&0xf, v&1
			if tf == 0 || tf > 0xffff || f >= numFields || more == 1 && i == te-1 {
				d.fail("bad entry")
				break
			}
			e := uint32(f)<<ftfField | uint32(tf)
			if more == 1 {
				e |= ftfMore
			} else {
				ends++
			}
			x.ftf = append(x.ftf, e)
		}
		if ends != tp && d.err == nil {
			d.fail("entries do not match the postings")
		}
		x.off = append(x.off, uint32(len(x.docs)))
		x.eoff = append(x.eoff, uint32(len(x.ftf)))
		x.df = append(x.df, uint32(tp))
	}
	if d.err == nil && (len(x.docs) != np || len(x.ftf) != ne) {
		d.fail("list totals")
	}
	flen := make([]uint16, 0, g.n*numFields)
	for range g.n * numFields {
		if d.err != nil {
			break
		}
		l := d.uvarint()
		if l > math.MaxUint16 {
			d.fail("field length")
		}
		flen = append(flen, uint16(l))
	}
	if err := d.done(); err != nil {
		return err
	}
	x.params = params
	x.concepts = make([]atomic.Pointer[[]uint32], text.DefaultLexicon().Len())
	x.vocab = new(lexVocab)
	x.norms.init(flen, params)
	x.idf = make([]float32, nt)
	for t, df := range x.df {
		x.idf[t] = lexIDF(g.n, df)
	}
	x.cache = make(lexImpactCache, nt)
	g.lex = x
	g.stats.Terms, g.stats.Postings = nt, np
	return nil
}
