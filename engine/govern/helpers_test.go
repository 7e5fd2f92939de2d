package govern

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// fakeStore implements AuditLog, TokenSpender, SecretStore and UseRecorder in memory with
// the store's atomic semantics: SpendToken checks and marks the id and appends the record
// under one lock.
type fakeStore struct {
	mu      sync.Mutex // guards everything below
	recs    []store.AuditRecord
	spent   map[string]bool
	secrets map[string][]byte
	uses    []string
	failAt  int // AppendAudit fails when len(recs)+1 == failAt (0: never)
}

func newFake() *fakeStore {
	return &fakeStore{spent: map[string]bool{}, secrets: map[string][]byte{}}
}

func (f *fakeStore) appendLocked(rec store.AuditRecord) (store.AuditRecord, error) {
	if f.failAt != 0 && len(f.recs)+1 == f.failAt {
		return store.AuditRecord{}, errors.New("disk full")
	}
	rec.Seq = uint64(len(f.recs) + 1)
	rec.Time = time.Now().UTC()
	if len(f.recs) > 0 {
		rec.Prev = f.recs[len(f.recs)-1].Hash
	}
	rec.Hash = fmt.Sprintf("h%d", rec.Seq)
	f.recs = append(f.recs, rec)
	return rec, nil
}

func (f *fakeStore) AppendAudit(_ context.Context, rec store.AuditRecord) (store.AuditRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appendLocked(rec)
}

func (f *fakeStore) SpendToken(_ context.Context, id string, _ time.Time, start store.AuditRecord) (store.AuditRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spent[id] {
		return store.AuditRecord{}, fmt.Errorf("%w: %s", store.ErrTokenSpent, id)
	}
	rec, err := f.appendLocked(start)
	if err != nil {
		return rec, err
	}
	f.spent[id] = true
	return rec, nil
}

func (f *fakeStore) Secret(name string, gen func() ([]byte, error)) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.secrets[name]; ok {
		return b, nil
	}
	b, err := gen()
	if err != nil {
		return nil, err
	}
	f.secrets[name] = b
	return b, nil
}

func (f *fakeStore) RecordUse(_ context.Context, user, project, id string, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uses = append(f.uses, user+"|"+project+"|"+id)
	return nil
}

func (f *fakeStore) records() []store.AuditRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.AuditRecord(nil), f.recs...)
}

// decisions lists the decisions of records after seq from.
func decisions(recs []store.AuditRecord, from int) []string {
	var out []string
	for _, r := range recs[from:] {
		out = append(out, r.Decision)
	}
	return out
}

// mutableDefs serves a snapshot that tests can replace (a new version: rug pull).
type mutableDefs struct {
	mu   sync.Mutex
	snap *registry.Snapshot
}

func (m *mutableDefs) load() *registry.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snap
}

func (m *mutableDefs) set(tb testing.TB, caps []*registry.Capability) {
	tb.Helper()
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		tb.Fatal(err)
	}
	m.mu.Lock()
	m.snap = snap
	m.mu.Unlock()
}

var allDev = registry.ACL{Discover: []string{"dev"}, Describe: []string{"dev"}, Execute: []string{"dev"}}

func obj(s string) json.RawMessage { return json.RawMessage(s) }

