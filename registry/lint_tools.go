package registry

// toolNames refuses two capabilities whose actions would be one leaf tool: ToolName is
// injective up to its hashed form (ids past 63 bytes), so only a hash collision gets here.
func (l *linter) toolNames(caps []*Capability) {
	seen := make(map[string]string, len(caps))
	for _, c := range caps {
		if c == nil || !ValidID(c.ID) {
			continue
		}
		name := l.toolName(c.ID)
		switch prev, ok := seen[name]; {
		case !ok:
			seen[name] = c.ID
		case prev != c.ID: // a duplicate id is reported on its own
			l.add(c, "id", "tool name %q is also the tool name of %q: rename one of them", name, prev)
		}
	}
}
