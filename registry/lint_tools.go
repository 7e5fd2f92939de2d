package registry

// toolNames refuses two capabilities whose actions would be one leaf tool: ToolName is
// injective up to its hashed form (ids past 63 bytes), so only a hash collision gets here.
// A collision is reported on the later capability when it or one before it with the same
// name is affected (LintAffected): on a registry that linted clean, a collision between two
// capabilities neither of which changed cannot arise.
func (l *linter) toolNames(caps []*Capability, affected func(*Capability) bool) {
	seen := make(map[string]string, len(caps))
	touched := map[string]bool{} // names held by an affected capability seen so far
	for _, c := range caps {
		if c == nil || !ValidID(c.ID) {
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
