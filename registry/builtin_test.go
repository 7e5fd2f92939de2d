package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// builtinOnce loads the built-in registry once per test binary.
var builtinOnce = sync.OnceValues(Builtin)

func loadBuiltin(t testing.TB) []*Capability {
	t.Helper()
	caps, err := builtinOnce()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	return caps
}

func builtinSnapshot(t testing.TB) *Snapshot {
	t.Helper()
	caps, err := Builtin() // a fresh copy: NewSnapshot fills Eff
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	snap, err := NewSnapshot(1, caps)
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	return snap
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func TestBuiltinLoadsClean(t *testing.T) {
	caps := loadBuiltin(t)
	if len(caps) < 70 {
		t.Fatalf("built-in registry has %d capabilities, want at least 70", len(caps))
	}
	if errs := Lint(caps); errs != nil {
		t.Fatalf("lint errors:\n%v", errs)
	}
	if _, err := NewSnapshot(1, caps); err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	// Every call returns fresh definitions.
	again, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(caps) || again[0] == caps[0] {
		t.Fatalf("Builtin returned %d shared definitions, want %d fresh ones", len(again), len(caps))
	}
}

func TestBuiltinLanguages(t *testing.T) {
	caps := loadBuiltin(t)
	var zhTitle, enTitle, zhSummary, enSummary, zhAlias, enAlias, bothAlias int
	for _, c := range caps {
		if hasCJK(c.Title) {
			zhTitle++
		} else {
			enTitle++
		}
		if hasCJK(c.Summary) {
			zhSummary++
		} else {
			enSummary++
		}
		var zh, en bool
		for _, a := range c.Aliases {
			if hasCJK(a) {
				zh = true
			} else {
				en = true
			}
		}
		if zh {
			zhAlias++
		}
		if en {
			enAlias++
		}
		if zh && en {
			bothAlias++
		}
	}
	n := len(caps)
	for _, tc := range []struct {
		name string
		got  int
		min  float64
	}{
		{"chinese titles", zhTitle, 0.2},
		{"english titles", enTitle, 0.2},
		{"chinese summaries", zhSummary, 0.2},
		{"english summaries", enSummary, 0.2},
		{"chinese aliases", zhAlias, 0.5},
		{"english aliases", enAlias, 0.5},
		{"aliases in both languages", bothAlias, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if share := float64(tc.got) / float64(n); share < tc.min {
				t.Errorf("%d of %d (%.0f%%), want at least %.0f%%", tc.got, n, 100*share, 100*tc.min)
			}
		})
	}
}

