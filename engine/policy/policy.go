package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Decision codes say why a gate refused; the empty code means allowed.
const (
	// CodeNotFound: the capability is nil.
	CodeNotFound = "not_found"
	// CodeNotVisible: the capability's effective tenant list excludes the caller's tenant.
	CodeNotVisible = "not_visible"
	// CodeDisabled: the capability or one of its packs is disabled.
	CodeDisabled = "disabled"
	// CodeOffline: the capability's status is offline.
	CodeOffline = "offline"
	// CodeDenied: an acl.deny entry names the caller (deny overrides every allow).
	CodeDenied = "denied"
	// CodeNotGranted: no acl entry of the gate (or of an enclosing gate) names the caller.
	CodeNotGranted = "not_granted"
)

// Decision is the answer of Check: whether the caller passes a gate, and why.
type Decision struct {
	// Allowed reports whether the gate is passed.
	Allowed bool
	// Code is one of the Code* constants when refused, empty when allowed.
	Code string
	// Reason is a human sentence saying why.
	Reason string
	// Gate is the gate that was asked for, or the first enclosing gate that refused
	// (a caller refused at discover is refused at execute too).
	Gate registry.Gate
}

// Check decides whether rc passes gate g of capability c. The checks run in this order and
// the first refusal wins: tenant visibility (c.Eff.Tenants), enabled (c.Eff.Enabled), status
// offline, then the effective ACL (deny overrides, default deny, gates nest). c.Eff must have
// been filled by registry.NewSnapshot.
func Check(c *registry.Capability, rc *registry.RuntimeContext, g registry.Gate) Decision {
	if rc == nil {
		rc = &registry.RuntimeContext{}
	}
	d := Decision{Gate: g}
	switch {
	case c == nil:
		d.Code, d.Reason = CodeNotFound, "no such capability"
	case !registry.VisibleTo(c.Eff.Tenants, rc.Tenant):
		d.Code, d.Reason = CodeNotVisible, fmt.Sprintf("not visible to tenant %q", rc.Tenant)
	case !c.Eff.Enabled:
		d.Code, d.Reason = CodeDisabled, disabledReason(c)
	case c.Status == registry.StatusOffline:
		d.Code, d.Reason = CodeOffline, "capability is offline"
	default:
		return checkACL(&c.Eff.ACL, rc, g)
	}
	return d
}

func disabledReason(c *registry.Capability) string {
	if c.Enabled != nil && !*c.Enabled {
		return "capability is disabled"
	}
	if len(c.Eff.Packs) > 0 {
		return "disabled by an enclosing pack (" + strings.Join(c.Eff.Packs, ", ") + ")"
	}
	return "capability is disabled"
}

// checkACL explains acl.Allows: which deny entry matched, or which gate granted nothing.
func checkACL(acl *registry.ACL, rc *registry.RuntimeContext, g registry.Gate) Decision {
	if acl.Allows(rc, g) {
		return Decision{Allowed: true, Reason: allowedReason(g), Gate: g}
	}
	for _, e := range acl.Deny {
		probe := registry.ACL{Deny: []string{e}, Discover: []string{"*"}}
		if !probe.Allows(rc, registry.GateDiscover) {
			return Decision{Code: CodeDenied, Reason: fmt.Sprintf("denied by acl.deny entry %q", e), Gate: g}
		}
	}
	for gate := registry.GateDiscover; gate <= g; gate++ {
		if !acl.Allows(rc, gate) {
			return Decision{Code: CodeNotGranted,
				Reason: fmt.Sprintf("no acl.%s entry grants the caller (default deny)", gate), Gate: gate}
		}
	}
	// Unreachable while ACL.Allows nests the gates; stay closed if it ever changes.
	return Decision{Code: CodeNotGranted, Reason: "not granted (default deny)", Gate: g}
}

// allowedReason is the Reason of an allowed Decision at gate g, without building it anew on
// every check (availability checks every candidate of every search).
func allowedReason(g registry.Gate) string {
	switch g {
	case registry.GateDiscover:
		return "allowed by acl.discover"
	case registry.GateDescribe:
		return "allowed by acl.describe"
	case registry.GateExecute:
		return "allowed by acl.execute"
	}
	return "allowed by acl." + g.String()
}

// NeedsConfirmation reports whether running c needs a confirmation token: the definition asks
// for one, its side effect is I (high impact or irreversible), or its risk is critical.
func NeedsConfirmation(c *registry.Capability) bool {
	return c.RequiresConfirmation || c.SideEffect == registry.SideEffectImpact || c.RiskLevel == registry.RiskCritical
}

