package registry

import (
	"encoding/json"
	"time"
)

// ResourceType says what a node of the registry tree is.
type ResourceType string

// Resource types.
const (
	TypePack   ResourceType = "pack"
	TypeAction ResourceType = "action"
	TypeRecipe ResourceType = "recipe"
)

// SideEffect orders what running a capability may change: R < W-local < W-shared < I.
type SideEffect string

// Side effects, weakest first.
const (
	SideEffectRead        SideEffect = "R"
	SideEffectWriteLocal  SideEffect = "W-local"
	SideEffectWriteShared SideEffect = "W-shared"
	SideEffectImpact      SideEffect = "I"
)

// Level returns 0 for R up to 3 for I, and -1 for an unknown value.
func (s SideEffect) Level() int {
	switch s {
	case SideEffectRead:
		return 0
	case SideEffectWriteLocal:
		return 1
	case SideEffectWriteShared:
		return 2
	case SideEffectImpact:
		return 3
	}
	return -1
}

// RiskLevel is the reviewed risk of a capability.
type RiskLevel string

// Risk levels, lowest first.
const (
	RiskLow      RiskLevel = "low"
	RiskMedium   RiskLevel = "medium"
	RiskHigh     RiskLevel = "high"
	RiskCritical RiskLevel = "critical"
)

// Level returns 0 for low up to 3 for critical, and -1 for an unknown value.
func (r RiskLevel) Level() int {
	switch r {
	case RiskLow:
		return 0
	case RiskMedium:
		return 1
	case RiskHigh:
		return 2
	case RiskCritical:
		return 3
	}
	return -1
}

// Status is the lifecycle state of a capability.
type Status string

// Statuses.
const (
	StatusActive     Status = "active"
	StatusDeprecated Status = "deprecated"
	StatusOffline    Status = "offline"
)

// NetworkPolicy says what network a run may reach.
type NetworkPolicy string

// Network policies.
const (
	NetworkNone      NetworkPolicy = "none"
	NetworkAllowlist NetworkPolicy = "allowlist"
	NetworkAny       NetworkPolicy = "any"
)

// CapabilityTypes lists the valid values of Capability.CapabilityType.
var CapabilityTypes = []string{
	"rule", "skill", "mcp", "task", "database_query", "knowledge_search",
	"report_generator", "notification", "tool", "model", "agent", "workflow",
}

// Duration is a time.Duration written as a Go duration string ("30s", "2m") in YAML and JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "30s".
func (d Duration) MarshalJSON() ([]byte, error) {
	if d == 0 {
		return []byte(`""`), nil
	}
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string such as "30s"; an empty string is zero.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return ErrBadDuration
	}
	if s == "" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return ErrBadDuration
	}
	*d = Duration(v)
	return nil
}

// ACL lists who may pass each gate. Entries are scope names ("dev"), "user:NAME",
// "tenant:NAME" or "*" (everyone). Deny overrides every allow; nothing is allowed by default.
type ACL struct {
	Discover []string `json:"discover,omitempty"`
	Describe []string `json:"describe,omitempty"`
	Execute  []string `json:"execute,omitempty"`
	Deny     []string `json:"deny,omitempty"`
}

// IsZero reports whether no gate lists anyone.
func (a ACL) IsZero() bool {
	return len(a.Discover) == 0 && len(a.Describe) == 0 && len(a.Execute) == 0 && len(a.Deny) == 0
}

// Handler says how an action runs.
type Handler struct {
	// Kind is go, exec, http or mcp.
	Kind string `json:"kind"`
	// Name is the registered function of a go handler, or the tool's name on the upstream
	// server of an mcp handler.
	Name string `json:"name,omitempty"`
	// Server is the upstream MCP server of an mcp handler (its name in capdex.yaml).
	Server string `json:"server,omitempty"`
	// Argv is the command of an exec handler; elements may hold {{.arg}} templates.
	// A relative argv[0] is resolved against the registry's scripts directory.
	Argv []string `json:"argv,omitempty"`
	// Shell runs Argv[0] through /bin/sh -c; never unless set.
	Shell bool `json:"shell,omitempty"`
	// Env is the allow-list of environment variables passed to an exec handler.
	Env []string `json:"env,omitempty"`
	// Dir is the working directory of an exec handler.
	Dir string `json:"dir,omitempty"`
	// MaxOutput caps stdout and stderr of an exec handler in bytes (default 1 MiB).
	MaxOutput int `json:"max_output,omitempty"`
	// Method, URL, Headers and Body are the templates of an http handler. URL may start
	// with {{.base_url.NAME}}, taken from configuration.
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Secrets maps a template name to an environment variable holding the secret;
	// secret values are never echoed into results or the audit.
	Secrets map[string]string `json:"secrets,omitempty"`
	// RecordArguments lets the audit keep the raw arguments, not only their digest.
	RecordArguments bool `json:"record_arguments,omitempty"`
}

// Provenance records where a definition came from.
type Provenance struct {
	Provider   string `json:"provider,omitempty"`
	Source     string `json:"source,omitempty"`
	Imported   bool   `json:"imported,omitempty"`
	Format     string `json:"format,omitempty"`
	ReviewedAt string `json:"reviewed_at,omitempty"`
	// SchemaDigest is computed by the registry (see Digest), never typed.
	SchemaDigest string `json:"schema_digest,omitempty"`
}

// Compatibility limits where a capability works.
type Compatibility struct {
	// AgentRuntime is a version constraint such as ">=2.4".
	AgentRuntime string   `json:"agent_runtime,omitempty"`
	Regions      []string `json:"regions,omitempty"`
}