// testCaps is the registry the pipeline tests run against.
func testCaps() []*registry.Capability {
	f := false
	act := func(id string, mut func(c *registry.Capability)) *registry.Capability {
		c := &registry.Capability{ID: id, Version: 1, ResourceType: registry.TypeAction, Title: "Action " + id,
			SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow, Status: registry.StatusActive,
			NetworkPolicy: registry.NetworkNone, Owner: "test",
			ArgumentsSchema: obj(`{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer","minimum":0},"path":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
			OutputSchema:    obj(`{"type":"object"}`),
			Handler:         &registry.Handler{Kind: "go", Name: "echo"}}
		if mut != nil {
			mut(c)
		}
		return c
	}
	return []*registry.Capability{
		{ID: "t", Version: 1, ResourceType: registry.TypePack, Title: "Test pack", ACL: allDev, Status: registry.StatusActive},
		{ID: "u", Version: 1, ResourceType: registry.TypePack, Title: "Disabled pack", ACL: allDev, Enabled: &f},
		act("t.echo", nil),
		act("t.record", func(c *registry.Capability) { c.Handler.RecordArguments = true }),
		act("t.danger", func(c *registry.Capability) {
			c.Title = "Delete the thing"
			c.RequiresConfirmation = true
			c.SideEffect = registry.SideEffectWriteShared
			c.RiskLevel = registry.RiskHigh
			c.Handler.Name = "count"
		}),
		act("t.impact", func(c *registry.Capability) { c.SideEffect = registry.SideEffectImpact; c.Handler.Name = "count" }),
		act("t.other", func(c *registry.Capability) { c.RequiresConfirmation = true; c.Handler.Name = "count" }),
		{ID: "t.recipe", Version: 1, ResourceType: registry.TypeRecipe, Title: "How to", Status: registry.StatusActive,
			Steps: []registry.RecipeStep{{Title: "diagnose", Action: "t.echo"}, {Title: "fix", Command: "do it"}}},
		act("t.off", func(c *registry.Capability) { c.Status = registry.StatusOffline }),
		act("u.inside", nil),
		act("t.hidden", func(c *registry.Capability) {
			c.ACL = registry.ACL{Discover: []string{"ops"}, Describe: []string{"ops"}, Execute: []string{"ops"}}
		}),
		act("t.noexec", func(c *registry.Capability) {
			c.ACL = registry.ACL{Discover: []string{"dev"}, Describe: []string{"dev"}, Execute: []string{"ops"}}
		}),
		act("t.denied", func(c *registry.Capability) { c.ACL = allDev; c.ACL.Deny = []string{"user:ann"} }),
		act("t.nodescribe", func(c *registry.Capability) {
			c.ACL = registry.ACL{Discover: []string{"dev"}, Describe: []string{"ops"}, Execute: []string{"ops"}}
		}),
		act("t.tenant", func(c *registry.Capability) { c.Tenants = []string{"other"} }),
		act("t.fail", func(c *registry.Capability) { c.Handler.Name = "fail" }),
		act("t.badout", func(c *registry.Capability) {
			c.Handler.Name = "badout"
			c.OutputSchema = obj(`{"type":"object","properties":{"n":{"type":"integer"},"m":{"type":"string"}},"required":["n","m","k"]}`)
		}),
		act("t.badschema", func(c *registry.Capability) { c.ArgumentsSchema = obj(`{"type":"nonsense"}`) }),
		act("t.slow", func(c *registry.Capability) {
			c.Timeout = registry.Duration(500 * time.Millisecond)
			c.NetworkPolicy = registry.NetworkAny
			c.ArgumentsSchema = obj(`{"type":"object"}`)
			c.Handler = &registry.Handler{Kind: "exec", Shell: true, Argv: []string{`trap "" TERM; sleep 30`}}
		}),
		act("t.nohandler", func(c *registry.Capability) { c.Handler = &registry.Handler{Kind: "mcp"} }),
	}
}

// env is a Governor over testCaps with a counter behind the "count" function.
type env struct {
	g     *Governor
	defs  *mutableDefs
	fake  *fakeStore
	store *store.Store
	runs  *atomic.Int64
	now   *atomic.Int64 // unix nanos of the test clock
}

func (e *env) audit() []store.AuditRecord {
	if e.store != nil {
		recs, err := e.store.AuditTail(1 << 20)
		if err != nil {
			panic(err)
		}
		return recs
	}
	return e.fake.records()
}

type envOpt func(o *Options)

// newEnv builds a Governor; with real=true on an in-memory *store.Store, else on fakeStore.
func newEnv(tb testing.TB, real bool, opts ...envOpt) *env {
	tb.Helper()
	e := &env{defs: &mutableDefs{}, runs: &atomic.Int64{}, now: &atomic.Int64{}}
	e.now.Store(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	e.defs.set(tb, testCaps())
	funcs := map[string]handlers.GoFunc{
		"echo": func(ctx context.Context, args map[string]any) (any, error) { return args, nil },
		"count": func(ctx context.Context, args map[string]any) (any, error) {
			return map[string]int64{"runs": e.runs.Add(1)}, nil
		},
		"fail": func(ctx context.Context, args map[string]any) (any, error) { return nil, errors.New("it broke") },
		"badout": func(ctx context.Context, args map[string]any) (any, error) {
			return map[string]any{"n": "x", "m": 1}, nil
		},
	}
	o := Options{Definitions: FromSnapshot(e.defs.load), GoFuncs: funcs,
		Now: func() time.Time { return time.Unix(0, e.now.Load()) }}
	if real {
		st, err := store.Open(store.Options{InMemory: true})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close() })
		e.store = st
		o.Audit, o.Tokens, o.Secrets, o.History = st, st, st, st
	} else {
		e.fake = newFake()
		o.Audit, o.Tokens, o.Secrets, o.History = e.fake, e.fake, e.fake, e.fake
	}
	for _, f := range opts {
		f(&o)
	}
	g, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	e.g = g
	return e
}

func ann() *registry.RuntimeContext {
	return &registry.RuntimeContext{Tenant: "acme", User: "ann", Session: "s1", Project: "p", Scopes: []string{"dev"}}
}

func mustRun(tb testing.TB, e *env, rc *registry.RuntimeContext, req RunRequest) *RunResult {
	tb.Helper()
	res, err := e.g.Run(context.Background(), rc, req)
	if err != nil {
		tb.Fatalf("Run(%+v): %v", req, err)
	}
	return res
}
