package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// fullState builds the state a full rebuild of the store's registry gives (as Open does),
// without swapping it in.
func fullState(t *testing.T, e *Engine) *state {
	t.Helper()
	prev := e.state.Load()
	caps, gen, err := e.store.Active()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := registry.NewSnapshot(gen, caps)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.build(context.Background(), snap, false, nil); err != nil {
		t.Fatal(err)
	}
	full := e.state.Swap(prev)
	return full
}

// rankings are the answers of queries for callers on st.
func rankings(t *testing.T, e *Engine, st *state, queries []string, rcs []registry.RuntimeContext) []string {
	t.Helper()
	prev := e.state.Swap(st)
	defer e.state.Store(prev)
	var out []string
	for _, rc := range rcs {
		for _, q := range queries {
			resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Limit: 10, Explain: true}, rc)
			if err != nil {
				t.Fatal(err)
			}
			s := fmt.Sprintf("%q %s/%s %v partial=%v %v:", q, resp.Resolution, resp.Reason, resp.MissingInformation, resp.SearchMeta.Partial, resp.SearchMeta.TimedOutRetrievers)
			for _, m := range resp.Matches {
				s += fmt.Sprintf(" %d:%s:%s:%v:%v:%v:%v", m.Rank, m.ResourceID, m.Availability, m.Score, m.MatchedEntities, m.MatchedIntents, m.Explain)
			}
			out = append(out, s)
		}
	}
	return out
}

// TestIncrementalGenerationsSameAsRebuild applies random sequences of registry changes
// (new versions with changed text, new actions, deletions, status changes, health-only
// and enabled-only new versions) through the engine's incremental path and, after each
// one, compares the rankings of a set of queries for two callers with those of a full
// rebuild of the same registry. It also checks that availability-only changes share the
// text indexes and the query side with the generation before.
func TestIncrementalGenerationsSameAsRebuild(t *testing.T) {
	seqs, steps := 4, 16
	if testing.Short() {
		seqs, steps = 2, 8
	}
	ctx := context.Background()
	base := testcat.GenerateCatalog(1200, 1)
	rcs := []registry.RuntimeContext{
		{Tenant: "default", User: "u", Scopes: []string{"*", "admin"}},
		{Tenant: "default", User: "v", Scopes: []string{"dev"}},
	}
	r := rand.New(rand.NewPCG(20, 3))
	compared, ops, shared, lexShared, patched, semPatched, termsPatched, colPatched, availColPatched := 0, 0, 0, 0, 0, 0, 0, 0, 0
	// Deadlines no loaded host misses: a retriever that answers late makes a search partial,
	// which is not what is compared here.
	deadlines := map[string]time.Duration{}
	for _, name := range RetrieverNames() {
		deadlines[name] = time.Minute
	}
	for seq := range seqs {
		e, err := Open(ctx, Options{Seed: base, NoSync: true, Deadlines: deadlines})
		if err != nil {
			t.Fatal(err)
		}
		for step := range steps {
			snap := e.Snapshot()
			c := snap.Caps[r.IntN(snap.Len())]
			prev := e.state.Load()
			d := c.Clone()
			d.Version++
			var what string
			var err error
			availOnly, lexOnly := false, false
			switch op := r.IntN(10); op {
			case 7:
				what = "summary" // text the lexicon does not read: the lexicon is shared
				d.Summary += fmt.Sprintf(" zqsum%d now with receipts", step)
				err = e.Put(ctx, d, "test")
				lexOnly = true
			case 8:
				ms := testcat.Mutations(c)
				m := ms[r.IntN(len(ms))]
				what = "mutation of " + m.Field
				m.Cap.Version = c.Version + 1
				m.Cap.Eff = nil
				if err = e.Put(ctx, m.Cap, "test"); errors.Is(err, registry.ErrLint) {
					continue // a mutation the registry refuses changes nothing
				}
			case 9:
				what = "batch"
				var batch []*registry.Capability
				seen := map[string]bool{}
				for range 3 {
					x := snap.Caps[r.IntN(snap.Len())]
					if seen[x.ID] {
						continue
					}
					seen[x.ID] = true
					y := x.Clone()
					y.Version++
					y.Eff = nil
					y.WhenToUse = append(y.WhenToUse, fmt.Sprintf("when the ledger sweep %d stalls", step))
					y.Tags = append(y.Tags, "sweep")
					batch = append(batch, y)
				}
				err = e.Import(ctx, batch, "test")
			case 0:
				what = "status"
				st := []registry.Status{registry.StatusActive, registry.StatusDeprecated, registry.StatusOffline}[r.IntN(3)]
				if st == c.Status {
					st = registry.StatusDeprecated
					if c.Status == st {
						st = registry.StatusActive
					}
				}
				err = e.SetStatus(ctx, c.ID, st, "test")
				availOnly = true
			case 1:
				what = "health"
				d.Health = registry.Health{Status: []string{"up", "degraded", "down"}[r.IntN(3)], Message: "probe"}
				err = e.Put(ctx, d, "test")
				availOnly = true
			case 2:
				what = "enabled"
				on := c.Enabled != nil && !*c.Enabled
				d.Enabled = &on
				if d.ResourceType != registry.TypePack {
					d.Enabled = nil
					d.Health.Status = "degraded"
				}
				err = e.Put(ctx, d, "test")
				availOnly = true
			case 3:
				what = "delete"
				if lo, hi := e.state.Load().gen.Descendants(c.ID); c.ResourceType == registry.TypePack && hi > lo+1 {
					what = "text"
					d.Summary += " rewritten for a new audience"
					err = e.Put(ctx, d, "test")
					break
				}
				err = e.Delete(ctx, c.ID, "test")
			case 4:
				what = "new"
				p := snap.Caps[r.IntN(snap.Len())]
				if p.ResourceType != registry.TypePack {
					p, _ = snap.Get(registry.Parent(p.ID))
				}
				if p == nil {
					continue
				}
				n := testcat.GenerateCatalog(3, int64(seq*100+step))[2].Clone()
				n.ID = fmt.Sprintf("%s.added_%d_%d", p.ID, seq, step)
				n.Version = 1
				n.Eff = nil
				err = e.Put(ctx, n, "test")
			default:
				what = "text"
				d.Aliases = append(d.Aliases, fmt.Sprintf("quarterly ledger sweep %d", step))
				d.Summary += " Also reconciles the ledger."
				err = e.Put(ctx, d, "test")
			}
			if err != nil {
				t.Fatalf("sequence %d step %d (%s of %s): %v", seq, step, what, c.ID, err)
			}
			ops++
			cur := e.state.Load()
			if availOnly {
				if cur.lex != prev.lex {
					t.Errorf("sequence %d step %d: the %s change of %s rebuilt the text side", seq, step, what, c.ID)
				}
				shared++
			}
			if lexOnly {
				if cur.lex != prev.lex {
					t.Errorf("sequence %d step %d: the summary change of %s rebuilt the lexicon", seq, step, c.ID)
				}
				lexShared++
			}
			queries := []string{"send a notification to the team", "refund", "reconcile the ledger", "quarterly ledger sweep",
				"zqmutated words", "receipts for the ledger sweep stalls"}
			for range 6 {
				q := cur.gen.Snapshot().Caps[r.IntN(cur.gen.Len())]
				queries = append(queries, q.Title)
			}
			got := rankings(t, e, cur, queries, rcs)
			want := rankings(t, e, fullState(t, e), queries, rcs)
			if !reflect.DeepEqual(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("sequence %d step %d (%s of %s): incremental\n%s\nfull rebuild\n%s", seq, step, what, c.ID, got[i], want[i])
					}
				}
			}
			compared += len(got)
			if !availOnly && cur.gen.Stats().LexicalPatched {
				patched++
			}
			if !availOnly && cur.gen.Stats().SemanticPatched {
				semPatched++
			}
			if !availOnly && cur.terms.Patched() {
				termsPatched++
			}
			if cur.gen.Stats().ColumnsPatched {
				if colPatched++; availOnly {
					availColPatched++
				}
			}
		}
		e.Close()
	}
	if patched == 0 || semPatched == 0 {
		t.Errorf("%d changes patched the lexical index and %d the semantic one: want some of each", patched, semPatched)
	}
	if termsPatched == 0 {
		t.Error("no change patched the term cache")
	}
	if availColPatched == 0 || colPatched == availColPatched {
		t.Errorf("%d changes patched the column view and pre-filter, %d of them availability-only: want some of each kind", colPatched, availColPatched)
	}
	t.Logf("%d sequences, %d operations (%d availability-only, %d sharing the lexicon, %d patching the lexical index, %d the semantic one, %d the term cache, %d the column view (%d availability-only)), %d rankings compared",
		seqs, ops, shared, lexShared, patched, semPatched, termsPatched, colPatched, availColPatched, compared)
}

