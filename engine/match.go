package engine

import (
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

// maxMatchFilters bounds the filter results a generation keeps (matchCache); a filter
// beyond it is computed for its search only.
const maxMatchFilters = 256

// matchCache holds, per generation, the documents each hard filter of a structured match
// admits (query.Filter), computed on first use by one pass over the snapshot.
type matchCache struct {
	mu   sync.Mutex
	docs map[string]*roaring.Bitmap
}

// admitted returns the documents of caps that f admits; the bitmap is shared, read only.
func (mc *matchCache) admitted(caps []*registry.Capability, f *query.Filter) *roaring.Bitmap {
	key := f.Key()
	mc.mu.Lock()
	bm, ok := mc.docs[key]
	mc.mu.Unlock()
	if ok {
		return bm
	}
	bm = roaring.New()
	for d, c := range caps {
		if f.Admits(c) {
			bm.Add(uint32(d))
		}
	}
	bm.RunOptimize()
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.docs == nil {
		mc.docs = make(map[string]*roaring.Bitmap)
	}
	if len(mc.docs) < maxMatchFilters {
		mc.docs[key] = bm
	}
	return bm
}

// matchAllow narrows allow (what the caller may see under the request's other filters) by
// the hard filters of m, in their order (seed 003 §5: next_step, capability types, domain,
// scenario). When a filter leaves nothing of a non-empty allow, it returns the empty set
// and a detail naming that filter; it looks only at allow, so the detail is the same
// whether or not capabilities hidden from the caller would pass. The result is a new
// bitmap when any filter applies (allow may be shared).
func (st *state) matchAllow(allow *roaring.Bitmap, m *query.Match) (*roaring.Bitmap, string) {
	if m == nil || len(m.Filters) == 0 || allow.IsEmpty() {
		return allow, ""
	}
	caps := st.gen.Snapshot().Caps
	out := allow
	for i := range m.Filters {
		f := &m.Filters[i]
		out = roaring.And(out, st.match.admitted(caps, f))
		if out.IsEmpty() {
			detail := f.Describe() + ": no capability you may discover passes it"
			if i > 0 {
				names := make([]string, i)
				for j := range names {
					names[j] = m.Filters[j].Name
				}
				detail += " together with " + strings.Join(names, ", ")
			}
			return out, detail
		}
	}
	return out, ""
}

// NextStep is one next_step value of a structured match and the capability types it
// selects (query.NextStep).
type NextStep = query.NextStep

// NextSteps returns the next_step table (query.NextSteps), for the protocol's schemas.
func NextSteps() []NextStep { return slices.Clone(query.NextSteps) }
