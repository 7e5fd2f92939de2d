package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// gatesYAML is a registry whose capabilities each hide behind one gate.
const gatesYAML = `
- id: g
  version: 1
  resource_type: pack
  title: Gated things
  owner: test
  status: active
  acl: {discover: ["*"], describe: ["*"], execute: [dev]}
- id: g.open
  version: 1
  resource_type: action
  title: Open action
  owner: test
  status: active
  side_effect: R
  risk_level: low
  when_to_use: [tests]
  arguments_schema: {type: object, properties: {mode: {type: string, enum: [plain]}}, required: [mode], additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: g.denied
  version: 1
  resource_type: action
  title: Denied to mallory
  owner: test
  status: active
  side_effect: R
  risk_level: low
  when_to_use: [tests]
  acl: {deny: ["user:mallory"]}
  arguments_schema: {type: object, properties: {mode: {type: string}}, required: [mode], additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: g.secret
  version: 1
  resource_type: action
  title: Described by ops only
  owner: test
  status: active
  side_effect: R
  risk_level: low
  when_to_use: [tests]
  acl: {discover: ["*"], describe: [ops], execute: [ops]}
  arguments_schema: {type: object, properties: {mode: {type: string, enum: [hidden_mode_value]}}, required: [mode], additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: g.acme
  version: 1
  resource_type: action
  title: For tenant acme
  owner: test
  status: active
  side_effect: R
  risk_level: low
  when_to_use: [tests]
  tenants: [acme]
  arguments_schema: {type: object, properties: {mode: {type: string}}, required: [mode], additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: g.off
  version: 1
  resource_type: action
  title: Offline action
  owner: test
  status: offline
  side_effect: R
  risk_level: low
  when_to_use: [tests]
  arguments_schema: {type: object, properties: {mode: {type: string}}, required: [mode], additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: g.guide
  version: 1
  resource_type: recipe
  title: Guide through the gated things
  owner: test
  status: active
  steps:
    - {title: run the open one, action: g.open}
    - {title: then the acme one, action: g.acme}
    - {title: then the secret one, action: g.secret}
    - {title: look around, command: ls}
`

func openGates(tb testing.TB) *engine.Engine {
	tb.Helper()
	caps, err := registry.LoadFS(fstest.MapFS{"gates/g.yaml": {Data: []byte(gatesYAML)}}, "gates")
	if err != nil {
		tb.Fatal(err)
	}
	return open(tb, engine.Options{Seed: caps})
}

// describeAnswer is what Describe answers as an error: its code and message.
func describeAnswer(err error) (code, msg string) {
	switch {
	case err == nil:
		return "", ""
	case errors.Is(err, engine.ErrNotFound):
		return "not_found", err.Error()
	case errors.Is(err, engine.ErrForbidden):
		return "forbidden", err.Error()
	}
	return "other", err.Error()
}

// TestRunAnswersWhatDescribeAnswers: for a capability the caller may not see (acl.deny,
// another tenant, offline, a describe gate that refuses) run answers exactly describe's
// code and message, before it looks at the version or the arguments, and gives no schema
// errors, digest or version.
func TestRunAnswersWhatDescribeAnswers(t *testing.T) {
	e := openGates(t)
	ctx := context.Background()
	mallory := registry.RuntimeContext{Tenant: "default", User: "mallory", Session: "s", Scopes: []string{"dev"}}
	other := registry.RuntimeContext{Tenant: "other", User: "olga", Session: "s", Scopes: []string{"dev"}}
	cases := []struct {
		name string
		id   string
		rc   registry.RuntimeContext
		code string
	}{
		{"acl.deny", "g.denied", mallory, "not_found"},
		{"describe gate", "g.secret", dev, "forbidden"},
		{"another tenant", "g.acme", other, "not_found"},
		{"offline", "g.off", dev, "not_found"},
		{"absent", "g.nothing", dev, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, derr := e.Describe(ctx, tc.id, tc.rc)
			code, msg := describeAnswer(derr)
			if code != tc.code {
				t.Fatalf("Describe(%s) = %v, want %s", tc.id, derr, tc.code)
			}
			for _, args := range []string{`{}`, `{"mode":"nope"}`, `[1]`} {
				for _, version := range []int{0, 7} {
					res, err := e.Run(ctx, engine.RunRequest{ID: tc.id, Version: version, Arguments: []byte(args)}, tc.rc)
					if err != nil {
						t.Fatal(err)
					}
					if res.Reason != code || res.Message != msg {
						t.Errorf("Run(%s, %s, version %d) = %s %q, want describe's %s %q", tc.id, args, version, res.Reason, res.Message, code, msg)
					}
					if len(res.Errors) > 0 || res.SchemaDigest != "" || res.Version != 0 || len(res.Steps) > 0 {
						t.Errorf("Run(%s, %s) reveals errors %q digest %q version %d steps %v", tc.id, args, res.Errors, res.SchemaDigest, res.Version, res.Steps)
					}
					if strings.Contains(res.Message, "hidden_mode_value") {
						t.Errorf("Run(%s) reveals an enum value: %q", tc.id, res.Message)
					}
				}
			}
		})
	}
	// A caller who may see the contract gets the documented order: version, then
	// arguments (naming the enum, which is no secret to her), then the execute gate.
	ops := registry.RuntimeContext{Tenant: "default", User: "oscar", Session: "s", Scopes: []string{"dev"}}
	order := []struct {
		id      string
		rc      registry.RuntimeContext
		version int
		args    string
		reason  string
	}{
		{"g.open", dev, 7, `{}`, "version_mismatch"},
		{"g.open", dev, 1, `{"mode":"nope"}`, "invalid_arguments"},
		{"g.open", ops, 1, `{}`, "invalid_arguments"},
		{"g.open", registry.RuntimeContext{Tenant: "default", User: "oscar", Session: "s"}, 1, `{"mode":"plain"}`, "forbidden"},
		{"g.open", dev, 1, `{"mode":"plain"}`, ""},
	}
	for _, o := range order {
		res, err := e.Run(ctx, engine.RunRequest{ID: o.id, Version: o.version, Arguments: []byte(o.args)}, o.rc)
		if err != nil || res.Reason != o.reason {
			t.Errorf("Run(%s, version %d, %s) = %+v %v, want reason %q", o.id, o.version, o.args, res, err, o.reason)
		}
	}
}

