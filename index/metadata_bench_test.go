package index

import "testing"

// BenchmarkMetadataCatalog times the metadata retriever on the generated catalogues, under a
// caller's filter, on the structured queries the engine derives from text (metaQueries
// without a Match): the current implementation beside the frozen reference of
// metadata_equiv_test.go.
func BenchmarkMetadataCatalog(b *testing.B) {
	impls := []retrieverImpl{{"reference", refRetrieveMetadata}, {"current", (*Generation).retrieveMetadata}}
	for _, size := range benchSizes {
		if testing.Short() && size.n > 10000 {
			continue
		}
		g := benchGeneration(b, size.n)
		var qs []*Query
		for _, q := range metaQueries(g.Snapshot().Caps) {
			if q.Match == nil {
				qs = append(qs, q)
			}
		}
		benchImpls(b, "catalog="+size.name, impls, g, qs, g.Filter(benchRC, FilterSpec{}), 50)
	}
}
