package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// withSecretEcho returns the built-in registry with demo.echo discoverable, describable and
// runnable by the "ops" scope only.
func withSecretEcho(t *testing.T) []*registry.Capability {
	t.Helper()
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if c.ID == "demo.echo" {
			c.ACL = registry.ACL{Discover: []string{"ops"}, Describe: []string{"ops"}, Execute: []string{"ops"}}
		}
	}
	return caps
}

// succeedOnce plays one session of rc: search q, describe id, run it with args.
func succeedOnce(t *testing.T, e *engine.Engine, rc registry.RuntimeContext, q, id, args string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Search(ctx, registry.SearchRequest{Query: q}, rc); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Describe(ctx, id, rc); err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(ctx, engine.RunRequest{ID: id, Arguments: json.RawMessage(args)}, rc)
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("run %s: %+v %v", id, res, err)
	}
}

func historyIDs(t *testing.T, e *engine.Engine, q string, rc registry.RuntimeContext) []string {
	t.Helper()
	caps, err := e.Probe(context.Background(), "history", registry.SearchRequest{Query: q}, rc)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range caps {
		out = append(out, c.ID)
	}
	return out
}

// TestFeedbackSessionFunnel: search → describe → run through the engine is one session's
// funnel, and the next caller of the tenant who searches alike gets the vote.
func TestFeedbackSessionFunnel(t *testing.T) {
	e := open(t, engine.Options{})
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	succeedOnce(t, e, dev, "echo the greeting word banana", "demo.echo", `{"message":"hi"}`)
	f, err := e.Stats(dev)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" })
	if i < 0 || f.Capabilities[i] != (engine.CapabilityFunnel{ResourceID: "demo.echo", Searched: 1, Described: 1, Ran: 1, Succeeded: 1}) {
		t.Fatalf("funnel %+v", f)
	}
	if f.SearchToDescribe != 1 || f.DescribeToRun != 1 || f.RunSuccess != 1 {
		t.Fatalf("rates %+v", f)
	}
	bob := registry.RuntimeContext{Tenant: "default", User: "bob", Session: "b1", Scopes: []string{"dev"}, OS: "linux"}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "echo the greeting word", Explain: true}, bob)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range resp.Matches {
		for _, ev := range m.Explain.Evidence {
			if ev.Retriever == "history" && m.ResourceID == "demo.echo" {
				found = slices.Equal(ev.Matched, []string{"1 past successful session"})
			}
		}
	}
	if !found {
		t.Fatalf("bob's search has no history evidence naming 1 past session for demo.echo: %+v", resp.Matches)
	}
	if b, _ := json.Marshal(resp); strings.Contains(string(b), "banana") {
		t.Fatalf("bob's answer shows alice's query: %s", b)
	}
	// another tenant learns nothing from the default tenant
	acme := registry.RuntimeContext{Tenant: "acme", User: "carol", Session: "c1", Scopes: []string{"dev"}, OS: "linux"}
	if got := historyIDs(t, e, "echo the greeting word banana", acme); len(got) != 0 {
		t.Fatalf("tenant acme gets the default tenant's votes: %v", got)
	}
	if f, _ := e.Stats(acme); len(f.Capabilities) != 0 {
		t.Fatalf("tenant acme sees the default tenant's funnel: %+v", f)
	}
}

// TestFeedbackNeverRevealsHidden: a capability the caller may not discover gets no vote, no
// funnel row and no outcome from it, however often others of the tenant succeeded with it.
func TestFeedbackNeverRevealsHidden(t *testing.T) {
	e := open(t, engine.Options{Seed: withSecretEcho(t)})
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	q := "echo the greeting word"
	for i := range 5 {
		ops := registry.RuntimeContext{Tenant: "default", User: fmt.Sprint("op", i), Session: fmt.Sprint("o", i), Scopes: []string{"ops"}, OS: "linux"}
		succeedOnce(t, e, ops, q, "demo.echo", `{"message":"hi"}`)
	}
	ops := registry.RuntimeContext{Tenant: "default", User: "op9", Session: "o9", Scopes: []string{"ops"}, OS: "linux"}
	if got := historyIDs(t, e, q, ops); !slices.Contains(got, "demo.echo") {
		t.Fatalf("an ops caller gets no vote for demo.echo: %v", got)
	}
	if got := historyIDs(t, e, q, dev); slices.Contains(got, "demo.echo") {
		t.Fatalf("a dev caller gets a vote for a capability it may not discover: %v", got)
	}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Explain: true}, dev)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(resp); strings.Contains(string(b), "demo.echo") {
		t.Fatalf("a dev caller's answer names demo.echo: %s", b)
	}
	f, err := e.Stats(dev)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" }) {
		t.Fatalf("a dev caller's funnel lists demo.echo: %+v", f)
	}
	if _, err := e.ReportOutcome(context.Background(), "demo.echo", true, dev); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("ReportOutcome of a hidden capability: %v, want ErrNotFound", err)
	}
	if _, err := e.ReportOutcome(context.Background(), "demo.echo", true, registry.RuntimeContext{Tenant: "default", Scopes: []string{"ops"}}); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("ReportOutcome without a session: %v, want ErrInvalidRequest", err)
	}
}

// TestFeedbackIsWeak: however many users of the tenant ran something else after a search,
// it does not outrank what the query means.
func TestFeedbackIsWeak(t *testing.T) {
	e := open(t, engine.Options{})
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	q := "Codex 更新后还是旧版本，帮我检查并修好"
	for i := range 20 {
		u := registry.RuntimeContext{Tenant: "default", User: fmt.Sprint("u", i), Session: fmt.Sprint("s", i), Scopes: []string{"dev"}, OS: "linux"}
		succeedOnce(t, e, u, q, "demo.echo", `{"message":"hi"}`)
	}
	bob := registry.RuntimeContext{Tenant: "default", User: "bob", Session: "b1", Scopes: []string{"dev"}, OS: "linux"}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q}, bob)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(resp)
	if len(got) == 0 || got[0] != "maintenance.codex.diagnose" {
		t.Fatalf("20 users' votes for demo.echo changed the top answer: %v", got)
	}
	if i := slices.Index(got, "demo.echo"); i >= 0 && i < slices.Index(got, "maintenance.codex.diagnose") {
		t.Fatalf("demo.echo above diagnose: %v", got)
	}
}

// TestFeedbackStreamRecorded: a streamed search of a session is recorded once, at its final
// ranking; a search without a session is not recorded.
func TestFeedbackStreamRecorded(t *testing.T) {
	e := open(t, engine.Options{})
	ctx := context.Background()
	ch, err := e.SearchStream(ctx, registry.SearchRequest{Query: "echo the greeting word"}, dev)
	if err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	noSession := dev
	noSession.Session = ""
	if _, err := e.Search(ctx, registry.SearchRequest{Query: "echo the greeting word"}, noSession); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Describe(ctx, "demo.echo", dev); err != nil {
		t.Fatal(err)
	}
	f, err := e.Stats(dev)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" })
	if i < 0 || f.Capabilities[i].Searched != 1 || f.Capabilities[i].Described != 1 || f.SearchToDescribe != 1 {
		t.Fatalf("funnel after one streamed search and one without a session: %+v", f)
	}
}
