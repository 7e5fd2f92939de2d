package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func importFile(tb testing.TB, path string, opts ImportOptions) []*Capability {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	caps, err := ImportWith(f, opts)
	if err != nil {
		tb.Fatalf("import %s: %v", path, err)
	}
	return caps
}

// wantCap is what a test expects of one imported capability.
type wantCap struct {
	id, ext     string
	side        SideEffect
	risk        RiskLevel
	title       string
	whenToUse   string
	url         string
	schemaHas   string // a fragment of the arguments schema
	outputHas   string // a fragment of the output schema
	tags        []string
	capType     string
	confirm     bool
	aliasesHave []string
}

func TestImportFormats(t *testing.T) {
	tests := []struct {
		name, file, format string
		packs              []string
		want               []wantCap
	}{
		{name: "openai", file: "openai.json", format: FormatOpenAI, packs: []string{"imported"}, want: []wantCap{
			{id: "imported.get_weather", ext: "get_weather", side: SideEffectRead, risk: RiskLow, title: "Get weather",
				whenToUse: "Get the current weather for a city.", url: "{{.base_url.imported}}/tools/get_weather",
				schemaHas: `"required":["city"]`, outputHas: `{"type":"object"}`, capType: "tool"},
			{id: "imported.send_email", ext: "sendEmail", side: SideEffectWriteShared, risk: RiskMedium, title: "Send email",
				aliasesHave: []string{"sendEmail"}},
			{id: "imported.delete_file", ext: "delete_file", side: SideEffectImpact, risk: RiskHigh, confirm: true,
				schemaHas: `{"type":"object"}`},
		}},
		{name: "openai responses form", file: "openai_responses.json", format: FormatOpenAI, packs: []string{"imported"}, want: []wantCap{
			{id: "imported.list_orders", ext: "list_orders", side: SideEffectRead, whenToUse: "List a customer's orders (newest first)."},
		}},
		{name: "anthropic", file: "anthropic.json", format: FormatAnthropic, packs: []string{"imported"}, want: []wantCap{
			{id: "imported.get_stock_price", side: SideEffectRead, schemaHas: `"ticker"`,
				whenToUse: "Retrieves the current stock price for a given ticker symbol."},
			{id: "imported.create_ticket", ext: "createTicket", side: SideEffectWriteShared, risk: RiskMedium,
				whenToUse: "Open a support ticket"},
		}},
		{name: "mcp", file: "mcp.json", format: FormatMCP, packs: []string{"imported"}, want: []wantCap{
			{id: "imported.read_file", side: SideEffectRead, risk: RiskLow, capType: "mcp", url: "{{.base_url.imported}}/tools/read_file"},
			{id: "imported.delete_branch", side: SideEffectImpact, risk: RiskHigh, confirm: true, title: "Delete a branch"},
			{id: "imported.create_issue", side: SideEffectWriteShared, risk: RiskMedium, title: "Create issue",
				whenToUse: "Create an issue.", outputHas: `"number":{"type":"integer"}`},
			{id: "imported.list_repos", side: SideEffectRead, risk: RiskLow},
		}},
		{name: "mcp json-rpc response", file: "mcp_rpc.json", format: FormatMCP, packs: []string{"imported"}, want: []wantCap{
			{id: "imported.read_file", side: SideEffectRead},
		}},
		{name: "jsonl", file: "tools.jsonl", format: FormatJSONL,
			packs: []string{"imported", "mcp_server", "navigation", "navigation.traffic_violations", "shop", "shop.cart", "trends_hub"},
			want: []wantCap{
				{id: "navigation.traffic_violations.query_violation", ext: "Navigation.TrafficViolations.queryViolation",
					side: SideEffectRead, title: "Query violation", whenToUse: "按车牌号查询违章记录。",
					url: "{{.base_url.navigation}}/tools/Navigation.TrafficViolations.queryViolation"},
				{id: "navigation.traffic_violations.pay_fine", side: SideEffectImpact, risk: RiskHigh, confirm: true,
					schemaHas: `"amount":{"type":"number"}`}, // "float" repaired
				{id: "trends_hub.get_weread_rank", ext: "Trends Hub::get-weread-rank", side: SideEffectRead,
					whenToUse: "Get the WeRead book ranking.", url: "{{.base_url.trends_hub}}/tools/get-weread-rank",
					tags: []string{"News"}, capType: "mcp", aliasesHave: []string{"Trends Hub::get-weread-rank", "get-weread-rank"}},
				{id: "imported.get_weather", ext: "getWeather", side: SideEffectRead, whenToUse: "Weather for a place",
					schemaHas: `{"type":"object"}`},
				{id: "imported.get_weather_2", ext: "get_weather", whenToUse: "Get weather"}, // collision; no description
				{id: "imported.get_pm2_5_level", ext: "getPM2.5Level", whenToUse: "PM2.5 level, e.g. for Beijing.",
					schemaHas: `"examples":["Beijing"]`, tags: []string{"Environment"}},
				{id: "mcp_server.get_character_info", ext: "鸣潮 MCP Server::get_character_info",
					schemaHas: `"exclusiveMinimum":0`},
				{id: "shop.cart_2", ext: "Shop.Cart", side: SideEffectWriteShared},                   // shop.cart is a pack; "cart" is no verb
				{id: "shop.cart.add_item", ext: "Shop.Cart.addItem", schemaHas: `{"type":"object"}`}, // remote $ref replaced
				{id: "imported.x3d_print", ext: "3dPrint", side: SideEffectWriteShared, title: "3d print"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "import", tt.file)
			caps := importFile(t, path, ImportOptions{Format: tt.format, Source: tt.file})
			auto := importFile(t, path, ImportOptions{Format: FormatAuto, Source: tt.file})
			if len(auto) != len(caps) {
				t.Fatalf("auto detection imported %d capabilities, explicit format %d", len(auto), len(caps))
			}
			for i := range caps {
				if !Equal(caps[i], auto[i]) {
					t.Errorf("auto detection differs at %s", caps[i].ID)
				}
			}
			if errs := Lint(caps); errs != nil {
				t.Fatalf("imported capabilities fail lint:\n%v", errs)
			}
			var packs []string
			var actions []*Capability
			for _, c := range caps {
				if c.ResourceType == TypePack {
					packs = append(packs, c.ID)
				} else {
					actions = append(actions, c)
				}
			}
			if !slices.Equal(packs, tt.packs) {
				t.Errorf("packs = %v, want %v", packs, tt.packs)
			}
			if len(actions) != len(tt.want) {
				var ids []string
				for _, a := range actions {
					ids = append(ids, a.ID)
				}
				t.Fatalf("actions = %v, want %d", ids, len(tt.want))
			}
			for i, w := range tt.want {
				checkImported(t, actions[i], w, tt.format)
			}
		})
	}
}

