package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
)

// TestCLIStats: the CLI's searches, describes and runs are one session of the data
// directory's tenant, kept across processes, and capdex stats shows its funnel.
func TestCLIStats(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	for _, args := range [][]string{
		{"search", "echo a message"},
		{"describe", "demo.echo"},
		{"run", "demo.echo", "--args", `{"message":"hi"}`},
	} {
		if out, errs, code := cli(t, home, args...); code != 0 {
			t.Fatalf("capdex %v: exit %d: %s%s", args, code, errs, out)
		}
	}
	var f engine.Funnel
	cliJSON(t, home, &f, "stats")
	want := engine.CapabilityFunnel{ResourceID: "demo.echo", Searched: 1, Described: 1, Ran: 1, Succeeded: 1}
	if i := slices.IndexFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" }); i < 0 || f.Capabilities[i] != want || f.RunSuccess != 1 {
		t.Fatalf("stats %+v", f)
	}
	// another tenant's stats are empty
	var other engine.Funnel
	cliJSON(t, home, &other, "stats", "--as", "acme:bob:dev")
	if len(other.Capabilities) != 0 {
		t.Fatalf("tenant acme sees the default tenant's funnel: %+v", other)
	}
}

func TestCLIFeedbackFlags(t *testing.T) {
	home := t.TempDir()
	q := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(q, []byte(`{"qid":"a","query":"echo","relevant":["demo.echo"]}`+"\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"split without feedback", []string{"eval", "--tools", q, "--queries", q, "--split", "0"}, "--feedback"},
		{"bad half", []string{"eval", "--tools", q, "--queries", q, "--feedback", q, "--split", "2"}, "--split 2"},
		{"feedback with cases", []string{"eval", "--cases", q, "--feedback", q}, "--cases"},
		{"missing feedback file", []string{"eval", "--tools", q, "--queries", q, "--feedback", q + ".none"}, "--feedback"},
		{"stats with arguments", []string{"stats", "extra"}, "unexpected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := cli(t, home, tc.args...)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q: want %d mentioning %q", code, errs, exitUsage, tc.want)
			}
		})
	}
}
