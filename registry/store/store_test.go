package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/capdex/capdex/registry"
)

// assertAllSet fails for every zero field reachable from v (the computed Eff excepted), so a
// field added to registry.Capability without a value in fullCap is noticed.
func assertAllSet(tb testing.TB, v reflect.Value, path string) {
	tb.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			tb.Errorf("%s is nil", path)
			return
		}
		assertAllSet(tb, v.Elem(), path)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.Name == "Eff" {
				continue
			}
			assertAllSet(tb, v.Field(i), path+"."+f.Name)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			tb.Errorf("%s is empty", path)
		}
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := 0; i < v.Len(); i++ {
				assertAllSet(tb, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case reflect.Bool:
		// Enabled is a *bool set to false on purpose; plain bools must be true.
		if !v.Bool() && !strings.HasSuffix(path, ".Enabled") {
			tb.Errorf("%s is false", path)
		}
	default:
		if v.IsZero() {
			tb.Errorf("%s is zero", path)
		}
	}
}

// compactRaw returns c with its JSON schemas and example arguments compacted, as the store
// keeps them.
func compactRaw(tb testing.TB, c *registry.Capability) *registry.Capability {
	tb.Helper()
	out := *c
	compact := func(m json.RawMessage) json.RawMessage {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		if err := enc.Encode(m); err != nil {
			tb.Fatal(err)
		}
		return json.RawMessage(strings.TrimSpace(b.String()))
	}
	out.ArgumentsSchema = compact(c.ArgumentsSchema)
	out.OutputSchema = compact(c.OutputSchema)
	out.Examples = nil
	for _, e := range c.Examples {
		e.Arguments = compact(e.Arguments)
		out.Examples = append(out.Examples, e)
	}
	return &out
}

func TestRoundTripEveryField(t *testing.T) {
	want := fullCap()
	assertAllSet(t, reflect.ValueOf(want), "Capability")
	for _, tc := range []struct {
		name string
		dir  bool
	}{{"in-memory", false}, {"on-disk-reopened", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := ""
			if tc.dir {
				dir = t.TempDir()
			}
			s := openT(t, dir)
			if err := s.Put(ctx, fullCap(), "alice"); err != nil {
				t.Fatal(err)
			}
			if tc.dir {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s = openT(t, dir)
			}
			exp := compactRaw(t, want)
			for _, v := range []int{0, 3} {
				got, err := s.Get(want.ID, v)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, exp) {
					gj, _ := json.Marshal(got)
					wj, _ := json.Marshal(exp)
					t.Fatalf("Get(%d) differs:\n got %s\nwant %s", v, gj, wj)
				}
			}
			all, gen, err := s.Active()
			if err != nil || len(all) != 1 || gen != 1 || !reflect.DeepEqual(all[0], exp) {
				t.Fatalf("Active = %d caps, gen %d, err %v", len(all), gen, err)
			}
			// The schema digest is computed by the store, whatever the caller sent.
			stale := fullCap()
			stale.ID, stale.Provenance.SchemaDigest = "maintenance.codex.other", "sha256:00ff"
			if err := s.Put(ctx, stale, "alice"); err != nil {
				t.Fatal(err)
			}
			if c, err := s.Get(stale.ID, 0); err != nil || c.Provenance.SchemaDigest != registry.Digest(stale) {
				t.Fatalf("stored digest %q, want %q (%v)", c.Provenance.SchemaDigest, registry.Digest(stale), err)
			}
			// Putting the same definition again, schemas re-indented, is a no-op.
			again := fullCap()
			again.ArgumentsSchema = json.RawMessage(`{"additionalProperties":false,"properties":{"include_shell_resolution":{"default":true,"type":"boolean"}},"type":"object"}`)
			if err := s.Put(ctx, again, "bob"); err != nil {
				t.Fatalf("identical re-put: %v", err)
			}
			if s.Generation() != 2 {
				t.Fatalf("identical re-put changed the generation to %d", s.Generation())
			}
		})
	}
}

