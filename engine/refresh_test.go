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
