package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cli runs one capdex command line in-process against the data directory home.
func cli(tb testing.TB, home string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append(args, "--home", home), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func cliJSON(tb testing.TB, home string, v any, args ...string) {
	tb.Helper()
	out, errs, code := cli(tb, home, append(args, "--json")...)
	if code != 0 {
		tb.Fatalf("capdex %v: exit %d: %s%s", args, code, errs, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		tb.Fatalf("capdex %v: %v\n%s", args, err, out)
	}
}

// TestCLIDesignLoop is the design's loop driven through the command line.
func TestCLIDesignLoop(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())

	var search struct {
		Resolution string
		Matches    []struct {
			ResourceID string `json:"resource_id"`
		}
	}
	cliJSON(t, home, &search, "search", "Codex 更新后还是旧版本，帮我检查并修好")
	found := false
	for _, m := range search.Matches[:min(3, len(search.Matches))] {
		found = found || m.ResourceID == "maintenance.codex.diagnose"
	}
	if !found {
		t.Fatalf("diagnose not in the top 3: %+v", search.Matches)
	}
	var desc struct {
		SchemaDigest string `json:"schema_digest"`
		Version      int
	}
	cliJSON(t, home, &desc, "describe", "maintenance.codex.diagnose")
	if desc.SchemaDigest == "" || desc.Version == 0 {
		t.Fatalf("describe: %+v", desc)
	}
	var res struct {
		Status, Reason    string
		ConfirmationToken string   `json:"confirmation_token"`
		Summary           string   `json:"summary"`
		Affected          []string `json:"affected_resources"`
	}
	cliJSON(t, home, &res, "run", "maintenance.codex.diagnose", "--args", "{}")
	if res.Status != "succeeded" {
		t.Fatalf("run diagnose: %+v", res)
	}
	cliJSON(t, home, &search, "search", "repair the codex PATH conflict")
	cliJSON(t, home, &desc, "describe", "maintenance.codex.path_repair")
	cliJSON(t, home, &res, "run", "maintenance.codex.path_repair", "--args", `{"dry_run": true}`)
	if res.Status != "confirmation_required" || res.ConfirmationToken == "" || res.Summary == "" || len(res.Affected) == 0 {
		t.Fatalf("want confirmation_required: %+v", res)
	}
	token := res.ConfirmationToken
	res = struct {
		Status, Reason    string
		ConfirmationToken string   `json:"confirmation_token"`
		Summary           string   `json:"summary"`
		Affected          []string `json:"affected_resources"`
	}{}
	cliJSON(t, home, &res, "run", "maintenance.codex.path_repair", "--args", `{"dry_run": true}`, "--confirm", token)
	if res.Status != "succeeded" {
		t.Fatalf("run with token: %+v", res)
	}
	out, _, code := cli(t, home, "run", "maintenance.codex.path_repair", "--args", `{"dry_run": true}`, "--confirm", token, "--json")
	if code == 0 || !strings.Contains(out, "invalid_confirmation") {
		t.Fatalf("replayed token: exit %d\n%s", code, out)
	}
	out, errs, code := cli(t, home, "audit", "verify")
	if code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("audit verify: exit %d %s %s", code, out, errs)
	}
}

func TestCLIBadInputExitsTwo(t *testing.T) {
	home := t.TempDir()
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "x.yaml"), []byte("id: Bad..Id\nversion: one\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"search without query", []string{"search"}, "QUERY"},
		{"limit out of range", []string{"search", "--limit", "11", "codex"}, "limit"},
		{"bad side effect", []string{"search", "--side-effect-max", "X", "codex"}, "side_effect_max"},
		{"bad identity", []string{"search", "--as", "nobody", "codex"}, "--as"},
		{"lint errors", []string{"lint", bad}, "x.yaml"},
		{"run args not json", []string{"run", "demo.echo", "--args", "{nope"}, "--args"},
		{"run args: where the JSON breaks", []string{"run", "demo.echo", "--args", `{"a": 1,}`}, "byte offset 9"},
		{"run args not an object", []string{"run", "demo.echo", "--args", "[1]"}, "want an object"},
		{"show bad id", []string{"show", "Not An Id"}, "not a capability id"},
		{"eval without inputs", []string{"eval"}, "--tools"},
		{"calibrate model without sets", []string{"calibrate", "model", "--cases", "x.jsonl"}, "--eval"},
		{"calibrate model with a missing set", []string{"calibrate", "model", "--eval", bad, "--cases", "x.jsonl"}, "queries.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := cli(t, home, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not mention %q", errs, tc.want)
			}
		})
	}
}

func TestCLIImportIsAllOrNothing(t *testing.T) {
	home := t.TempDir()
	var before []map[string]any
	cliJSON(t, home, &before, "list")
	cat := filepath.Join(t.TempDir(), "tools.json")
	// The second tool has no name: nothing may be stored.
	os.WriteFile(cat, []byte(`{"tools":[
		{"name":"get_weather","description":"Get the weather for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
		{"description":"Broken.","inputSchema":{"type":"object"}}]}`), 0o644)
	_, errs, code := cli(t, home, "import", "--format", "mcp", "--pack", "weather", cat)
	if code != exitUsage || !strings.Contains(errs, "tools[1].name") {
		t.Fatalf("import of a bad catalogue: exit %d (%s)", code, errs)
	}
	// the location is the file given, not the catalogue's source name ("weather:3:")
	if !strings.Contains(errs, cat+":3:") || strings.Contains(errs, "weather:") {
		t.Errorf("import error does not locate the problem in %s: %s", cat, errs)
	}
	var after []map[string]any
	cliJSON(t, home, &after, "list")
	if len(after) != len(before) {
		t.Fatalf("a failed import stored %d definitions", len(after)-len(before))
	}
	os.WriteFile(cat, []byte(`{"tools":[{"name":"get_weather","description":"Get the weather for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}`), 0o644)
	if _, errs, code := cli(t, home, "import", "--format", "mcp", "--pack", "weather", cat); code != 0 {
		t.Fatalf("import: exit %d %s", code, errs)
	}
	var show struct {
		ExternalID string `json:"external_id"`
		SideEffect string `json:"side_effect"`
	}
	cliJSON(t, home, &show, "show", "weather.get_weather")
	if show.ExternalID != "get_weather" || show.SideEffect != "R" {
		t.Fatalf("imported definition: %+v", show)
	}
}

