package registry

// LintWarnings reports what Lint accepts but that leaves a capability unusable or risky:
// a capability no scope can discover (only admin sees it: the acl is missing on it and on
// every pack above it), an action no scope can run, and text aimed at the model (see
// PoisoningFlags). caps must pass Lint; the warnings come in caps' order.
func LintWarnings(caps []*Capability) []LintError {
	snap, err := NewSnapshot(0, caps)
	if err != nil {
		return nil
	}
	var out []LintError
	for _, c := range snap.Caps {
		acl := c.Eff.ACL
		if len(acl.Discover) == 0 {
			out = append(out, LintError{ID: c.ID, Field: "acl.discover",
				Msg: "no scope can discover it (only admin): set acl.discover on it or on a pack above it"})
		} else if c.ResourceType == TypeAction && len(acl.Execute) == 0 {
			out = append(out, LintError{ID: c.ID, Field: "acl.execute",
				Msg: "no scope can run it (only admin): set acl.execute on it or on a pack above it"})
		}
		for _, f := range PoisoningFlags(c.Title + "\n" + c.Summary + "\n" + string(c.ArgumentsSchema)) {
			out = append(out, LintError{ID: c.ID, Field: "summary", Msg: f})
		}
	}
	return out
}
