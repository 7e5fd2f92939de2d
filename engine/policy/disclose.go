package policy

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

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

// HiddenStepTitle is the title of a recipe step that RedactSteps hid.
const HiddenStepTitle = "(hidden step: it names a capability you may not see)"

// RedactSteps returns a recipe's steps as rc may read them: a step naming an action that
// rc may not discover (Disclose answers not_found; get returns nil for an absent id) keeps its
// place but holds only HiddenStepTitle, since its title, command and note speak of that
// action; the other steps' text goes through RedactText. steps is not modified; it is
// returned as is when nothing is hidden.
func RedactSteps(steps []registry.RecipeStep, get func(id string) *registry.Capability, rc *registry.RuntimeContext) []registry.RecipeStep {
	var out []registry.RecipeStep
	for i, s := range steps {
		r := registry.RecipeStep{Title: HiddenStepTitle}
		if s.Action == "" || !hidden(s.Action, get, rc) {
			r = registry.RecipeStep{Title: RedactText(s.Title, get, rc), Command: RedactText(s.Command, get, rc), Action: s.Action, Note: RedactText(s.Note, get, rc)}
		}
		if r != s {
			if out == nil {
				out = slices.Clone(steps)
			}
			out[i] = r
		}
	}
	if out == nil {
		return steps
	}
	return out
}

// HiddenMention replaces, in prose, the id of a capability the reader may not discover.
const HiddenMention = "(a capability you may not see)"

// idMention is an id as prose writes it: two or more segments joined by dots.
var idMention = regexp.MustCompile(`[a-z0-9_]+(?:\.[a-z0-9_]+)+`)

// RedactText returns s with every id of a capability rc may not discover (Disclose answers
// not_found) replaced by HiddenMention; words that name no capability (a file name such as
// config.fish) stay. Definitions name other capabilities in their prose ("use
// maintenance.codex.diagnose"), and ranking reads those names, so they are kept in the
// registry and hidden on the way out.
func RedactText(s string, get func(id string) *registry.Capability, rc *registry.RuntimeContext) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return idMention.ReplaceAllStringFunc(s, func(id string) string {
		if get(id) != nil && hidden(id, get, rc) {
			return HiddenMention
		}
		return id
	})
}

// RedactTexts is RedactText over each of ss; ss is returned as is when nothing changes.
func RedactTexts(ss []string, get func(id string) *registry.Capability, rc *registry.RuntimeContext) []string {
	var out []string
	for i, s := range ss {
		if r := RedactText(s, get, rc); r != s {
			if out == nil {
				out = slices.Clone(ss)
			}
			out[i] = r
		}
	}
	if out == nil {
		return ss
	}
	return out
}

// hidden reports whether rc may not discover id (absent ids included).
func hidden(id string, get func(id string) *registry.Capability, rc *registry.RuntimeContext) bool {
	code, _ := Disclose(id, get(id), rc)
	return code == DiscloseNotFound
}
