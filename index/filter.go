package index

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/registry"
)

// FilterSpec is the request part of the hard pre-filter.
type FilterSpec struct {
	// Within keeps only the named node and its subtree ("" = no limit). An id that names no
	// capability and prefixes none leaves nothing.
	Within string
	// Types keeps only these resource types (empty = all).
	Types []registry.ResourceType
	// SideEffectMax drops actions with a stronger side effect ("" = no limit). Packs and
	// recipes have no side effect and always pass; an action without a known side effect
	// counts as I. An unknown value counts as R, the strictest.
	SideEffectMax registry.SideEffect
}

// maxACLCache bounds the per-caller cache of the tenant and ACL part of the filter.
const maxACLCache = 4096

// filterIndex holds the roaring bitmaps read from the column view's indexes.
type filterIndex struct {
	live      *roaring.Bitmap // enabled and not offline
	byType    [8]*roaring.Bitmap
	seLE      [4]*roaring.Bitmap
	osAny     *roaring.Bitmap
	osOK      map[string]*roaring.Bitmap // os → osAny ∪ docs naming it
	tenantAll *roaring.Bitmap
	byTenant  map[string]*roaring.Bitmap // tenant → tenantAll ∪ docs naming it
	acl       []*roaring.Bitmap          // per effective-ACL class
	acls      []registry.ACL
	deprec    *roaring.Bitmap
	confirm   *roaring.Bitmap

	mu    sync.RWMutex // protects cache
	cache map[string]*roaring.Bitmap
}

var typeBits = map[registry.ResourceType]int{registry.TypePack: 1, registry.TypeAction: 2, registry.TypeRecipe: 4}

// buildFilter reads every bitmap index of the column view into roaring bitmaps.
func (g *Generation) buildFilter() error {
	v, f := g.cols, g.filter
	f.live = v.bitmapOf(ixEnabled)
	f.live.AndNot(v.bitmapOf(ixOffline))
	f.deprec = v.bitmapOf(ixDeprecated)
	f.confirm = v.bitmapOf(ixConfirm)
	var single [3]*roaring.Bitmap
	for i, t := range []registry.ResourceType{registry.TypePack, registry.TypeAction, registry.TypeRecipe} {
		single[i] = v.bitmapOf(ixType(t))
	}
	for mask := range f.byType {
		b := roaring.New()
		for i := range single {
			if mask&(1<<i) != 0 {
				b.Or(single[i])
			}
		}
		f.byType[mask] = b
	}
	for l := range f.seLE {
		f.seLE[l] = v.bitmapOf(ixSELE(l))
	}
	f.osAny = v.bitmapOf(ixOSAny)
	f.osOK = make(map[string]*roaring.Bitmap, len(v.osNames))
	for _, o := range v.osNames {
		b := v.bitmapOf(ixOS(o))
		b.Or(f.osAny)
		f.osOK[o] = b
	}
	f.tenantAll = v.bitmapOf(ixTenantAll)
	f.byTenant = make(map[string]*roaring.Bitmap, len(v.tenants))
	for _, t := range v.tenants {
		b := v.bitmapOf(ixTenant(t))
		b.Or(f.tenantAll)
		f.byTenant[t] = b
	}
	f.acls = v.acls
	f.acl = make([]*roaring.Bitmap, len(v.acls))
	for k := range v.acls {
		f.acl[k] = v.bitmapOf(ixACL(k))
	}
	f.cache = make(map[string]*roaring.Bitmap)
	return nil
}

var emptyRC registry.RuntimeContext

