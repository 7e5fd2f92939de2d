package policy

import (
	"fmt"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// tableContexts are runtime contexts that between them pass and fail the tenants, ACLs and
// requirements of the built-in registry and the generated catalogue, nil included.
func tableContexts() []*registry.RuntimeContext {
	return []*registry.RuntimeContext{
		nil,
		{},
		{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}},
		{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"},
		{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "windows", Executors: []string{"shell"},
			Credentials: []string{"github"}, FeatureFlags: []string{"beta"}, Budget: 0.5},
		{Tenant: "acme", User: "bob", Scopes: []string{"ops", "admin"}, OS: "macos", Executors: []string{},
			Region: "eu", AgentRuntimeVersion: "1.0", Budget: -1},
		{Tenant: "globex", User: "ann", Scopes: []string{"dev", "ops"}, Region: "us", AgentRuntimeVersion: "9.9", Budget: 100},
	}
}

// TestTable checks that a Caller of a Table gives the class Availability gives, for every
// capability of the built-in registry, of a generated catalogue and of TestAvailability's
// cases, under contexts that pass and fail each check, with one Caller reset from context
// to context.
func TestTable(t *testing.T) {
	builtin, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 3000
	if testing.Short() {
		n = 500
	}
	cases := []*registry.Capability{{ID: "pack", Version: 1, ResourceType: registry.TypePack, Title: "P"}}
	casesRC := tableContexts()
	for i, tt := range availabilityCases {
		c := action(t, tt.mut)
		c.ID = fmt.Sprintf("pack.case%02d", i)
		cases = append(cases, c)
		rc := dev()
		if tt.rc != nil {
			tt.rc(rc)
		}
		casesRC = append(casesRC, rc)
	}
	catalogues := []struct {
		name string
		caps []*registry.Capability
		rcs  []*registry.RuntimeContext
	}{
		{"builtin", builtin, tableContexts()},
		{"generated", testcat.GenerateCatalog(n, 11), tableContexts()},
		{"availability cases", cases, casesRC},
	}
	seen := map[registry.Availability]int{}
	for _, cat := range catalogues {
		t.Run(cat.name, func(t *testing.T) {
			snap, err := registry.NewSnapshot(1, cat.caps)
			if err != nil {
				t.Fatal(err)
			}
			tab := NewTable(snap.Caps)
			var c Caller
			for i, rc := range cat.rcs {
				c.Reset(tab, rc)
				for d, cp := range snap.Caps {
					want, _ := Availability(cp, rc)
					if got := c.Availability(uint32(d)); got != want {
						t.Fatalf("context %d, %s: %s, want %s", i, cp.ID, got, want)
					}
					seen[want]++
				}
			}
			t.Logf("%d capabilities, %d access classes", len(snap.Caps), len(tab.classes))
		})
	}
	for _, a := range []registry.Availability{registry.Available, registry.Unavailable, registry.Incompatible,
		registry.MissingCredentials, registry.Forbidden, registry.NeedsConfirmation} {
		if seen[a] == 0 {
			t.Errorf("no capability was %s: the comparison proves little", a)
		}
	}
}