func TestBuiltinRequiredCapabilities(t *testing.T) {
	byID := map[string]*Capability{}
	for _, c := range loadBuiltin(t) {
		byID[c.ID] = c
	}
	for _, tc := range []struct {
		name    string
		rtype   ResourceType
		ctype   string
		se      SideEffect
		confirm bool
	}{
		{name: "maintenance", rtype: TypePack},
		{name: "maintenance.codex", rtype: TypePack},
		{name: "maintenance.npm", rtype: TypePack},
		{name: "maintenance.python", rtype: TypePack},
		{name: "maintenance.docker", rtype: TypePack},
		{name: "maintenance.codex.status", rtype: TypeAction, ctype: "tool", se: SideEffectRead},
		{name: "maintenance.codex.diagnose", rtype: TypeAction, ctype: "tool", se: SideEffectRead},
		{name: "maintenance.codex.update", rtype: TypeAction, ctype: "tool", se: SideEffectWriteLocal, confirm: true},
		{name: "maintenance.codex.path_repair", rtype: TypeAction, ctype: "tool", se: SideEffectWriteLocal, confirm: true},
		{name: "maintenance.codex.rollback", rtype: TypeAction, ctype: "tool", se: SideEffectWriteLocal, confirm: true},
		{name: "maintenance.codex.path_conflict_guide", rtype: TypeRecipe},
		{name: "maintenance.npm.cache_clean", rtype: TypeAction, se: SideEffectWriteLocal},
		{name: "maintenance.npm.global_list", rtype: TypeAction, se: SideEffectRead},
		{name: "maintenance.npm.prefix_check", rtype: TypeAction, se: SideEffectRead},
		{name: "maintenance.python.venv_create", rtype: TypeAction, se: SideEffectWriteLocal},
		{name: "maintenance.python.pip_outdated", rtype: TypeAction, se: SideEffectRead},
		{name: "maintenance.docker.ps", rtype: TypeAction, se: SideEffectRead},
		{name: "maintenance.docker.logs", rtype: TypeAction, se: SideEffectRead},
		{name: "maintenance.docker.prune", rtype: TypeAction, se: SideEffectImpact, confirm: true},
		{name: "myapp.schedule.create", rtype: TypeAction, se: SideEffectWriteShared},
		{name: "myapp.schedule.list", rtype: TypeAction, se: SideEffectRead},
		{name: "myapp.schedule.delete", rtype: TypeAction, se: SideEffectImpact, confirm: true},
		{name: "travel", rtype: TypePack},
		{name: "travel.flights.search", rtype: TypeAction, se: SideEffectRead},
		{name: "travel.hotels.search", rtype: TypeAction, se: SideEffectRead},
		{name: "travel.trains.search", rtype: TypeAction, se: SideEffectRead},
		{name: "travel.trips.book", rtype: TypeAction, se: SideEffectImpact, confirm: true},
		{name: "travel.trips.cancel", rtype: TypeAction, se: SideEffectImpact, confirm: true},
		{name: "reimbursement.rules.duplicate_invoice", rtype: TypeAction, ctype: "rule", se: SideEffectRead},
		{name: "reimbursement.invoice.verify", rtype: TypeAction, ctype: "mcp", se: SideEffectRead},
		{name: "reimbursement.skills.risk_explanation", rtype: TypeAction, ctype: "skill", se: SideEffectRead},
		{name: "reimbursement.knowledge.policy_search", rtype: TypeAction, ctype: "knowledge_search", se: SideEffectRead},
		{name: "reimbursement.claims.submit", rtype: TypeAction, ctype: "workflow", se: SideEffectWriteShared, confirm: true},
		{name: "payments.create_refund", rtype: TypeAction, se: SideEffectImpact, confirm: true},
		{name: "payments.get_payment", rtype: TypeAction, se: SideEffectRead},
		{name: "devtools.github.get_pull_request", rtype: TypeAction, se: SideEffectRead},
		{name: "devtools.github.read_diff", rtype: TypeAction, se: SideEffectRead},
		{name: "devtools.github.get_ci_status", rtype: TypeAction, se: SideEffectRead},
		{name: "devtools.github.pr_review", rtype: TypeAction, ctype: "skill", se: SideEffectRead},
		{name: "notifications.email.send", rtype: TypeAction, ctype: "notification", se: SideEffectImpact, confirm: true},
		{name: "notifications.slack.send_message", rtype: TypeAction, ctype: "notification", se: SideEffectWriteShared},
		{name: "data.warehouse.query", rtype: TypeAction, ctype: "database_query", se: SideEffectRead},
		{name: "reports.expense_summary", rtype: TypeAction, ctype: "report_generator", se: SideEffectRead},
		{name: "demo.echo", rtype: TypeAction, se: SideEffectRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := byID[tc.name]
			if !ok {
				t.Fatalf("%s is missing", tc.name)
			}
			if c.ResourceType != tc.rtype {
				t.Errorf("resource_type = %s, want %s", c.ResourceType, tc.rtype)
			}
			if tc.ctype != "" && c.CapabilityType != tc.ctype {
				t.Errorf("capability_type = %q, want %q", c.CapabilityType, tc.ctype)
			}
			if tc.se != "" && c.SideEffect != tc.se {
				t.Errorf("side_effect = %s, want %s", c.SideEffect, tc.se)
			}
			if c.RequiresConfirmation != tc.confirm {
				t.Errorf("requires_confirmation = %v, want %v", c.RequiresConfirmation, tc.confirm)
			}
		})
	}

	refund := byID["payments.create_refund"]
	if refund.RiskLevel != RiskHigh || refund.Reviewer == "" {
		t.Errorf("payments.create_refund: risk %s reviewer %q, want high with a reviewer", refund.RiskLevel, refund.Reviewer)
	}
	if echo := byID["demo.echo"]; echo.Handler.Kind != "go" || echo.Handler.Name != "echo" {
		t.Errorf("demo.echo handler = %+v, want go handler echo", echo.Handler)
	}
	// Every capability_type appears on some action.
	seen := map[string]bool{}
	for _, c := range byID {
		if c.ResourceType == TypeAction {
			seen[c.CapabilityType] = true
		}
	}
	for _, ct := range CapabilityTypes {
		if !seen[ct] {
			t.Errorf("no action has capability_type %q", ct)
		}
	}
}

