package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// ListItem is one child of a browsed pack.
type ListItem struct {
	ResourceID           string                `json:"resource_id"`
	ResourceType         registry.ResourceType `json:"resource_type"`
	Title                string                `json:"title"`
	Summary              string                `json:"summary,omitempty"`
	SideEffect           registry.SideEffect   `json:"side_effect,omitempty"`
	RiskLevel            registry.RiskLevel    `json:"risk_level,omitempty"`
	RequiresConfirmation bool                  `json:"requires_confirmation,omitempty"`
	Availability         registry.Availability `json:"availability,omitempty"`
	// Children counts the visible children of a pack.
	Children int `json:"children,omitempty"`
}

// ListResponse is the answer of capability_list.
type ListResponse struct {
	// Pack is the browsed pack ("" for the root).
	Pack     string     `json:"pack"`
	Title    string     `json:"title,omitempty"`
	Guidance string     `json:"guidance,omitempty"`
	Items    []ListItem `json:"items"`
}

// List browses a pack: its direct children that the caller may discover, with the gates
// and the hard pre-filter applied. An empty pack id lists the root packs. A pack the caller
// may not discover is ErrNotFound, exactly as one that does not exist.
func (e *Engine) List(ctx context.Context, pack string, rc registry.RuntimeContext) (*ListResponse, error) {
	st := e.state.Load()
	if st == nil {
		return nil, ErrClosed
	}
	g := st.gen
	snap := g.Snapshot()
	allow := g.Filter(&rc, index.FilterSpec{Within: pack})
	out := &ListResponse{Pack: pack, Items: []ListItem{}}
	if pack != "" {
		d, ok := snap.DocID(pack)
		if !ok || !allow.Contains(d) || snap.Caps[d].ResourceType != registry.TypePack {
			return nil, fmt.Errorf("%w: pack %q", ErrNotFound, pack)
		}
		out.Title, out.Guidance = snap.Caps[d].Title, snap.Caps[d].Guidance
	}
	counts := map[string]int{}
	it := allow.Iterator()
	var kids []*registry.Capability
	for it.HasNext() {
		c := snap.Caps[it.Next()]
		p := registry.Parent(c.ID)
		counts[p]++
		if p == pack && c.ID != pack {
			kids = append(kids, c)
		}
	}
	for _, c := range kids {
		av, _ := policy.Availability(c, &rc)
		out.Items = append(out.Items, ListItem{
			ResourceID: c.ID, ResourceType: c.ResourceType, Title: c.Title, Summary: c.Summary,
			SideEffect: c.SideEffect, RiskLevel: c.RiskLevel, RequiresConfirmation: policy.NeedsConfirmation(c),
			Availability: av, Children: counts[c.ID],
		})
	}
	return out, nil
}