// TestImportRepeatedNewIDSameError checks that an import naming a new id twice fails as it
// did before the incremental lint: the store refuses the duplicate (registry.ErrDuplicateID),
// and the lint does not report it as a lint error of its own.
func TestImportRepeatedNewIDSameError(t *testing.T) {
	ctx := context.Background()
	e, act := openWithAction(t)
	var err error
	n := act.Clone()
	n.ID = registry.Parent(act.ID) + ".twice"
	n.Version = 1
	err = e.Import(ctx, []*registry.Capability{n, n.Clone()}, "test")
	if !errors.Is(err, registry.ErrDuplicateID) || errors.Is(err, registry.ErrLint) {
		t.Fatalf("import of one new id twice: %v, want the store's duplicate-id error", err)
	}
}

// TestReopenAfterChangesRestoresColumns checks that a store closed after registry changes
// (which do not write the column snapshot themselves) reopens with its column view restored
// from the snapshot Close kept, not rebuilt.
func TestReopenAfterChangesRestoresColumns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, Seed: testcat.GenerateCatalog(200, 1), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Snapshot().Caps[5]
	if err := e.SetStatus(ctx, c.ID, registry.StatusDeprecated, "test"); err != nil {
		t.Fatal(err)
	}
	d := e.Snapshot().Caps[7].Clone()
	d.Version++
	d.Summary += " once more"
	if err := e.Put(ctx, d, "test"); err != nil {
		t.Fatal(err)
	}
	gen := e.Generation()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Generation() != gen {
		t.Fatalf("reopened at generation %d, want %d", e.Generation(), gen)
	}
	if !e.state.Load().gen.ColumnRestored() {
		t.Error("the reopened engine rebuilt its column view")
	}
}
