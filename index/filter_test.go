package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// refAllowed is the filter written the slow, obvious way: one capability at a time.
func refAllowed(c *registry.Capability, rc *registry.RuntimeContext, f FilterSpec) bool {
	if c.Status == registry.StatusOffline || !c.Eff.Enabled {
		return false
	}
	if !registry.VisibleTo(c.Eff.Tenants, rc.Tenant) || !c.Eff.ACL.Allows(rc, registry.GateDiscover) {
		return false
	}
	if rc.OS != "" && len(c.SupportedOS) > 0 && !slices.Contains(c.SupportedOS, rc.OS) {
		return false
	}
	if f.Within != "" && c.ID != f.Within && !strings.HasPrefix(c.ID, f.Within+".") {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, c.ResourceType) {
		return false
	}
	if f.SideEffectMax != "" && c.ResourceType == registry.TypeAction {
		l := c.SideEffect.Level()
		if l < 0 {
			l = 3
		}
		if l > max(f.SideEffectMax.Level(), 0) {
			return false
		}
	}
	return true
}

func refFilter(g *Generation, rc *registry.RuntimeContext, f FilterSpec) []uint32 {
	var out []uint32
	for d, c := range g.Snapshot().Caps {
		if refAllowed(c, rc, f) {
			out = append(out, uint32(d))
		}
	}
	return out
}

func TestFilter(t *testing.T) {
	g := buildFixture(t, Options{})
	dev := &registry.RuntimeContext{Tenant: "t1", User: "u", Scopes: []string{"dev"}}
	tests := []struct {
		name    string
		rc      *registry.RuntimeContext
		spec    FilterSpec
		want    []string // must be present
		notWant []string // must be absent
	}{
		{name: "offline never, deprecated stays", rc: dev,
			want: []string{"myapp.schedule.export_old"}, notWant: []string{"myapp.schedule.sync_legacy"}},
		{name: "disabled pack hides its subtree", rc: dev, notWant: []string{"legacy", "legacy.ftp_upload"}},
		{name: "tenant-only pack hidden from others", rc: dev, notWant: []string{"acme", "acme.secret_report"}},
		{name: "tenant-only pack visible to its tenant", rc: &registry.RuntimeContext{Tenant: "acme"}, want: []string{"acme", "acme.secret_report"}},
		{name: "scope-gated pack needs the scope", rc: dev, notWant: []string{"payments", "payments.create_refund"}},
		{name: "scope-gated pack with the scope", rc: &registry.RuntimeContext{Scopes: []string{"finance"}}, want: []string{"payments.create_refund"}},
		{name: "deny by tenant overrides allow", rc: &registry.RuntimeContext{Tenant: "globex", Scopes: []string{"admin"}},
			notWant: []string{"devtools", "devtools.github.get_pull_request"}, want: []string{"maintenance.codex.diagnose"}},
		{name: "admin-only action", rc: dev, notWant: []string{"devtools.github.admin_purge"}, want: []string{"devtools.github.read_diff"}},
		{name: "admin sees admin-only action", rc: &registry.RuntimeContext{Scopes: []string{"admin"}}, want: []string{"devtools.github.admin_purge", "payments.create_refund"}},
		{name: "os linux drops windows-only", rc: &registry.RuntimeContext{OS: "linux"}, want: []string{"maintenance.codex.diagnose"}, notWant: []string{"maintenance.windows_only"}},
		{name: "os windows drops linux/macos-only", rc: &registry.RuntimeContext{OS: "windows"}, want: []string{"maintenance.windows_only", "maintenance.codex.update"}, notWant: []string{"maintenance.codex.diagnose"}},
		{name: "unknown os keeps only os-neutral", rc: &registry.RuntimeContext{OS: "plan9"}, notWant: []string{"maintenance.codex.diagnose", "maintenance.windows_only"}, want: []string{"maintenance.codex.update"}},
		{name: "within keeps the pack and its subtree", rc: dev, spec: FilterSpec{Within: "maintenance.codex"},
			want: []string{"maintenance.codex", "maintenance.codex.diagnose", "maintenance.codex.path_conflict_guide"}, notWant: []string{"maintenance", "maintenance.npm", "myapp"}},
		{name: "within an unknown pack keeps nothing", rc: dev, spec: FilterSpec{Within: "nope"}, notWant: []string{"maintenance"}},
		{name: "types", rc: dev, spec: FilterSpec{Types: []registry.ResourceType{registry.TypeRecipe}},
			want: []string{"maintenance.codex.path_conflict_guide"}, notWant: []string{"maintenance", "maintenance.codex.diagnose"}},
		{name: "side effect max R keeps packs and recipes", rc: dev, spec: FilterSpec{SideEffectMax: registry.SideEffectRead},
			want: []string{"maintenance", "maintenance.codex.diagnose", "maintenance.codex.path_conflict_guide"}, notWant: []string{"maintenance.codex.update", "myapp.schedule.delete"}},
		{name: "side effect max W-shared drops I", rc: dev, spec: FilterSpec{SideEffectMax: registry.SideEffectWriteShared},
			want: []string{"myapp.schedule.create"}, notWant: []string{"myapp.schedule.delete"}},
		{name: "nil context sees only public", rc: nil, want: []string{"maintenance.codex.diagnose"}, notWant: []string{"payments.create_refund", "acme"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bitmapIDs(g, g.Filter(tt.rc, tt.spec).ToArray())
			for _, id := range tt.want {
				if !slices.Contains(got, id) {
					t.Errorf("%s missing from %v", id, got)
				}
			}
			for _, id := range tt.notWant {
				if slices.Contains(got, id) {
					t.Errorf("%s must be filtered out: %v", id, got)
				}
			}
			rc := tt.rc
			if rc == nil {
				rc = &registry.RuntimeContext{}
			}
			if ref := bitmapIDs(g, refFilter(g, rc, tt.spec)); !slices.Equal(got, ref) {
				t.Errorf("filter %v\n reference %v", got, ref)
			}
		})
	}
}

