package embed

import (
	"context"
	"math"
)

// Embedder turns texts into L2-normalised vectors of Dim dimensions. Implementations are
// safe for concurrent use.
type Embedder interface {
	// ID names the embedder and everything that shapes its vectors (model, version,
	// dimension), so a cache keyed by it never serves a stale vector.
	ID() string
	// Dim is the length of every vector Embed returns (0 while an HTTP embedder has not
	// learned it yet).
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// SparseVector is a sparse L2-normalised vector: Idx strictly increasing, Val the weights.
type SparseVector struct {
	Idx []uint32
	Val []float32
}

// SparseEmbedder is an Embedder whose vectors are sparse; EmbedSparse is the cheap form
// for inverted-index scoring.
type SparseEmbedder interface {
	Embedder
	EmbedSparse(text string) SparseVector
}

// SparseIntoEmbedder is a SparseEmbedder that can reuse the buffers of a vector the caller
// is done with: EmbedSparseInto(dst, text) equals EmbedSparse(text), written in dst.Idx
// and dst.Val when their capacity holds it (so it no longer holds dst).
type SparseIntoEmbedder interface {
	SparseEmbedder
	EmbedSparseInto(dst SparseVector, text string) SparseVector
}

// Len is the number of non-zero entries.
func (v SparseVector) Len() int { return len(v.Idx) }

// Dot is the dot product of two sparse vectors (their cosine, as both are normalised).
func (v SparseVector) Dot(o SparseVector) float32 {
	var s float32
	i, j := 0, 0
	for i < len(v.Idx) && j < len(o.Idx) {
		switch a, b := v.Idx[i], o.Idx[j]; {
		case a == b:
			s += v.Val[i] * o.Val[j]
			i++
			j++
		case a < b:
			i++
		default:
			j++
		}
	}
	return s
}

// Dense expands v into a dense vector of dim entries; indices at or above dim are dropped.
func (v SparseVector) Dense(dim int) []float32 {
	out := make([]float32, dim)
	for k, i := range v.Idx {
		if int(i) < dim {
			out[i] = v.Val[k]
		}
	}
	return out
}

// Dot is the dot product of two dense vectors of the same length (the cosine when both
// are normalised); extra entries of the longer one are ignored.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Normalize scales v in place to unit L2 norm; a zero vector is left as is.
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}
