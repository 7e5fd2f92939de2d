package registry

import "slices"

// RuntimeContext says who asks and where. It comes from the caller's authenticated identity
// and environment, never from a request body.
type RuntimeContext struct {
	Tenant  string   `json:"tenant,omitempty"`
	User    string   `json:"user,omitempty"`
	Session string   `json:"session,omitempty"`
	Project string   `json:"project,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
	// OS is linux, macos or windows; empty means unknown (no os filter).
	OS string `json:"os,omitempty"`
	// Executors available to the caller (shell, npm, python, docker, http, ...); nil means unknown.
	Executors    []string `json:"executors,omitempty"`
	Credentials  []string `json:"credentials,omitempty"`
	FeatureFlags []string `json:"feature_flags,omitempty"`
	Region       string   `json:"region,omitempty"`
	// AgentRuntimeVersion is compared with Compatibility.AgentRuntime, e.g. "2.5".
	AgentRuntimeVersion string `json:"agent_runtime_version,omitempty"`
	// Budget left; negative means unlimited.
	Budget        float64 `json:"budget,omitempty"`
	WorkflowStage string  `json:"workflow_stage,omitempty"`
}

// Gate is one of the three nested permissions.
type Gate int

// Gates: discover ⊇ describe ⊇ execute.
const (
	GateDiscover Gate = iota
	GateDescribe
	GateExecute
)

func (g Gate) String() string {
	switch g {
	case GateDiscover:
		return "discover"
	case GateDescribe:
		return "describe"
	case GateExecute:
		return "execute"
	}
	return "unknown"
}

// matches reports whether an ACL entry names the caller.
func (rc *RuntimeContext) matches(entry string) bool {
	switch {
	case entry == "*":
		return true
	case len(entry) > 5 && entry[:5] == "user:":
		return rc.User != "" && entry[5:] == rc.User
	case len(entry) > 7 && entry[:7] == "tenant:":
		return rc.Tenant != "" && entry[7:] == rc.Tenant
	case len(entry) > 6 && entry[:6] == "scope:":
		return slices.Contains(rc.Scopes, entry[6:])
	}
	return slices.Contains(rc.Scopes, entry)
}

func (rc *RuntimeContext) any(list []string) bool {
	for _, e := range list {
		if rc.matches(e) {
			return true
		}
	}
	return false
}

// Allows reports whether the ACL lets rc pass gate g. Deny overrides every allow, nothing is
// allowed by default, and the gates nest: execute needs describe and discover, describe needs
// discover. The scope "admin" passes every gate that does not deny it.
func (a *ACL) Allows(rc *RuntimeContext, g Gate) bool {
	if rc.any(a.Deny) {
		return false
	}
	if slices.Contains(rc.Scopes, "admin") {
		return true
	}
	lists := [...][]string{a.Discover, a.Describe, a.Execute}
	for i := GateDiscover; i <= g; i++ {
		if !rc.any(lists[i]) {
			return false
		}
	}
	return true
}

// VisibleTo reports whether tenant t may see a node whose effective tenant list is tenants.
func VisibleTo(tenants []string, t string) bool {
	return len(tenants) == 0 || slices.Contains(tenants, t) || slices.Contains(tenants, "*")
}