var (
	lowerWord = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
)

func TestBuiltinGovernance(t *testing.T) {
	for _, c := range loadBuiltin(t) {
		t.Run(c.ID, func(t *testing.T) {
			if c.Owner == "" || c.Status == "" || c.Title == "" || c.Summary == "" {
				t.Errorf("owner %q status %q title %q summary %q: all are required", c.Owner, c.Status, c.Title, c.Summary)
			}
			if len(c.Aliases) == 0 {
				t.Error("no aliases")
			}
			for _, list := range [][]string{c.Intents, c.Entities} {
				for _, w := range list {
					if !lowerWord.MatchString(w) {
						t.Errorf("intent or entity %q is not a lowercase word", w)
					}
				}
			}
			for _, s := range c.Symptoms {
				if !snakeCase.MatchString(s) {
					t.Errorf("symptom %q is not snake_case", s)
				}
			}
			if c.RiskLevel.Level() >= RiskHigh.Level() && c.Reviewer == "" {
				t.Errorf("risk %s without reviewer", c.RiskLevel)
			}
			if c.SideEffect == SideEffectImpact && !c.RequiresConfirmation {
				t.Error("side effect I without requires_confirmation")
			}
			if c.ResourceType != TypeAction {
				return
			}
			if len(c.WhenToUse) == 0 || c.Timeout <= 0 || c.NetworkPolicy == "" || c.RiskLevel == "" {
				t.Errorf("when_to_use %v timeout %v network_policy %q risk %q: all are required",
					c.WhenToUse, c.Timeout, c.NetworkPolicy, c.RiskLevel)
			}
			var args struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(c.ArgumentsSchema, &args); err != nil {
				t.Fatalf("arguments_schema: %v", err)
			}
			if args.Type != "object" || args.Properties == nil || args.AdditionalProperties == nil || *args.AdditionalProperties {
				t.Errorf("arguments_schema must be an object with properties and additionalProperties false: %s", c.ArgumentsSchema)
			}
			for _, r := range args.Required {
				if _, ok := args.Properties[r]; !ok {
					t.Errorf("required argument %q has no property", r)
				}
			}
			if len(c.OutputSchema) == 0 {
				t.Error("no output_schema")
			}
			switch h := c.Handler; h.Kind {
			case "exec":
				if !strings.HasPrefix(h.Argv[0], "scripts/") {
					t.Errorf("exec argv[0] %q is not under scripts/", h.Argv[0])
				}
				if !strings.HasPrefix(c.ID, "maintenance.") {
					t.Error("only maintenance actions run local scripts")
				}
			case "http":
				if !strings.HasPrefix(h.URL, "{{.base_url.") {
					t.Errorf("http url %q does not start with {{.base_url.NAME}}", h.URL)
				}
				if c.NetworkPolicy != NetworkAllowlist || len(c.NetworkAllow) == 0 {
					t.Errorf("http handler with network_policy %q allow %v, want an allowlist", c.NetworkPolicy, c.NetworkAllow)
				}
				for name := range h.Secrets {
					if !strings.Contains(h.URL+h.Body+strings.Join(mapValues(h.Headers), " "), "{{.secret."+name+"}}") {
						t.Errorf("secret %q is never used", name)
					}
				}
			case "go":
			default:
				t.Errorf("handler kind %q", h.Kind)
			}
			// Arguments templated into a handler must be required: a missing key is an error.
			for _, tmpl := range append(slices.Clone(c.Handler.Argv), c.Handler.URL, c.Handler.Body) {
				for _, m := range templateArg.FindAllStringSubmatch(tmpl, -1) {
					if !slices.Contains(args.Required, m[1]) {
						t.Errorf("handler template uses optional argument %q", m[1])
					}
				}
			}
		})
	}
}

