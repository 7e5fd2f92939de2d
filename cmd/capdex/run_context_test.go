package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCLIRunIncompatible: capdex run refuses an action made for another OS with the
// reason code incompatible and a failing exit status; the action never runs.
func TestCLIRunIncompatible(t *testing.T) {
	home := t.TempDir()
	other := "windows"
	if runtime.GOOS == "windows" {
		other = "linux"
	}
	def := `- {pack_id: ctxdemo, version: 1, resource_type: pack, title: Context demo, owner: test, status: active, acl: {discover: ["*"], describe: ["*"], execute: ["*"]}}
- action_id: ctxdemo.other_os_echo
  version: 1
  resource_type: action
  title: Echo on another OS
  summary: Echoes its message, on another OS only.
  when_to_use: [testing the run's context check]
  supported_os: [` + other + `]
  side_effect: R
  risk_level: low
  owner: test
  status: active
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
`
	dir := filepath.Join(t.TempDir(), "reg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, home, "import", dir); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	out, errs, code := cli(t, home, "run", "ctxdemo.other_os_echo", "--args", `{"message":"hi"}`)
	if code == 0 || !strings.Contains(out, "refused (incompatible)") || !strings.Contains(out, "supported_os") || strings.Contains(out, `"hi"`) {
		t.Errorf("run: exit %d\n%s%s", code, out, errs)
	}
}

// TestCLISearchMatch: capdex search --match filters by next_step, says which filter
// emptied an answer, and refuses unknown fields and values naming them.
func TestCLISearchMatch(t *testing.T) {
	home := t.TempDir()
	var resp struct {
		Matches []struct {
			ResourceID string `json:"resource_id"`
		}
	}
	cliJSON(t, home, &resp, "search", "--match", `{"next_step":"call_mcp"}`, "--limit", "10", "检查一下这张发票")
	if len(resp.Matches) != 1 || resp.Matches[0].ResourceID != "reimbursement.invoice.verify" {
		t.Errorf("--match next_step call_mcp: %+v", resp.Matches)
	}
	out, _, code := cli(t, home, "search", "--match", `{"domain":"finance","next_step":"delegate_agent"}`, "发票")
	if code != 0 || !strings.Contains(out, `because: match.domain "finance"`) {
		t.Errorf("emptied: exit %d\n%s", code, out)
	}
	for _, bad := range []struct{ match, says string }{
		{`{"next":"run_rule"}`, "--match"},
		{`{"next_step":"run_rules"}`, "match.next_step"},
	} {
		out, errs, code := cli(t, home, "search", "--match", bad.match, "发票")
		if code != 2 || !strings.Contains(errs, bad.says) {
			t.Errorf("--match %s: exit %d %s%s", bad.match, code, out, errs)
		}
	}
}
