package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

func importOpenAI(t *testing.T, doc, source string) []*registry.Capability {
	t.Helper()
	return importOpenAIInto(t, doc, "myapp", source)
}

func importOpenAIInto(t *testing.T, doc, pack, source string) []*registry.Capability {
	t.Helper()
	caps, err := registry.ImportWith(strings.NewReader(doc), registry.ImportOptions{Format: registry.FormatOpenAI, Pack: pack, Source: source,
		ACL: registry.ACL{Discover: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	return caps
}

// TestImportRefresh re-imports a catalogue: what changed gets a new version, the rest is
// left alone, the same content under another file name changes nothing, and prune removes
// what the catalogue no longer holds.
func TestImportRefresh(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{Seed: []*registry.Capability{}})
	v1 := `[{"type":"function","function":{"name":"send_mail","description":"Send an email.","parameters":{"type":"object"}}},
	{"type":"function","function":{"name":"get_weather","description":"Weather now.","parameters":{"type":"object"}}}]`
	sum, err := e.ImportRefresh(ctx, importOpenAI(t, v1, "myapp"), "myapp", false, "t")
	if err != nil || len(sum.Created) != 3 {
		t.Fatalf("first import: %+v %v", sum, err)
	}
	sum, err = e.ImportRefresh(ctx, importOpenAI(t, v1, "myapp"), "myapp", false, "t")
	if err != nil || len(sum.Unchanged) != 3 || len(sum.Updated)+len(sum.Created) != 0 {
		t.Fatalf("same content again: %+v %v", sum, err)
	}
	v2 := strings.Replace(v1, "Weather now.", "The weather now, by city.", 1)
	sum, err = e.ImportRefresh(ctx, importOpenAI(t, v2, "myapp"), "myapp", false, "t")
	if err != nil || !slices.Equal(sum.Updated, []string{"myapp.get_weather"}) || len(sum.Unchanged) != 2 {
		t.Fatalf("one description changed: %+v %v", sum, err)
	}
	if c, err := e.Definition("myapp.get_weather", 0); err != nil || c.Version != 2 || c.Summary != "The weather now, by city." {
		t.Fatalf("updated definition: %+v %v", c, err)
	}
	v3 := `[{"type":"function","function":{"name":"get_weather","description":"The weather now, by city.","parameters":{"type":"object"}}}]`
	sum, err = e.ImportRefresh(ctx, importOpenAI(t, v3, "myapp"), "myapp", true, "t")
	if err != nil || !slices.Equal(sum.Removed, []string{"myapp.send_mail"}) {
		t.Fatalf("prune: %+v %v", sum, err)
	}
	if _, err := e.Definition("myapp.send_mail", 0); err == nil {
		t.Fatal("pruned capability still there")
	}
	// another source's capabilities are never pruned
	sum, err = e.ImportRefresh(ctx, importOpenAI(t, `[]`, "other"), "other", true, "t")
	if err != nil || len(sum.Removed) != 0 {
		t.Fatalf("prune of another source: %+v %v", sum, err)
	}
}

// TestImportRefreshKeepsOthersDefinitions: a catalogue imported into a pack that holds
// hand-written definitions joins the pack as it is and never overwrites an action it does
// not own; the refused import stores nothing.
func TestImportRefreshKeepsOthersDefinitions(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{})
	pack, err := e.Definition("maintenance.codex", 0)
	if err != nil {
		t.Fatal(err)
	}
	diag, err := e.Definition("maintenance.codex.diagnose", 0)
	if err != nil {
		t.Fatal(err)
	}
	gen := e.Generation()
	clash := `[{"type":"function","function":{"name":"diagnose","description":"Something else.","parameters":{"type":"object"}}},
	{"type":"function","function":{"name":"brand_new","description":"New.","parameters":{"type":"object"}}}]`
	_, err = e.ImportRefresh(ctx, importOpenAIInto(t, clash, "maintenance.codex", "maintenance.codex"), "maintenance.codex", false, "t")
	if !errors.Is(err, engine.ErrInvalidRequest) || !strings.Contains(err.Error(), "maintenance.codex.diagnose") {
		t.Fatalf("import over a hand-written action: %v", err)
	}
	if c, _ := e.Definition("maintenance.codex.diagnose", 0); c.Version != diag.Version || e.Generation() != gen {
		t.Fatalf("the refused import changed the store: diagnose v%d, generation %d → %d", c.Version, gen, e.Generation())
	}
	if _, err := e.Definition("maintenance.codex.brand_new", 0); err == nil {
		t.Fatal("the refused import stored brand_new")
	}
	ok := `[{"type":"function","function":{"name":"brand_new","description":"New.","parameters":{"type":"object"}}}]`
	if _, err := e.ImportRefresh(ctx, importOpenAIInto(t, ok, "maintenance.codex", "maintenance.codex"), "maintenance.codex", true, "t"); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.Definition("maintenance.codex", 0); c.Version != pack.Version || c.Title != pack.Title {
		t.Fatalf("the import rewrote the hand-written pack: v%d %q", c.Version, c.Title)
	}
	if _, err := e.Definition("maintenance.codex.brand_new", 0); err != nil {
		t.Fatalf("the tool did not join the pack: %v", err)
	}
}

// TestImportRefreshPruneAllOrNothing: a pruning refresh whose deletions would break the
// registry (here the pack that the new tools live under is pruned) is refused as one
// change: the new versions are not stored either, the generation, the audit trail and the
// search results stay as they were.
func TestImportRefreshPruneAllOrNothing(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{Seed: []*registry.Capability{}})
	v1 := `[{"type":"function","function":{"name":"send_mail","description":"Send an email to a colleague.","parameters":{"type":"object"}}}]`
	if _, err := e.ImportRefresh(ctx, importOpenAIInto(t, v1, "myapp", "myapp"), "myapp", false, "t"); err != nil {
		t.Fatal(err)
	}
	search := func() []string {
		resp, err := e.Search(ctx, registry.SearchRequest{Query: "send an email", Limit: 5}, admin)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range resp.Matches {
			ids = append(ids, m.ResourceID)
		}
		return ids
	}
	gen, found := e.Generation(), search()
	audit, err := e.AuditTail(100)
	if err != nil {
		t.Fatal(err)
	}
	// A catalogue (as a caller of ImportRefresh may hand it) without its pack: the pruning
	// would delete myapp, the parent of the new definition.
	v2 := `[{"type":"function","function":{"name":"read_mail","description":"Read the inbox.","parameters":{"type":"object"}}}]`
	caps := slices.DeleteFunc(importOpenAIInto(t, v2, "myapp", "myapp"), func(c *registry.Capability) bool { return c.ID == "myapp" })
	_, err = e.ImportRefresh(ctx, caps, "myapp", true, "t")
	if !errors.Is(err, engine.ErrInvalidRequest) || !strings.Contains(err.Error(), `parent pack "myapp" not found`) {
		t.Fatalf("pruning the parent of the new definitions: %v", err)
	}
	if e.Generation() != gen {
		t.Fatalf("the refused refresh changed the generation: %d → %d", gen, e.Generation())
	}
	if _, err := e.Definition("myapp.read_mail", 0); err == nil {
		t.Fatal("the refused refresh stored myapp.read_mail")
	}
	for _, id := range []string{"myapp", "myapp.send_mail"} {
		if _, err := e.Definition(id, 0); err != nil {
			t.Fatalf("the refused refresh deleted %s: %v", id, err)
		}
	}
	if after, err := e.AuditTail(100); err != nil || len(after) != len(audit) {
		t.Fatalf("the refused refresh was audited: %d → %d records (%v)", len(audit), len(after), err)
	}
	if after := search(); !slices.Equal(after, found) {
		t.Fatalf("the refused refresh changed the search results: %v → %v", found, after)
	}
	// A pruning refresh that is valid is one generation with one audit record per change.
	v3 := `[{"type":"function","function":{"name":"read_mail","description":"Read the inbox.","parameters":{"type":"object"}}}]`
	sum, err := e.ImportRefresh(ctx, importOpenAIInto(t, v3, "myapp", "myapp"), "myapp", true, "t")
	if err != nil || !slices.Equal(sum.Removed, []string{"myapp.send_mail"}) || !slices.Equal(sum.Created, []string{"myapp.read_mail"}) {
		t.Fatalf("prune and create: %+v %v", sum, err)
	}
	if e.Generation() != gen+1 {
		t.Fatalf("one refresh, generation %d → %d", gen, e.Generation())
	}
	if after, err := e.AuditTail(100); err != nil || len(after) != len(audit)+2 {
		t.Fatalf("audit records: %d → %d (%v)", len(audit), len(after), err)
	}
}