func checkImported(tb testing.TB, c *Capability, w wantCap, format string) {
	tb.Helper()
	if c.ID != w.id {
		tb.Errorf("id = %q, want %q", c.ID, w.id)
		return
	}
	ext := w.ext
	if ext == "" {
		ext = c.ExternalID
	}
	check := func(field string, got, want any, set bool) {
		if set && got != want {
			tb.Errorf("%s: %s = %v, want %v", c.ID, field, got, want)
		}
	}
	check("external_id", c.ExternalID, ext, true)
	check("first alias", firstOr(c.Aliases), ext, true)
	check("side_effect", c.SideEffect, w.side, w.side != "")
	check("risk_level", c.RiskLevel, w.risk, w.risk != "")
	check("requires_confirmation", c.RequiresConfirmation, w.confirm, true)
	check("title", c.Title, w.title, w.title != "")
	check("when_to_use", firstOr(c.WhenToUse), w.whenToUse, w.whenToUse != "")
	check("capability_type", c.CapabilityType, w.capType, w.capType != "")
	check("owner", c.Owner, ImportOwner, true)
	check("status", c.Status, StatusActive, true)
	check("version", c.Version, 1, true)
	check("provenance.imported", c.Provenance.Imported, true, true)
	check("provenance.format", c.Provenance.Format, format, true)
	check("schema_digest", c.Provenance.SchemaDigest, Digest(c), true)
	if c.RiskLevel == RiskHigh {
		check("reviewer", c.Reviewer, ImportReviewer, true)
	}
	if c.Handler == nil || c.Handler.Kind != "http" || c.Handler.Method != "POST" {
		tb.Errorf("%s: handler = %+v", c.ID, c.Handler)
	} else {
		check("handler.url", c.Handler.URL, w.url, w.url != "")
	}
	if w.schemaHas != "" && !strings.Contains(string(c.ArgumentsSchema), w.schemaHas) {
		tb.Errorf("%s: arguments_schema %s lacks %s", c.ID, c.ArgumentsSchema, w.schemaHas)
	}
	if w.outputHas != "" && !strings.Contains(string(c.OutputSchema), w.outputHas) {
		tb.Errorf("%s: output_schema %s lacks %s", c.ID, c.OutputSchema, w.outputHas)
	}
	if w.tags != nil && !slices.Equal(c.Tags, w.tags) {
		tb.Errorf("%s: tags = %v, want %v", c.ID, c.Tags, w.tags)
	}
	for _, a := range w.aliasesHave {
		if !slices.Contains(c.Aliases, a) {
			tb.Errorf("%s: aliases %v lack %q", c.ID, c.Aliases, a)
		}
	}
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestImportPacks(t *testing.T) {
	caps := importFile(t, "testdata/import/tools.jsonl", ImportOptions{Format: FormatJSONL})
	m := byID(caps)
	tests := []struct {
		id, title, ext, summary, capType string
	}{
		{id: "navigation", title: "Navigation", ext: "Navigation"},
		{id: "navigation.traffic_violations", title: "Traffic violations", ext: "Navigation.TrafficViolations"},
		{id: "trends_hub", title: "Trends hub", ext: "Trends Hub", summary: "Trending topics from many sites.", capType: "mcp"},
		{id: "mcp_server", title: "鸣潮 MCP server", ext: "鸣潮 MCP Server", capType: "mcp"},
		{id: "imported", title: "Imported", summary: "Tools imported from jsonl catalogue."},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			p := m[tt.id]
			if p == nil {
				t.Fatalf("pack %s missing", tt.id)
			}
			if p.ResourceType != TypePack || p.Title != tt.title || p.ExternalID != tt.ext || p.Summary != tt.summary ||
				p.CapabilityType != tt.capType || p.Owner != ImportOwner || p.Status != StatusActive || p.Version != 1 {
				t.Errorf("pack = %+v", p)
			}
		})
	}
}

