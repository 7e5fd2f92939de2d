package rank

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIDFSumOrderFree sums random idf weights in shuffled orders: the fixed-point sum is
// the same in every order, and within 2^-39 per term of the float64 sum (its reference).
func TestIDFSumOrderFree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for trial := range 200 {
		w := make([]float32, 1+r.IntN(120))
		for i := range w {
			w[i] = float32(math.Log(1 + (1e5+0.5)/(float64(r.IntN(100_000))+0.5)))
		}
		var first idfSum
		ref := 0.0
		for _, x := range w {
			first.add(x)
			ref += float64(x)
		}
		for range 5 {
			r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
			var s idfSum
			for _, x := range w {
				s.add(x)
			}
			if s != first {
				t.Fatalf("trial %d: %d terms summed to %v, in another order %v", trial, len(w), first.value(), s.value())
			}
		}
		if d := math.Abs(first.value() - ref); d > float64(len(w))/(1<<39) {
			t.Fatalf("trial %d: fixed-point sum %v, float64 sum %v", trial, first.value(), ref)
		}
	}
}