// templateArg finds {{.name}} and {{fn .name}} argument references in a handler template.
var templateArg = regexp.MustCompile(`\{\{(?:[a-z]+ )?\.([a-z_]+)\}\}`)

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestBuiltinGates pins the visibility setup other packages' tests rely on.
func TestBuiltinGates(t *testing.T) {
	snap := builtinSnapshot(t)
	dev := &RuntimeContext{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"}
	ops := &RuntimeContext{Tenant: "default", User: "olga", Scopes: []string{"ops"}, OS: "linux"}
	finance := &RuntimeContext{Tenant: "default", User: "fiona", Scopes: []string{"finance"}}
	contractor := &RuntimeContext{Tenant: "default", User: "carl", Scopes: []string{"dev", "contractor"}}
	acme := &RuntimeContext{Tenant: "acme", User: "bob", Scopes: []string{"sales"}}
	for _, tc := range []struct {
		name    string
		id      string
		rc      *RuntimeContext
		visible bool // tenant, enabled and discover gate
		execute bool
	}{
		{"dev discovers and runs diagnose", "maintenance.codex.diagnose", dev, true, true},
		{"ops cannot see diagnose (design ACL: dev only)", "maintenance.codex.diagnose", ops, false, false},
		{"ops runs codex status", "maintenance.codex.status", ops, true, true},
		{"dev cannot see docker prune", "maintenance.docker.prune", dev, false, false},
		{"ops runs docker prune", "maintenance.docker.prune", ops, true, true},
		{"dev sees but cannot run a refund", "payments.create_refund", dev, true, false},
		{"finance runs a refund", "payments.create_refund", finance, true, true},
		{"contractor denied payments", "payments.get_payment", contractor, false, false},
		{"dev cannot see payouts", "payments.payouts.create", dev, false, false},
		{"finance sees payouts", "payments.payouts.create", finance, true, true},
		{"dev cannot see claim approval", "reimbursement.claims.approve", dev, false, false},
		{"dev submits a claim", "reimbursement.claims.submit", dev, true, true},
		{"default tenant cannot see acme", "acme.crm.search_customers", dev, false, false},
		{"acme tenant sees its crm", "acme.crm.create_lead", acme, true, true},
		{"legacy is disabled", "legacy.ftp_upload", dev, false, false},
		{"dev cannot merge", "devtools.github.merge_pull_request", dev, true, false},
		{"dev reviews a pr", "devtools.github.pr_review", dev, true, true},
		{"travel open to all", "travel.trips.book", acme, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := snap.Get(tc.id)
			if !ok {
				t.Fatalf("%s missing", tc.id)
			}
			visible := c.Eff.Enabled && c.Status != StatusOffline && VisibleTo(c.Eff.Tenants, tc.rc.Tenant) &&
				c.Eff.ACL.Allows(tc.rc, GateDiscover)
			if visible != tc.visible {
				t.Errorf("visible = %v, want %v (eff %+v)", visible, tc.visible, c.Eff)
			}
			if got := visible && c.Eff.ACL.Allows(tc.rc, GateExecute); got != tc.execute {
				t.Errorf("execute = %v, want %v", got, tc.execute)
			}
		})
	}

	var offline, windows, down, creds, disabledChildren []string
	for _, c := range snap.Caps {
		if c.Status == StatusOffline {
			offline = append(offline, c.ID)
		}
		if slices.Equal(c.SupportedOS, []string{"windows"}) {
			windows = append(windows, c.ID)
		}
		if c.Health.Status == "down" {
			down = append(down, c.ID)
		}
		if len(c.Requirements.Credentials) > 0 {
			creds = append(creds, c.ID)
		}
		if !c.Eff.Enabled && c.ResourceType != TypePack {
			disabledChildren = append(disabledChildren, c.ID)
		}
	}
	for _, tc := range []struct {
		name string
		got  []string
		min  int
	}{
		{"offline", offline, 2},
		{"windows only", windows, 2},
		{"health down", down, 1},
		{"needs credentials", creds, 5},
		{"under a disabled pack", disabledChildren, 2},
	} {
		if len(tc.got) < tc.min {
			t.Errorf("%s: %v, want at least %d", tc.name, tc.got, tc.min)
		}
	}
}

