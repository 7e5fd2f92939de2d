package engine_test

import (
	"context"
	"errors"
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
