package embed

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gramEdgeTexts are words around the n-gram paths' edges: ASCII words of 1 to 70 bytes
// (n-grams up to maxGramRunes), words with one non-ASCII rune anywhere, and runs of CJK
// and mixed scripts.
func gramEdgeTexts() []string {
	var texts []string
	r := rand.New(rand.NewPCG(5, 6))
	letters := "abcdefghijklmnopqrstuvwxyz0123456789"
	for n := 1; n <= 70; n++ {
		var b strings.Builder
		for range n {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		w := b.String()
		texts = append(texts, w, "the "+w+" of "+w, strings.ToUpper(w), w[:n/2]+"é"+w[n/2:], w+"日程"+w)
	}
	alphabet := []rune("abcxyzéü日程删除更新Ωж🙂_-.' 0123456789")
	for range 400 {
		var b strings.Builder
		for range 1 + r.IntN(120) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

func sameVector(a, b SparseVector) bool {
	if len(a.Idx) != len(b.Idx) || len(a.Val) != len(b.Val) {
		return false
	}
	for i := range a.Idx {
		if a.Idx[i] != b.Idx[i] || math.Float32bits(a.Val[i]) != math.Float32bits(b.Val[i]) {
			return false
		}
	}
	return true
}

// TestEmbedSparseGramEdges checks the ASCII n-gram path and the CJK features against the
// reference embedder on words at the paths' edges, at every dimension kind.
func TestEmbedSparseGramEdges(t *testing.T) {
	texts := gramEdgeTexts()
	for _, dim := range []int{DefaultHashedDim, 512, 1000, 1 << 20, 3, 1} {
		h := NewHashedDim(dim)
		for _, s := range texts {
			if got, want := h.EmbedSparse(s), h.refEmbedSparse(s); !sameVector(got, want) {
				t.Fatalf("%s: %.80q: %v, want %v", h.ID(), s, got, want)
			}
		}
	}
}

// TestEmbedSparseInto checks that EmbedSparseInto equals EmbedSparse whatever buffers it
// is given: none, too small, large and dirty, or the previous vector's.
func TestEmbedSparseInto(t *testing.T) {
	texts := append(equivTexts(t), gramEdgeTexts()...)
	h := NewHashed()
	var prev SparseVector
	big := SparseVector{Idx: make([]uint32, 5000), Val: make([]float32, 5000)}
	for i := range big.Idx {
		big.Idx[i], big.Val[i] = uint32(i*7), float32(i)
	}
	for i, s := range texts {
		want := h.EmbedSparse(s)
		for _, dst := range []SparseVector{{}, {Idx: make([]uint32, 1), Val: make([]float32, 1)}, big, prev} {
			got := h.EmbedSparseInto(dst, s)
			if !sameVector(got, want) {
				t.Fatalf("text %d %.80q: into %d/%d: %v, want %v", i, s, cap(dst.Idx), cap(dst.Val), got, want)
			}
		}
		prev = h.EmbedSparseInto(prev, s)
		if !sameVector(prev, want) {
			t.Fatalf("text %d %.80q: into the previous vector: %v, want %v", i, s, prev, want)
		}
		if len(want.Idx) > 0 && (cap(want.Idx) != len(want.Idx) || cap(want.Val) != len(want.Val)) {
			t.Fatalf("text %d: EmbedSparse has capacity %d/%d for %d entries", i, cap(want.Idx), cap(want.Val), len(want.Idx))
		}
	}
	var _ SparseIntoEmbedder = h
}
