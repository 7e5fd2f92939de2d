package index

import (
	"github.com/RoaringBitmap/roaring/v2"
)

// allowBits returns allow as a dense bitset over [0, n) in s's buffer (nil when allow is
// nil or holds every doc of [0, n): everything allowed). Bits of allow at or above n are
// ignored.
func (s *scratch) allowBits(allow *roaring.Bitmap, n int) []uint64 {
	if allow == nil {
		return nil
	}
	st := allow.Stats() // one pass over the containers, no values
	if !allow.IsEmpty() && st.Cardinality == uint64(n) && int(allow.Maximum()) < n {
		return nil
	}
	words := (n + 63) / 64
	if cap(s.bits) < words+1024 { // WriteDenseTo copies whole 1024-word containers
		s.bits = make([]uint64, words+1024)
	}
	bits := s.bits[:cap(s.bits)]
	clear(bits)
	switch {
	case allow.IsEmpty():
	case 2*st.ArrayContainerValues >= st.Cardinality:
		// mostly sorted arrays: set the bits word by word, which WriteDenseTo's
		// read-modify-write of one word per value makes a chain of stores
		s.arrayToDense(allow, bits[:words])
	default:
		if int(allow.Maximum()) >= n {
			allow = allow.Clone()
			allow.RemoveRange(uint64(n), uint64(allow.Maximum())+1)
		}
		allow.WriteDenseTo(bits)
	}
	return bits[:words]
}

// arrayToDense sets the bits of allow's values below len(bits)*64, reading them in batches
// in increasing order and building each word in a register.
func (s *scratch) arrayToDense(allow *roaring.Bitmap, bits []uint64) {
	var it roaring.ManyIntIterator
	it.Initialize(allow)
	if s.allowBuf == nil {
		s.allowBuf = make([]uint32, 1024)
	}
	buf := s.allowBuf
	limit := uint32(len(bits) * 64)
	cur, word := uint32(0), uint64(0)
	for {
		k := it.NextMany(buf)
		if k == 0 {
			break
		}
		for _, x := range buf[:k] {
			if x >= limit {
				bits[cur] |= word
				return
			}
			if i := x >> 6; i != cur {
				bits[cur] |= word
				cur, word = i, 0
			}
			word |= 1 << (x & 63)
		}
	}
	bits[cur] |= word
}

// has reports whether d is in the dense bitset bits (nil means every doc).
func has(bits []uint64, d uint32) bool {
	return bits == nil || bits[d>>6]&(1<<(d&63)) != 0
}