func TestVersionRules(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		put     *registry.Capability
		wantErr error
		wantGen uint64 // generation after the step
		wantVer int    // active version after the step
		wantTit string
	}{
		{"create", titled("a.b", 2, "one"), nil, 1, 2, "one"},
		{"identical is a no-op", titled("a.b", 2, "one"), nil, 1, 2, "one"},
		{"changed without bump", titled("a.b", 2, "two"), ErrNoVersionBump, 1, 2, "one"},
		{"older version", titled("a.b", 1, "zero"), ErrStaleVersion, 1, 2, "one"},
		{"new version", titled("a.b", 3, "three"), nil, 2, 3, "three"},
		{"skip versions", titled("a.b", 7, "seven"), nil, 3, 7, "seven"},
		{"bad id", titled("A.b", 1, "x"), ErrInvalid, 3, 7, "seven"},
		{"version zero", titled("a.c", 0, "x"), ErrInvalid, 3, 7, "seven"},
	}
	s := openT(t, "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Put(ctx, tc.put, "alice")
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Put = %v, want %v", err, tc.wantErr)
			}
			if g := s.Generation(); g != tc.wantGen {
				t.Errorf("generation %d, want %d", g, tc.wantGen)
			}
			c, err := s.Get("a.b", 0)
			if err != nil || c.Version != tc.wantVer || c.Title != tc.wantTit {
				t.Errorf("active = %+v, %v; want version %d %q", c, err, tc.wantVer, tc.wantTit)
			}
		})
	}
	t.Run("old versions stay readable", func(t *testing.T) {
		for v, title := range map[int]string{2: "one", 3: "three", 7: "seven"} {
			c, err := s.Get("a.b", v)
			if err != nil || c.Title != title {
				t.Errorf("Get(a.b, %d) = %v, %v", v, c, err)
			}
		}
		for _, v := range []int{1, 4, 8} {
			if _, err := s.Get("a.b", v); !errors.Is(err, ErrNotFound) || !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("Get(a.b, %d) = %v, want ErrNotFound", v, err)
			}
		}
	})
	t.Run("audit", func(t *testing.T) {
		recs, err := s.AuditTail(100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%s %s@%d %s", r.Actor, r.Action, r.Version, r.Decision))
		}
		want := []string{"alice a.b@2 created", "alice a.b@3 updated", "alice a.b@7 updated"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("audit = %q, want %q", got, want)
		}
	})
}

