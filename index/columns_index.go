package index

import (
	"github.com/capdex/capdex/registry"
	"github.com/kelindar/column"
)

// colIndex is one bitmap index of the column view: the column it reads and its predicate,
// given once for the collection (fromColumn, through the column's reader) and once for the
// prepared rows (fromRow), so that the pre-filter can be read from the rows without building
// the collection. The two read the same value: the collection stores the row's.
type colIndex struct {
	name, col  string
	fromColumn func(column.Reader) bool
	fromRow    func(*row) bool
}

// strIndex is a colIndex over a string (or enum) column.
func strIndex(name, col string, get func(*row) string, pred func(string) bool) colIndex {
	return colIndex{name: name, col: col,
		fromColumn: func(r column.Reader) bool { return pred(r.String()) },
		fromRow:    func(w *row) bool { return pred(get(w)) }}
}

// intIndex is a colIndex over an int column.
func intIndex(name, col string, get func(*row) int, pred func(int) bool) colIndex {
	return colIndex{name: name, col: col,
		fromColumn: func(r column.Reader) bool { return pred(r.Int()) },
		fromRow:    func(w *row) bool { return pred(get(w)) }}
}

// boolIndex is a colIndex over a bool column, true rows in.
func boolIndex(name, col string, get func(*row) bool) colIndex {
	return colIndex{name: name, col: col,
		fromColumn: func(r column.Reader) bool { return r.Bool() },
		fromRow:    get}
}

// indexes lists every bitmap index of the view, in the order of indexNames.
func (v *colView) indexes() []colIndex {
	status := func(w *row) string { return w.status }
	typ := func(w *row) string { return w.typ }
	os := func(w *row) string { return w.os }
	tenants := func(w *row) string { return w.tenants }
	out := []colIndex{
		strIndex(ixOffline, colStatus, status, func(s string) bool { return s == string(registry.StatusOffline) }),
		strIndex(ixDeprecated, colStatus, status, func(s string) bool { return s == string(registry.StatusDeprecated) }),
		boolIndex(ixEnabled, colEnabled, func(w *row) bool { return w.enabled }),
		strIndex(ixOSAny, colOS, os, func(s string) bool { return s == "" }),
		strIndex(ixTenantAll, colTenants, tenants, func(s string) bool { return s == "" || listHas(s, "*") }),
		boolIndex(ixConfirm, colConfirm, func(w *row) bool { return w.confirm }),
	}
	for _, t := range []registry.ResourceType{registry.TypePack, registry.TypeAction, registry.TypeRecipe} {
		out = append(out, strIndex(ixType(t), colType, typ, func(s string) bool { return s == string(t) }))
	}
	for l := 0; l <= 3; l++ {
		out = append(out, intIndex(ixSELE(l), colSERank, func(w *row) int { return w.seRank }, func(x int) bool { return x <= l }))
	}
	for _, o := range v.osNames {
		out = append(out, strIndex(ixOS(o), colOS, os, func(s string) bool { return listHas(s, o) }))
	}
	for _, t := range v.tenants {
		out = append(out, strIndex(ixTenant(t), colTenants, tenants, func(s string) bool { return listHas(s, t) }))
	}
	for k := range v.acls {
		out = append(out, intIndex(ixACL(k), colACL, func(w *row) int { return w.acl }, func(x int) bool { return x == k }))
	}
	return out
}
