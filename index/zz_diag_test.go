package index

import (
	"fmt"
	"slices"
	"testing"
)

func TestZZDiag(t *testing.T) {
	for _, name := range []string{"seal_tools", "hammerbench_zh", "metatool"} {
		s := loadEvalSet(t, evalDir(), name)
		x := &s.g.sem
		n := s.g.n
		nl := len(x.off) - 1
		var big, bigPost, total int
		for l := 0; l < nl; l++ {
			df := int(x.off[l+1] - x.off[l])
			total += df
			if df*20 > n {
				big++
				bigPost += df
			}
		}
		var qf, found, post, postBig int
		for _, q := range s.queries {
			v := x.sparse.EmbedSparse(q.Query)
			qf += len(v.Idx)
			for _, f := range v.Idx {
				if l, ok := x.sparseList(f); ok {
					found++
					df := int(x.off[l+1] - x.off[l])
					post += df
					if df*20 > n {
						postBig += df
					}
				}
			}
		}
		nq := len(s.queries)
		fmt.Printf("%s n=%d lists=%d postings=%d lists>5%%=%d (post %d) | per query: feats=%d found=%d postings=%d in>5%%=%d\n", name, n, nl, total, big, bigPost, qf/nq, found/nq, post/nq, postBig/nq)
		_ = slices.Sort[[]int]
	}
}