func TestStatusDeleteList(t *testing.T) {
	ctx := context.Background()
	s := openT(t, "")
	for _, id := range []string{"m", "m.codex", "m.codex.diagnose", "m.codex.update", "m.codex2", "n.x"} {
		if err := s.Put(ctx, titled(id, 1, id), "lead"); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(caps []*registry.Capability) []string {
		var out []string
		for _, c := range caps {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name, prefix string
		want         []string
	}{
		{"all", "", []string{"m", "m.codex", "m.codex.diagnose", "m.codex.update", "m.codex2", "n.x"}},
		{"subtree", "m.codex", []string{"m.codex", "m.codex.diagnose", "m.codex.update"}},
		{"trailing dot", "m.codex.", []string{"m.codex", "m.codex.diagnose", "m.codex.update"}},
		{"leaf", "n.x", []string{"n.x"}},
		{"none", "zz", nil},
	} {
		t.Run("list "+tc.name, func(t *testing.T) {
			caps, err := s.List(tc.prefix)
			if err != nil || !reflect.DeepEqual(ids(caps), tc.want) {
				t.Errorf("List(%q) = %q, %v; want %q", tc.prefix, ids(caps), err, tc.want)
			}
		})
	}
	t.Run("status", func(t *testing.T) {
		g := s.Generation()
		if err := s.SetStatus(ctx, "m.codex.update", registry.StatusOffline, "ops"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStatus(ctx, "m.codex.update", registry.StatusOffline, "ops"); err != nil {
			t.Fatal(err)
		}
		if s.Generation() != g+1 {
			t.Errorf("generation %d, want %d (a repeated status is a no-op)", s.Generation(), g+1)
		}
		c, err := s.Get("m.codex.update", 0)
		if err != nil || c.Status != registry.StatusOffline {
			t.Fatalf("status = %v, %v", c, err)
		}
		caps, _, _ := s.Active()
		for _, c := range caps {
			if c.ID == "m.codex.update" && c.Status != registry.StatusOffline {
				t.Errorf("Active status %q", c.Status)
			}
		}
		// The same definition again keeps the override; a new version drops it.
		if err := s.Put(ctx, titled("m.codex.update", 1, "m.codex.update"), "lead"); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.Get("m.codex.update", 0); c.Status != registry.StatusOffline {
			t.Errorf("identical put reset status to %q", c.Status)
		}
		if err := s.Put(ctx, titled("m.codex.update", 2, "v2"), "lead"); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.Get("m.codex.update", 0); c.Status != registry.StatusActive {
			t.Errorf("new version status %q", c.Status)
		}
		for _, bad := range []struct {
			id string
			st registry.Status
			e  error
		}{{"m.codex.update", "broken", ErrInvalid}, {"no.such", registry.StatusOffline, ErrNotFound}} {
			if err := s.SetStatus(ctx, bad.id, bad.st, "ops"); !errors.Is(err, bad.e) {
				t.Errorf("SetStatus(%s, %s) = %v, want %v", bad.id, bad.st, err, bad.e)
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := s.Delete(ctx, "m.codex.diagnose", "ops"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "m.codex.diagnose", "ops"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete = %v", err)
		}
		if _, err := s.Get("m.codex.diagnose", 1); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get after delete = %v", err)
		}
		caps, _ := s.List("m.codex")
		if got := ids(caps); !reflect.DeepEqual(got, []string{"m.codex", "m.codex.update"}) {
			t.Errorf("List after delete = %q", got)
		}
		if err := s.Create(ctx, titled("m.codex.diagnose", 1, "changed"), "ops"); !errors.Is(err, ErrNoVersionBump) {
			t.Errorf("re-create with a changed definition at the old version = %v", err)
		}
		if err := s.Create(ctx, titled("m.codex.diagnose", 1, "m.codex.diagnose"), "ops"); err != nil {
			t.Errorf("restore = %v", err)
		}
		if c, err := s.Get("m.codex.diagnose", 0); err != nil || c.Version != 1 {
			t.Errorf("restored = %v, %v", c, err)
		}
		if n, err := s.VerifyAudit(); err != nil || n != 10 {
			t.Errorf("VerifyAudit = %d, %v; want 10 records", n, err)
		}
	})
}

func TestPutAll(t *testing.T) {
	ctx := context.Background()
	s := openT(t, "")
	if err := s.PutAll(ctx, []*registry.Capability{titled("a.x", 2, "x"), titled("a.y", 1, "y")}, "imp"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		caps    []*registry.Capability
		wantErr []error
	}{
		{"duplicate id", []*registry.Capability{titled("a.z", 1, "z"), titled("a.z", 1, "z")}, []error{ErrInvalid, registry.ErrDuplicateID}},
		{"stale and no bump together", []*registry.Capability{titled("a.new", 1, "n"), titled("a.x", 1, "x"), titled("a.y", 1, "changed")}, []error{ErrStaleVersion, ErrNoVersionBump}},
		{"nil", []*registry.Capability{nil}, []error{ErrInvalid}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.PutAll(ctx, tc.caps, "imp")
			for _, w := range tc.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("PutAll = %v, want %v", err, w)
				}
			}
			if s.Generation() != 1 {
				t.Errorf("a refused import changed the generation")
			}
			if caps, _, _ := s.Active(); len(caps) != 2 {
				t.Errorf("a refused import wrote: %d caps", len(caps))
			}
		})
	}
	big := 2000 // about 3 MB with the audit records: more than one 1.2 MB transaction
	if raceOn {
		big = 1000
	}
	t.Run("large import is atomic and staged", func(t *testing.T) {
		caps := importBatch(big, 1)
		if err := s.PutAll(ctx, caps, "imp"); err != nil {
			t.Fatal(err)
		}
		if s.staged.Load() != 1 {
			t.Fatalf("an import of %d definitions was not staged", len(caps))
		}
		checkNoResidue(t, s)
		all, gen, err := s.Active()
		if err != nil || len(all) != 2+len(caps) || gen != 2 {
			t.Fatalf("after import: %d caps, gen %d, %v", len(all), gen, err)
		}
		for _, c := range caps {
			if got, err := s.Get(c.ID, 0); err != nil || got.Title != c.Title {
				t.Fatalf("Get(%s) = %v, %v", c.ID, got, err)
			}
		}
		if n, err := s.VerifyAudit(); err != nil || n != 2+len(caps) {
			t.Fatalf("VerifyAudit = %d, %v", n, err)
		}
		// Same import again: nothing changes.
		if err := s.PutAll(ctx, caps, "imp"); err != nil || s.Generation() != 2 {
			t.Fatalf("repeat import: %v, gen %d", err, s.Generation())
		}
		// Next versions of all: old pointers are cleaned up.
		if err := s.PutAll(ctx, importBatch(big, 2)[:big], "imp"); err != nil {
			t.Fatal(err)
		}
		checkNoResidue(t, s)
		c, err := s.Get("bulk.p3.c3", 0)
		if err != nil || c.Version != 3 {
			t.Fatalf("Get after second import = %v, %v", c, err)
		}
	})
	for _, tc := range []struct {
		name    string
		failAt  int // definitions staged when the import fails
		wantErr error
		cancel  bool
	}{
		{"cancelled at the start of staging", 0, context.Canceled, true},
		{"cancelled midway", big / 2, context.Canceled, true},
		{"write error midway", big / 2, errDisk, false},
		{"write error at the end", big - big%128, errDisk, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s.stageHook = func(n int) error {
				if n < tc.failAt {
					return nil
				}
				if tc.cancel {
					cancel()
					return nil
				}
				return errDisk
			}
			defer func() { s.stageHook = nil }()
			gen, staged := s.Generation(), s.staged.Load()
			before := activeVersions(t, s)
			err := s.PutAll(cctx, importBatch(big, 9), "imp")
			if !errors.Is(err, tc.wantErr) || s.staged.Load() != staged+1 {
				t.Fatalf("PutAll = %v, want %v after staging", err, tc.wantErr)
			}
			checkNoResidue(t, s)
			if after := activeVersions(t, s); !reflect.DeepEqual(after, before) || s.Generation() != gen {
				t.Fatalf("a failed import changed the registry: %d → %d ids, gen %d → %d", len(before), len(after), gen, s.Generation())
			}
			if _, err := s.VerifyAudit(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("the next import after a failed one", func(t *testing.T) {
		if err := s.PutAll(ctx, importBatch(big, 9), "imp"); err != nil {
			t.Fatal(err)
		}
		checkNoResidue(t, s)
		if c, err := s.Get("bulk.p1.c1", 0); err != nil || c.Version != 10 {
			t.Fatalf("Get = %v, %v", c, err)
		}
	})
}

var errDisk = errors.New("disk on fire")

func TestConcurrentCreates(t *testing.T) {
	const n = 64
	ctx := context.Background()
	run := func(t *testing.T, f func(i int) error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = f(i)
			}()
		}
		close(start)
		wg.Wait()
		return errs
	}
	cases := []struct {
		name  string
		op    func(s *Store, i int) error
		loser error
	}{
		{"create", func(s *Store, i int) error {
			return s.Create(ctx, titled("race.one", 1, fmt.Sprint("title ", i)), fmt.Sprint("u", i))
		}, ErrExists},
		{"put same version", func(s *Store, i int) error {
			return s.Put(ctx, titled("race.one", 1, fmt.Sprint("title ", i)), fmt.Sprint("u", i))
		}, ErrNoVersionBump},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t, t.TempDir())
			errs := run(t, func(i int) error { return tc.op(s, i) })
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("two winners: %d and %d", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, tc.loser):
					t.Errorf("loser %d: %v, want %v", i, err, tc.loser)
				}
			}
			if winner < 0 {
				t.Fatal("no winner")
			}
			c, err := s.Get("race.one", 0)
			if err != nil || c.Title != fmt.Sprint("title ", winner) {
				t.Fatalf("stored %v, %v; winner %d", c, err, winner)
			}
			recs, _ := s.AuditTail(n)
			if len(recs) != 1 || recs[0].Actor != fmt.Sprint("u", winner) {
				t.Fatalf("audit %+v", recs)
			}
		})
	}
	t.Run("racing versions", func(t *testing.T) {
		s := openT(t, "")
		errs := run(t, func(i int) error { return s.Put(ctx, titled("race.v", i+1, "t"), "u") })
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if !errors.Is(err, ErrStaleVersion) {
				t.Errorf("unexpected %v", err)
			}
		}
		if c, err := s.Get("race.v", 0); err != nil || c.Version != n {
			t.Fatalf("active %v %v", c, err)
		}
		if got, err := s.VerifyAudit(); err != nil || got != ok || s.Generation() != uint64(ok) {
			t.Fatalf("%d records, %v; %d puts succeeded, gen %d", got, err, ok, s.Generation())
		}
	})
}