func TestImportOptions(t *testing.T) {
	var logs bytes.Buffer
	acl := ACL{Discover: []string{"*"}, Describe: []string{"dev"}}
	caps := importFile(t, "testdata/import/tools.jsonl", ImportOptions{
		Format: FormatJSONL, Pack: "vendor.tools", Provider: "acme", Source: "catalogue.jsonl", ACL: acl,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	m := byID(caps)
	for _, id := range []string{"vendor", "vendor.tools", "vendor.tools.get_weather", "navigation.traffic_violations.pay_fine"} {
		if m[id] == nil {
			t.Errorf("%s missing", id)
		}
	}
	if m["vendor.tools"] == nil || m["vendor.tools.get_weather"].Handler.URL != "{{.base_url.vendor}}/tools/getWeather" {
		t.Errorf("flat tools not under the pack option")
	}
	for _, c := range caps {
		if c.Provenance.Provider != "acme" {
			t.Errorf("%s: provider = %q", c.ID, c.Provenance.Provider)
		}
		root := Parent(c.ID) == ""
		if got := !c.ACL.IsZero(); got != root {
			t.Errorf("%s: has ACL = %v, want %v (only root packs get the option's ACL)", c.ID, got, root)
		}
	}
	if m["vendor"].Provenance.Source != "fixture" && m["vendor"].Provenance.Source != "catalogue.jsonl" {
		t.Errorf("source = %q", m["vendor"].Provenance.Source)
	}
	// Three schemas were repaired and one replaced; each is logged.
	if n := strings.Count(logs.String(), "repaired a schema"); n != 3 {
		t.Errorf("%d repair warnings, want 3:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "replaced a schema"); n != 1 {
		t.Errorf("%d replacement warnings, want 1:\n%s", n, logs.String())
	}

	// Strict refuses the same schemas, naming the tool, line and field.
	f, _ := os.Open("testdata/import/tools.jsonl")
	defer f.Close()
	_, err := ImportWith(f, ImportOptions{Format: FormatJSONL, Strict: true, Source: "tools.jsonl"})
	var errs LintErrors
	if !errors.As(err, &errs) || len(errs) != 4 {
		t.Fatalf("strict import: %v, want 4 errors", err)
	}
	if e := errs[0]; e.File != "tools.jsonl" || e.Line != 2 || e.ID != "Navigation.TrafficViolations.payFine" ||
		e.Field != "params" || !strings.Contains(e.Msg, "schema does not compile: at '/properties/amount/type'") {
		t.Errorf("first strict error = %q", e.Error())
	}

	if _, err := ImportWith(strings.NewReader(`[]`), ImportOptions{Pack: "Not Valid"}); err == nil {
		t.Error("an invalid pack option was accepted")
	}
}

func TestImportIsDeterministic(t *testing.T) {
	a := importFile(t, "testdata/import/tools.jsonl", ImportOptions{})
	b := importFile(t, "testdata/import/tools.jsonl", ImportOptions{})
	if len(a) != len(b) {
		t.Fatalf("%d vs %d capabilities", len(a), len(b))
	}
	for i := range a {
		if !Equal(a[i], b[i]) || a[i].Provenance.SchemaDigest != b[i].Provenance.SchemaDigest {
			t.Errorf("import differs at %d: %s vs %s", i, a[i].ID, b[i].ID)
		}
	}
}

func TestImportBadInput(t *testing.T) {
	tests := []struct {
		name, format, input        string
		wantLine                   int
		wantID, wantField, wantMsg string
	}{
		{name: "empty input", format: FormatAuto, input: " \n", wantLine: 1, wantMsg: "empty input"},
		{name: "undetectable", format: FormatAuto, input: `{"hello": "world"}`, wantLine: 1, wantMsg: "cannot detect the format"},
		{name: "malformed JSON", format: FormatOpenAI, input: "[\n {\"type\": \"function\",\n  \"function\": {\"name\": }}]", wantLine: 3, wantMsg: "malformed JSON: invalid character '}'"},
		{name: "trailing data", format: FormatAnthropic, input: `[] []`, wantLine: 1, wantMsg: "unexpected data after the JSON value"},
		{name: "no tools list", format: FormatMCP, input: `{"result": {"prompts": []}}`, wantLine: 1, wantMsg: "no tools list found"},
		{name: "wrong type", format: FormatOpenAI, input: "[\n{\"type\": \"function\", \"function\": {\"name\": \"a\"}},\n{\"type\": \"function\", \"function\": {\"name\": 5}}]",
			wantLine: 3, wantField: "tools[1].function.name", wantMsg: "want string, got number"},
		{name: "wrong type in mcp annotations", format: FormatMCP, input: `{"tools": [{"name": "a", "annotations": {"readOnlyHint": "yes"}}]}`,
			wantLine: 1, wantField: "tools[0].annotations.readOnlyHint", wantMsg: "want bool, got string"},
		{name: "duplicate tool name", format: FormatMCP, input: "{\"tools\": [\n{\"name\": \"x\", \"description\": \"a\"},\n{\"name\": \"x\", \"description\": \"b\"}]}",
			wantLine: 3, wantID: "x", wantField: "tools[1].name", wantMsg: `duplicate tool name "x" (first at tools[0], line 2)`},
		{name: "tool without a name", format: FormatAnthropic, input: `[{"description": "nameless"}]`,
			wantLine: 1, wantField: "tools[0].name", wantMsg: "tool has no name"},
		{name: "malformed JSON line", format: FormatJSONL, input: "{\"id\": \"a\"}\n{\"id\": \n{\"id\": \"c\"}\n", wantLine: 2, wantMsg: "malformed JSON line: unexpected end of JSON input"},
		{name: "jsonl wrong type", format: FormatJSONL, input: "{\"id\": \"a\", \"params\": {}}\n{\"id\": \"b\", \"description\": 1}\n",
			wantLine: 2, wantField: "description", wantMsg: "want string, got number"},
		{name: "params not a schema", format: FormatJSONL, input: `{"id": "a", "params": "text"}`, wantLine: 1, wantID: "a", wantField: "params", wantMsg: "schema does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps, err := ImportWith(strings.NewReader(tt.input), ImportOptions{Format: tt.format, Source: "in.json", Strict: true})
			if err == nil {
				t.Fatalf("import succeeded with %d capabilities", len(caps))
			}
			var errs LintErrors
			if !errors.As(err, &errs) || !errors.Is(err, ErrLint) {
				t.Fatalf("error %T %v is not LintErrors", err, err)
			}
			e := errs[0]
			if e.File != "in.json" || e.Line != tt.wantLine || e.ID != tt.wantID || e.Field != tt.wantField || !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("error = %+v\nwant line %d, id %q, field %q, msg containing %q", e, tt.wantLine, tt.wantID, tt.wantField, tt.wantMsg)
			}
		})
	}
	if _, err := Import(strings.NewReader(`[]`), "yaml"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown format: %v, want ErrUnknownFormat", err)
	}
	caps, err := Import(strings.NewReader(`{"tools": []}`), FormatAuto)
	if err != nil || len(caps) != 0 {
		t.Errorf("empty tools list: %d capabilities, %v", len(caps), err)
	}
}

func TestIDSegment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"queryViolation", "query_violation"},
		{"TrafficViolations", "traffic_violations"},
		{"getHTTPResponse", "get_http_response"},
		{"get-weread-rank", "get_weread_rank"},
		{"Trends Hub", "trends_hub"},
		{"PDF&URLTool", "pdf_url_tool"},
		{"getPM2.5Level", "get_pm2_5_level"},
		{"requestFirst Aid Assistance", "request_first_aid_assistance"},
		{"__a--b__", "a_b"},
		{"3dPrint", "x3d_print"},
		{"Bazi MCP (八字 MCP) by Cantian AI", "bazi_mcp_mcp_by_cantian_ai"},
		{"鸣潮", "u5d4c1e1b"},
		{"already_snake_case", "already_snake_case"},
		{strings.Repeat("ab", 40), strings.Repeat("ab", 32)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := IDSegment(tt.in)
			if tt.in == "鸣潮" {
				if !strings.HasPrefix(got, "u") || len(got) != 9 || got != IDSegment("鸣潮") || got == IDSegment("八字") {
					t.Errorf("IDSegment(%q) = %q, want a stable u+8 hex", tt.in, got)
				}
			} else if got != tt.want {
				t.Errorf("IDSegment(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !ValidID(got) {
				t.Errorf("IDSegment(%q) = %q is not a valid id", tt.in, got)
			}
		})
	}
}

