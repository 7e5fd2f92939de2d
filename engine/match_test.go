package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/registry"
)

// seed003YAML is the registry centre of seed 003 §3-§4: a reimbursement domain whose
// invoice_validation scenario is served by a rule, an MCP service, a skill and a
// knowledge search, beside a second rule, an HR rule and a payroll rule only finance may
// discover.
const seed003YAML = `
- {id: expense, version: 1, resource_type: pack, title: 报销, owner: t, status: active, domain: reimbursement, acl: {discover: ["*"], describe: ["*"], execute: ["*"]}}
- id: expense.duplicate_invoice
  version: 1
  resource_type: action
  capability_type: rule
  title: 重复报销识别规则
  summary: 检查一张发票是否已在别的报销单中报销过。
  when_to_use: [tests]
  intents: [validate, explain, monitor]
  symptoms: [duplicate_invoice]
  domain: reimbursement
  scenarios: [invoice_validation, reimbursement_audit]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: expense.invoice_verify
  version: 1
  resource_type: action
  capability_type: mcp
  title: 发票验真 MCP
  summary: 经税务接口查验发票真伪。
  when_to_use: [tests]
  intents: [verify, check]
  symptoms: [fake_invoice]
  domain: reimbursement
  scenarios: [invoice_validation]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: expense.risk_explanation
  version: 1
  resource_type: action
  capability_type: skill
  title: 风险解释技能
  summary: 用通俗语言解释报销单命中的风险规则。
  when_to_use: [tests]
  intents: [explain]
  domain: reimbursement
  scenarios: [invoice_validation, reimbursement_audit]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: expense.policy_search
  version: 1
  resource_type: action
  capability_type: knowledge_search
  title: 制度知识库检索
  summary: 检索报销制度条款。
  when_to_use: [tests]
  intents: [search, explain]
  domain: reimbursement
  scenarios: [invoice_validation]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: expense.amount_limit
  version: 1
  resource_type: action
  capability_type: rule
  title: 报销金额超标规则
  summary: 检查报销金额是否超出标准。
  when_to_use: [tests]
  intents: [validate]
  symptoms: [over_limit]
  domain: reimbursement
  scenarios: [reimbursement_audit]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: expense.split_invoice
  version: 1
  resource_type: action
  capability_type: rule
  title: 拆单报销识别规则
  summary: "Rule: detects one purchase split into several invoices to stay under the approval limit."
  when_to_use: [tests]
  aliases: [split invoice detection, 拆分发票]
  intents: [validate]
  domain: reimbursement
  scenarios: [reimbursement_audit]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- {id: hr, version: 1, resource_type: pack, title: 人事, owner: t, status: active, domain: hr, acl: {discover: ["*"], describe: ["*"], execute: ["*"]}}
- id: hr.leave_balance
  version: 1
  resource_type: action
  capability_type: rule
  title: 假期余额校验规则
  summary: 检查请假天数是否超过剩余假期，解释差额。
  when_to_use: [tests]
  intents: [validate, explain]
  domain: hr
  scenarios: [leave_request]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- {id: payroll, version: 1, resource_type: pack, title: 薪资, owner: t, status: active, domain: payroll, acl: {discover: [finance], describe: [finance], execute: [finance]}}
- id: payroll.anomaly
  version: 1
  resource_type: action
  capability_type: rule
  title: 薪资异常识别规则
  summary: 检查发票与薪资发放中的重复与异常。
  when_to_use: [tests]
  intents: [validate, explain]
  symptoms: [duplicate_invoice]
  domain: payroll
  scenarios: [invoice_validation]
  side_effect: R
  risk_level: low
  owner: t
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
`

func openSeed003(t *testing.T) *engine.Engine {
	t.Helper()
	caps, err := registry.LoadFS(fstest.MapFS{"s/s.yaml": {Data: []byte(seed003YAML)}}, "s")
	if err != nil {
		t.Fatal(err)
	}
	return open(t, engine.Options{Seed: caps})
}

func search003(t *testing.T, e *engine.Engine, q string, m *registry.StructuredMatch) *registry.SearchResponse {
	t.Helper()
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Limit: 10, Match: m}, dev)
	if err != nil {
		t.Fatalf("search %q %+v: %v", q, m, err)
	}
	return resp
}

