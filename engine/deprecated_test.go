package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// TestDeprecatedWarning: a deprecated capability carries a warning in its search match and
// in describe; an active one carries none.
func TestDeprecatedWarning(t *testing.T) {
	caps, err := registry.ImportWith(strings.NewReader(
		`{"id": "old_upload", "name": "old_upload", "description": "Upload a file to the archive over FTP"}`+"\n"+
			`{"id": "new_upload", "name": "new_upload", "description": "Upload a file to the archive store"}`+"\n"),
		registry.ImportOptions{Format: "jsonl", Pack: "files", Provider: "test", ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	var old string
	for _, c := range caps {
		if c.ExternalID == "old_upload" {
			c.Status, old = registry.StatusDeprecated, c.ID
		}
	}
	e := open(t, engine.Options{Seed: caps})
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "upload a file to the archive", Limit: 5}, dev)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range resp.Matches {
		deprecated := m.ResourceID == old
		if got := len(m.Warnings) > 0 && strings.Contains(m.Warnings[0], "deprecated"); got != deprecated {
			t.Errorf("%s: warnings %q", m.ResourceID, m.Warnings)
		}
		seen++
	}
	if seen < 2 {
		t.Fatalf("matches %+v", resp.Matches)
	}
	d, err := e.Describe(context.Background(), old, dev)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) == 0 {
		t.Error("describe of a deprecated capability has no warning")
	}
}