func TestLocked(t *testing.T) {
	t.Run("same process", func(t *testing.T) {
		dir := t.TempDir()
		openT(t, dir)
		start := time.Now()
		_, err := Open(Options{Dir: dir})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("second Open = %v, want ErrLocked naming %s", err, dir)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("ErrLocked took %v", d)
		}
	})
	t.Run("other process", func(t *testing.T) {
		dir := t.TempDir()
		cmd, _ := startHelper(t, "hold", dir)
		start := time.Now()
		_, err := Open(Options{Dir: dir})
		took := time.Since(start)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Open while held = %v, want ErrLocked", err)
		}
		if took > time.Second {
			t.Errorf("ErrLocked took %v", took)
		}
		// The lock dies with its process.
		s := openT(t, dir)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s := openT(t, "")
	cases := []struct {
		name string
		err  error
		call func() error
	}{
		{"neither dir nor memory", ErrInvalid, func() error { _, err := Open(Options{}); return err }},
		{"both dir and memory", ErrInvalid, func() error { _, err := Open(Options{Dir: t.TempDir(), InMemory: true}); return err }},
		{"nil capability", ErrInvalid, func() error { return s.Put(ctx, nil, "a") }},
		{"id with slash", ErrInvalid, func() error { return s.Put(ctx, titled("a/b", 1, "x"), "a") }},
		{"negative version", ErrInvalid, func() error { _, err := s.Get("a", -1); return err }},
		{"unknown id", ErrNotFound, func() error { _, err := s.Get("a.b", 0); return err }},
		{"delete unknown", ErrNotFound, func() error { return s.Delete(ctx, "a.b", "x") }},
		{"audit without kind", ErrInvalid, func() error { _, err := s.AppendAudit(ctx, AuditRecord{}); return err }},
		{"audit bad args", ErrInvalid, func() error {
			_, err := s.AppendAudit(ctx, AuditRecord{Kind: KindRun, Args: json.RawMessage(`{`)})
			return err
		}},
		{"empty token", ErrInvalid, func() error { _, err := s.SpendToken(ctx, "", time.Now(), AuditRecord{Kind: KindRun}); return err }},
		{"empty blob key", ErrInvalid, func() error { return s.PutBlob("", nil) }},
		{"missing blob", ErrNotFound, func() error { _, err := s.GetBlob("nope"); return err }},
		{"empty secret", ErrInvalid, func() error { _, err := s.Secret("", nil); return err }},
		{"history NUL", ErrInvalid, func() error { return s.RecordUse(ctx, "a\x00b", "", "x", time.Now()) }},
		{"cancelled", context.Canceled, func() error {
			c, cancel := context.WithCancel(ctx)
			cancel()
			return s.Put(c, titled("a.b", 1, "x"), "a")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if !strings.HasPrefix(err.Error(), "store: ") && !errors.Is(err, context.Canceled) {
				t.Errorf("error %q lacks the store: prefix", err)
			}
		})
	}
	if s.Generation() != 0 {
		t.Errorf("bad input changed the registry")
	}
}

