package index

import (
	"slices"

	"github.com/capdex/capdex/registry"
)

// A change that keeps every docID patches the column view and the pre-filter of the
// generation it was derived from instead of computing every row and bit again: only the
// changed documents' rows are made (in copies of the row chunks holding them, the others
// shared) and only their bits set or cleared (in copies of the bitsets that change, the
// others shared). What a patch cannot keep as a build gives it, it does not try: a change
// that would alter the schema — an OS or tenant named by no document any more or by one for
// the first time, an ACL class gone, new, or first held by another document (classes are
// numbered by first occurrence) — builds the view in full. The result is the view a
// build gives: TestColumnPatchSameAsBuild compares rows, schema, classes and every bitset.

// changedDocs lists the docIDs whose capability in snap is not the one of the same docID in
// old (snap holding old's ids at the same docIDs).
func changedDocs(old, snap *registry.Snapshot) []int {
	var out []int
	for d, c := range snap.Caps {
		if old.Caps[d] != c {
			out = append(out, d)
		}
	}
	return out
}

// patchColumns fills g.cols and g.filter from prev's, whose snapshot holds g's ids at the
// same docIDs. It returns false, leaving them empty, when the change alters the schema or
// prev keeps no patch bookkeeping; the caller then builds them (buildColumns).
func (g *Generation) patchColumns(prev *Generation) bool {
	pv := prev.cols
	if pv.aclIdx == nil || pv.n != g.n {
		return false
	}
	changed := changedDocs(prev.snap, g.snap)
	v := &colView{n: pv.n, osNames: pv.osNames, tenants: pv.tenants, acls: pv.acls, schema: pv.schema,
		osCount: slices.Clone(pv.osCount), tenantCount: slices.Clone(pv.tenantCount),
		aclIdx: pv.aclIdx, aclFirst: pv.aclFirst}
	// The OS and tenant names: counts moved, none new, none gone.
	for _, d := range changed {
		o, c := prev.snap.Caps[d], g.snap.Caps[d]
		forDistinct(o.SupportedOS, func(s string) { count(v.osNames, v.osCount, s, -1) })
		forTenants(o, func(s string) { count(v.tenants, v.tenantCount, s, -1) })
		ok := true
		forDistinct(c.SupportedOS, func(s string) { ok = count(v.osNames, v.osCount, s, 1) && ok })
		forTenants(c, func(s string) { ok = count(v.tenants, v.tenantCount, s, 1) && ok })
		if !ok {
			return false
		}
	}
	if slices.Contains(v.osCount, 0) || slices.Contains(v.tenantCount, 0) {
		return false
	}
	// The ACL classes: no class new or gone, none first held by another document.
	cls := make([]int, len(changed))
	copied := false
	for i, d := range changed {
		c := g.snap.Caps[d]
		k, ok := v.aclIdx[aclKey(c.Eff.ACL)]
		if !ok {
			return false
		}
		a := pv.rows.at(d).acl
		switch {
		case a != k && (int(v.aclFirst[a]) == d || d < int(v.aclFirst[k])):
			return false
		case a == k && int(v.aclFirst[k]) == d: // the class's lists as its first document gives them
			if !copied {
				v.acls, copied = slices.Clone(v.acls), true
			}
			v.acls[k] = registry.ACL{Discover: c.Eff.ACL.Discover, Deny: c.Eff.ACL.Deny}
		}
		cls[i] = k
	}
	v.rows = pv.rows.withCopies(changed)
	for i, d := range changed {
		*v.rows.at(d) = makeRow(g.snap.Caps[d], cls[i])
	}
	g.cols = v
	g.patchFilter(prev.filter, changed)
	return true
}

// count adds delta to the count of name in names (sorted) and reports whether it is there.
func count(names []string, counts []int32, name string, delta int32) bool {
	i, ok := slices.BinarySearch(names, name)
	if ok {
		counts[i] += delta
	}
	return ok
}

// filterBit is one bitset of the pre-filter and the predicate of a row its bits hold.
type filterBit struct {
	d   *dense
	has func(*row) bool
}

// patchFilter fills g.filter from prev, the pre-filter of the generation g.cols was patched
// from, for the rows of changed documents: a bitset whose bits change is copied, the others
// are shared. The predicates are the column view's indexes (fromRow), combined as
// buildFilter combines them.
func (g *Generation) patchFilter(prev *filterIndex, changed []int) {
	v, f := g.cols, g.filter
	ix := map[string]func(*row) bool{}
	for _, c := range v.indexes() {
		ix[c.name] = c.fromRow
	}
	f.n, f.live, f.byType, f.seLE, f.osAny, f.tenantAll = prev.n, prev.live, prev.byType, prev.seLE, prev.osAny, prev.tenantAll
	f.acls, f.acl = v.acls, slices.Clone(prev.acl)
	osOK, byTenant := make([]dense, len(v.osNames)), make([]dense, len(v.tenants))
	enabled, offline, osAny, tenantAll := ix[ixEnabled], ix[ixOffline], ix[ixOSAny], ix[ixTenantAll]
	bits := []filterBit{{&f.live, func(r *row) bool { return enabled(r) && !offline(r) }}}
	types := []registry.ResourceType{registry.TypePack, registry.TypeAction, registry.TypeRecipe}
	for mask := range f.byType {
		bits = append(bits, filterBit{&f.byType[mask], func(r *row) bool {
			for i, t := range types {
				if mask&(1<<i) != 0 && ix[ixType(t)](r) {
					return true
				}
			}
			return false
		}})
	}
	for l := range f.seLE {
		bits = append(bits, filterBit{&f.seLE[l], ix[ixSELE(l)]})
	}
	bits = append(bits, filterBit{&f.osAny, osAny}, filterBit{&f.tenantAll, tenantAll})
	for i, o := range v.osNames {
		osOK[i] = prev.osOK[o]
		has := ix[ixOS(o)]
		bits = append(bits, filterBit{&osOK[i], func(r *row) bool { return has(r) || osAny(r) }})
	}
	for i, t := range v.tenants {
		byTenant[i] = prev.byTenant[t]
		has := ix[ixTenant(t)]
		bits = append(bits, filterBit{&byTenant[i], func(r *row) bool { return has(r) || tenantAll(r) }})
	}
	for k := range f.acl {
		bits = append(bits, filterBit{&f.acl[k], ix[ixACL(k)]})
	}
	for _, b := range bits {
		copied := false
		for _, d := range changed {
			w, bit := d/64, uint64(1)<<(d%64)
			if ((*b.d)[w]&bit != 0) != b.has(v.rows.at(d)) {
				if !copied {
					*b.d, copied = slices.Clone(*b.d), true
				}
				(*b.d)[w] ^= bit
			}
		}
	}
	f.osOK = make(map[string]dense, len(v.osNames))
	for i, o := range v.osNames {
		f.osOK[o] = osOK[i]
	}
	f.byTenant = make(map[string]dense, len(v.tenants))
	for i, t := range v.tenants {
		f.byTenant[t] = byTenant[i]
	}
	deprecated := ix[ixDeprecated]
	f.deprec = prev.deprec
	copied := false
	for _, d := range changed {
		if want := deprecated(v.rows.at(d)); f.deprec.Contains(uint32(d)) != want {
			if !copied {
				f.deprec, copied = f.deprec.Clone(), true
			}
			if want {
				f.deprec.Add(uint32(d))
			} else {
				f.deprec.Remove(uint32(d))
			}
		}
	}
	f.cache = make(map[string]dense)
}
