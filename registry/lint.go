package registry

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// MaxTimeout is the longest timeout lint accepts.
const MaxTimeout = Duration(time.Hour)

// LintError is one problem in a capability definition. File and Line are known for
// definitions read by the loader (LoadDir, LoadFS, ParseFile) and empty otherwise; Field is
// the JSON path of the offending field ("handler.kind", "steps[2].title").
type LintError struct {
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Field string `json:"field,omitempty"`
	ID    string `json:"id,omitempty"`
	Msg   string `json:"msg"`
}

// Error renders the problem as "file:line: id: field: msg", leaving out the parts that are
// not known.
func (e LintError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.ID != "" {
		b.WriteString(e.ID)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes errors.Is(e, ErrLint) true.
func (e LintError) Is(target error) bool { return target == ErrLint }

// LintErrors is every problem found in a set of definitions, in file and line order. As an
// error it prints one problem per line and matches ErrLint with errors.Is.
type LintErrors []LintError

// Error prints one problem per line.
func (es LintErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrLint, so errors.Is(err, ErrLint) holds for every LintErrors value.
func (es LintErrors) Unwrap() error { return ErrLint }

// sortErrors orders errors by file and line, keeping the discovery order otherwise.
func sortErrors(es LintErrors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
}

// Lint checks a whole registry against the structural and governance rules of docs/ARCHITECTURE.md "Definitions"
// and returns every problem found, or nil when the registry is clean. The rules:
//
//   - ids are well formed (ValidID) and unique, and so are their tool names (ToolName); the
//     parent of a dotted id is a pack in caps;
//   - version >= 1; title, owner, status and resource_type are present; prose holds no
//     control characters and is valid UTF-8 (a title, owner, alias or step title is one line);
//   - enums are valid: resource_type, capability_type (CapabilityTypes), side_effect,
//     risk_level, status, network_policy, handler.kind (go, exec, http), health.status;
//   - an action has side_effect, risk_level, when_to_use, arguments_schema, output_schema
//     and a handler fitting its kind (go: name, exec: argv, http: url); only actions have a
//     handler and only recipes have steps; a recipe has steps, each with a title;
//   - risk high or critical needs a reviewer; side_effect I needs requires_confirmation;
//     network_policy allowlist needs network_allow; a timeout is positive and at most 1h;
//   - every JSON Schema compiles (github.com/santhosh-tekuri/jsonschema/v6, draft 2020-12
//     unless $schema says otherwise, no references outside the schema) and every example's
//     arguments match the arguments schema;
//   - a schema_digest, when present, matches Digest;
//   - no field exceeds its size bound (see limits.go: 512 bytes for a title, 16 KiB for a
//     summary, 256 entries per list, 256 KiB per schema, ...);
//   - a child only narrows its packs: its tenants and the entries of its discover, describe
//     and execute gates must be granted by the nearest ancestor that sets them.
//
// Lint does not modify caps. Errors of capabilities read by the loader carry file and line.
func Lint(caps []*Capability) LintErrors {
	return lint(caps, ToolName)
}

// lint is Lint with the tool-name function as a parameter (a test narrows its hash).
func lint(caps []*Capability, toolName func(string) string) LintErrors {
	return lintWith(caps, toolName, func(*Capability) bool { return true })
}

type linter struct {
	byID   map[string]*Capability // first capability of each id
	first  map[string]int         // its index in caps
	errs   LintErrors
	jobs   []schemaJob
	sealed []*Capability // capabilities whose schema_digest is checked
	// toolName is ToolName (see lint).
	toolName func(string) string
}

// schemaJob is one schema to compile; examples are validated against arguments schemas.
type schemaJob struct {
	c     *Capability
	field string
	raw   []byte
	msg   string // filled by checkParallel: "" when the schema compiles
}

// add records a problem of c at field unless the loader already reported that field.
func (l *linter) add(c *Capability, field, format string, args ...any) {
	e := LintError{ID: c.ID, Field: field, Msg: fmt.Sprintf(format, args...)}
	if sp := positionOf(c); sp != nil {
		if sp.suppressed(field) {
			return
		}
		e.File, e.Line, e.Field = sp.file, sp.lineOf(field), sp.displayField(field)
	}
	l.errs = append(l.errs, e)
}

// capability checks the rules of one capability, caps[index].
func (l *linter) capability(c *Capability, index int) {
	l.id(c, index)
	if c.Version < 1 {
		l.add(c, "version", "version must be >= 1")
	}
	switch c.ResourceType {
	case TypePack, TypeAction, TypeRecipe:
	case "":
		l.add(c, "resource_type", "resource_type is required (pack, action or recipe)")
	default:
		l.add(c, "resource_type", "invalid resource_type %q (want pack, action or recipe)", c.ResourceType)
	}
	l.required(c, "title", c.Title)
	l.required(c, "owner", c.Owner)
	l.sizes(c)
	l.text(c)
	switch c.Status {
	case StatusActive, StatusDeprecated, StatusOffline:
	case "":
		l.add(c, "status", "status is required (active, deprecated or offline)")
	default:
		l.add(c, "status", "invalid status %q (want active, deprecated or offline)", c.Status)
	}
	if c.CapabilityType != "" && !slices.Contains(CapabilityTypes, c.CapabilityType) {
		l.add(c, "capability_type", "invalid capability_type %q (want one of %s)", c.CapabilityType, strings.Join(CapabilityTypes, ", "))
	}
	if c.SideEffect != "" && c.SideEffect.Level() < 0 {
		l.add(c, "side_effect", "invalid side_effect %q (want R, W-local, W-shared or I)", c.SideEffect)
	}
	if c.RiskLevel != "" && c.RiskLevel.Level() < 0 {
		l.add(c, "risk_level", "invalid risk_level %q (want low, medium, high or critical)", c.RiskLevel)
	}
	if c.RiskLevel.Level() >= RiskHigh.Level() && strings.TrimSpace(c.Reviewer) == "" {
		l.add(c, "reviewer", "reviewer is required when risk_level is %s", c.RiskLevel)
	}
	if c.SideEffect == SideEffectImpact && !c.RequiresConfirmation {
		l.add(c, "requires_confirmation", "side_effect I needs requires_confirmation: true")
	}
	switch c.NetworkPolicy {
	case "", NetworkNone, NetworkAny:
	case NetworkAllowlist:
		if len(c.NetworkAllow) == 0 {
			l.add(c, "network_allow", "network_policy allowlist needs network_allow")
		}
	default:
		l.add(c, "network_policy", "invalid network_policy %q (want none, allowlist or any)", c.NetworkPolicy)
	}
	switch {
	case c.Timeout < 0:
		l.add(c, "timeout", "timeout must be positive")
	case c.Timeout > MaxTimeout:
		l.add(c, "timeout", "timeout %s exceeds the maximum of 1h", time.Duration(c.Timeout))
	}
	switch c.Health.Status {
	case "", "up", "degraded", "down":
	default:
		l.add(c, "health.status", "invalid health.status %q (want up, degraded or down)", c.Health.Status)
	}
	if c.Provenance.SchemaDigest != "" {
		l.sealed = append(l.sealed, c)
	}

	if c.ResourceType == TypeAction {
		l.action(c)
	} else if c.Handler != nil {
		l.add(c, "handler", "handler is only valid on an action")
	}
	if c.ResourceType == TypeRecipe {
		l.recipe(c)
	} else if len(c.Steps) > 0 {
		l.add(c, "steps", "steps are only valid on a recipe")
	}

	if len(c.ArgumentsSchema) > 0 {
		l.jobs = append(l.jobs, schemaJob{c: c, field: "arguments_schema", raw: c.ArgumentsSchema})
	}
	if len(c.OutputSchema) > 0 {
		l.jobs = append(l.jobs, schemaJob{c: c, field: "output_schema", raw: c.OutputSchema})
	}
}

func (l *linter) required(c *Capability, field, v string) {
	if strings.TrimSpace(v) == "" {
		l.add(c, field, "%s is required", field)
	}
}

func (l *linter) id(c *Capability, index int) {
	switch {
	case c.ID == "":
		l.add(c, "id", "id is required")
		return
	case !ValidID(c.ID):
		l.add(c, "id", "invalid id %q (want lowercase [a-z0-9_] segments joined by dots)", c.ID)
		return
	}
	if l.first[c.ID] != index {
		where := ""
		if sp := positionOf(l.byID[c.ID]); sp != nil {
			where = fmt.Sprintf(" (first defined at %s:%d)", sp.file, sp.line)
		}
		l.add(c, "id", "duplicate id%s", where)
	}
	parent := Parent(c.ID)
	if parent == "" {
		return
	}
	switch p := l.byID[parent]; {
	case p == nil:
		l.add(c, "id", "parent pack %q not found", parent)
	case p.ResourceType == TypeAction || p.ResourceType == TypeRecipe:
		// (A parent with a missing or invalid resource_type is reported on its own.)
		l.add(c, "id", "parent %q is %s, not a pack", parent, withArticle(string(p.ResourceType)))
	default:
		l.narrowing(c)
	}
}

func (l *linter) action(c *Capability) {
	if c.SideEffect == "" {
		l.add(c, "side_effect", "side_effect is required for an action")
	}
	if c.RiskLevel == "" {
		l.add(c, "risk_level", "risk_level is required for an action")
	}
	if len(c.WhenToUse) == 0 {
		l.add(c, "when_to_use", "when_to_use is required for an action")
	}
	if len(c.ArgumentsSchema) == 0 {
		l.add(c, "arguments_schema", "arguments_schema is required for an action")
	}
	if len(c.OutputSchema) == 0 {
		l.add(c, "output_schema", "output_schema is required for an action")
	}
	h := c.Handler
	if h == nil {
		l.add(c, "handler", "handler is required for an action")
		return
	}
	switch h.Kind {
	case "go":
		if h.Name == "" {
			l.add(c, "handler.name", "a go handler needs name")
		}
	case "exec":
		if len(h.Argv) == 0 || h.Argv[0] == "" {
			l.add(c, "handler.argv", "an exec handler needs argv")
		} else if !h.Shell && strings.Contains(h.Argv[0], "{{") {
			l.add(c, "handler.argv[0]", "the program may not be a template: the arguments must not choose what runs")
		}
		if h.MaxOutput < 0 {
			l.add(c, "handler.max_output", "max_output must not be negative")
		}
	case "http":
		if h.URL == "" {
			l.add(c, "handler.url", "an http handler needs url")
		}
		switch strings.ToUpper(h.Method) {
		case "", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD":
		default:
			l.add(c, "handler.method", "invalid handler.method %q", h.Method)
		}
	case "mcp":
		if h.Server == "" || h.Name == "" {
			l.add(c, "handler.server", "an mcp handler needs server and name (the upstream and its tool)")
		}
	case "":
		l.add(c, "handler.kind", "handler.kind is required (go, exec, http or mcp)")
	default:
		l.add(c, "handler.kind", "invalid handler.kind %q (want go, exec, http or mcp)", h.Kind)
	}
}

func (l *linter) recipe(c *Capability) {
	if len(c.Steps) == 0 {
		l.add(c, "steps", "a recipe needs steps")
	}
	for i, s := range c.Steps {
		if strings.TrimSpace(s.Title) == "" {
			l.add(c, fmt.Sprintf("steps[%d].title", i), "title is required")
		}
		if s.Action != "" && !ValidID(s.Action) {
			l.add(c, fmt.Sprintf("steps[%d].action", i), "invalid action id %q", s.Action)
		}
	}
}

// checkParallel does the costly checks on all cores: it compiles every collected schema
// (through the schema cache), validates examples against the arguments schemas that
// compile, and recomputes stored schema digests.
func (l *linter) checkParallel() {
	stale := make([]bool, len(l.sealed))
	forEachParallel(len(l.sealed), func(i int) {
		stale[i] = l.sealed[i].Provenance.SchemaDigest != Digest(l.sealed[i])
	})
	for i, c := range l.sealed {
		if stale[i] {
			l.add(c, "provenance.schema_digest", "schema_digest does not match the definition (it is computed, never typed)")
		}
	}
	forEachParallel(len(l.jobs), func(i int) {
		l.jobs[i].msg = schemaError(l.jobs[i].raw)
	})
	for _, j := range l.jobs {
		if j.msg != "" {
			l.add(j.c, j.field, "%s does not compile: %s", j.field, j.msg)
			continue
		}
		if j.field != "arguments_schema" || len(j.c.Examples) == 0 {
			continue
		}
		for i, ex := range j.c.Examples {
			if len(ex.Arguments) == 0 {
				continue
			}
			if msg := validateInstance(j.raw, ex.Arguments); msg != "" {
				l.add(j.c, fmt.Sprintf("examples[%d].arguments", i), "arguments do not match arguments_schema: %s", msg)
			}
		}
	}
}

// withArticle prefixes a noun with "a" or "an".
func withArticle(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// LintAffected is Lint restricted to the capabilities of caps for which affected is true:
// it returns exactly the errors Lint(caps) reports for them, in the same order. The rules
// of one capability read only the capability itself, its parent, the other definitions of
// its id and the capabilities with the same leaf tool name, so after a change to a registry
// that linted clean, every error of Lint(caps) belongs to a changed capability, a child of a
// changed or deleted one, a duplicate of a changed id, or a capability whose tool name
// collides with a changed one's: checking those alone (an incremental lint) gives the full
// lint's errors. The tool names of all capabilities are computed; only the collisions that
// involve an affected capability are reported.
func LintAffected(caps []*Capability, affected func(*Capability) bool) LintErrors {
	return lintWith(caps, ToolName, affected)
}

// lintWith checks the capabilities of caps for which affected is true (see LintAffected).
func lintWith(caps []*Capability, toolName func(string) string, affected func(*Capability) bool) LintErrors {
	var check []int
	for i, c := range caps {
		if c != nil && affected(c) {
			check = append(check, i)
		}
	}
	// The rules read, of other capabilities, only those of a checked one's own id (the first
	// of a duplicate) and of its ancestors: with few to check, only those ids are indexed, so
	// that a change to a large registry does not pay for a map of every id.
	var want map[string]bool
	var wantLen [64]uint64 // the lengths of the wanted ids, a bit each (the last for 4,095 and more)
	if len(check)*8 < len(caps) {
		want = make(map[string]bool, 4*len(check))
		for _, i := range check {
			for id := caps[i].ID; id != "" && !want[id]; id = Parent(id) {
				want[id] = true
				n := min(len(id), 64*64-1)
				wantLen[n/64] |= 1 << (n % 64)
			}
		}
	}
	l := &linter{byID: make(map[string]*Capability, len(want)), first: make(map[string]int, len(want)), toolName: toolName}
	for i, c := range caps {
		if c == nil || c.ID == "" {
			continue
		}
		if want != nil { // most ids are ruled out by their length, without hashing them
			if n := min(len(c.ID), 64*64-1); wantLen[n/64]&(1<<(n%64)) == 0 || !want[c.ID] {
				continue
			}
		}
		if _, dup := l.byID[c.ID]; !dup {
			l.byID[c.ID], l.first[c.ID] = c, i
		}
	}
	for _, i := range check {
		l.capability(caps[i], i)
	}
	l.toolNames(caps, affected)
	l.checkParallel()
	if len(l.errs) == 0 {
		return nil
	}
	sortErrors(l.errs)
	return l.errs
}
