package policy

import (
	"encoding/binary"
	"maps"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Table answers the class of Availability for every capability of one snapshot, by docID,
// from a small record per capability. A search asks it of every candidate, documents spread
// over the whole catalogue and mostly out of cache after the retrievers ran, and reading the
// capability itself (a large struct: status, health, requirements, type and ACL lie on
// different cache lines) cost several cache misses per candidate.
//
// The record holds what does not depend on the caller: whether the capability is unavailable
// whoever asks, which requirements it has that the caller's environment decides (it goes
// through Availability when the caller's context says something of one of them), whether it
// needs confirmation, and its access class: the gate Availability checks with its tenant
// list and effective ACL. Capabilities share a few classes (a pack's children inherit its
// ACL), and a Caller checks each class once.
//
// A Table is immutable after NewTable and safe for concurrent use.
type Table struct {
	caps    []*registry.Capability
	recs    []record
	classes []accessClass
	// byKey numbers the classes by their keys (accessClass.appendKey), for With.
	byKey map[string]uint32
}

// record is what a Table keeps of one capability.
type record struct {
	class uint32 // index into Table.classes
	flags uint8  // rec* and env* bits
}

const (
	// recUnavailable: offline, disabled (itself or a pack) or health down.
	recUnavailable uint8 = 1 << iota
	// recConfirm: an action that needs confirmation (NeedsConfirmation).
	recConfirm
	// The env* bits name the requirements that the caller's environment decides, each
	// tested by Availability only when the runtime context says something of it (see
	// Caller.Reset): credentials and feature flags always, min_budget when the budget is
	// limited, supported_os when the os is known, required_executors when the executors are,
	// the agent runtime constraint when its version is known, regions when the region is.
	envAlways
	envBudget
	envOS
	envExecutors
	envRuntime
	envRegion
)

// accessClass is what Check reads of a capability that is online and enabled.
type accessClass struct {
	gate    registry.Gate
	tenants []string
	acl     *registry.ACL
}

// NewTable builds the table of caps, whose positions are their docIDs (as in
// registry.Snapshot.Caps).
func NewTable(caps []*registry.Capability) *Table {
	t := &Table{caps: caps, recs: make([]record, len(caps)), byKey: make(map[string]uint32)}
	var key []byte
	for d, c := range caps {
		key = t.set(d, c, key)
	}
	return t
}

// With returns the table of caps, which holds the capabilities of t's at the same docIDs
// but for some changed ones (a different *registry.Capability at a docID): only their
// records are computed, the others are copied. A class no record names any longer is
// kept; a Caller checks a class only when a record names it, so the table answers as
// NewTable(caps) does. t is unchanged. Caps of another length give NewTable(caps).
func (t *Table) With(caps []*registry.Capability) *Table {
	if len(caps) != len(t.caps) {
		return NewTable(caps)
	}
	n := &Table{caps: caps, recs: slices.Clone(t.recs), classes: slices.Clip(t.classes), byKey: t.byKey}
	var key []byte
	copied := false
	for d, c := range caps {
		if c == t.caps[d] {
			continue
		}
		if !copied { // a new class is numbered in a copy of the map
			n.byKey, copied = maps.Clone(t.byKey), true
		}
		key = n.set(d, c, key)
	}
	return n
}

// set computes the record of c (docID d), numbering its class when new; key is scratch
// space, returned.
func (t *Table) set(d int, c *registry.Capability, key []byte) []byte {
	r := &t.recs[d]
	*r = record{}
	if c == nil {
		r.flags = envAlways // Availability answers for it
		return key
	}
	if c.Status == registry.StatusOffline || !c.Eff.Enabled || strings.EqualFold(c.Health.Status, "down") {
		r.flags |= recUnavailable
	}
	if c.ResourceType == registry.TypeAction && NeedsConfirmation(c) {
		r.flags |= recConfirm
	}
	r.flags |= environment(c)
	ac := accessClass{gate: availabilityGate(c), tenants: c.Eff.Tenants, acl: &c.Eff.ACL}
	key = ac.appendKey(key[:0])
	id, ok := t.byKey[string(key)]
	if !ok {
		id = uint32(len(t.classes))
		t.byKey[string(key)] = id
		t.classes = append(t.classes, ac)
	}
	r.class = id
	return key
}

// environment returns the env* bits of the requirements c has.
func environment(c *registry.Capability) uint8 {
	var f uint8
	set := func(bit uint8, on bool) {
		if on {
			f |= bit
		}
	}
	set(envAlways, len(c.Requirements.FeatureFlags) > 0 || len(c.Requirements.Credentials) > 0)
	set(envBudget, c.Requirements.MinBudget > 0)
	set(envOS, len(c.SupportedOS) > 0)
	set(envExecutors, len(c.RequiredExecutors) > 0)
	set(envRuntime, c.Compatibility.AgentRuntime != "")
	set(envRegion, len(c.Compatibility.Regions) > 0)
	return f
}

// availabilityGate is the gate Availability checks: execute for an action, describe for a
// pack or recipe.
func availabilityGate(c *registry.Capability) registry.Gate {
	if c.ResourceType == registry.TypeAction {
		return registry.GateExecute
	}
	return registry.GateDescribe
}

// appendKey appends an encoding of the class to dst: equal keys, equal classes.
func (a *accessClass) appendKey(dst []byte) []byte {
	dst = append(dst, byte(a.gate))
	for _, list := range [][]string{a.tenants, a.acl.Discover, a.acl.Describe, a.acl.Execute, a.acl.Deny} {
		dst = binary.AppendUvarint(dst, uint64(len(list)))
		for _, s := range list {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

// Caller is one caller's view of a Table: Availability for that caller, checking each access
// class once. It is not safe for concurrent use; the zero value is ready after Reset.
type Caller struct {
	t  *Table
	rc *registry.RuntimeContext
	// env holds the env* bits of the requirements rc says something of: a capability with
	// one of them goes through Availability.
	env  uint8
	seen []uint8 // per access class: 0 not checked yet, else classAllowed or classRefused
}

const (
	classAllowed uint8 = 1 + iota
	classRefused
)

// Reset makes c answer for caller rc (nil: the empty context, as for Availability) from
// table t, forgetting earlier answers but keeping its memory.
func (c *Caller) Reset(t *Table, rc *registry.RuntimeContext) {
	if rc == nil {
		rc = &registry.RuntimeContext{}
	}
	c.t, c.rc = t, rc
	c.env = envAlways
	set := func(bit uint8, on bool) {
		if on {
			c.env |= bit
		}
	}
	set(envBudget, rc.Budget >= 0)
	set(envOS, rc.OS != "")
	set(envExecutors, rc.Executors != nil)
	set(envRuntime, rc.AgentRuntimeVersion != "")
	set(envRegion, rc.Region != "")
	if cap(c.seen) < len(t.classes) {
		c.seen = make([]uint8, len(t.classes))
	}
	c.seen = c.seen[:len(t.classes)]
	clear(c.seen)
}

// Availability returns the class Availability gives the capability of docID d for the
// caller, without its reasons.
func (c *Caller) Availability(d uint32) registry.Availability {
	r := c.t.recs[d]
	switch {
	case r.flags&recUnavailable != 0:
		return registry.Unavailable
	case r.flags&c.env != 0:
		a, _ := Availability(c.t.caps[d], c.rc)
		return a
	}
	// Online and enabled: Check refuses only for visibility or the ACL, which is what
	// Availability calls forbidden.
	v := c.seen[r.class]
	if v == 0 {
		ac := &c.t.classes[r.class]
		v = classRefused
		if registry.VisibleTo(ac.tenants, c.rc.Tenant) && ac.acl.Allows(c.rc, ac.gate) {
			v = classAllowed
		}
		c.seen[r.class] = v
	}
	switch {
	case v == classRefused:
		return registry.Forbidden
	case r.flags&recConfirm != 0:
		return registry.NeedsConfirmation
	}
	return registry.Available
}
