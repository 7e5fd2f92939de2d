package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// validRegistry returns a small registry that passes Lint: the pack shop, the action
// shop.refund and the recipe shop.guide.
func validRegistry(tb testing.TB) (pack, action, recipe *Capability) {
	tb.Helper()
	pack = &Capability{ID: "shop", Version: 1, ResourceType: TypePack, Title: "Shop", Owner: "shop-team", Status: StatusActive}
	action = &Capability{
		ID: "shop.refund", Version: 2, ResourceType: TypeAction, CapabilityType: "tool",
		Title: "Refund an order", Owner: "shop-team", Status: StatusActive,
		SideEffect: SideEffectWriteShared, RiskLevel: RiskMedium, WhenToUse: []string{"a customer wants money back"},
		ArgumentsSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`),
		OutputSchema:    json.RawMessage(`{"type":"object"}`),
		Handler:         &Handler{Kind: "http", Method: "POST", URL: "{{.base_url.shop}}/refund"},
		Timeout:         Duration(30 * time.Second),
		Examples:        []Example{{Title: "one order", Arguments: json.RawMessage(`{"order":"A1"}`)}},
	}
	recipe = &Capability{
		ID: "shop.guide", Version: 1, ResourceType: TypeRecipe, Title: "Refund guide", Owner: "shop-team",
		Status: StatusActive, Steps: []RecipeStep{{Title: "check the order", Action: "shop.refund"}},
	}
	return pack, action, recipe
}

func TestLintCleanRegistry(t *testing.T) {
	p, a, r := validRegistry(t)
	if errs := Lint([]*Capability{p, a, r}); errs != nil {
		t.Fatalf("Lint of a valid registry: %v", errs)
	}
	Seal(a)
	if errs := Lint([]*Capability{p, a, r}); errs != nil {
		t.Fatalf("Lint of a sealed registry: %v", errs)
	}
}

// TestLintRules has one case per rule; each breaks one rule of a valid registry and expects
// exactly one error naming the capability, the field and the reason.
func TestLintRules(t *testing.T) {
	type reg struct{ pack, action, recipe *Capability }
	tests := []struct {
		name      string
		mutate    func(r *reg) []*Capability // nil result: the three capabilities
		wantID    string
		wantField string
		wantMsg   string
	}{
		{name: "id malformed", mutate: func(r *reg) []*Capability { r.action.ID = "shop.Refund"; return nil },
			wantID: "shop.Refund", wantField: "id", wantMsg: `invalid id "shop.Refund"`},
		{name: "id missing", mutate: func(r *reg) []*Capability { r.action.ID = ""; return nil },
			wantField: "id", wantMsg: "id is required"},
		{name: "id duplicate", mutate: func(r *reg) []*Capability {
			return []*Capability{r.pack, r.action, r.recipe, r.action.Clone()}
		}, wantID: "shop.refund", wantField: "id", wantMsg: "duplicate id"},
		{name: "id duplicate by the same pointer", mutate: func(r *reg) []*Capability {
			return []*Capability{r.pack, r.action, r.recipe, r.pack}
		}, wantID: "shop", wantField: "id", wantMsg: "duplicate id"},
		{name: "parent pack missing", mutate: func(r *reg) []*Capability { r.action.ID = "store.refund"; return nil },
			wantID: "store.refund", wantField: "id", wantMsg: `parent pack "store" not found`},
		{name: "parent is not a pack", mutate: func(r *reg) []*Capability {
			sub := r.action.Clone()
			sub.ID = "shop.refund.partial"
			return []*Capability{r.pack, r.action, r.recipe, sub}
		}, wantID: "shop.refund.partial", wantField: "id", wantMsg: `parent "shop.refund" is an action, not a pack`},
		{name: "version zero", mutate: func(r *reg) []*Capability { r.action.Version = 0; return nil },
			wantID: "shop.refund", wantField: "version", wantMsg: "version must be >= 1"},
		{name: "resource_type missing", mutate: func(r *reg) []*Capability { r.recipe.ResourceType = ""; r.recipe.Steps = nil; return nil },
			wantID: "shop.guide", wantField: "resource_type", wantMsg: "resource_type is required"},
		{name: "resource_type invalid", mutate: func(r *reg) []*Capability { r.pack.ResourceType = "folder"; return nil },
			wantID: "shop", wantField: "resource_type", wantMsg: `invalid resource_type "folder"`},
		{name: "title missing", mutate: func(r *reg) []*Capability { r.pack.Title = " "; return nil },
			wantID: "shop", wantField: "title", wantMsg: "title is required"},
		{name: "owner missing", mutate: func(r *reg) []*Capability { r.action.Owner = ""; return nil },
			wantID: "shop.refund", wantField: "owner", wantMsg: "owner is required"},
		{name: "status missing", mutate: func(r *reg) []*Capability { r.action.Status = ""; return nil },
			wantID: "shop.refund", wantField: "status", wantMsg: "status is required"},
		{name: "status invalid", mutate: func(r *reg) []*Capability { r.action.Status = "retired"; return nil },
			wantID: "shop.refund", wantField: "status", wantMsg: `invalid status "retired"`},
		{name: "capability_type invalid", mutate: func(r *reg) []*Capability { r.action.CapabilityType = "gadget"; return nil },
			wantID: "shop.refund", wantField: "capability_type", wantMsg: `invalid capability_type "gadget"`},
		{name: "side_effect invalid", mutate: func(r *reg) []*Capability { r.action.SideEffect = "RW"; return nil },
			wantID: "shop.refund", wantField: "side_effect", wantMsg: `invalid side_effect "RW"`},
		{name: "risk_level invalid", mutate: func(r *reg) []*Capability { r.action.RiskLevel = "extreme"; return nil },
			wantID: "shop.refund", wantField: "risk_level", wantMsg: `invalid risk_level "extreme"`},
		{name: "network_policy invalid", mutate: func(r *reg) []*Capability { r.action.NetworkPolicy = "some"; return nil },
			wantID: "shop.refund", wantField: "network_policy", wantMsg: `invalid network_policy "some"`},
		{name: "health.status invalid", mutate: func(r *reg) []*Capability { r.action.Health.Status = "sick"; return nil },
			wantID: "shop.refund", wantField: "health.status", wantMsg: `invalid health.status "sick"`},
		{name: "action without side_effect", mutate: func(r *reg) []*Capability { r.action.SideEffect = ""; return nil },
			wantID: "shop.refund", wantField: "side_effect", wantMsg: "side_effect is required for an action"},
		{name: "action without risk_level", mutate: func(r *reg) []*Capability { r.action.RiskLevel = ""; return nil },
			wantID: "shop.refund", wantField: "risk_level", wantMsg: "risk_level is required for an action"},
		{name: "action without when_to_use", mutate: func(r *reg) []*Capability { r.action.WhenToUse = nil; return nil },
			wantID: "shop.refund", wantField: "when_to_use", wantMsg: "when_to_use is required for an action"},
		{name: "action without arguments_schema", mutate: func(r *reg) []*Capability { r.action.ArgumentsSchema = nil; return nil },
			wantID: "shop.refund", wantField: "arguments_schema", wantMsg: "arguments_schema is required for an action"},
		{name: "action without output_schema", mutate: func(r *reg) []*Capability { r.action.OutputSchema = nil; return nil },
			wantID: "shop.refund", wantField: "output_schema", wantMsg: "output_schema is required for an action"},
		{name: "action without handler", mutate: func(r *reg) []*Capability { r.action.Handler = nil; return nil },
			wantID: "shop.refund", wantField: "handler", wantMsg: "handler is required for an action"},
		{name: "handler kind missing", mutate: func(r *reg) []*Capability { r.action.Handler.Kind = ""; return nil },
			wantID: "shop.refund", wantField: "handler.kind", wantMsg: "handler.kind is required"},
		{name: "handler kind invalid", mutate: func(r *reg) []*Capability { r.action.Handler.Kind = "grpc"; return nil },
			wantID: "shop.refund", wantField: "handler.kind", wantMsg: `invalid handler.kind "grpc"`},
		{name: "go handler without name", mutate: func(r *reg) []*Capability { r.action.Handler = &Handler{Kind: "go"}; return nil },
			wantID: "shop.refund", wantField: "handler.name", wantMsg: "a go handler needs name"},
		{name: "exec handler without argv", mutate: func(r *reg) []*Capability { r.action.Handler = &Handler{Kind: "exec"}; return nil },
			wantID: "shop.refund", wantField: "handler.argv", wantMsg: "an exec handler needs argv"},
		{name: "exec program is a template", mutate: func(r *reg) []*Capability {
			r.action.Handler = &Handler{Kind: "exec", Argv: []string{"{{.cmd}}", "x"}}
			return nil
		}, wantID: "shop.refund", wantField: "handler.argv[0]", wantMsg: "may not be a template"},
		{name: "http handler without url", mutate: func(r *reg) []*Capability { r.action.Handler.URL = ""; return nil },
			wantID: "shop.refund", wantField: "handler.url", wantMsg: "an http handler needs url"},
		{name: "http handler method invalid", mutate: func(r *reg) []*Capability { r.action.Handler.Method = "FETCH"; return nil },
			wantID: "shop.refund", wantField: "handler.method", wantMsg: `invalid handler.method "FETCH"`},
		{name: "handler on a pack", mutate: func(r *reg) []*Capability { r.pack.Handler = &Handler{Kind: "go", Name: "x"}; return nil },
			wantID: "shop", wantField: "handler", wantMsg: "handler is only valid on an action"},
		{name: "high risk without reviewer", mutate: func(r *reg) []*Capability { r.action.RiskLevel = RiskHigh; return nil },
			wantID: "shop.refund", wantField: "reviewer", wantMsg: "reviewer is required when risk_level is high"},
		{name: "critical risk without reviewer", mutate: func(r *reg) []*Capability { r.action.RiskLevel = RiskCritical; return nil },
			wantID: "shop.refund", wantField: "reviewer", wantMsg: "reviewer is required when risk_level is critical"},
		{name: "side effect I without confirmation", mutate: func(r *reg) []*Capability { r.action.SideEffect = SideEffectImpact; return nil },
			wantID: "shop.refund", wantField: "requires_confirmation", wantMsg: "side_effect I needs requires_confirmation: true"},
		{name: "allowlist without network_allow", mutate: func(r *reg) []*Capability { r.action.NetworkPolicy = NetworkAllowlist; return nil },
			wantID: "shop.refund", wantField: "network_allow", wantMsg: "network_policy allowlist needs network_allow"},
		{name: "arguments_schema does not compile", mutate: func(r *reg) []*Capability {
			r.action.ArgumentsSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"float"}}}`)
			return nil
		}, wantID: "shop.refund", wantField: "arguments_schema", wantMsg: "arguments_schema does not compile: at '/properties/n/type'"},
		{name: "output_schema does not compile", mutate: func(r *reg) []*Capability {
			r.action.OutputSchema = json.RawMessage(`{"type":"object","required":"id"}`)
			return nil
		}, wantID: "shop.refund", wantField: "output_schema", wantMsg: "output_schema does not compile: at '/required'"},
		{name: "schema with a remote reference", mutate: func(r *reg) []*Capability {
			r.action.OutputSchema = json.RawMessage(`{"$ref":"https://example.com/order.json"}`)
			return nil
		}, wantID: "shop.refund", wantField: "output_schema", wantMsg: "references outside the schema are not allowed"},
		{name: "schema not JSON", mutate: func(r *reg) []*Capability { r.action.OutputSchema = json.RawMessage(`{type: object}`); return nil },
			wantID: "shop.refund", wantField: "output_schema", wantMsg: "output_schema does not compile: invalid JSON"},
		{name: "example does not match the arguments schema", mutate: func(r *reg) []*Capability {
			r.action.Examples[0].Arguments = json.RawMessage(`{"order":7}`)
			return nil
		}, wantID: "shop.refund", wantField: "examples[0].arguments", wantMsg: "arguments do not match arguments_schema: at '/order'"},
		{name: "recipe without steps", mutate: func(r *reg) []*Capability { r.recipe.Steps = nil; return nil },
			wantID: "shop.guide", wantField: "steps", wantMsg: "a recipe needs steps"},
		{name: "recipe step without title", mutate: func(r *reg) []*Capability {
			r.recipe.Steps = append(r.recipe.Steps, RecipeStep{Command: "ls"})
			return nil
		}, wantID: "shop.guide", wantField: "steps[1].title", wantMsg: "title is required"},
		{name: "recipe step with a malformed action id", mutate: func(r *reg) []*Capability { r.recipe.Steps[0].Action = "Shop/Refund"; return nil },
			wantID: "shop.guide", wantField: "steps[0].action", wantMsg: `invalid action id "Shop/Refund"`},
		{name: "steps on an action", mutate: func(r *reg) []*Capability { r.action.Steps = []RecipeStep{{Title: "x"}}; return nil },
			wantID: "shop.refund", wantField: "steps", wantMsg: "steps are only valid on a recipe"},
		{name: "timeout negative", mutate: func(r *reg) []*Capability { r.action.Timeout = Duration(-time.Second); return nil },
			wantID: "shop.refund", wantField: "timeout", wantMsg: "timeout must be positive"},
		{name: "timeout above one hour", mutate: func(r *reg) []*Capability { r.action.Timeout = Duration(2 * time.Hour); return nil },
			wantID: "shop.refund", wantField: "timeout", wantMsg: "timeout 2h0m0s exceeds the maximum of 1h"},
		{name: "schema_digest stale", mutate: func(r *reg) []*Capability { Seal(r.action); r.action.Title = "Refund"; return nil },
			wantID: "shop.refund", wantField: "provenance.schema_digest", wantMsg: "schema_digest does not match the definition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, a, rc := validRegistry(t)
			r := &reg{p, a, rc}
			caps := tt.mutate(r)
			if caps == nil {
				caps = []*Capability{r.pack, r.action, r.recipe}
			}
			errs := Lint(caps)
			if len(errs) != 1 {
				t.Fatalf("Lint returned %d errors, want 1:\n%v", len(errs), errs)
			}
			e := errs[0]
			if e.ID != tt.wantID || e.Field != tt.wantField || !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("Lint error = {ID:%q Field:%q Msg:%q}, want ID %q, field %q, msg containing %q",
					e.ID, e.Field, e.Msg, tt.wantID, tt.wantField, tt.wantMsg)
			}
			if !errors.Is(errs, ErrLint) || !errors.Is(e, ErrLint) {
				t.Error("errors.Is(err, ErrLint) = false")
			}
			if strings.Contains(e.Msg, "\n") {
				t.Errorf("message spans lines: %q", e.Msg)
			}
		})
	}
}

