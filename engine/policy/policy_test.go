package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

// action returns an enabled action whose effective ACL lets scope dev pass every gate.
func action(tb testing.TB, mut func(c *registry.Capability)) *registry.Capability {
	tb.Helper()
	c := &registry.Capability{
		ID: "pack.act", Version: 1, ResourceType: registry.TypeAction, Title: "Act",
		SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow, Status: registry.StatusActive,
		ACL: registry.ACL{Discover: []string{"dev"}, Describe: []string{"dev"}, Execute: []string{"dev"}},
	}
	if mut != nil {
		mut(c)
	}
	snap, err := registry.NewSnapshot(1, []*registry.Capability{c})
	if err != nil {
		tb.Fatal(err)
	}
	got, _ := snap.Get(c.ID)
	return got
}

func dev() *registry.RuntimeContext {
	return &registry.RuntimeContext{Tenant: "acme", User: "ann", Scopes: []string{"dev"}, Budget: -1}
}

func TestCheck(t *testing.T) {
	f := false
	tests := []struct {
		name    string
		mut     func(c *registry.Capability)
		rc      func(rc *registry.RuntimeContext)
		gate    registry.Gate
		allowed bool
		code    string
		failed  registry.Gate
	}{
		{name: "allowed execute", gate: registry.GateExecute, allowed: true, failed: registry.GateExecute},
		{name: "allowed discover", gate: registry.GateDiscover, allowed: true},
		{name: "tenant not visible", mut: func(c *registry.Capability) { c.Tenants = []string{"other"} },
			gate: registry.GateDiscover, code: CodeNotVisible},
		{name: "tenant visible", mut: func(c *registry.Capability) { c.Tenants = []string{"other", "acme"} },
			gate: registry.GateExecute, allowed: true, failed: registry.GateExecute},
		{name: "tenant star", mut: func(c *registry.Capability) { c.Tenants = []string{"*"} },
			gate: registry.GateExecute, allowed: true, failed: registry.GateExecute},
		{name: "disabled", mut: func(c *registry.Capability) { c.Enabled = &f }, gate: registry.GateDiscover, code: CodeDisabled},
		{name: "offline", mut: func(c *registry.Capability) { c.Status = registry.StatusOffline },
			gate: registry.GateDescribe, code: CodeOffline, failed: registry.GateDescribe},
		{name: "deny overrides allow", mut: func(c *registry.Capability) { c.ACL.Deny = []string{"user:ann"} },
			gate: registry.GateDiscover, code: CodeDenied},
		{name: "deny overrides admin", mut: func(c *registry.Capability) { c.ACL.Deny = []string{"tenant:acme"} },
			rc: func(rc *registry.RuntimeContext) { rc.Scopes = []string{"admin"} }, gate: registry.GateExecute,
			code: CodeDenied, failed: registry.GateExecute},
		{name: "default deny empty acl", mut: func(c *registry.Capability) { c.ACL = registry.ACL{} },
			gate: registry.GateDiscover, code: CodeNotGranted},
		{name: "discoverable not executable",
			mut:  func(c *registry.Capability) { c.ACL.Execute = []string{"ops"} },
			gate: registry.GateExecute, code: CodeNotGranted, failed: registry.GateExecute},
		{name: "execute without discover fails at discover",
			mut:  func(c *registry.Capability) { c.ACL.Discover = []string{"ops"} },
			gate: registry.GateExecute, code: CodeNotGranted, failed: registry.GateDiscover},
		{name: "wrong scope", rc: func(rc *registry.RuntimeContext) { rc.Scopes = []string{"guest"} },
			gate: registry.GateDiscover, code: CodeNotGranted},
		{name: "admin passes", rc: func(rc *registry.RuntimeContext) { rc.Scopes = []string{"admin"} },
			mut: func(c *registry.Capability) { c.ACL = registry.ACL{} }, gate: registry.GateExecute,
			allowed: true, failed: registry.GateExecute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := action(t, tt.mut)
			rc := dev()
			if tt.rc != nil {
				tt.rc(rc)
			}
			d := Check(c, rc, tt.gate)
			if d.Allowed != tt.allowed || d.Code != tt.code || d.Gate != tt.failed {
				t.Fatalf("Check = %+v, want allowed=%v code=%q gate=%v", d, tt.allowed, tt.code, tt.failed)
			}
			if d.Reason == "" {
				t.Fatal("empty reason")
			}
		})
	}
}

func TestCheckNil(t *testing.T) {
	if d := Check(nil, dev(), registry.GateDiscover); d.Allowed || d.Code != CodeNotFound {
		t.Fatalf("nil capability: %+v", d)
	}
	c := action(t, nil)
	if d := Check(c, nil, registry.GateDiscover); d.Allowed {
		t.Fatalf("nil context must be default deny: %+v", d)
	}
}

