package registry

import "fmt"

// Bounds of a definition's fields, checked by Lint (a definition is indexed and searched on
// every request, so one huge field costs every later command). They are far above what any
// real definition holds: on the built-in registry and the 6,000 imported tools of the eval
// sets the largest title is 53 bytes, summary 3.9 KB, list item 355 bytes, arguments schema
// 5 KB.
const (
	// maxNameBytes bounds the short strings: title, owner, reviewer, domain, an ACL or
	// tenant entry, a handler name, an example's or step's title, external_id.
	maxNameBytes = 512
	// maxTextBytes bounds the prose: summary, guidance, a step's command and note, a
	// handler's argv element, header and the health message.
	maxTextBytes = 16 << 10
	// maxItemBytes bounds one element of the lists of words and phrases (aliases, intents,
	// entities, symptoms, when_to_use, ...).
	maxItemBytes = 1 << 10
	// maxItems bounds the length of every list (and of the handler's headers and secrets).
	maxItems = 256
	// maxSchemaBytes bounds each of arguments_schema, output_schema, an example's
	// arguments, a handler's URL and body.
	maxSchemaBytes = 256 << 10
)

// sizes reports every field of c over its bound. Messages give the size and the bound,
// never the value.
func (l *linter) sizes(c *Capability) {
	str := func(field, v string, max int) {
		if len(v) > max {
			l.add(c, field, "%s of %d bytes exceeds the limit of %d bytes", field, len(v), max)
		}
	}
	list := func(field string, vs []string, itemMax int) {
		if len(vs) > maxItems {
			l.add(c, field, "%s has %d entries, which exceeds the limit of %d entries", field, len(vs), maxItems)
			return
		}
		for i, v := range vs {
			str(fmt.Sprintf("%s[%d]", field, i), v, itemMax)
		}
	}
	strMap := func(field string, m map[string]string, max int) {
		if len(m) > maxItems {
			l.add(c, field, "%s has %d entries, which exceeds the limit of %d entries", field, len(m), maxItems)
			return
		}
		for k, v := range m {
			if len(k) > maxNameBytes || len(v) > max {
				l.add(c, field, "%s entry of %d+%d bytes exceeds the limit of %d+%d bytes", field, len(k), len(v), maxNameBytes, max)
			}
		}
	}
	str("title", c.Title, maxNameBytes)
	str("summary", c.Summary, maxTextBytes)
	str("guidance", c.Guidance, maxTextBytes)
	str("owner", c.Owner, maxNameBytes)
	str("reviewer", c.Reviewer, maxNameBytes)
	str("domain", c.Domain, maxNameBytes)
	str("capability_type", c.CapabilityType, maxNameBytes)
	str("external_id", c.ExternalID, maxNameBytes)
	for _, f := range []struct {
		name string
		v    []string
	}{{"aliases", c.Aliases}, {"intents", c.Intents}, {"entities", c.Entities}, {"symptoms", c.Symptoms},
		{"when_to_use", c.WhenToUse}, {"when_not_to_use", c.WhenNotToUse}, {"scenarios", c.Scenarios},
		{"supported_os", c.SupportedOS}, {"required_executors", c.RequiredExecutors}, {"network_allow", c.NetworkAllow},
		{"produces", c.Produces}, {"tags", c.Tags}, {"compatibility.regions", c.Compatibility.Regions},
		{"requirements.credentials", c.Requirements.Credentials}, {"requirements.feature_flags", c.Requirements.FeatureFlags}} {
		list(f.name, f.v, maxItemBytes)
	}
	list("tenants", c.Tenants, maxNameBytes)
	list("acl.discover", c.ACL.Discover, maxNameBytes)
	list("acl.describe", c.ACL.Describe, maxNameBytes)
	list("acl.execute", c.ACL.Execute, maxNameBytes)
	list("acl.deny", c.ACL.Deny, maxNameBytes)
	str("arguments_schema", string(c.ArgumentsSchema), maxSchemaBytes)
	str("output_schema", string(c.OutputSchema), maxSchemaBytes)
	str("compatibility.agent_runtime", c.Compatibility.AgentRuntime, maxNameBytes)
	str("health.message", c.Health.Message, maxTextBytes)
	str("provenance.source", c.Provenance.Source, maxTextBytes)
	str("provenance.provider", c.Provenance.Provider, maxNameBytes)
	if len(c.Examples) > maxItems {
		l.add(c, "examples", "examples has %d entries, which exceeds the limit of %d entries", len(c.Examples), maxItems)
	} else {
		for i, e := range c.Examples {
			str(fmt.Sprintf("examples[%d].title", i), e.Title, maxNameBytes)
			str(fmt.Sprintf("examples[%d].arguments", i), string(e.Arguments), maxSchemaBytes)
		}
	}
	if len(c.Steps) > maxItems {
		l.add(c, "steps", "steps has %d entries, which exceeds the limit of %d entries", len(c.Steps), maxItems)
	} else {
		for i, s := range c.Steps {
			str(fmt.Sprintf("steps[%d].title", i), s.Title, maxNameBytes)
			str(fmt.Sprintf("steps[%d].command", i), s.Command, maxTextBytes)
			str(fmt.Sprintf("steps[%d].action", i), s.Action, maxNameBytes)
			str(fmt.Sprintf("steps[%d].note", i), s.Note, maxTextBytes)
		}
	}
	if h := c.Handler; h != nil {
		str("handler.kind", h.Kind, maxNameBytes)
		str("handler.name", h.Name, maxNameBytes)
		list("handler.argv", h.Argv, maxTextBytes)
		list("handler.env", h.Env, maxNameBytes)
		str("handler.dir", h.Dir, maxTextBytes)
		str("handler.method", h.Method, maxNameBytes)
		str("handler.url", h.URL, maxSchemaBytes)
		str("handler.body", h.Body, maxSchemaBytes)
		strMap("handler.headers", h.Headers, maxTextBytes)
		strMap("handler.secrets", h.Secrets, maxNameBytes)
	}
}