// Behavior describes cost and latency classes. A Capability holds it behind a pointer (nil
// when unset), as nothing but describe reads it.
type Behavior struct {
	LatencyClass   string `json:"latency_class,omitempty"`
	CostClass      string `json:"cost_class,omitempty"`
	SupportsDryRun bool   `json:"supports_dry_run,omitempty"`
}

// IsZero reports whether b is nil or sets nothing; JSON leaves such a value out, so a
// definition reads back with Behavior nil.
func (b *Behavior) IsZero() bool { return b == nil || *b == Behavior{} }

// Requirements lists what the caller's context must hold for a capability to be usable.
type Requirements struct {
	Credentials  []string `json:"credentials,omitempty"`
	FeatureFlags []string `json:"feature_flags,omitempty"`
	// MinBudget is the least budget the caller must have left.
	MinBudget float64 `json:"min_budget,omitempty"`
}

// Health is the last known health of a capability's backend.
type Health struct {
	Status    string `json:"status,omitempty"` // up | degraded | down
	CheckedAt string `json:"checked_at,omitempty"`
	Message   string `json:"message,omitempty"`
}

// RecipeStep is one step of a recipe.
type RecipeStep struct {
	Title   string `json:"title"`
	Command string `json:"command,omitempty"`
	Action  string `json:"action,omitempty"` // an action id this step may run
	Note    string `json:"note,omitempty"`
}

// Example is a sample call of an action.
type Example struct {
	Title     string          `json:"title"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Capability is one node of the registry: a pack, an action or a recipe. Every field of
// the definition format (docs/ARCHITECTURE.md "Definitions") is here; the JSON names are the YAML names.
type Capability struct {
	ID                   string          `json:"id"`
	Version              int             `json:"version"`
	ResourceType         ResourceType    `json:"resource_type"`
	CapabilityType       string          `json:"capability_type,omitempty"`
	Title                string          `json:"title"`
	Summary              string          `json:"summary,omitempty"`
	Aliases              []string        `json:"aliases,omitempty"`
	Intents              []string        `json:"intents,omitempty"`
	Entities             []string        `json:"entities,omitempty"`
	Symptoms             []string        `json:"symptoms,omitempty"`
	WhenToUse            []string        `json:"when_to_use,omitempty"`
	WhenNotToUse         []string        `json:"when_not_to_use,omitempty"`
	Domain               string          `json:"domain,omitempty"`
	Scenarios            []string        `json:"scenarios,omitempty"`
	SupportedOS          []string        `json:"supported_os,omitempty"`
	RequiredExecutors    []string        `json:"required_executors,omitempty"`
	SideEffect           SideEffect      `json:"side_effect,omitempty"`
	RiskLevel            RiskLevel       `json:"risk_level,omitempty"`
	RequiresConfirmation bool            `json:"requires_confirmation,omitempty"`
	Timeout              Duration        `json:"timeout,omitempty"`
	NetworkPolicy        NetworkPolicy   `json:"network_policy,omitempty"`
	NetworkAllow         []string        `json:"network_allow,omitempty"`
	ACL                  ACL             `json:"acl,omitzero"`
	Owner                string          `json:"owner,omitempty"`
	Reviewer             string          `json:"reviewer,omitempty"`
	Status               Status          `json:"status,omitempty"`
	ArgumentsSchema      json.RawMessage `json:"arguments_schema,omitempty"`
	OutputSchema         json.RawMessage `json:"output_schema,omitempty"`
	Handler              *Handler        `json:"handler,omitempty"`
	Produces             []string        `json:"produces,omitempty"`
	Tags                 []string        `json:"tags,omitempty"`
	Provenance           Provenance      `json:"provenance,omitzero"`
	Compatibility        Compatibility   `json:"compatibility,omitzero"`
	Behavior             *Behavior       `json:"behavior,omitzero"`
	Requirements         Requirements    `json:"requirements,omitzero"`
	Health               Health          `json:"health,omitzero"`
	Examples             []Example       `json:"examples,omitempty"`

	// ExternalID is the original name of an imported capability ("Trends Hub::get-weread-rank").
	ExternalID string `json:"external_id,omitempty"`

	// Pack fields. Guidance is the pack's local guidance; Enabled false disables the pack and
	// everything under it; Tenants limits which tenants see the subtree (empty: all).
	Guidance string   `json:"guidance,omitempty"`
	Enabled  *bool    `json:"enabled,omitempty"`
	Tenants  []string `json:"tenants,omitempty"`

	// Steps are a recipe's steps.
	Steps []RecipeStep `json:"steps,omitempty"`

	// Eff is what the capability inherits from its packs, filled by NewSnapshot (nil before).
	// Capabilities whose inheritance comes out the same (siblings with no enabled, tenants
	// or acl of their own, typically) share one Effective: never modify it, assign a new one.
	Eff *Effective `json:"-"`
}

// Effective is a capability's view after pack inheritance.
type Effective struct {
	// Enabled is false when this node or any ancestor pack is disabled.
	Enabled bool
	// Tenants is the nearest non-empty tenant list of the node or its ancestors (empty: all).
	Tenants []string
	// ACL is the node's ACL, or the nearest ancestor's when the node has none; deny lists of
	// ancestors are always added.
	ACL ACL
	// Packs are the ids of the ancestor packs, root first. The children of one pack share
	// one list (its capacity is its length, so an append copies it): never modify it.
	Packs []string
	// below is a pack's Packs and its own id: its children's Packs.
	below []string
}