// Availability says whether c is usable by rc now, with every reason found. The class is the
// most severe that applies, in this order:
//
//   - unavailable: status offline, disabled (itself or a pack), health down, or the caller's
//     budget (when not negative, i.e. limited) below requirements.min_budget;
//   - incompatible: supported_os excludes rc.OS, required_executors not all in rc.Executors
//     (only when rc.Executors is non-nil), compatibility.agent_runtime not satisfied by
//     rc.AgentRuntimeVersion, compatibility.regions excludes rc.Region, or a
//     requirements.feature_flags entry missing from rc.FeatureFlags; an empty rc.OS,
//     rc.Region or rc.AgentRuntimeVersion means unknown and does not filter;
//   - missing_credentials: a requirements.credentials entry missing from rc.Credentials;
//   - forbidden: the execute gate refuses (for packs and recipes: the describe gate), or the
//     capability is not visible to the caller at all;
//   - needs_confirmation: NeedsConfirmation(c) for an action;
//   - available otherwise.
//
// Each reason starts with its class ("incompatible: ...").
func Availability(c *registry.Capability, rc *registry.RuntimeContext) (registry.Availability, []string) {
	if rc == nil {
		rc = &registry.RuntimeContext{}
	}
	if c == nil {
		return registry.Unavailable, []string{"unavailable: no such capability"}
	}
	var unavailable, incompatible, missing, forbidden []string

	if c.Status == registry.StatusOffline {
		unavailable = append(unavailable, "status is offline")
	}
	if !c.Eff.Enabled {
		unavailable = append(unavailable, disabledReason(c))
	}
	if strings.EqualFold(c.Health.Status, "down") {
		msg := "health is down"
		if c.Health.Message != "" {
			msg += ": " + c.Health.Message
		}
		unavailable = append(unavailable, msg)
	}
	if mb := c.Requirements.MinBudget; mb > 0 && rc.Budget >= 0 && rc.Budget < mb {
		unavailable = append(unavailable, fmt.Sprintf("budget %g below min_budget %g", rc.Budget, mb))
	}

	if !SupportsOS(c, rc.OS) {
		incompatible = append(incompatible, fmt.Sprintf("os %s not in supported_os %v", rc.OS, c.SupportedOS))
	}
	if rc.Executors != nil {
		for _, e := range c.RequiredExecutors {
			if !slices.Contains(rc.Executors, e) {
				incompatible = append(incompatible, fmt.Sprintf("executor %s not available", e))
			}
		}
	}
	if cons := c.Compatibility.AgentRuntime; cons != "" && rc.AgentRuntimeVersion != "" {
		ok, err := MatchVersion(cons, rc.AgentRuntimeVersion)
		switch {
		case err != nil:
			incompatible = append(incompatible, fmt.Sprintf("agent runtime %s vs %q: %v", rc.AgentRuntimeVersion, cons, err))
		case !ok:
			incompatible = append(incompatible, fmt.Sprintf("agent runtime %s does not satisfy %s", rc.AgentRuntimeVersion, cons))
		}
	}
	if rc.Region != "" && len(c.Compatibility.Regions) > 0 && !slices.Contains(c.Compatibility.Regions, rc.Region) {
		incompatible = append(incompatible, fmt.Sprintf("region %s not in %v", rc.Region, c.Compatibility.Regions))
	}
	for _, f := range c.Requirements.FeatureFlags {
		if !slices.Contains(rc.FeatureFlags, f) {
			incompatible = append(incompatible, fmt.Sprintf("feature flag %s not enabled", f))
		}
	}

	for _, cr := range c.Requirements.Credentials {
		if !slices.Contains(rc.Credentials, cr) {
			missing = append(missing, fmt.Sprintf("credential %s not present", cr))
		}
	}

	if d := Check(c, rc, availabilityGate(c)); !d.Allowed && d.Code != CodeOffline && d.Code != CodeDisabled {
		forbidden = append(forbidden, d.Reason)
	}

	var reasons []string
	add := func(class registry.Availability, rs []string) {
		for _, r := range rs {
			reasons = append(reasons, string(class)+": "+r)
		}
	}
	add(registry.Unavailable, unavailable)
	add(registry.Incompatible, incompatible)
	add(registry.MissingCredentials, missing)
	add(registry.Forbidden, forbidden)
	switch {
	case len(unavailable) > 0:
		return registry.Unavailable, reasons
	case len(incompatible) > 0:
		return registry.Incompatible, reasons
	case len(missing) > 0:
		return registry.MissingCredentials, reasons
	case len(forbidden) > 0:
		return registry.Forbidden, reasons
	case c.ResourceType == registry.TypeAction && NeedsConfirmation(c):
		return registry.NeedsConfirmation, []string{string(registry.NeedsConfirmation) + ": " + confirmationReason(c)}
	}
	return registry.Available, nil
}

func confirmationReason(c *registry.Capability) string {
	switch {
	case c.RequiresConfirmation:
		return "requires_confirmation is set"
	case c.SideEffect == registry.SideEffectImpact:
		return "side effect I (high impact or irreversible)"
	}
	return "risk level critical"
}

// osAliases maps Go's GOOS names to the registry's os names.
var osAliases = map[string]string{"darwin": "macos", "osx": "macos", "mac": "macos"}

func normOS(s string) string {
	s = strings.ToLower(s)
	if a, ok := osAliases[s]; ok {
		return a
	}
	return s
}

// SupportsOS reports whether c runs on os: an empty os (unknown) or an empty supported_os
// (any) says yes; darwin and osx are macos.
func SupportsOS(c *registry.Capability, os string) bool {
	return os == "" || len(c.SupportedOS) == 0 || containsOS(c.SupportedOS, os)
}

func containsOS(list []string, os string) bool {
	os = normOS(os)
	for _, o := range list {
		if normOS(o) == os {
			return true
		}
	}
	return false
}

// Unusable says whether the caller's context keeps c from running now, whatever its gates:
// the unavailable and incompatible classes of Availability (health down, offline, disabled,
// budget; supported_os, required_executors, agent runtime, regions, feature flags). It
// returns that class with its reasons, or "" and nil. Run refuses such an action before
// its handler is reached; the caller's gates are judged separately (Check, Disclose), and
// first, so nothing of a capability the caller may not discover is told.
func Unusable(c *registry.Capability, rc *registry.RuntimeContext) (registry.Availability, []string) {
	class, reasons := Availability(c, rc)
	if class != registry.Unavailable && class != registry.Incompatible {
		return "", nil
	}
	out := make([]string, 0, len(reasons))
	for _, r := range reasons {
		if strings.HasPrefix(r, string(registry.Unavailable)+": ") || strings.HasPrefix(r, string(registry.Incompatible)+": ") {
			out = append(out, r)
		}
	}
	return class, out
}
