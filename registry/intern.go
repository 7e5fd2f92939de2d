package registry

import "unique"

// Intern replaces the strings of c's enumerated and often repeated fields (owner, domain,
// types, statuses and classes, provenance, and the elements of its tags, entities, intents,
// symptoms, scenarios, platforms, executors, produces, ACL, tenant, region, credential and
// flag lists, and the handler's kind, method, server and directory) with one canonical copy
// per distinct value (package unique), so that a large registry decoded from the store keeps
// each repeated value once; and makes the texts of c that repeat one another one string
// (shareText). Values do not change.
func Intern(c *Capability) {
	s := func(p *string) {
		if *p != "" {
			*p = unique.Make(*p).Value()
		}
	}
	list := func(l []string) {
		for i := range l {
			s(&l[i])
		}
	}
	s(&c.CapabilityType)
	s(&c.Domain)
	s(&c.Owner)
	s(&c.Reviewer)
	s((*string)(&c.ResourceType))
	s((*string)(&c.SideEffect))
	s((*string)(&c.RiskLevel))
	s((*string)(&c.NetworkPolicy))
	s((*string)(&c.Status))
	s(&c.Provenance.Provider)
	s(&c.Provenance.Source)
	s(&c.Provenance.Format)
	s(&c.Provenance.ReviewedAt)
	if c.Behavior != nil {
		s(&c.Behavior.LatencyClass)
		s(&c.Behavior.CostClass)
	}
	s(&c.Compatibility.AgentRuntime)
	s(&c.Health.Status)
	if h := c.Handler; h != nil {
		s(&h.Kind)
		s(&h.Method)
		s(&h.Server)
		s(&h.Dir)
	}
	for _, l := range [][]string{c.Tags, c.Entities, c.Intents, c.Symptoms, c.Scenarios, c.SupportedOS,
		c.RequiredExecutors, c.Produces, c.NetworkAllow, c.Tenants, c.ACL.Discover, c.ACL.Describe,
		c.ACL.Execute, c.ACL.Deny, c.Compatibility.Regions, c.Requirements.Credentials, c.Requirements.FeatureFlags} {
		list(l)
	}
	shareText(c)
}

// shareText makes each text of c equal to an earlier one (title, summary, external id,
// aliases, when_to_use, when_not_to_use, in that order; the lists Intern makes canonical are
// left to it) the same string as that one: an imported tool's description is both its
// summary and its when_to_use, a name often its alias. Up to textsCompared distinct texts
// are compared.
func shareText(c *Capability) {
	var seen [textsCompared]string
	n := 0
	one := func(p *string) {
		if *p == "" {
			return
		}
		for _, x := range seen[:n] {
			if x == *p {
				*p = x
				return
			}
		}
		if n < len(seen) {
			seen[n] = *p
			n++
		}
	}
	one(&c.Title)
	one(&c.Summary)
	one(&c.ExternalID)
	for _, l := range [][]string{c.Aliases, c.WhenToUse, c.WhenNotToUse} {
		for i := range l {
			one(&l[i])
		}
	}
}

// textsCompared bounds the distinct texts shareText compares each one with.
const textsCompared = 24
