package registry

import (
	"fmt"
	"slices"
	"strings"
)

// narrowing checks that child c, whose parent pack is in the registry, only narrows what
// its packs allow: every tenant it lists must be visible under the nearest ancestor that
// lists tenants, and every entry of its discover and describe gates must be granted by the
// same gate of the nearest ancestor that sets an ACL (an ancestor gate with "*" grants
// every entry; "scope:x" and "x" are one entry). A pack is never executed: its execute
// list is the default its children inherit, not a ceiling, so a child may give execute to
// another role (one action for maintainers under a pack whose actions dev runs) as long as
// the pack's describe gate grants that role: nobody outside the pack's audience can run
// it. A child that sets no tenants or no ACL inherits its pack's and passes; deny lists are
// always inherited, so they cannot widen anything.
func (l *linter) narrowing(c *Capability) {
	if len(c.Tenants) > 0 {
		if from, bound := l.inheritedTenants(c.ID); from != "" {
			var wider []string
			for _, t := range c.Tenants {
				if !slices.Contains(bound, t) && !slices.Contains(bound, "*") {
					wider = append(wider, fmt.Sprintf("%q", t))
				}
			}
			if len(wider) > 0 {
				l.add(c, "tenants", "tenants %s widen the visibility of pack %s, which is limited to tenants %s: a child may only narrow its pack's tenants",
					strings.Join(wider, ", "), from, quoteAll(bound))
			}
		}
	}
	if len(c.ACL.Discover)+len(c.ACL.Describe)+len(c.ACL.Execute) == 0 {
		return
	}
	from, bound := l.inheritedACL(c.ID)
	for _, g := range []struct {
		name         string
		child, bound []string
	}{{"discover", c.ACL.Discover, bound.Discover}, {"describe", c.ACL.Describe, bound.Describe}, {"execute", c.ACL.Execute, bound.Describe}} {
		var wider []string
		for _, e := range g.child {
			if !grants(g.bound, e) {
				wider = append(wider, fmt.Sprintf("%q", e))
			}
		}
		if len(wider) == 0 {
			continue
		}
		switch {
		case from == "":
			l.add(c, "acl."+g.name, "acl.%s entries %s widen pack %s, which sets no ACL and so grants %s to nobody: a child may only narrow its pack's ACL",
				g.name, strings.Join(wider, ", "), Parent(c.ID), g.name)
		case g.name == "execute":
			l.add(c, "acl.execute", "acl.execute entries %s are outside the audience of pack %s, whose acl.describe is %s: a child may only give execute to callers its pack lets describe",
				strings.Join(wider, ", "), from, quoteAll(g.bound))
		case len(g.bound) == 0:
			l.add(c, "acl."+g.name, "acl.%s entries %s widen pack %s, whose acl.%s grants it to nobody: a child may only narrow its pack's ACL",
				g.name, strings.Join(wider, ", "), from, g.name)
		default:
			l.add(c, "acl."+g.name, "acl.%s entries %s widen pack %s, whose acl.%s is %s: a child may only narrow its pack's ACL",
				g.name, strings.Join(wider, ", "), from, g.name, quoteAll(g.bound))
		}
	}
}

// inheritedTenants returns the nearest ancestor of id that lists tenants, and its list
// ("" when no ancestor does: every tenant).
func (l *linter) inheritedTenants(id string) (string, []string) {
	for p := Parent(id); p != ""; p = Parent(p) {
		c := l.byID[p]
		if c == nil {
			return "", nil
		}
		if len(c.Tenants) > 0 {
			return p, c.Tenants
		}
	}
	return "", nil
}

// inheritedACL returns the nearest ancestor of id that sets an allow list, and its ACL (""
// when none does: nobody but admin passes any gate).
func (l *linter) inheritedACL(id string) (string, ACL) {
	for p := Parent(id); p != ""; p = Parent(p) {
		c := l.byID[p]
		if c == nil {
			return "", ACL{}
		}
		if len(c.ACL.Discover)+len(c.ACL.Describe)+len(c.ACL.Execute) > 0 {
			return p, c.ACL
		}
	}
	return "", ACL{}
}

// grants reports whether an allow list grants everyone an entry names. The admin scope
// passes every gate anyway, so an entry naming it widens nothing.
func grants(list []string, entry string) bool {
	norm := func(e string) string { return strings.TrimPrefix(e, "scope:") }
	entry = norm(entry)
	if entry == "admin" {
		return true
	}
	for _, e := range list {
		if e == "*" || norm(e) == entry {
			return true
		}
	}
	return false
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
