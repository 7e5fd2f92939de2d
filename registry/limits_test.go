package registry

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLintFieldSizes: every bounded field of a definition is refused past its limit, with
// the field named and without the value quoted.
func TestLintFieldSizes(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name   string
		mutate func(p, a, r *Capability)
		field  string
	}{
		{"title", func(p, a, r *Capability) { a.Title = long(20 << 20) }, "title"},
		{"summary", func(p, a, r *Capability) { a.Summary = long(maxTextBytes + 1) }, "summary"},
		{"guidance", func(p, a, r *Capability) { p.Guidance = long(maxTextBytes + 1) }, "guidance"},
		{"alias", func(p, a, r *Capability) { a.Aliases = []string{"ok", long(maxItemBytes + 1)} }, "aliases[1]"},
		{"too many tags", func(p, a, r *Capability) { a.Tags = make([]string, maxItems+1) }, "tags"},
		{"owner", func(p, a, r *Capability) { a.Owner = long(maxNameBytes + 1) }, "owner"},
		{"schema", func(p, a, r *Capability) {
			a.OutputSchema = json.RawMessage(`{"description":"` + long(maxSchemaBytes) + `"}`)
		}, "output_schema"},
		{"step note", func(p, a, r *Capability) { r.Steps[0].Note = long(maxTextBytes + 1) }, "steps[0].note"},
		{"argv", func(p, a, r *Capability) {
			a.Handler = &Handler{Kind: "exec", Argv: []string{"x", long(maxTextBytes + 1)}}
		}, "handler.argv[1]"},
		{"acl entry", func(p, a, r *Capability) {
			p.ACL = ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"*"}, Deny: []string{long(maxNameBytes + 1)}}
		}, "acl.deny[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, a, r := validRegistry(t)
			tt.mutate(p, a, r)
			errs := Lint([]*Capability{p, a, r})
			found := false
			for _, e := range errs {
				if len(e.Error()) > 2000 {
					t.Errorf("error of %d bytes: the value is quoted", len(e.Error()))
				}
				if e.Field == tt.field && strings.Contains(e.Msg, "exceeds the limit") {
					found = true
				}
			}
			if !found {
				t.Fatalf("no size error on %s in %v", tt.field, errs)
			}
		})
	}
}