// TestMatchSeed003Ontology: seed 003 §4's ontology, word for word, finds the duplicate
// invoice rule first; without next_step the four capabilities §4 lists are all matched
// and nothing outside the domain and scenario is.
func TestMatchSeed003Ontology(t *testing.T) {
	e := openSeed003(t)
	onto := registry.StructuredMatch{Domain: "reimbursement", Scenario: "invoice_validation", Intents: []string{"explain"},
		RiskSignals: []string{"duplicate_invoice"}, NextStep: "run_rule"}
	resp := search003(t, e, "这张发票有问题吗", &onto)
	if got := ids(resp); len(got) != 1 || got[0] != "expense.duplicate_invoice" {
		t.Errorf("with next_step run_rule: %v, want only expense.duplicate_invoice", got)
	}
	onto.NextStep = ""
	resp = search003(t, e, "这张发票有问题吗", &onto)
	got := ids(resp)
	if len(got) == 0 || got[0] != "expense.duplicate_invoice" {
		t.Errorf("without next_step: first %v, want expense.duplicate_invoice first", got)
	}
	slices.Sort(got)
	if want := []string{"expense.duplicate_invoice", "expense.invoice_verify", "expense.policy_search", "expense.risk_explanation"}; !slices.Equal(got, want) {
		t.Errorf("without next_step: %v, want %v (seed 003 §4)", got, want)
	}
}

// TestMatchRiskSignalsMeetSymptoms: a risk signal finds the rule that declares it as a
// symptom, on the built-in registry, where before it met only risk words (read_only,
// high_risk ...) and the invoice verification or the claim submission came first.
func TestMatchRiskSignalsMeetSymptoms(t *testing.T) {
	e := open(t, engine.Options{})
	for _, q := range []string{"verify this invoice", "review this expense claim"} {
		plain, err := e.Search(context.Background(), registry.SearchRequest{Query: q}, dev)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(plain); len(got) > 0 && got[0] == "reimbursement.rules.duplicate_invoice" {
			t.Fatalf("%q alone already finds the duplicate rule first: the case tests nothing", q)
		}
		resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q,
			Match: &registry.StructuredMatch{RiskSignals: []string{"duplicate_invoice"}}}, dev)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(resp); len(got) == 0 || got[0] != "reimbursement.rules.duplicate_invoice" {
			t.Errorf("%q with risk_signals [duplicate_invoice]: %v", q, got)
		} else if !slices.Contains(resp.Matches[0].MatchedSymptoms, "duplicate_invoice") {
			t.Errorf("%q: matched symptoms %v", q, resp.Matches[0].MatchedSymptoms)
		}
	}
}

// TestMatchRiskSignalsMeetRuleText: a risk signal finds a rule that mentions it in its
// words without declaring it as a symptom.
func TestMatchRiskSignalsMeetRuleText(t *testing.T) {
	e := openSeed003(t)
	m := &registry.StructuredMatch{RiskSignals: []string{"split_invoice"}}
	if got := ids(search003(t, e, "review this claim", m)); len(got) == 0 || got[0] != "expense.split_invoice" {
		t.Errorf("review this claim, risk_signals [split_invoice]: %v, want expense.split_invoice first", got)
	}
	if got := ids(search003(t, e, "看看这个有没有问题", m)); !slices.Contains(got, "expense.split_invoice") {
		t.Errorf("看看这个有没有问题, risk_signals [split_invoice]: %v, want expense.split_invoice among them", got)
	}
}