func TestTitleAndSentence(t *testing.T) {
	titles := []struct{ in, want string }{
		{"queryPassengerTrainOrder", "Query passenger train order"},
		{"get-weread-rank", "Get weread rank"},
		{"getHTTPStatus", "Get HTTP status"},
		{"鸣潮 MCP Server", "鸣潮 MCP server"},
		{"---", "---"},
	}
	for _, tt := range titles {
		if got := titleFromName(tt.in); got != tt.want {
			t.Errorf("titleFromName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	sentences := []struct{ in, want string }{
		{"Get the weather. Uses metric units.", "Get the weather."},
		{"No full stop", "No full stop"},
		{"Version 2.5 is out. More later.", "Version 2.5 is out."},
		{"Pick a city, e.g. Paris. Then go.", "Pick a city, e.g. Paris."},
		{"查询违章记录。支持多个城市", "查询违章记录。"},
		{"First line\nsecond line", "First line"},
		{"Really?! Yes.", "Really?!"},
		{"  padded.  ", "padded."},
	}
	for _, tt := range sentences {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name              string
		leaf              string
		readOnly, destroy *bool
		side              SideEffect
		risk              RiskLevel
	}{
		{name: "readOnlyHint", leaf: "delete_all", readOnly: &yes, side: SideEffectRead, risk: RiskLow},
		{name: "destructiveHint", leaf: "get_thing", destroy: &yes, side: SideEffectImpact, risk: RiskHigh},
		{name: "hints both false", leaf: "get_thing", readOnly: &no, destroy: &no, side: SideEffectWriteShared, risk: RiskMedium},
		{name: "read verb", leaf: "search_flights", side: SideEffectRead, risk: RiskLow},
		{name: "computation verb", leaf: "calculate_bmi", side: SideEffectRead, risk: RiskLow},
		{name: "destructive verb", leaf: "remove_user", side: SideEffectImpact, risk: RiskHigh},
		{name: "payment verb", leaf: "pay_invoice", side: SideEffectImpact, risk: RiskHigh},
		{name: "other verb", leaf: "create_order", side: SideEffectWriteShared, risk: RiskMedium},
		{name: "verb only as a prefix of a word", leaf: "getaway_planner", side: SideEffectWriteShared, risk: RiskMedium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side, risk := classify(tt.leaf, tt.readOnly, tt.destroy)
			if side != tt.side || risk != tt.risk {
				t.Errorf("classify = %s, %s; want %s, %s", side, risk, tt.side, tt.risk)
			}
		})
	}
}

const evalDir = "../../shared/eval"

// TestImportEvalSets imports every shared evaluation catalogue: each must pass lint, and
// every label of its queries must be found through ExternalID.
func TestImportEvalSets(t *testing.T) {
	if _, err := os.Stat(evalDir); err != nil {
		t.Skipf("evaluation sets not found at %s (%v): skipping", evalDir, err)
	}
	for _, set := range []string{"metatool", "seal_tools", "hammerbench_zh", "livemcpbench"} {
		t.Run(set, func(t *testing.T) {
			toolsPath := filepath.Join(evalDir, set, "tools.jsonl")
			if _, err := os.Stat(toolsPath); err != nil {
				t.Skipf("%s not found: skipping", toolsPath)
			}
			caps := importFile(t, toolsPath, ImportOptions{Format: FormatAuto})
			if errs := Lint(caps); errs != nil {
				t.Fatalf("%d lint errors, first: %v", len(errs), errs[0])
			}
			byExt := make(map[string]*Capability)
			for _, c := range caps {
				if c.ResourceType == TypeAction {
					if prev := byExt[c.ExternalID]; prev != nil {
						t.Errorf("external id %q on %s and %s", c.ExternalID, prev.ID, c.ID)
					}
					byExt[c.ExternalID] = c
				}
			}
			tools := readJSONL(t, toolsPath)
			if len(byExt) != len(tools) {
				t.Errorf("%d actions for %d tools", len(byExt), len(tools))
			}
			for _, tool := range tools {
				if c := byExt[tool["id"].(string)]; c == nil || !slices.Contains(c.Aliases, tool["id"].(string)) {
					t.Errorf("tool %v not found by external id and alias", tool["id"])
				}
			}
			queriesPath := filepath.Join(evalDir, set, "queries.jsonl")
			if _, err := os.Stat(queriesPath); err != nil {
				return // livemcpbench has no queries
			}
			labels, missing := 0, 0
			for _, q := range readJSONL(t, queriesPath) {
				for _, r := range q["relevant"].([]any) {
					labels++
					if byExt[r.(string)] == nil {
						missing++
						if missing <= 3 {
							t.Errorf("query %v: label %q matches no imported capability", q["qid"], r)
						}
					}
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d labels unmatched", missing, labels)
			}
		})
	}
}

func readJSONL(tb testing.TB, path string) []map[string]any {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func evalData(tb testing.TB, sets ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, s := range sets {
		b, err := os.ReadFile(filepath.Join(evalDir, s, "tools.jsonl"))
		if err != nil {
			tb.Skipf("evaluation set %s not available (%v): skipping", s, err)
		}
		out = append(out, b)
	}
	return out
}

// BenchmarkImport imports metatool and seal_tools with a cold schema cache.
func BenchmarkImport(b *testing.B) {
	data := evalData(b, "metatool", "seal_tools")
	b.ReportAllocs()
	tools := 0
	for b.Loop() {
		resetSchemaCache()
		tools = 0
		for _, d := range data {
			caps, err := Import(bytes.NewReader(d), FormatJSONL)
			if err != nil {
				b.Fatal(err)
			}
			tools += len(caps)
		}
	}
	b.ReportMetric(float64(tools), "capabilities/op")
}

// TestImportDefaultPackKeepsItsID: a derived pack that maps to the default pack's id gets
// the suffix, not the default pack.
func TestImportDefaultPackKeepsItsID(t *testing.T) {
	caps, err := Import(strings.NewReader("{\"id\": \"Imported.X.getA\"}\n{\"id\": \"getB\"}\n"), FormatJSONL)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range caps {
		ids = append(ids, c.ID)
	}
	want := []string{"imported", "imported_2", "imported_2.x", "imported_2.x.get_a", "imported.get_b"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
}