// execActions returns the built-in actions with exec handlers.
func execActions(t testing.TB) []*Capability {
	t.Helper()
	var out []*Capability
	for _, c := range loadBuiltin(t) {
		if c.Handler != nil && c.Handler.Kind == "exec" {
			out = append(out, c)
		}
	}
	if len(out) < 15 {
		t.Fatalf("only %d exec actions", len(out))
	}
	return out
}

func TestBuiltinScriptsEmbedded(t *testing.T) {
	scripts := BuiltinScripts()
	root, err := fs.ReadDir(scripts, ".")
	if err != nil || len(root) != 1 || root[0].Name() != "scripts" {
		t.Fatalf("BuiltinScripts root = %v, %v; want only the scripts directory", root, err)
	}
	if _, err := fs.Stat(scripts, "myapp.yaml"); err == nil {
		t.Error("BuiltinScripts exposes a definition file")
	}
	n := 0
	err = fs.WalkDir(scripts, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil || n < 15 {
		t.Fatalf("walk: %d files, %v", n, err)
	}
	for _, c := range execActions(t) {
		t.Run(c.ID, func(t *testing.T) {
			name := c.Handler.Argv[0]
			b, err := fs.ReadFile(scripts, name)
			if err != nil {
				t.Fatalf("embedded script: %v", err)
			}
			if !bytes.HasPrefix(b, []byte("#!/bin/sh\n")) && !bytes.HasPrefix(b, []byte("@echo off")) {
				t.Errorf("%s starts with %q, want #!/bin/sh (or @echo off for a .cmd)", name, b[:min(len(b), 12)])
			}
			// The embedded FS keeps no mode bits; the source tree must be executable.
			st, err := os.Stat(filepath.Join("builtin", filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm()&0o111 == 0 {
				t.Errorf("%s is not executable (mode %v)", name, st.Mode())
			}
		})
	}
}

// runScript runs a built-in script with sh, argument JSON on stdin and the given extra
// environment, and returns its stdout.
func runScript(t testing.TB, name string, argv []string, stdin string, env []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	path, err := filepath.Abs(filepath.Join("builtin", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sh", append([]string{path}, argv...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", name, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// checkOutput asserts out is one JSON object valid against the action's output schema, and
// returns it decoded.
func checkOutput(t testing.TB, c *Capability, out []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		t.Fatalf("output is not a JSON object (%v): %s", err, out)
	}
	if dec.More() {
		t.Fatalf("output holds more than one JSON value: %s", out)
	}
	comp := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.OutputSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("output.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("output does not match output_schema: %v\n%s", err, out)
	}
	return obj
}

// staticArgv is a handler's argv after argv[0] with templated elements left out.
func staticArgv(h *Handler) []string {
	var out []string
	for _, a := range h.Argv[1:] {
		if !strings.Contains(a, "{{") {
			out = append(out, a)
		}
	}
	return out
}

func runsOnLinux(c *Capability) bool {
	return len(c.SupportedOS) == 0 || slices.Contains(c.SupportedOS, "linux")
}

// TestBuiltinScriptsRun runs every Linux script on this machine, as it is, with empty
// arguments: each prints one JSON object matching its output schema and exits 0 whether or
// not codex, npm, python or docker are installed. Write actions default to a dry run.
func TestBuiltinScriptsRun(t *testing.T) {
	for _, c := range execActions(t) {
		if !runsOnLinux(c) {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			out := runScript(t, c.Handler.Argv[0], staticArgv(c.Handler), "{}",
				[]string{"CAPDEX_RUN_DIR=" + t.TempDir(), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")})
			obj := checkOutput(t, c, out)
			if dry, ok := obj["dry_run"]; ok && dry != true {
				t.Errorf("dry_run = %v with empty arguments, want true", dry)
			}
			if performed, ok := obj["performed"]; ok && performed != false {
				t.Errorf("performed = %v with empty arguments", performed)
			}
		})
	}
}

// bareToolsDir makes a directory with only the basic utilities the scripts use, so PATH
// finds no codex, npm, python or docker.
func bareToolsDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"sh", "sed", "awk", "tr", "grep", "head", "tail", "cat", "du", "wc",
		"dirname", "basename", "readlink", "timeout", "mkdir", "ls"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuiltinScriptsReportAbsentTools(t *testing.T) {
	bare := bareToolsDir(t)
	for _, c := range execActions(t) {
		if !runsOnLinux(c) {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			out := runScript(t, c.Handler.Argv[0], staticArgv(c.Handler), "{}",
				[]string{"PATH=" + bare, "HOME=" + t.TempDir(), "CAPDEX_RUN_DIR=" + t.TempDir()})
			obj := checkOutput(t, c, out)
			for _, k := range []string{"installed", "npm_available", "daemon_running", "performed"} {
				if v, ok := obj[k]; ok && v != false {
					t.Errorf("%s = %v with no tools on PATH", k, v)
				}
			}
			if _, ok := obj["installed"]; !ok && !strings.HasPrefix(c.ID, "maintenance.codex.") {
				t.Errorf("no installed field: %s", out)
			}
		})
	}
}

// fakeCodexInstall builds a PATH where an old codex shadows the one npm installed.
func fakeCodexInstall(t testing.TB) (path, npmBin string) {
	t.Helper()
	root := t.TempDir()
	old := filepath.Join(root, "old")
	npmPrefix := filepath.Join(root, "npm")
	npmBin = filepath.Join(npmPrefix, "bin")
	npmRoot := filepath.Join(npmPrefix, "lib", "node_modules")
	tools := filepath.Join(root, "tools")
	files := map[string]string{
		filepath.Join(old, "codex"):                                "#!/bin/sh\necho 'codex-cli 0.40.0'\n",
		filepath.Join(npmBin, "codex"):                             "#!/bin/sh\necho 'codex-cli 10.46.1'\n",
		filepath.Join(npmRoot, "@openai", "codex", "package.json"): "{\n  \"name\": \"@openai/codex\",\n  \"version\": \"10.46.1\"\n}\n",
		filepath.Join(tools, "npm"): "#!/bin/sh\ncase \"$1 $2\" in\n\"prefix -g\") echo '" + npmPrefix +
			"' ;;\n\"root -g\") echo '" + npmRoot + "' ;;\n*) echo \"unexpected npm $*\" >&2; exit 1 ;;\nesac\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join([]string{old, npmBin, tools, bareToolsDir(t)}, ":"), npmBin
}

func builtinCap(t testing.TB, id string) *Capability {
	t.Helper()
	for _, c := range loadBuiltin(t) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s missing", id)
	return nil
}

func TestCodexScriptsOnAShadowedInstall(t *testing.T) {
	path, npmBin := fakeCodexInstall(t)
	home := t.TempDir()
	env := []string{"PATH=" + path, "HOME=" + home, "SHELL=/bin/bash"}

	diag := builtinCap(t, "maintenance.codex.diagnose")
	obj := checkOutput(t, diag, runScript(t, diag.Handler.Argv[0], nil, `{"include_shell_resolution": true}`, env))
	if obj["active_version"] != "0.40.0" || obj["installed_npm_version"] != "10.46.1" {
		t.Errorf("active %v, npm %v; want 0.40.0 and 10.46.1", obj["active_version"], obj["installed_npm_version"])
	}
	for _, s := range []string{"multiple_executables", "active_version_mismatch", "npm_prefix_mismatch"} {
		if !slices.Contains(obj["symptoms"].([]any), any(s)) {
			t.Errorf("symptoms %v lack %s", obj["symptoms"], s)
		}
	}
	if !slices.Contains(obj["suggested_actions"].([]any), any("maintenance.codex.path_repair")) {
		t.Errorf("suggested_actions = %v", obj["suggested_actions"])
	}

	status := builtinCap(t, "maintenance.codex.status")
	obj = checkOutput(t, status, runScript(t, status.Handler.Argv[0], nil, "{}", env))
	if obj["installed"] != true || obj["active_version"] != "0.40.0" {
		t.Errorf("status = %v", obj)
	}

	repair := builtinCap(t, "maintenance.codex.path_repair")
	for _, tc := range []struct {
		name    string
		args    string
		snippet bool
	}{
		{"default is a dry run", `{}`, false},
		{"explicit dry run", `{"dry_run": true, "shell": "zsh"}`, false},
		{"writes only a snippet", `{"dry_run": false}`, true},
		{"fish snippet", `{"dry_run": false, "shell": "fish"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "run")
			obj := checkOutput(t, repair, runScript(t, repair.Handler.Argv[0], nil, tc.args, append(env, "CAPDEX_RUN_DIR="+runDir)))
			if obj["ok"] != true || obj["needed"] != true {
				t.Fatalf("ok %v needed %v: %v", obj["ok"], obj["needed"], obj)
			}
			if !strings.Contains(obj["snippet"].(string), npmBin) {
				t.Errorf("snippet %q does not put %s first", obj["snippet"], npmBin)
			}
			entries, _ := os.ReadDir(runDir)
			if tc.snippet {
				f, _ := obj["snippet_file"].(string)
				if filepath.Dir(f) != runDir || len(entries) != 1 {
					t.Fatalf("snippet_file %q, run dir holds %d files", f, len(entries))
				}
				b, err := os.ReadFile(f)
				if err != nil || !bytes.Contains(b, []byte(npmBin)) {
					t.Errorf("snippet file %q: %v\n%s", f, err, b)
				}
			} else if obj["snippet_file"] != nil || len(entries) != 0 {
				t.Errorf("dry run wrote %v (%d files)", obj["snippet_file"], len(entries))
			}
			// Nothing real changes: HOME stays empty.
			if es, _ := os.ReadDir(home); len(es) != 0 {
				t.Errorf("HOME was modified: %v", es)
			}
		})
	}

	update := builtinCap(t, "maintenance.codex.update")
	obj = checkOutput(t, update, runScript(t, update.Handler.Argv[0], staticArgv(update.Handler), `{"version": "10.47.0"}`, env))
	if obj["performed"] != false || obj["planned_command"] != "npm install -g @openai/codex@10.47.0" {
		t.Errorf("update dry run = %v", obj)
	}
	rollback := builtinCap(t, "maintenance.codex.rollback")
	obj = checkOutput(t, rollback, runScript(t, rollback.Handler.Argv[0], staticArgv(rollback.Handler), `{"version": "0.40.0; rm -rf /"}`, env))
	if obj["ok"] != false || obj["planned_command"] != nil {
		t.Errorf("rollback accepted an unsafe version: %v", obj)
	}
}

// seedCase is one line of testdata/eval/seed_cases.jsonl (the bench package owns the full
// format; this test only checks the cases against the built-in registry).
type seedCase struct {
	Name               string         `json:"name"`
	Query              string         `json:"query"`
	RuntimeContext     RuntimeContext `json:"runtime_context"`
	Within             string         `json:"within"`
	SideEffectMax      SideEffect     `json:"side_effect_max"`
	Types              []ResourceType `json:"types"`
	ExpectedTopActions []string       `json:"expected_top_actions"`
	AcceptableActions  []string       `json:"acceptable_actions"`
	ForbiddenActions   []string       `json:"forbidden_actions"`
	ExpectedResolution Resolution     `json:"expected_resolution"`
}

// hiddenBy says why the hard pre-filter of docs/ARCHITECTURE.md "Search" keeps c from sc's caller, or "" when
// c may be returned.
func hiddenBy(c *Capability, sc *seedCase) string {
	rc := &sc.RuntimeContext
	switch {
	case !c.Eff.Enabled:
		return "disabled"
	case c.Status == StatusOffline:
		return "offline"
	case !VisibleTo(c.Eff.Tenants, rc.Tenant):
		return "tenant"
	case !c.Eff.ACL.Allows(rc, GateDiscover):
		return "discover gate"
	case rc.OS != "" && len(c.SupportedOS) > 0 && !slices.Contains(c.SupportedOS, rc.OS):
		return "os"
	case sc.Within != "" && c.ID != sc.Within && !strings.HasPrefix(c.ID, sc.Within+"."):
		return "within"
	case len(sc.Types) > 0 && !slices.Contains(sc.Types, c.ResourceType):
		return "types"
	case sc.SideEffectMax != "" && c.ResourceType == TypeAction && c.SideEffect.Level() > sc.SideEffectMax.Level():
		return "side_effect_max"
	}
	return ""
}

// TestSeedCasesMatchBuiltin keeps testdata/eval/seed_cases.jsonl consistent with the
// built-in registry: every id exists, every expected or acceptable result may be returned to
// the case's caller, and every forbidden one is kept out by the hard pre-filter (so no case
// asks a ranker to hide something the caller may see).
func TestSeedCasesMatchBuiltin(t *testing.T) {
	snap := builtinSnapshot(t)
	b, err := os.ReadFile(filepath.Join("..", "testdata", "eval", "seed_cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []seedCase
	names := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var sc seedCase
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if sc.Name == "" || names[sc.Name] || sc.Query == "" {
			t.Fatalf("line %d: empty query or missing or repeated name %q", i+1, sc.Name)
		}
		names[sc.Name] = true
		cases = append(cases, sc)
	}
	if len(cases) < 90 {
		t.Fatalf("%d cases, want at least 90", len(cases))
	}
	resolutions := map[Resolution]int{}
	zh := 0
	for _, sc := range cases {
		resolutions[sc.ExpectedResolution]++
		if hasCJK(sc.Query) {
			zh++
		}
		t.Run(sc.Name, func(t *testing.T) {
			switch sc.ExpectedResolution {
			case Confident:
				if len(sc.ExpectedTopActions) == 0 {
					t.Error("a confident case names its expected top result")
				}
			case NoConfidentMatch:
				if len(sc.ExpectedTopActions) != 0 {
					t.Error("a no_confident_match case expects no top result")
				}
			case Ambiguous:
			default:
				t.Errorf("expected_resolution %q", sc.ExpectedResolution)
			}
			check := func(kind string, ids []string, wantHidden bool) {
				for _, id := range ids {
					c, ok := snap.Get(id)
					if !ok {
						t.Errorf("%s %s is not in the built-in registry", kind, id)
						continue
					}
					if why := hiddenBy(c, &sc); (why != "") != wantHidden {
						t.Errorf("%s %s: hidden by %q", kind, id, why)
					}
				}
			}
			check("expected", sc.ExpectedTopActions, false)
			check("acceptable", sc.AcceptableActions, false)
			check("forbidden", sc.ForbiddenActions, true)
		})
	}
	for _, r := range []Resolution{Confident, Ambiguous, NoConfidentMatch} {
		if resolutions[r] < 5 {
			t.Errorf("%d %s cases, want at least 5", resolutions[r], r)
		}
	}
	if zh*3 < len(cases) {
		t.Errorf("%d of %d queries are Chinese, want at least a third", zh, len(cases))
	}
}