// TestMatchHardFilters: next_step, capability_types, domain and scenario keep only what
// passes them, whatever the words ask for; a filter that leaves nothing answers no_match
// with a reason naming it, the same whether or not a capability hidden from the caller
// would pass.
func TestMatchHardFilters(t *testing.T) {
	e := openSeed003(t)
	const q = "检查并解释这张发票的风险"
	cases := []struct {
		name string
		m    registry.StructuredMatch
		want []string // all the matches, in any order
	}{
		{"next_step run_skill", registry.StructuredMatch{NextStep: "run_skill"}, []string{"expense.risk_explanation"}},
		{"next_step family retrieve", registry.StructuredMatch{NextStep: "retrieve"}, []string{"expense.policy_search"}},
		{"capability_types", registry.StructuredMatch{CapabilityTypes: []string{"rule"}}, []string{"expense.amount_limit", "expense.duplicate_invoice", "expense.split_invoice", "hr.leave_balance"}},
		{"domain", registry.StructuredMatch{Domain: "HR"}, []string{"hr", "hr.leave_balance"}},
		{"scenario", registry.StructuredMatch{Scenario: "reimbursement audit"}, []string{"expense.amount_limit", "expense.duplicate_invoice", "expense.risk_explanation", "expense.split_invoice"}},
		{"type and scenario", registry.StructuredMatch{NextStep: "run_rule", Scenario: "reimbursement-audit"}, []string{"expense.amount_limit", "expense.duplicate_invoice", "expense.split_invoice"}},
	}
	for _, c := range cases {
		resp := search003(t, e, q, &c.m)
		got := ids(resp)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if resp.ReasonDetail != "" {
			t.Errorf("%s: reason_detail %q on an answer", c.name, resp.ReasonDetail)
		}
	}

	emptied := []struct {
		name string
		m    registry.StructuredMatch
		want string
	}{
		{"domain of nothing", registry.StructuredMatch{Domain: "travel"}, `match.domain "travel": `},
		{"scenario after next_step", registry.StructuredMatch{NextStep: "run_skill", Scenario: "leave_request"}, `match.scenario "leave_request": no capability you may discover passes it together with match.next_step`},
		{"next_step first", registry.StructuredMatch{NextStep: "notify", Domain: "hr"}, `match.next_step "notification": `},
	}
	for _, c := range emptied {
		resp := search003(t, e, q, &c.m)
		if len(resp.Matches) != 0 || resp.Resolution != registry.NoConfidentMatch || resp.Decision != registry.DecisionNoMatch || !strings.HasPrefix(resp.ReasonDetail, c.want) {
			t.Errorf("%s: %v %s/%s reason_detail %q, want no_match with %q", c.name, ids(resp), resp.Resolution, resp.Decision, resp.ReasonDetail, c.want)
		}
	}

	// payroll.anomaly passes domain payroll, but dev may not discover it: the answer is the
	// one for a domain nothing has.
	hidden := search003(t, e, q, &registry.StructuredMatch{Domain: "payroll", RiskSignals: []string{"duplicate_invoice"}})
	none := search003(t, e, q, &registry.StructuredMatch{Domain: "nosuchdomain", RiskSignals: []string{"duplicate_invoice"}})
	if len(hidden.Matches) != 0 || strings.ReplaceAll(hidden.ReasonDetail, "payroll", "X") != strings.ReplaceAll(none.ReasonDetail, "nosuchdomain", "X") ||
		hidden.Resolution != none.Resolution || hidden.Reason != none.Reason {
		t.Errorf("hidden domain: %v %q %s, nothing: %q %s", ids(hidden), hidden.ReasonDetail, hidden.Reason, none.ReasonDetail, none.Reason)
	}
	// the risk signal alone reaches the hidden rule for nobody but finance
	for _, m := range search003(t, e, q, &registry.StructuredMatch{RiskSignals: []string{"duplicate_invoice"}}).Matches {
		if strings.HasPrefix(m.ResourceID, "payroll") {
			t.Errorf("hidden %s returned", m.ResourceID)
		}
	}
	fin := dev
	fin.Scopes = []string{"finance"}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Match: &registry.StructuredMatch{Domain: "payroll"}}, fin)
	if err != nil || !slices.Contains(ids(resp), "payroll.anomaly") {
		t.Errorf("finance, domain payroll: %v %v", ids(resp), err)
	}
}

// TestMatchValidation: unknown values of next_step and capability_types, and malformed
// values of the other fields, are refused with the field and the allowed values named.
func TestMatchValidation(t *testing.T) {
	e := openSeed003(t)
	cases := []struct {
		m    registry.StructuredMatch
		want []string
	}{
		{registry.StructuredMatch{NextStep: "run_rules"}, []string{"match.next_step", `"run_rules"`, "run_rule, run_skill", "call_service"}},
		{registry.StructuredMatch{CapabilityTypes: []string{"rule", "rules"}}, []string{"match.capability_types[1]", `"rules"`, "rule, skill, mcp"}},
		{registry.StructuredMatch{Domain: "   "}, []string{"match.domain", "empty"}},
		{registry.StructuredMatch{Scenario: "a/b"}, []string{"match.scenario", `"a/b"`}},
		{registry.StructuredMatch{RiskSignals: []string{"ok", "drop table;"}}, []string{"match.risk_signals[1]"}},
		{registry.StructuredMatch{Intents: make([]string, 17)}, []string{"match.intents", "at most 16"}},
		{registry.StructuredMatch{Domain: strings.Repeat("d", 65)}, []string{"match.domain", "at most 64"}},
	}
	for _, c := range cases {
		_, err := e.Search(context.Background(), registry.SearchRequest{Query: "发票", Match: &c.m}, dev)
		if !errors.Is(err, engine.ErrInvalidRequest) {
			t.Errorf("%+v: error %v, want ErrInvalidRequest", c.m, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q does not say %q", c.m, err, w)
			}
		}
	}
}