// Filter returns the docIDs rc may see under f: enabled and not offline (deprecated stays),
// visible to rc.Tenant, passing the discover gate of the effective ACL, supported on rc.OS
// (when both are known), inside f.Within, of f.Types and at most f.SideEffectMax. The result
// is a new bitmap the caller owns. The tenant and ACL part is cached per (tenant, user,
// scopes). A nil rc is an anonymous caller with no scopes.
func (g *Generation) Filter(rc *registry.RuntimeContext, f FilterSpec) *roaring.Bitmap {
	if rc == nil {
		rc = &emptyRC
	}
	out := g.filter.base(rc).Clone()
	if rc.OS != "" {
		if b, ok := g.filter.osOK[rc.OS]; ok {
			out.And(b)
		} else {
			out.And(g.filter.osAny)
		}
	}
	if f.Within != "" {
		self, lo, hi := g.subtree(f.Within)
		switch {
		case self < 0 && lo >= hi:
			return roaring.New()
		case self >= 0 && self+1 != lo && lo < hi: // ids between the node and its subtree
			keep := roaring.New()
			keep.Add(uint32(self))
			keep.AddRange(uint64(lo), uint64(hi))
			out.And(keep)
		default:
			if self >= 0 {
				lo = self
			}
			if lo > 0 {
				out.RemoveRange(0, uint64(lo))
			}
			out.RemoveRange(uint64(hi), uint64(g.n))
		}
	}
	if len(f.Types) > 0 {
		mask := 0
		for _, t := range f.Types {
			mask |= typeBits[t]
		}
		out.And(g.filter.byType[mask])
	}
	if f.SideEffectMax != "" {
		out.And(g.filter.seLE[max(f.SideEffectMax.Level(), 0)])
	}
	return out
}

// base returns the shared (read-only) bitmap of live docs visible to rc's tenant and passing
// the discover gate.
func (f *filterIndex) base(rc *registry.RuntimeContext) *roaring.Bitmap {
	key := cacheKey(rc)
	f.mu.RLock()
	b, ok := f.cache[key]
	f.mu.RUnlock()
	if ok {
		return b
	}
	b = f.live.Clone()
	if t, ok := f.byTenant[rc.Tenant]; ok {
		b.And(t)
	} else {
		b.And(f.tenantAll)
	}
	acl := roaring.New()
	for k := range f.acls {
		if f.acls[k].Allows(rc, registry.GateDiscover) {
			acl.Or(f.acl[k])
		}
	}
	b.And(acl)
	b.RunOptimize()
	f.mu.Lock()
	if len(f.cache) >= maxACLCache {
		clear(f.cache)
	}
	f.cache[key] = b
	f.mu.Unlock()
	return b
}

// cacheKey identifies what the discover gate and tenant visibility depend on.
func cacheKey(rc *registry.RuntimeContext) string {
	scopes := rc.Scopes
	if !slices.IsSorted(scopes) {
		scopes = slices.Sorted(slices.Values(scopes))
	}
	n := len(rc.Tenant) + len(rc.User) + 2
	for _, s := range scopes {
		n += len(s) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(rc.Tenant)
	b.WriteByte(0)
	b.WriteString(rc.User)
	for _, s := range scopes {
		b.WriteByte(0)
		b.WriteString(s)
	}
	return b.String()
}

// subtree finds id (self, -1 when no capability has it) and the docID range [lo, hi) of
// the ids under it. Snapshot ids are sorted, so the ids starting with id+"." are contiguous
// and end before id+"/".
func (g *Generation) subtree(id string) (self, lo, hi int) {
	id = strings.TrimSpace(id)
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	id = strings.TrimSuffix(id, ".")
	if id == "" {
		return -1, 0, 0
	}
	caps := g.snap.Caps
	self = -1
	if d, ok := g.snap.DocID(id); ok {
		self = int(d)
	}
	pre := id + "."
	lo = sort.Search(len(caps), func(i int) bool { return caps[i].ID >= pre })
	end := id + "/"
	hi = lo + sort.Search(len(caps)-lo, func(i int) bool { return caps[lo+i].ID >= end })
	return self, lo, hi
}

// Deprecated reports whether doc d is deprecated (it stays searchable).
func (g *Generation) Deprecated(d uint32) bool { return g.filter.deprec.Contains(d) }
