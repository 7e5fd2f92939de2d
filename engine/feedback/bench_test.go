package feedback

import (
	"fmt"
	"testing"

	"github.com/capdex/capdex/bench/cputime"
)

// BenchmarkVotes: one query against a tenant that learned n successful searches of a
// 200-word vocabulary (about metatool's replayed half at n = 5000), every one holding the
// common word "find". It reports the CPU time per vote (cpu-ns/op) next to wall time, which
// a loaded machine stretches.
func BenchmarkVotes(b *testing.B) {
	for _, n := range []int{500, 5000, 50000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r, err := New(nopStore{}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			for i := range n {
				s := fmt.Sprint("s", i)
				q := fmt.Sprintf("find w%d w%d w%d and w%d for me", i%200, (i*7)%200, (i*13)%200, (i*31)%200)
				r.Searched("t", s, fmt.Sprint("u", i%50), q, []string{fmt.Sprint("cap", i%200)}, false)
				r.Ran("t", s, fmt.Sprint("cap", i%200), true)
			}
			r.Votes("t", "warm up")
			b.ResetTimer()
			votes, cpu := 0, cputime.Process()
			for i := range b.N {
				votes += len(r.Votes("t", fmt.Sprintf("please find w%d and w%d", i%200, (i*3)%200)))
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(votes)/float64(b.N), "votes/op")
		})
	}
}