// deprecatedYAML holds a deprecated action that fits "upload a file to the archive" word
// for word and its active successor that fits nearly as well.
const deprecatedYAML = `
- {id: files, version: 1, resource_type: pack, title: Files, owner: t, status: active, acl: {discover: ["*"], describe: ["*"], execute: ["*"]}}
- {id: files.upload_archive, version: 1, resource_type: action, title: Upload a file to the archive, summary: Upload a file to the archive., when_to_use: [tests], side_effect: W-shared, risk_level: low, owner: t, status: deprecated, arguments_schema: {type: object}, output_schema: {type: object}, handler: {kind: go, name: echo}}
- {id: files.archive_store_put, version: 1, resource_type: action, title: Upload a file to the archive store, summary: Upload a file to the archive store., when_to_use: [tests], side_effect: W-shared, risk_level: low, owner: t, status: active, arguments_schema: {type: object}, output_schema: {type: object}, handler: {kind: go, name: echo}}
`

// TestDeprecatedDemoted: a deprecated capability ranks below an active one of comparable
// fit, with its warning and the demotion in the explanation; asked for by its id, it still
// comes first.
func TestDeprecatedDemoted(t *testing.T) {
	caps, err := registry.LoadFS(fstest.MapFS{"d/d.yaml": {Data: []byte(deprecatedYAML)}}, "d")
	if err != nil {
		t.Fatal(err)
	}
	e := open(t, engine.Options{Seed: caps})
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "upload a file to the archive", Explain: true}, dev)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(resp)
	iOld, iNew := slices.Index(got, "files.upload_archive"), slices.Index(got, "files.archive_store_put")
	if iOld < 0 || iNew < 0 || iNew > iOld {
		t.Fatalf("order %v: want the active files.archive_store_put above the deprecated files.upload_archive", got)
	}
	m := resp.Matches[iOld]
	if len(m.Warnings) == 0 || !strings.Contains(m.Warnings[0], "deprecated") {
		t.Errorf("deprecated match warnings %q", m.Warnings)
	}
	sum, demoted := 0.0, false
	for _, c := range m.Explain.Score {
		sum += c.Value
		demoted = demoted || c.Name == "deprecated" && c.Value < 0
	}
	if !demoted || sum-m.Score > 1e-3 || m.Score-sum > 1e-3 {
		t.Errorf("breakdown %+v (sum %.4f) of score %.4f: want a negative deprecated component summing to the score", m.Explain.Score, sum, m.Score)
	}
	resp, err = e.Search(context.Background(), registry.SearchRequest{Query: "files.upload_archive"}, dev)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(resp); len(got) == 0 || got[0] != "files.upload_archive" {
		t.Errorf("asked by id: %v", got)
	}
	d, err := e.Describe(context.Background(), "files.upload_archive", dev)
	if err != nil || len(d.Warnings) == 0 {
		t.Errorf("describe: warnings %v, %v", d.Warnings, err)
	}
}

// contextYAML holds actions that this caller's context cannot run: one for another OS, one
// whose health is down, one for another region, one needing an executor the caller lacks.
func contextYAML(otherOS string) string {
	a := func(id, extra string) string {
		return "- {id: ctx." + id + ", version: 1, resource_type: action, title: Echo " + id + " context check, summary: Echo the message for the " + id + " context check., when_to_use: [tests], side_effect: R, risk_level: low, owner: t, status: active, " + extra + "arguments_schema: {type: object}, output_schema: {type: object}, handler: {kind: go, name: count}}\n"
	}
	return `- {id: ctx, version: 1, resource_type: pack, title: Context, owner: t, status: active, acl: {discover: ["*"], describe: ["*"], execute: ["*"]}}
` + a("other_os", "supported_os: ["+otherOS+"], ") +
		a("down", "health: {status: down, message: backend unreachable}, ") +
		a("region", "compatibility: {regions: [cn]}, ") +
		a("executor", "required_executors: [docker], ") +
		a("hidden", "supported_os: ["+otherOS+"], acl: {discover: [ops], describe: [ops], execute: [ops]}, ") +
		a("fine", "supported_os: [linux, macos, windows], required_executors: [shell], compatibility: {regions: [us, cn]}, ")
}

