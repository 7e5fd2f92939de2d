package registry

import "strings"

// toolNames refuses two capabilities whose actions would be one leaf tool: ToolName is
// injective up to its hashed form (ids past 63 bytes), so only a hash collision gets here.
// A collision is reported on the later capability when it or one before it with the same
// name is affected (LintAffected): on a registry that linted clean, a collision between two
// capabilities neither of which changed cannot arise.
func (l *linter) toolNames(caps []*Capability, affected func(*Capability) bool) {
	seen := map[string]string{}  // hashed names only: usually none
	touched := map[string]bool{} // names held by an affected capability seen so far
	for _, c := range caps {
		// distinct ids get distinct names unless hashed (see ToolName); invalid ids are
		// reported on their own
		if c == nil || !hashedToolName(c.ID) || !ValidID(c.ID) {
			continue
		}
		name := l.toolName(c.ID)
		mine := affected(c)
		switch prev, ok := seen[name]; {
		case !ok:
			seen[name] = c.ID
		case prev != c.ID && (mine || touched[name]): // a duplicate id is reported on its own
			l.add(c, "id", "tool name %q is also the tool name of %q: rename one of them", name, prev)
		}
		if mine {
			touched[name] = true
		}
	}
}

// hashedToolName reports whether ToolName(id) is a hashed name: the only names two valid ids
// can share, as the others map ids one to one.
func hashedToolName(id string) bool {
	n := len(id)
	if strings.IndexByte(id, '.') >= 0 {
		n++ // the first dot becomes "__"
	}
	return n > maxToolName
}