// randomContext draws a caller from a small vocabulary so that every gate is exercised.
func randomContext(r *rand.Rand) (*registry.RuntimeContext, FilterSpec) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	rc := &registry.RuntimeContext{
		Tenant: pick("", "acme", "globex", "initech", "t1"),
		User:   pick("", "alice", "bob"),
		OS:     pick("", "", "linux", "macos", "windows"),
	}
	for _, s := range []string{"dev", "admin", "finance", "ops", "hr", "sales"} {
		if r.IntN(4) == 0 {
			rc.Scopes = append(rc.Scopes, s)
		}
	}
	var f FilterSpec
	if r.IntN(3) == 0 {
		f.SideEffectMax = registry.SideEffect(pick("R", "W-local", "W-shared", "I", "bogus"))
	}
	if r.IntN(3) == 0 {
		f.Types = append(f.Types, registry.ResourceType(pick("pack", "action", "recipe")))
	}
	return rc, f
}

func TestFilterMatchesReference(t *testing.T) {
	caps := testcat.GenerateCatalog(1500, 7)
	g := buildCaps(t, 1, caps, cheap)
	r := rand.New(rand.NewPCG(1, 2))
	packs := []string{}
	for _, c := range g.Snapshot().Caps {
		if c.ResourceType == registry.TypePack {
			packs = append(packs, c.ID)
		}
	}
	for i := range 200 {
		rc, f := randomContext(r)
		if i%4 == 0 {
			f.Within = packs[r.IntN(len(packs))]
		}
		got := g.Filter(rc, f).ToArray()
		if ref := refFilter(g, rc, f); !slices.Equal(got, ref) {
			t.Fatalf("context %+v spec %+v: filter has %d docs, reference %d", rc, f, len(got), len(ref))
		}
	}
}