// TestRunRefusesUnusableContext: run refuses an action the caller's context cannot run —
// another OS, health down, another region, a missing executor — with a reason code, and
// the handler is never reached; search marks what it shows of them.
func TestRunRefusesUnusableContext(t *testing.T) {
	caps, err := registry.LoadFS(fstest.MapFS{"c/c.yaml": {Data: []byte(contextYAML("windows"))}}, "c")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	e := open(t, engine.Options{Seed: caps, GoFuncs: map[string]handlers.GoFunc{"count": func(context.Context, map[string]any) (any, error) {
		calls.Add(1)
		return map[string]any{}, nil
	}}})
	rc := dev
	rc.OS, rc.Region, rc.Executors = "linux", "us", []string{"shell", "http"}
	cases := []struct{ id, reason, says string }{
		{"ctx.other_os", "incompatible", "os linux not in supported_os [windows]"},
		{"ctx.down", "unavailable", "health is down: backend unreachable"},
		{"ctx.region", "incompatible", "region us not in [cn]"},
		{"ctx.executor", "incompatible", "executor docker not available"},
	}
	for _, c := range cases {
		res, err := e.Run(context.Background(), engine.RunRequest{ID: c.id}, rc)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "refused" || res.Reason != c.reason || !strings.Contains(res.Message, c.says) || len(res.Errors) == 0 {
			t.Errorf("%s: %s %s %q %q, want refused %s saying %q", c.id, res.Status, res.Reason, res.Message, res.Errors, c.reason, c.says)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for actions the context cannot run", n)
	}
	if res, err := e.Run(context.Background(), engine.RunRequest{ID: "ctx.fine"}, rc); err != nil || res.Status != "succeeded" || calls.Load() != 1 {
		t.Errorf("ctx.fine: %+v %v (calls %d)", res, err, calls.Load())
	}
	// unknown executors (nil) and region do not refuse
	loose := rc
	loose.Executors, loose.Region = nil, ""
	if res, err := e.Run(context.Background(), engine.RunRequest{ID: "ctx.executor"}, loose); err != nil || res.Status != "succeeded" {
		t.Errorf("ctx.executor with executors unknown: %+v %v", res, err)
	}
	// an action the caller may not discover says not_found, never why it could not run
	if res, _ := e.Run(context.Background(), engine.RunRequest{ID: "ctx.hidden"}, rc); res == nil || res.Reason != "not_found" || strings.Contains(res.Message, "supported_os") {
		t.Errorf("hidden: %+v", res)
	}

	// named by its id, the action for another OS is answered incompatible (it was
	// policy_hidden), and nothing of the hidden one is told
	for id, want := range map[string]string{"ctx.other_os": "incompatible", "ctx.down": "unavailable", "ctx.region": "incompatible", "ctx.hidden": "no_match"} {
		resp, err := e.Search(context.Background(), registry.SearchRequest{Query: id}, rc)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Decision != want || resp.Resolution != registry.NoConfidentMatch {
			t.Errorf("search %s: %s %s, want decision %s", id, resp.Resolution, resp.Decision, want)
		}
	}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "echo the message context check", Limit: 10}, rc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]registry.Availability{"ctx.down": registry.Unavailable, "ctx.region": registry.Incompatible,
		"ctx.executor": registry.Incompatible, "ctx.fine": registry.Available}
	for _, m := range resp.Matches {
		if m.ResourceID == "ctx.other_os" {
			t.Errorf("search on linux shows the windows-only action")
		}
		if w, ok := want[m.ResourceID]; ok {
			if m.Availability != w {
				t.Errorf("search: %s availability %s, want %s", m.ResourceID, m.Availability, w)
			}
			delete(want, m.ResourceID)
		}
	}
	if len(want) > 0 {
		t.Errorf("search did not show %v: %v", want, ids(resp))
	}
}

// TestMatchConcurrent: searches with structured matches share the filter caches of a
// generation (run with -race).
func TestMatchConcurrent(t *testing.T) {
	e := openSeed003(t)
	matches := []registry.StructuredMatch{{Domain: "hr"}, {NextStep: "run_rule"}, {Scenario: "invoice_validation", NextStep: "run_skill"}, {Domain: "travel"}}
	want := make([][]string, len(matches))
	for i := range matches {
		want[i] = ids(search003(t, e, "检查发票", &matches[i]))
	}
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 40 {
				k := (g + i) % len(matches)
				resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "检查发票", Limit: 10, Match: &matches[k]}, dev)
				if err == nil && !slices.Equal(ids(resp), want[k]) {
					err = errors.New("match " + matches[k].Domain + matches[k].NextStep + ": " + strings.Join(ids(resp), ",") + " != " + strings.Join(want[k], ","))
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