func TestCheckInheritedDeny(t *testing.T) {
	pack := &registry.Capability{ID: "pack", Version: 1, ResourceType: registry.TypePack, Title: "P",
		ACL: registry.ACL{Discover: []string{"dev"}, Describe: []string{"dev"}, Execute: []string{"dev"}, Deny: []string{"user:bob"}}}
	leaf := &registry.Capability{ID: "pack.act", Version: 1, ResourceType: registry.TypeAction, Title: "A",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"*"}}}
	snap, err := registry.NewSnapshot(1, []*registry.Capability{pack, leaf})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := snap.Get("pack.act")
	if d := Check(c, &registry.RuntimeContext{User: "bob"}, registry.GateExecute); d.Allowed || d.Code != CodeDenied {
		t.Fatalf("pack deny must reach the leaf: %+v", d)
	}
	if d := Check(c, &registry.RuntimeContext{User: "eve"}, registry.GateExecute); !d.Allowed {
		t.Fatalf("leaf allow for others: %+v", d)
	}
}

// availabilityCases are TestAvailability's cases: an action changed by mut, asked for by
// dev() changed by rc. TestTable reuses them.
var availabilityCases = []struct {
	name   string
	mut    func(c *registry.Capability)
	rc     func(rc *registry.RuntimeContext)
	want   registry.Availability
	reason string // substring of some reason
}{
	{name: "available", want: registry.Available},
	{name: "offline", mut: func(c *registry.Capability) { c.Status = registry.StatusOffline },
		want: registry.Unavailable, reason: "offline"},
	{name: "disabled", mut: func(c *registry.Capability) { f := false; c.Enabled = &f },
		want: registry.Unavailable, reason: "disabled"},
	{name: "health down", mut: func(c *registry.Capability) { c.Health.Status = "down"; c.Health.Message = "503" },
		want: registry.Unavailable, reason: "health is down: 503"},
	{name: "health degraded is available", mut: func(c *registry.Capability) { c.Health.Status = "degraded" },
		want: registry.Available},
	{name: "budget below min", mut: func(c *registry.Capability) { c.Requirements.MinBudget = 5 },
		rc: func(rc *registry.RuntimeContext) { rc.Budget = 2 }, want: registry.Unavailable, reason: "min_budget"},
	{name: "budget unlimited", mut: func(c *registry.Capability) { c.Requirements.MinBudget = 5 },
		rc: func(rc *registry.RuntimeContext) { rc.Budget = -1 }, want: registry.Available},
	{name: "budget enough", mut: func(c *registry.Capability) { c.Requirements.MinBudget = 5 },
		rc: func(rc *registry.RuntimeContext) { rc.Budget = 5 }, want: registry.Available},
	{name: "os mismatch", mut: func(c *registry.Capability) { c.SupportedOS = []string{"linux", "macos"} },
		rc: func(rc *registry.RuntimeContext) { rc.OS = "windows" }, want: registry.Incompatible, reason: "os windows"},
	{name: "os alias darwin", mut: func(c *registry.Capability) { c.SupportedOS = []string{"macos"} },
		rc: func(rc *registry.RuntimeContext) { rc.OS = "darwin" }, want: registry.Available},
	{name: "os unknown does not filter", mut: func(c *registry.Capability) { c.SupportedOS = []string{"macos"} },
		want: registry.Available},
	{name: "executor missing", mut: func(c *registry.Capability) { c.RequiredExecutors = []string{"shell", "npm"} },
		rc: func(rc *registry.RuntimeContext) { rc.Executors = []string{"shell"} }, want: registry.Incompatible, reason: "executor npm"},
	{name: "executors unknown does not filter", mut: func(c *registry.Capability) { c.RequiredExecutors = []string{"npm"} },
		want: registry.Available},
	{name: "executors empty but known", mut: func(c *registry.Capability) { c.RequiredExecutors = []string{"npm"} },
		rc: func(rc *registry.RuntimeContext) { rc.Executors = []string{} }, want: registry.Incompatible},
	{name: "runtime too old", mut: func(c *registry.Capability) { c.Compatibility.AgentRuntime = ">=2.4" },
		rc: func(rc *registry.RuntimeContext) { rc.AgentRuntimeVersion = "2.3.9" }, want: registry.Incompatible, reason: "does not satisfy"},
	{name: "runtime ok", mut: func(c *registry.Capability) { c.Compatibility.AgentRuntime = ">=2.4, <3" },
		rc: func(rc *registry.RuntimeContext) { rc.AgentRuntimeVersion = "2.10" }, want: registry.Available},
	{name: "runtime bad constraint", mut: func(c *registry.Capability) { c.Compatibility.AgentRuntime = "~>banana" },
		rc: func(rc *registry.RuntimeContext) { rc.AgentRuntimeVersion = "2.4" }, want: registry.Incompatible, reason: "invalid version constraint"},
	{name: "region mismatch", mut: func(c *registry.Capability) { c.Compatibility.Regions = []string{"cn", "us"} },
		rc: func(rc *registry.RuntimeContext) { rc.Region = "eu" }, want: registry.Incompatible, reason: "region eu"},
	{name: "region ok", mut: func(c *registry.Capability) { c.Compatibility.Regions = []string{"cn", "us"} },
		rc: func(rc *registry.RuntimeContext) { rc.Region = "us" }, want: registry.Available},
	{name: "feature flag off", mut: func(c *registry.Capability) { c.Requirements.FeatureFlags = []string{"beta"} },
		want: registry.Incompatible, reason: "feature flag beta"},
	{name: "feature flag on", mut: func(c *registry.Capability) { c.Requirements.FeatureFlags = []string{"beta"} },
		rc: func(rc *registry.RuntimeContext) { rc.FeatureFlags = []string{"beta"} }, want: registry.Available},
	{name: "missing credentials", mut: func(c *registry.Capability) { c.Requirements.Credentials = []string{"github", "npm"} },
		rc: func(rc *registry.RuntimeContext) { rc.Credentials = []string{"github"} }, want: registry.MissingCredentials, reason: "credential npm"},
	{name: "credentials present", mut: func(c *registry.Capability) { c.Requirements.Credentials = []string{"github"} },
		rc: func(rc *registry.RuntimeContext) { rc.Credentials = []string{"github"} }, want: registry.Available},
	{name: "forbidden execute", mut: func(c *registry.Capability) { c.ACL.Execute = []string{"ops"} },
		want: registry.Forbidden, reason: "acl.execute"},
	{name: "forbidden by deny", mut: func(c *registry.Capability) { c.ACL.Deny = []string{"dev"} },
		want: registry.Forbidden, reason: "acl.deny"},
	{name: "pack needs describe only", mut: func(c *registry.Capability) { c.ResourceType = registry.TypePack; c.ACL.Execute = nil },
		want: registry.Available},
	{name: "recipe not describable", mut: func(c *registry.Capability) { c.ResourceType = registry.TypeRecipe; c.ACL.Describe = nil },
		want: registry.Forbidden},
	{name: "needs confirmation flag", mut: func(c *registry.Capability) { c.RequiresConfirmation = true },
		want: registry.NeedsConfirmation, reason: "requires_confirmation"},
	{name: "needs confirmation side effect I", mut: func(c *registry.Capability) { c.SideEffect = registry.SideEffectImpact },
		want: registry.NeedsConfirmation, reason: "side effect I"},
	{name: "needs confirmation critical", mut: func(c *registry.Capability) { c.RiskLevel = registry.RiskCritical },
		want: registry.NeedsConfirmation, reason: "critical"},
	{name: "recipe never needs confirmation", mut: func(c *registry.Capability) {
		c.ResourceType = registry.TypeRecipe
		c.RequiresConfirmation = true
	}, want: registry.Available},
	{name: "unavailable beats incompatible", mut: func(c *registry.Capability) {
		c.Status = registry.StatusOffline
		c.SupportedOS = []string{"macos"}
	}, rc: func(rc *registry.RuntimeContext) { rc.OS = "linux" }, want: registry.Unavailable, reason: "incompatible: os linux"},
	{name: "incompatible beats credentials", mut: func(c *registry.Capability) {
		c.Requirements.FeatureFlags = []string{"x"}
		c.Requirements.Credentials = []string{"k"}
	}, want: registry.Incompatible, reason: "missing_credentials: credential k"},
	{name: "credentials beat forbidden", mut: func(c *registry.Capability) {
		c.Requirements.Credentials = []string{"k"}
		c.ACL.Execute = nil
	}, want: registry.MissingCredentials},
	{name: "forbidden beats confirmation", mut: func(c *registry.Capability) {
		c.RequiresConfirmation = true
		c.ACL.Execute = nil
	}, want: registry.Forbidden},
	{name: "not visible tenant is forbidden", mut: func(c *registry.Capability) { c.Tenants = []string{"other"} },
		want: registry.Forbidden, reason: "tenant"},
}

