package engine

import (
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// AuditKindRun is the Kind of the audit records of runs (the others are registry changes),
// re-exported for the daemon's console.
const AuditKindRun = store.KindRun

// GateDecision is whether a caller passes one gate of a capability, and why.
type GateDecision = policy.Decision

// CheckGate decides whether rc passes gate g of c, a capability of the current snapshot
// (Snapshot): tenant visibility, enabled, offline, then the ACL (deny overrides, gates nest).
// It is the check every search, describe and run applies; the daemon's console shows it.
func CheckGate(c *registry.Capability, rc *registry.RuntimeContext, g registry.Gate) GateDecision {
	return policy.Check(c, rc, g)
}

// AvailabilityFor says whether rc can use c now, with the reasons when it cannot, as search
// and describe report it.
func AvailabilityFor(c *registry.Capability, rc *registry.RuntimeContext) (registry.Availability, []string) {
	return policy.Availability(c, rc)
}