func TestFormatAndClose(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if err := s.RawSet(keyFormat, []byte("99")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil || s.Close() != nil {
		t.Fatal("Close twice", err)
	}
	if _, err := s.Get("a", 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v", err)
	}
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrFormat) {
		t.Errorf("Open of format 99 = %v, want ErrFormat", err)
	}
	// A failed Open released the directory.
	s2, err := Open(Options{Dir: dir})
	if !errors.Is(err, ErrFormat) {
		t.Errorf("Open again = %v, want ErrFormat again", err)
	}
	if s2 != nil {
		s2.Close()
	}
}

func TestBlobsCacheSecretsLog(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	big := []byte(strings.Repeat("column snapshot ", 20000)) // 320 KB: goes to the value log
	if err := s.PutBlob("columns", big); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob("empty", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CachePut("vec/abc", []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	var calls int
	var mu sync.Mutex
	gen := func() ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return []byte(fmt.Sprint("key-", calls)), nil
	}
	var wg sync.WaitGroup
	got := make([][]byte, 64)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := s.Secret("hmac", gen)
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		}()
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("generator called %d times", calls)
	}
	for _, b := range got {
		if string(b) != "key-1" {
			t.Fatalf("secret %q", b)
		}
	}
	if _, err := s.Secret("other", func() ([]byte, error) { return nil, errors.New("no entropy") }); err == nil || !strings.Contains(err.Error(), "no entropy") {
		t.Errorf("generator error = %v", err)
	}
	for i := 0; i < 3; i++ {
		if err := s.LogSearch(map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	if b, err := s.GetBlob("columns"); err != nil || string(b) != string(big) {
		t.Errorf("blob after reopen: %d bytes, %v", len(b), err)
	}
	if b, err := s.GetBlob("empty"); err != nil || len(b) != 0 {
		t.Errorf("empty blob: %q, %v", b, err)
	}
	if err := s.DeleteBlob("columns"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetBlob("columns"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted blob: %v", err)
	}
	if b, ok := s.CacheGet("vec/abc"); !ok || len(b) != 3 {
		t.Errorf("cache: %v %v", b, ok)
	}
	if _, ok := s.CacheGet("vec/none"); ok {
		t.Error("cache hit for a missing key")
	}
	if b, err := s.Secret("hmac", gen); err != nil || string(b) != "key-1" || calls != 1 {
		t.Errorf("secret after reopen: %q %v (calls %d)", b, err, calls)
	}
	log, err := s.SearchLog(2)
	if err != nil || len(log) != 2 || string(log[0]) != `{"n":1}` || string(log[1]) != `{"n":2}` {
		t.Errorf("search log %q %v", log, err)
	}
}

func TestLoggerRouted(t *testing.T) {
	var b strings.Builder
	var mu sync.Mutex
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug})
	s, err := Open(Options{Dir: t.TempDir(), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(b.String(), "component=badger") {
		t.Errorf("no Badger lines reached the logger:\n%s", b.String())
	}
	if strings.Contains(b.String(), "level=INFO") {
		t.Errorf("Badger Info lines must be logged at Debug:\n%s", b.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestEmptyLogFiles: a process killed right after creating a WAL or value-log file leaves it
// empty, and Badger alone then refuses to open the directory (dgraph-io/badger#2207). Open
// removes such files.
func TestEmptyLogFiles(t *testing.T) {
	for _, name := range []string{"00042.mem", "00009.vlog"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			if err := s.Put(context.Background(), titled("a.b", 1, "x"), "u"); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil)); err == nil {
				t.Log("Badger opens the directory by itself now; the workaround may go")
				db.Close()
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s = openT(t, dir)
			if c, err := s.Get("a.b", 0); err != nil || c.Title != "x" {
				t.Fatalf("after repair: %v, %v", c, err)
			}
		})
	}
}
