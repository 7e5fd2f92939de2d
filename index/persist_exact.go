package index

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// The exact section (Persist) holds the exact index as it is:
//
//	documents | names | per name, by key ascending: key (8 bytes), value (uvarint)
//	| lists | per list: refs, per ref: document (uvarint), form (1 byte)
//	| most: words, letters, cjk (uvarints) | roots | per root: the segment (uvarint length, bytes)

// appendPersisted appends the exact section of x (over n documents) to b.
func (x *exactIndex) appendPersisted(b []byte, n int) []byte {
	b = binary.AppendUvarint(b, uint64(n))
	keys := make([]uint64, 0, len(x.names))
	for k := range x.names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint64(b, k)
		b = binary.AppendUvarint(b, uint64(x.names[k]))
	}
	b = binary.AppendUvarint(b, uint64(len(x.multi)))
	for _, refs := range x.multi {
		b = binary.AppendUvarint(b, uint64(len(refs)))
		for _, r := range refs {
			b = binary.AppendUvarint(b, uint64(r.doc))
			b = append(b, r.form)
		}
	}
	for _, v := range [3]int{x.most.words, x.most.letters, x.most.cjk} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	roots := make([]string, 0, len(x.roots))
	for r := range x.roots {
		roots = append(roots, r)
	}
	slices.SortFunc(roots, cmp.Compare)
	b = binary.AppendUvarint(b, uint64(len(roots)))
	for _, r := range roots {
		b = appendString(b, r)
	}
	return b
}

// loadExact sets g's exact index from an exact section, failing with ErrPersistCorrupt
// (g untouched) on anything but the section of an exact index over g's documents.
func (g *Generation) loadExact(b []byte) error {
	d := &pdec{b: b}
	n := uint64(g.n)
	if v := d.uvarint(); d.err == nil && v != n {
		d.fail("documents")
	}
	nn := d.count(9)
	keys := make([]uint64, nn)
	vals := make([]uint32, nn)
	for i := 0; i < nn && d.err == nil; i++ {
		keys[i], vals[i] = d.u64(), d.u32v()
		if i > 0 && keys[i] <= keys[i-1] {
			d.fail("keys out of order")
		}
	}
	nm := d.count(1)
	multi := make([][]exactRef, nm)
	for i := 0; i < nm && d.err == nil; i++ {
		refs := make([]exactRef, d.count(2))
		for j := range refs {
			doc := d.uvarint()
			form := d.bytes(1)
			if d.err != nil || doc >= n || form[0] >= numExact {
				d.fail("bad reference")
				break
			}
			refs[j] = exactRef{doc: uint32(doc), form: form[0]}
		}
		if len(refs) < 2 {
			d.fail("short list")
		}
		multi[i] = refs
	}
	var most [3]int
	for i := range most {
		most[i] = int(d.u32v())
	}
	nr := d.count(1)
	roots := make(map[string]struct{}, nr)
	for range nr {
		if d.err != nil {
			break
		}
		roots[d.str()] = struct{}{}
	}
	x := exactIndex{names: make(map[uint64]uint32, nn), multi: multi, roots: roots,
		most: nameSize{words: most[0], letters: most[1], cjk: most[2]}}
	for i, k := range keys {
		v := vals[i]
		if v&multiRef != 0 && int(v&^multiRef) >= nm || v&multiRef == 0 && (uint64(v>>3) >= n || v&7 >= numExact) {
			d.fail("bad name value")
			break
		}
		x.names[k] = v
	}
	if err := d.done(); err != nil {
		return err
	}
	if len(x.multi) == 0 {
		x.multi = nil
	}
	g.exact = x
	return nil
}
