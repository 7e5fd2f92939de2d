package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintChildMayOnlyNarrowItsPack: a child's tenants and ACL gates may only narrow what
// its pack (with the pack's own ancestors) allows; lint names the file and field of every
// widening entry.
func TestLintChildMayOnlyNarrowItsPack(t *testing.T) {
	tests := []struct {
		name      string
		pack      string // YAML lines of the pack (after id, version, …)
		child     string // YAML lines of the child
		wantField string // "" : clean
		wantMsg   string
	}{
		{name: "tenants star under a one-tenant pack", pack: "tenants: [acme]", child: `tenants: ["*"]`,
			wantField: "tenants", wantMsg: `"*"`},
		{name: "another tenant", pack: "tenants: [acme]", child: "tenants: [acme, globex]",
			wantField: "tenants", wantMsg: `"globex"`},
		{name: "tenant subset", pack: "tenants: [acme, globex]", child: "tenants: [globex]"},
		{name: "tenants under an all-tenant pack", pack: "", child: "tenants: [globex]"},
		{name: "discover star under a scoped pack", pack: "acl: {discover: [ops], describe: [ops], execute: [ops]}",
			child: `acl: {discover: ["*"], describe: [ops], execute: [ops]}`, wantField: "acl.discover", wantMsg: `"*"`},
		{name: "describe wider", pack: "acl: {discover: [ops, dev], describe: [ops], execute: [ops]}",
			child: "acl: {discover: [dev], describe: [dev], execute: []}", wantField: "acl.describe", wantMsg: `"dev"`},
		{name: "execute outside the pack's audience", pack: `acl: {discover: ["*"], describe: [ops], execute: [ops]}`,
			child: "acl: {discover: [ops], describe: [ops], execute: [dev]}", wantField: "acl.execute", wantMsg: `"dev"`},
		{name: "execute other than the pack's default, within its audience", pack: `acl: {discover: ["*"], describe: ["*"], execute: [dev]}`,
			child: `acl: {discover: ["*"], describe: ["*"], execute: [maintainer]}`},
		{name: "any entry under a star pack", pack: `acl: {discover: ["*"], describe: ["*"], execute: ["*"]}`,
			child: "acl: {discover: [dev], describe: [dev], execute: [user:bob]}"},
		{name: "scope prefix is the same entry", pack: "acl: {discover: [ops], describe: [ops], execute: [ops]}",
			child: "acl: {discover: [scope:ops], describe: [ops], execute: []}"},
		{name: "child of a pack without acl", pack: "", child: `acl: {discover: ["*"], describe: ["*"], execute: []}`,
			wantField: "acl.discover", wantMsg: "pack x, which sets no ACL"},
		{name: "admin entry widens nothing", pack: "acl: {discover: [ops], describe: [ops], execute: [ops]}",
			child: "acl: {discover: [admin], describe: [scope:admin], execute: [admin]}"},
		{name: "child without acl inherits", pack: "acl: {discover: [ops], describe: [ops], execute: [ops]}", child: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "- pack_id: x\n  version: 1\n  resource_type: pack\n  title: X\n  owner: o\n  status: active\n"
			if tt.pack != "" {
				src += "  " + tt.pack + "\n"
			}
			src += "- pack_id: x.y\n  version: 1\n  resource_type: pack\n  title: Y\n  owner: o\n  status: active\n"
			if tt.child != "" {
				src += "  " + tt.child + "\n"
			}
			if err := os.WriteFile(filepath.Join(dir, "reg.yaml"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDir(dir)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("LoadDir: %v", err)
				}
				return
			}
			lerrs, ok := err.(LintErrors)
			if !ok || len(lerrs) == 0 {
				t.Fatalf("want lint errors, got %v", err)
			}
			e := lerrs[0]
			for _, le := range lerrs {
				if le.Field == tt.wantField {
					e = le
				}
			}
			if !strings.HasSuffix(e.File, "reg.yaml") || e.Line == 0 || e.ID != "x.y" || e.Field != tt.wantField ||
				!strings.Contains(e.Msg, tt.wantMsg) || !strings.Contains(e.Msg, "x") {
				t.Fatalf("error %+v: want reg.yaml, a line, x.y, %s, %q", e, tt.wantField, tt.wantMsg)
			}
		})
	}
}

// TestLintNarrowingAcrossLevels: the bound is the nearest ancestor that sets the gate, not
// only the direct parent.
func TestLintNarrowingAcrossLevels(t *testing.T) {
	root := &Capability{ID: "a", Version: 1, ResourceType: TypePack, Title: "A", Owner: "o", Status: StatusActive,
		Tenants: []string{"acme"}, ACL: ACL{Discover: []string{"ops"}, Describe: []string{"ops"}}}
	mid := &Capability{ID: "a.b", Version: 1, ResourceType: TypePack, Title: "B", Owner: "o", Status: StatusActive}
	leaf := &Capability{ID: "a.b.c", Version: 1, ResourceType: TypePack, Title: "C", Owner: "o", Status: StatusActive,
		Tenants: []string{"globex"}, ACL: ACL{Discover: []string{"dev"}}}
	errs := Lint([]*Capability{root, mid, leaf})
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.ID+" "+e.Field)
	}
	if got := strings.Join(fields, ", "); got != "a.b.c tenants, a.b.c acl.discover" {
		t.Fatalf("errors %v", errs)
	}
}
