package registry

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Clone returns a deep copy of c: no slice, map, pointer or schema is shared with c. The
// copy carries no source position (see Source). Clone of nil is nil.
func (c *Capability) Clone() *Capability {
	if c == nil {
		return nil
	}
	d := *c
	d.Aliases = slices.Clone(c.Aliases)
	d.Intents = slices.Clone(c.Intents)
	d.Entities = slices.Clone(c.Entities)
	d.Symptoms = slices.Clone(c.Symptoms)
	d.WhenToUse = slices.Clone(c.WhenToUse)
	d.WhenNotToUse = slices.Clone(c.WhenNotToUse)
	d.Scenarios = slices.Clone(c.Scenarios)
	d.SupportedOS = slices.Clone(c.SupportedOS)
	d.RequiredExecutors = slices.Clone(c.RequiredExecutors)
	d.NetworkAllow = slices.Clone(c.NetworkAllow)
	d.ACL = c.ACL.clone()
	d.ArgumentsSchema = bytes.Clone(c.ArgumentsSchema)
	d.OutputSchema = bytes.Clone(c.OutputSchema)
	if c.Handler != nil {
		h := *c.Handler
		h.Argv = slices.Clone(h.Argv)
		h.Env = slices.Clone(h.Env)
		h.Headers = maps.Clone(h.Headers)
		h.Secrets = maps.Clone(h.Secrets)
		d.Handler = &h
	}
	d.Produces = slices.Clone(c.Produces)
	d.Tags = slices.Clone(c.Tags)
	d.Compatibility.Regions = slices.Clone(c.Compatibility.Regions)
	if c.Behavior != nil {
		b := *c.Behavior
		d.Behavior = &b
	}
	d.Requirements.Credentials = slices.Clone(c.Requirements.Credentials)
	d.Requirements.FeatureFlags = slices.Clone(c.Requirements.FeatureFlags)
	if c.Examples != nil {
		d.Examples = make([]Example, len(c.Examples))
		for i, ex := range c.Examples {
			d.Examples[i] = Example{Title: ex.Title, Arguments: bytes.Clone(ex.Arguments)}
		}
	}
	if c.Enabled != nil {
		e := *c.Enabled
		d.Enabled = &e
	}
	d.Tenants = slices.Clone(c.Tenants)
	d.Steps = slices.Clone(c.Steps) // RecipeStep holds only strings
	if c.Eff != nil {
		d.Eff = &Effective{
			Enabled: c.Eff.Enabled,
			Tenants: slices.Clone(c.Eff.Tenants),
			ACL:     c.Eff.ACL.clone(),
			Packs:   slices.Clone(c.Eff.Packs),
			below:   slices.Clone(c.Eff.below),
		}
	}
	return &d
}

func (a ACL) clone() ACL {
	return ACL{
		Discover: slices.Clone(a.Discover),
		Describe: slices.Clone(a.Describe),
		Execute:  slices.Clone(a.Execute),
		Deny:     slices.Clone(a.Deny),
	}
}

// Equal reports whether a and b are the same definition: every field of the definition
// format is compared, while the computed fields (Eff and Provenance.SchemaDigest) are
// ignored. Schemas and example arguments are compared as canonical JSON, so key order and
// whitespace do not matter; an empty list equals an absent one. The store uses it to refuse
// a changed definition that keeps its version.
func Equal(a, b *Capability) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(canonicalDefinition(a), canonicalDefinition(b))
}

// canonicalDefinition is the canonical JSON of a definition without its computed fields.
func canonicalDefinition(c *Capability) []byte {
	d := *c
	d.Eff = nil
	d.Provenance.SchemaDigest = ""
	d.ArgumentsSchema = canonicalRaw(c.ArgumentsSchema)
	d.OutputSchema = canonicalRaw(c.OutputSchema)
	if c.Examples != nil {
		d.Examples = make([]Example, len(c.Examples))
		for i, ex := range c.Examples {
			d.Examples[i] = Example{Title: ex.Title, Arguments: canonicalRaw(ex.Arguments)}
		}
	}
	b, err := json.Marshal(&d)
	if err != nil {
		// canonicalRaw made every raw field valid JSON; nothing else can fail to marshal.
		return []byte(err.Error())
	}
	return b
}