func TestAvailability(t *testing.T) {
	for _, tt := range availabilityCases {
		t.Run(tt.name, func(t *testing.T) {
			c := action(t, tt.mut)
			rc := dev()
			if tt.rc != nil {
				tt.rc(rc)
			}
			got, reasons := Availability(c, rc)
			if got != tt.want {
				t.Fatalf("Availability = %s %q, want %s", got, reasons, tt.want)
			}
			if got != registry.Available && len(reasons) == 0 {
				t.Fatal("no reasons for", got)
			}
			if got == registry.Available && len(reasons) != 0 {
				t.Fatalf("reasons for available: %q", reasons)
			}
			if tt.reason != "" && !strings.Contains(strings.Join(reasons, "|"), tt.reason) {
				t.Fatalf("reasons %q lack %q", reasons, tt.reason)
			}
			for _, r := range reasons {
				if !strings.Contains(r, ": ") {
					t.Fatalf("reason %q lacks its class", r)
				}
			}
		})
	}
}

func TestMatchVersion(t *testing.T) {
	tests := []struct {
		name       string
		constraint string
		version    string
		want       bool
		err        error
	}{
		{name: "ge equal", constraint: ">=2.4", version: "2.4", want: true},
		{name: "ge padded", constraint: ">=2.4", version: "2.4.0", want: true},
		{name: "ge older", constraint: ">=2.4", version: "2.3.99", want: false},
		{name: "ge numeric not lexical", constraint: ">=2.4", version: "2.10", want: true},
		{name: "gt equal", constraint: ">2.4", version: "2.4", want: false},
		{name: "gt newer", constraint: ">2.4", version: "2.4.1", want: true},
		{name: "le", constraint: "<=3", version: "3.0.0", want: true},
		{name: "lt", constraint: "<3", version: "3.0.0", want: false},
		{name: "lt prerelease", constraint: "<3", version: "3.0.0-rc1", want: true},
		{name: "eq", constraint: "=2.4", version: "2.4.0", want: true},
		{name: "eq double", constraint: "==2.4", version: "2.5", want: false},
		{name: "bare is eq", constraint: "2.4", version: "v2.4", want: true},
		{name: "ne", constraint: "!=2.4", version: "2.5", want: true},
		{name: "and range in", constraint: ">=2.4, <3.0", version: "2.9", want: true},
		{name: "and range out", constraint: ">=2.4, <3.0", version: "3.1", want: false},
		{name: "spaces", constraint: " >= 2.4 ", version: "2.4", want: true},
		{name: "empty constraint", constraint: "", version: "1", want: true},
		{name: "build metadata ignored", constraint: "=1.2.3", version: "1.2.3+abc", want: true},
		{name: "bad constraint", constraint: ">=x", version: "1", err: ErrBadConstraint},
		{name: "empty clause", constraint: ">=1,", version: "1", err: ErrBadConstraint},
		{name: "bad version", constraint: ">=1", version: "one", err: ErrBadVersion},
		{name: "bad version empty part", constraint: ">=1", version: "1..2", err: ErrBadVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MatchVersion(tt.constraint, tt.version)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("MatchVersion(%q, %q) = %v, %v; want %v", tt.constraint, tt.version, got, err, tt.want)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{name: "equal", a: "1.2", b: "1.2.0", want: 0},
		{name: "less", a: "1.2", b: "1.10", want: -1},
		{name: "greater", a: "2", b: "1.99.99", want: 1},
		{name: "prerelease before release", a: "1.0.0-alpha", b: "1.0.0", want: -1},
		{name: "prereleases ordered", a: "1.0.0-beta", b: "1.0.0-alpha", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CompareVersions(tt.a, tt.b)
			if err != nil || got != tt.want {
				t.Fatalf("CompareVersions(%q, %q) = %d, %v; want %d", tt.a, tt.b, got, err, tt.want)
			}
		})
	}
}