// TestRecipeStepsRedacted: describe and run of a recipe show a step naming an action the
// caller may not discover as a hidden step (no id, command or note), the same on both paths.
func TestRecipeStepsRedacted(t *testing.T) {
	e := openGates(t)
	ctx := context.Background()
	other := registry.RuntimeContext{Tenant: "other", User: "olga", Session: "s", Scopes: []string{"dev"}}
	acme := registry.RuntimeContext{Tenant: "acme", User: "ann", Session: "s", Scopes: []string{"dev"}}
	for _, tc := range []struct {
		name   string
		rc     registry.RuntimeContext
		hidden bool
	}{{"other tenant", other, true}, {"acme", acme, false}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.Describe(ctx, "g.guide", tc.rc)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(ctx, engine.RunRequest{ID: "g.guide"}, tc.rc)
			if err != nil || res.Reason != "not_runnable" {
				t.Fatalf("Run(g.guide) = %+v %v", res, err)
			}
			for name, steps := range map[string][]registry.RecipeStep{"describe": d.Steps, "run": res.Steps} {
				if len(steps) != 4 {
					t.Fatalf("%s: %d steps, want 4 (a hidden step keeps its place)", name, len(steps))
				}
				s := steps[1]
				shown := s.Action == "g.acme" && s.Title == "then the acme one"
				switch {
				case tc.hidden && (shown || strings.Contains(s.Title+s.Note+s.Command+s.Action, "acme")):
					t.Errorf("%s: step %+v names a capability the caller may not discover", name, s)
				case tc.hidden && !strings.Contains(s.Title, "hidden"):
					t.Errorf("%s: hidden step %+v does not say it is hidden", name, s)
				case !tc.hidden && !shown:
					t.Errorf("%s: step %+v, want the acme step", name, s)
				}
				if steps[0].Action != "g.open" || steps[2].Action != "g.secret" || steps[3].Command != "ls" {
					t.Errorf("%s: the visible steps changed: %+v", name, steps)
				}
			}
		})
	}
}

var idInText = regexp.MustCompile(`[a-z0-9_]+(?:\.[a-z0-9_]+)+`)

// TestDescribeNamesOnlyVisibleIDs: over the built-in registry, whose prose names other
// capabilities (when_not_to_use "use maintenance.codex.diagnose", recipe steps), no
// description a caller may read names a capability that caller may not discover.
func TestDescribeNamesOnlyVisibleIDs(t *testing.T) {
	e := open(t, engine.Options{})
	ctx := context.Background()
	snap := e.Snapshot()
	named := 0
	for _, tenant := range []string{"default", "acme", "other"} {
		for _, scope := range []string{"", "dev", "ops", "finance", "manager", "support", "contractor", "maintainer", "analyst", "sales"} {
			rc := registry.RuntimeContext{Tenant: tenant, User: "u", Session: "s"}
			if scope != "" {
				rc.Scopes = []string{scope}
			}
			for _, c := range snap.Caps {
				d, err := e.Describe(ctx, c.ID, rc)
				if err != nil {
					continue
				}
				b, _ := json.Marshal(d)
				for _, id := range idInText.FindAllString(string(b), -1) {
					o, ok := snap.Get(id)
					if !ok || o.ID == c.ID {
						continue
					}
					named++
					if _, err := e.Describe(ctx, id, rc); errors.Is(err, engine.ErrNotFound) {
						t.Errorf("describe %s for %s/%v names %s, which it may not discover", c.ID, tenant, rc.Scopes, id)
					}
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no description names another id: the test checks nothing")
	}
}
