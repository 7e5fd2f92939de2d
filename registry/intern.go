package registry

import "unique"

// Intern replaces the strings of c's enumerated and often repeated fields (owner, domain,
// types, statuses and classes, provenance, and the elements of its tags, entities, intents,
// symptoms, scenarios, platforms, executors, produces, ACL, tenant, region, credential and
// flag lists) with one canonical copy per distinct value (package unique), so that a large
// registry decoded from the store keeps each repeated value once. Values do not change.
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
	for _, l := range [][]string{c.Tags, c.Entities, c.Intents, c.Symptoms, c.Scenarios, c.SupportedOS,
		c.RequiredExecutors, c.Produces, c.NetworkAllow, c.Tenants, c.ACL.Discover, c.ACL.Describe,
		c.ACL.Execute, c.ACL.Deny, c.Compatibility.Regions, c.Requirements.Credentials, c.Requirements.FeatureFlags} {
		list(l)
	}
}
