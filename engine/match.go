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
// beyond it is computed for its search only. maxNarrowed bounds the narrowed pre-filters
// it keeps; when full, they are dropped all at once.
const (
	maxMatchFilters = 256
	maxNarrowed     = 1024
)

// matchCache holds, per generation, the documents each hard filter of a structured match
// admits (query.Filter), computed on first use by one pass over the snapshot, and the
// pre-filters already narrowed by a list of filters: the same caller repeating a match
// gets the same bitmap, as it gets the same pre-filter from index.Generation.Filter.
type matchCache struct {
	mu       sync.Mutex
	docs     map[string]*roaring.Bitmap
	narrowed map[narrowKey]narrowed
}

// narrowKey names a pre-filter (by its bitmap, which the key keeps alive) and the filters
// that narrowed it (their Keys).
type narrowKey struct {
	base    *roaring.Bitmap
	filters string
}

type narrowed struct {
	docs   *roaring.Bitmap
	detail string
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
// whether or not capabilities hidden from the caller would pass. The result is shared
// (cached), read only, like allow.
func (st *state) matchAllow(allow *roaring.Bitmap, m *query.Match) (*roaring.Bitmap, string) {
	if m == nil || len(m.Filters) == 0 || allow.IsEmpty() {
		return allow, ""
	}
	var key strings.Builder
	for i := range m.Filters {
		key.WriteString(m.Filters[i].Key())
		key.WriteByte(0xff)
	}
	nk := narrowKey{base: allow, filters: key.String()}
	mc := st.match
	mc.mu.Lock()
	n, ok := mc.narrowed[nk]
	mc.mu.Unlock()
	if ok {
		return n.docs, n.detail
	}
	n.docs, n.detail = st.narrow(allow, m)
	mc.mu.Lock()
	if mc.narrowed == nil || len(mc.narrowed) >= maxNarrowed {
		mc.narrowed = make(map[narrowKey]narrowed)
	}
	mc.narrowed[nk] = n
	mc.mu.Unlock()
	return n.docs, n.detail
}

// narrow is matchAllow without the cache.
func (st *state) narrow(allow *roaring.Bitmap, m *query.Match) (*roaring.Bitmap, string) {
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
