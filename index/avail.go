package index

import (
	"fmt"
	"time"

	"github.com/capdex/capdex/registry"
)

// WithAvailability returns the generation of snap, a snapshot that differs from g's only
// in what decides availability (status, health, enabled, version, provenance: fields no
// text index reads), built by sharing g's tree, exact, lexical, metadata and semantic
// indexes and patching the column view and the pre-filter for the changed documents
// (building them again when the change alters their schema). snap must hold the
// same ids in the same order, with the same resource types; otherwise it is an error and
// the caller builds in full. g stays usable and unchanged (searches in flight keep it).
func (g *Generation) WithAvailability(snap *registry.Snapshot) (*Generation, error) {
	if snap == nil {
		return nil, ErrNilSnapshot
	}
	if len(snap.Caps) != g.n {
		return nil, fmt.Errorf("index: availability change: %d documents, the generation has %d", len(snap.Caps), g.n)
	}
	for d, c := range snap.Caps {
		old := g.snap.Caps[d]
		if c.ID != old.ID || c.ResourceType != old.ResourceType {
			return nil, fmt.Errorf("index: availability change: document %d is %s (%s), was %s (%s)", d, c.ID, c.ResourceType, old.ID, old.ResourceType)
		}
	}
	start := time.Now()
	// Everything is shared (the indexes are read-only after Build) but the snapshot and the
	// availability parts, which are made afresh.
	cp := *g
	ng := &cp
	ng.snap, ng.cols, ng.filter = snap, &colView{}, &filterIndex{}
	ng.stats.ColumnRestored, ng.stats.LexicalPatched, ng.stats.SemanticPatched = false, false, false
	t := time.Now()
	ng.stats.ColumnsPatched = ng.patchColumns(g)
	if !ng.stats.ColumnsPatched {
		ng.cols = &colView{}
		if err := ng.buildColumns(nil); err != nil {
			return nil, err
		}
	}
	ng.stats.Columns = time.Since(t)
	ng.stats.Total = time.Since(start)
	return ng, nil
}