// Description is the full contract of one capability (capability_describe).
type Description struct {
	ResourceID           string                 `json:"resource_id"`
	ResourceType         registry.ResourceType  `json:"resource_type"`
	CapabilityType       string                 `json:"capability_type,omitempty"`
	Version              int                    `json:"version"`
	Title                string                 `json:"title"`
	Summary              string                 `json:"summary,omitempty"`
	WhenToUse            []string               `json:"when_to_use,omitempty"`
	WhenNotToUse         []string               `json:"when_not_to_use,omitempty"`
	ArgumentsSchema      json.RawMessage        `json:"arguments_schema,omitempty"`
	OutputSchema         json.RawMessage        `json:"output_schema,omitempty"`
	SideEffect           registry.SideEffect    `json:"side_effect,omitempty"`
	RiskLevel            registry.RiskLevel     `json:"risk_level,omitempty"`
	RequiresConfirmation bool                   `json:"requires_confirmation"`
	SchemaDigest         string                 `json:"schema_digest,omitempty"`
	Examples             []registry.Example     `json:"examples,omitempty"`
	Produces             []string               `json:"produces,omitempty"`
	Timeout              string                 `json:"timeout,omitempty"`
	NetworkPolicy        registry.NetworkPolicy `json:"network_policy,omitempty"`
	Availability         registry.Availability  `json:"availability,omitempty"`
	AvailabilityReasons  []string               `json:"availability_reasons,omitempty"`
	Status               registry.Status        `json:"status,omitempty"`
	// Warnings: what to know before using it ("deprecated: ...").
	Warnings []string `json:"warnings,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	// Steps of a recipe; a recipe is read, never run.
	Steps []registry.RecipeStep `json:"steps,omitempty"`
	// Guidance and Children of a pack.
	Guidance string     `json:"guidance,omitempty"`
	Children []ListItem `json:"children,omitempty"`
	// NextStep says how to use it: capability_run for an action.
	NextStep *registry.NextStep `json:"next_step,omitempty"`
}

// Describe discloses one capability's full contract. The describe gate applies: an id the
// caller may not discover is ErrNotFound; one it may discover but not describe is
// ErrForbidden. Their messages are policy.Disclose's, the same Run answers.
func (e *Engine) Describe(ctx context.Context, id string, rc registry.RuntimeContext) (*Description, error) {
	st := e.state.Load()
	if st == nil {
		return nil, ErrClosed
	}
	ref, _, err := registry.SplitVersion(id)
	if err != nil || !registry.ValidID(ref) {
		return nil, fmt.Errorf("%w: resource_id %q is not a capability id", ErrInvalidRequest, id)
	}
	snap := st.gen.Snapshot()
	c, _ := snap.Get(ref)
	switch code, msg := policy.Disclose(ref, c, &rc); code {
	case policy.DiscloseNotFound:
		return nil, gateError{ErrNotFound, msg}
	case policy.DiscloseForbidden:
		return nil, gateError{ErrForbidden, msg}
	}
	av, reasons := policy.Availability(c, &rc)
	get := snapGet(snap)
	d := &Description{
		ResourceID: c.ID, ResourceType: c.ResourceType, CapabilityType: c.CapabilityType, Version: c.Version,
		Title: policy.RedactText(c.Title, get, &rc), Summary: policy.RedactText(c.Summary, get, &rc),
		WhenToUse: policy.RedactTexts(c.WhenToUse, get, &rc), WhenNotToUse: policy.RedactTexts(c.WhenNotToUse, get, &rc),
		ArgumentsSchema: c.ArgumentsSchema, OutputSchema: c.OutputSchema,
		SideEffect: c.SideEffect, RiskLevel: c.RiskLevel, RequiresConfirmation: policy.NeedsConfirmation(c),
		SchemaDigest: registry.Digest(c), Examples: c.Examples, Produces: c.Produces,
		NetworkPolicy: c.NetworkPolicy, Availability: av, AvailabilityReasons: reasons,
		Status: c.Status, Owner: c.Owner, Steps: policy.RedactSteps(c.Steps, get, &rc), Guidance: policy.RedactText(c.Guidance, get, &rc),
		Warnings: registry.DeprecatedWarning(c, ""),
	}
	if c.Timeout > 0 {
		d.Timeout = time.Duration(c.Timeout).String()
	}
	switch c.ResourceType {
	case registry.TypeAction:
		// the version pinned as id@N: next_step's arguments are strings, and capability_run
		// refuses a string version
		d.NextStep = &registry.NextStep{Tool: "capability_run", Arguments: map[string]string{"resource_id": fmt.Sprintf("%s@%d", c.ID, c.Version)}}
	case registry.TypePack:
		l, err := e.List(ctx, c.ID, rc)
		if err == nil {
			d.Children = l.Items
		}
	}
	if rc.Session != "" {
		e.fb.Described(rc.Tenant, rc.Session, c.ID)
	}
	return d, nil
}

// snapGet looks ids up in snap for policy.RedactSteps.
func snapGet(snap *registry.Snapshot) func(id string) *registry.Capability {
	return func(id string) *registry.Capability {
		c, _ := snap.Get(id)
		return c
	}
}
