package policy

import (
	"strconv"

	"github.com/capdex/capdex/registry"
)

// Disclosure codes: what Disclose lets a caller learn of a capability.
const (
	// DiscloseNotFound: nothing, not even that it exists.
	DiscloseNotFound = "not_found"
	// DiscloseForbidden: that it exists, not its contract (the describe gate refuses).
	DiscloseForbidden = "forbidden"
)

// Disclose decides what rc may learn of the capability id (c, nil when there is none): the
// discover gate (tenant, enabled, offline, acl.deny, acl.discover) and the describe gate, in
// that order. It returns the empty code when rc may read the whole contract, else a
// Disclose* code and the one message every path (describe, run, a recipe's steps) answers
// with, so that an absent capability and a hidden one read the same.
func Disclose(id string, c *registry.Capability, rc *registry.RuntimeContext) (code, msg string) {
	if c == nil || !Check(c, rc, registry.GateDiscover).Allowed {
		return DiscloseNotFound, "no capability " + strconv.Quote(id)
	}
	if d := Check(c, rc, registry.GateDescribe); !d.Allowed {
		return DiscloseForbidden, "describe " + c.ID + ": " + d.Reason
	}
	return "", ""
}