func TestFilterResultIsCached(t *testing.T) {
	g := buildFixture(t, Options{})
	dev := &registry.RuntimeContext{Scopes: []string{"ops", "dev"}}
	a := g.Filter(dev, FilterSpec{})
	tests := []struct {
		name string
		rc   *registry.RuntimeContext
		f    FilterSpec
		same bool
	}{
		{name: "same caller and spec", rc: &registry.RuntimeContext{Scopes: []string{"ops", "dev"}}, same: true},
		{name: "scopes in another order", rc: &registry.RuntimeContext{Scopes: []string{"dev", "ops"}}, same: true},
		{name: "other scopes", rc: &registry.RuntimeContext{Scopes: []string{"dev"}}},
		{name: "other user", rc: &registry.RuntimeContext{User: "alice", Scopes: []string{"ops", "dev"}}},
		{name: "other os", rc: &registry.RuntimeContext{OS: "linux", Scopes: []string{"ops", "dev"}}},
		{name: "other spec", rc: dev, f: FilterSpec{SideEffectMax: registry.SideEffectRead}},
		{name: "unknown type is not no type", rc: dev, f: FilterSpec{Types: []registry.ResourceType{"bogus"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := g.Filter(tt.rc, tt.f)
			if (a == b) != tt.same {
				t.Fatalf("shared result = %v, want %v", a == b, tt.same)
			}
			if want := g.computeFilter(tt.rc, tt.f); !b.Equals(want) {
				t.Fatalf("cached result has %d docs, computed %d", b.GetCardinality(), want.GetCardinality())
			}
		})
	}
	if n := len(g.filter.results.m); n != len(tests)-1 {
		t.Fatalf("cache holds %d results, want %d", n, len(tests)-1)
	}
}

func TestFilterCacheIsBounded(t *testing.T) {
	g := buildFixture(t, Options{})
	first := g.Filter(&registry.RuntimeContext{User: "u0"}, FilterSpec{})
	for i := 1; i <= maxFilterCache+10; i++ {
		g.Filter(&registry.RuntimeContext{User: fmt.Sprintf("u%d", i)}, FilterSpec{})
		if i == maxFilterCache/2 { // keep u0 recently used
			if b := g.Filter(&registry.RuntimeContext{User: "u0"}, FilterSpec{}); b != first {
				t.Fatal("u0 was evicted before the cache filled")
			}
		}
	}
	if n := len(g.filter.results.m); n != maxFilterCache {
		t.Fatalf("cache holds %d results, want %d", n, maxFilterCache)
	}
	if _, ok := g.filter.results.get(appendFilterKey(nil, &registry.RuntimeContext{User: "u1"}, FilterSpec{})); ok {
		t.Fatal("u1, the least recently used, was not evicted")
	}
	if b := g.Filter(&registry.RuntimeContext{User: "u0"}, FilterSpec{}); b != first {
		t.Fatal("u0, recently used, was evicted")
	}
}

func TestFilterConcurrent(t *testing.T) {
	g := buildFixture(t, Options{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				rc := &registry.RuntimeContext{User: fmt.Sprintf("u%d", (i*7+w)%50), Scopes: []string{"dev"}}
				b := g.Filter(rc, FilterSpec{})
				if !b.Equals(g.computeFilter(rc, FilterSpec{})) {
					t.Error("cached result differs from computed")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestColumnSnapshotRestore(t *testing.T) {
	caps := testcat.GenerateCatalog(600, 3)
	g := buildCaps(t, 5, caps, cheap)
	if g.ColumnRestored() {
		t.Fatal("a fresh build cannot be restored")
	}
	var buf bytes.Buffer
	if err := g.ColumnSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)/2] ^= 0xff
	truncated := good[:len(good)/3]
	tests := []struct {
		name     string
		gen      uint64
		bytes    []byte
		caps     []*registry.Capability
		restored bool
	}{
		{name: "same generation restores", gen: 5, bytes: good, caps: testcat.GenerateCatalog(600, 3), restored: true},
		{name: "other generation rebuilds", gen: 6, bytes: good, caps: testcat.GenerateCatalog(600, 3)},
		{name: "same generation but changed rows rebuilds", gen: 5, bytes: good, caps: testcat.GenerateCatalog(600, 4)},
		{name: "corrupt bytes rebuild", gen: 5, bytes: corrupt, caps: testcat.GenerateCatalog(600, 3)},
		{name: "truncated bytes rebuild", gen: 5, bytes: truncated, caps: testcat.GenerateCatalog(600, 3)},
		{name: "garbage rebuilds", gen: 5, bytes: []byte("hello"), caps: testcat.GenerateCatalog(600, 3)},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := buildCaps(t, tt.gen, tt.caps, Options{Embedder: nopEmbedder{}, ColumnSnapshot: tt.bytes})
			if h.ColumnRestored() != tt.restored {
				t.Fatalf("restored = %v, want %v", h.ColumnRestored(), tt.restored)
			}
			for range 40 {
				rc, f := randomContext(r)
				got := h.Filter(rc, f).ToArray()
				if ref := refFilter(h, rc, f); !slices.Equal(got, ref) {
					t.Fatalf("filter after restore differs from the reference (%d vs %d docs)", len(got), len(ref))
				}
			}
		})
	}
}

func TestSubtreeWithOddIDs(t *testing.T) {
	// ids outside the registry's id syntax (as a foreign import might hold) sort between a
	// node and its subtree; within must still keep exactly the node and its subtree.
	caps := []*registry.Capability{
		{ID: "a", ResourceType: registry.TypePack, Status: registry.StatusActive, ACL: registry.ACL{Discover: []string{"*"}}},
		{ID: "a-b", ResourceType: registry.TypeAction, Status: registry.StatusActive, ACL: registry.ACL{Discover: []string{"*"}}},
		{ID: "a.x", ResourceType: registry.TypeAction, Status: registry.StatusActive},
		{ID: "ab", ResourceType: registry.TypeAction, Status: registry.StatusActive, ACL: registry.ACL{Discover: []string{"*"}}},
	}
	g := buildCaps(t, 1, caps, Options{})
	got := bitmapIDs(g, g.Filter(nil, FilterSpec{Within: "a"}).ToArray())
	if want := []string{"a", "a.x"}; !slices.Equal(got, want) {
		t.Fatalf("within a = %v, want %v", got, want)
	}
	if b := g.Filter(nil, FilterSpec{Within: "a.x"}); !slices.Equal(bitmapIDs(g, b.ToArray()), []string{"a.x"}) {
		t.Fatalf("within a.x = %v", bitmapIDs(g, b.ToArray()))
	}
	_ = roaring.New()
}
