package engine

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestReopenAfterKillBeforeClose stores a change and stops the process's store without
// Engine.Close (a process killed between a registry change and Close): the state stored
// is that of the generation before the change, which the reopen must not load; it
// rebuilds, says so, and answers as a full build.
func TestReopenAfterKillBeforeClose(t *testing.T) {
	ctx := context.Background()
	opts := Options{Dir: t.TempDir(), Seed: testcat.GenerateCatalog(150, 3), NoSync: true}
	e, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	before := e.Generation()
	d := e.Snapshot().Caps[9].Clone()
	d.Version++
	d.Eff = nil
	d.Summary = "zqkilled a summary no capability had"
	if err := e.Put(ctx, d, "test"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Close(); err != nil { // killed: nothing more is written
		t.Fatal(err)
	}
	_ = e.Close() // the rest of the engine's goroutines; its writes fail on the closed store
	var log logBuffer
	o := opts
	o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e, err = Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Generation() != before+1 {
		t.Fatalf("generation %d, want %d", e.Generation(), before+1)
	}
	st := e.state.Load()
	if l := st.gen.Stats().Persist.Loaded; len(l) > 0 {
		t.Fatalf("the state of generation %d was loaded for generation %d: %v", before, before+1, l)
	}
	if want := fmt.Sprintf("persisted=%d", before); !strings.Contains(log.String(), "of another generation") || !strings.Contains(log.String(), want) {
		t.Fatalf("the log does not say the state is of generation %d:\n%s", before, log.String())
	}
	rcs := []registry.RuntimeContext{{Tenant: "default", User: "u", Scopes: []string{"*", "admin"}}}
	queries := []string{"zqkilled a summary", d.Title, d.ID}
	got := rankings(t, e, st, queries, rcs)
	want := rankings(t, e, fullState(t, e), queries, rcs)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the reopen\n%v\nbuilt\n%v", got, want)
	}
	if !strings.Contains(got[0], d.ID) {
		t.Fatalf("the changed summary is not found: %s", got[0])
	}
}