// TestLintReportsEveryError checks lint does not stop at the first problem.
func TestLintReportsEveryError(t *testing.T) {
	p, a, r := validRegistry(t)
	a.Owner, a.Status, a.Handler, a.RiskLevel = "", "", nil, RiskCritical
	r.Steps = nil
	errs := Lint([]*Capability{p, a, r})
	want := []string{"owner", "status", "handler", "reviewer", "steps"}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	got := make(map[string]bool)
	for _, e := range errs {
		got[e.Field] = true
	}
	for _, f := range want {
		if !got[f] {
			t.Errorf("no error for field %s in\n%v", f, errs)
		}
	}
}

func TestLintErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  LintError
		want string
	}{
		{name: "everything known", err: LintError{File: "a.yaml", Line: 3, ID: "x.y", Field: "owner", Msg: "owner is required"},
			want: "a.yaml:3: x.y: owner: owner is required"},
		{name: "no line", err: LintError{File: "a.yaml", Msg: "malformed YAML: x"}, want: "a.yaml: malformed YAML: x"},
		{name: "no position", err: LintError{ID: "x", Field: "title", Msg: "title is required"}, want: "x: title: title is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	es := LintErrors{tests[0].err, tests[1].err}
	if got, want := es.Error(), tests[0].want+"\n"+tests[1].want; got != want {
		t.Errorf("LintErrors.Error() = %q, want %q", got, want)
	}
	var target LintErrors
	var err error = es
	if !errors.As(err, &target) || len(target) != 2 {
		t.Errorf("errors.As(LintErrors) failed")
	}
}

// TestLintKeepsLoadedPositions checks that lint errors of loaded definitions name the file
// and the line of the offending key (or of the definition for a missing key).
func TestLintKeepsLoadedPositions(t *testing.T) {
	src := `action_id: shop.refund
version: 1
resource_type: action
title: Refund
status: active
side_effect: I
risk_level: high
when_to_use: [x]
arguments_schema: {type: object}
output_schema: {type: object}
handler: {kind: http, url: "http://x"}
`
	caps, err := ParseFile("refund.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	errs := Lint(caps)
	want := map[string]int{
		"action_id":             1, // parent pack missing: the id key's line
		"owner":                 1, // missing: the definition's line
		"reviewer":              1,
		"requires_confirmation": 1,
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for _, e := range errs {
		line, ok := want[e.Field]
		if !ok || e.File != "refund.yaml" || e.Line != line {
			t.Errorf("error %v: want file refund.yaml, line %d", e, line)
		}
	}
	// Clones carry no position.
	errs = Lint([]*Capability{caps[0].Clone()})
	for _, e := range errs {
		if e.File != "" || e.Line != 0 {
			t.Errorf("error of a clone has a position: %v", e)
		}
	}
	// A key's own line is used when the key is present.
	caps, err = ParseFile("refund.yaml", []byte(strings.Replace(src, "status: active", "status: gone", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Lint(caps) {
		if e.Field == "status" && e.Line != 5 {
			t.Errorf("status error at line %d, want 5", e.Line)
		}
	}
}