func TestAllowedReason(t *testing.T) {
	for g := registry.GateDiscover; g <= registry.GateExecute+1; g++ {
		if got, want := allowedReason(g), "allowed by acl."+g.String(); got != want {
			t.Errorf("gate %d: %q, want %q", g, got, want)
		}
	}
}

// TestUnusable: over Availability's cases, run's check answers exactly the unavailable and
// incompatible ones, with only their reasons; the others (confirmation, credentials,
// forbidden) are left to the gates and the confirmation step.
func TestUnusable(t *testing.T) {
	for _, tt := range availabilityCases {
		t.Run(tt.name, func(t *testing.T) {
			c := action(t, tt.mut)
			rc := dev()
			if tt.rc != nil {
				tt.rc(rc)
			}
			got, reasons := Unusable(c, rc)
			switch tt.want {
			case registry.Unavailable, registry.Incompatible:
				if got != tt.want || len(reasons) == 0 {
					t.Fatalf("Unusable = %s %q, want %s", got, reasons, tt.want)
				}
				for _, r := range reasons {
					if !strings.HasPrefix(r, "unavailable: ") && !strings.HasPrefix(r, "incompatible: ") {
						t.Errorf("reason %q of another class", r)
					}
				}
			default:
				if got != "" || reasons != nil {
					t.Fatalf("Unusable = %s %q for %s", got, reasons, tt.want)
				}
			}
		})
	}
}