// TestCLIReimportKeepsGates: README's second import (no --execute) must not revoke the
// execute gate the first import gave; a flag given again still changes it.
func TestCLIReimportKeepsGates(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	v1 := filepath.Join(dir, "tools.json")
	v2 := filepath.Join(dir, "tools-v2.json")
	os.WriteFile(v1, []byte(`[{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city.","parameters":{"type":"object"}}}]`), 0o644)
	os.WriteFile(v2, []byte(`[{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city, hourly.","parameters":{"type":"object"}}}]`), 0o644)
	if _, errs, code := cli(t, home, "import", v1, "--format", "openai", "--pack", "myapp", "--no-examples", "--execute", "dev"); code != 0 {
		t.Fatalf("first import: exit %d %s", code, errs)
	}
	out, errs, code := cli(t, home, "import", v2, "--format", "openai", "--pack", "myapp", "--prune")
	if code != 0 {
		t.Fatalf("re-import: exit %d %s", code, errs)
	}
	if !strings.Contains(out, "execute dev") {
		t.Errorf("re-import summary does not say the kept gate: %s", out)
	}
	var pack struct {
		ACL struct{ Execute []string } `json:"acl"`
	}
	cliJSON(t, home, &pack, "show", "myapp")
	if len(pack.ACL.Execute) != 1 || pack.ACL.Execute[0] != "dev" {
		t.Fatalf("re-import without --execute changed the pack's execute gate to %v", pack.ACL.Execute)
	}
	if _, errs, code := cli(t, home, "import", v1, "--format", "openai", "--pack", "myapp", "--execute", "ops"); code != 0 {
		t.Fatalf("third import: exit %d %s", code, errs)
	}
	cliJSON(t, home, &pack, "show", "myapp")
	if len(pack.ACL.Execute) != 1 || pack.ACL.Execute[0] != "ops" {
		t.Fatalf("--execute ops on a re-import gave %v", pack.ACL.Execute)
	}
}

// TestCLISaysWhenItSeedsTheDemo: the demo registry is seeded once, when a data directory is
// created; the command that does it says so (a user whose first --no-examples import
// failed, then ran list, got the demo for good without a word).
func TestCLISaysWhenItSeedsTheDemo(t *testing.T) {
	home := t.TempDir()
	if _, errs, code := cli(t, home, "list"); code != 0 || !strings.Contains(errs, "seeded with the demo registry") || !strings.Contains(errs, "--no-examples") {
		t.Fatalf("first list: exit %d, stderr %q", code, errs)
	}
	if _, errs, _ := cli(t, home, "list"); strings.Contains(errs, "seeded") {
		t.Fatalf("second list says it seeded again: %q", errs)
	}
	if _, errs, _ := cli(t, t.TempDir(), "list", "--no-examples"); strings.Contains(errs, "seeded") {
		t.Fatalf("--no-examples says it seeded: %q", errs)
	}
}

// TestCLINoSuchCapabilityExitsTwo: an id that names no capability is bad input (exit 2)
// for describe, run, show and delete, with a message naming the id; for describe and run
// an id hidden from the caller (another tenant's) reads exactly as one that does not exist.
func TestCLINoSuchCapabilityExitsTwo(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	const hidden, missing = "acme.crm.create_lead", "acme.crm.no_such_tool"
	if _, errs, code := cli(t, home, "describe", "--as", "acme:bob:sales", hidden); code != 0 {
		t.Fatalf("describe as acme: exit %d: %s", code, errs)
	}
	for _, tc := range [][]string{
		{"describe", "ID"},
		{"run", "ID"},
		{"show", "ID"},
		{"show", "ID@99"},
		{"delete", "ID"},
		{"delete", "--recursive", "ID"},
	} {
		name := strings.Join(tc, " ")
		t.Run(name, func(t *testing.T) {
			with := func(id string) []string {
				args := slices.Clone(tc)
				args[len(args)-1] = strings.Replace(args[len(args)-1], "ID", id, 1)
				return args
			}
			_, errs, code := cli(t, home, with(missing)...)
			want := with(missing)[len(tc)-1]
			if code != exitUsage || !strings.Contains(errs, `no capability "`+want+`"`) {
				t.Fatalf("unknown id: exit %d, want %d; stderr %q", code, exitUsage, errs)
			}
			if tc[0] != "describe" && tc[0] != "run" {
				return // show and delete are the administrator's views: nothing is hidden
			}
			_, herrs, hcode := cli(t, home, append(with(hidden), "--as", "other:bob:sales")...)
			if hcode != code || strings.ReplaceAll(herrs, hidden, missing) != errs {
				t.Fatalf("a hidden id reads otherwise than an unknown one: exit %d %q vs exit %d %q", hcode, herrs, code, errs)
			}
		})
	}
}
