package registry_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// change is one random registry change for the incremental tests: the capabilities stored
// and the ids deleted.
type change struct {
	put     []*registry.Capability
	deleted []string
}

// randomChange picks 1-4 changes over cur (id → capability): new versions with changed
// text, status, health, pack enabled or tenants; new actions under a pack; deletions of
// capabilities without children. Some puts break lint (a parent that is not a pack, an
// empty title) when broken is set.
func randomChange(r *rand.Rand, cur map[string]*registry.Capability, ids []string, broken bool) change {
	var ch change
	used := map[string]bool{}
	hasKids := func(id string) bool {
		for other := range cur {
			if registry.Parent(other) == id {
				return true
			}
		}
		return false
	}
	for range 1 + r.IntN(4) {
		id := ids[r.IntN(len(ids))]
		c, ok := cur[id]
		if !ok || used[id] {
			continue
		}
		used[id] = true
		d := c.Clone()
		d.Eff = nil
		d.Version++
		switch op := r.IntN(8); {
		case op == 0:
			d.Summary += fmt.Sprintf(" changed %d", r.IntN(1000))
		case op == 1:
			d.Status = []registry.Status{registry.StatusActive, registry.StatusDeprecated, registry.StatusOffline}[r.IntN(3)]
		case op == 2:
			d.Health.Status = []string{"up", "degraded", "down"}[r.IntN(3)]
		case op == 3 && d.ResourceType == registry.TypePack:
			on := r.IntN(2) == 0
			d.Enabled = &on
		case op == 4 && d.ResourceType == registry.TypePack:
			d.Tenants = []string{fmt.Sprintf("t%d", r.IntN(3))}
			d.ACL.Deny = []string{"intern"}
		case op == 5 && d.ResourceType == registry.TypePack:
			n := d.Clone()
			n.ID = fmt.Sprintf("%s.new_%d", id, r.IntN(1_000_000))
			n.ResourceType, n.Version, n.Enabled, n.Tenants = registry.TypePack, 1, nil, nil
			if _, exists := cur[n.ID]; !exists {
				ch.put = append(ch.put, n)
			}
			continue
		case op == 6 && !hasKids(id):
			ch.deleted = append(ch.deleted, id)
			continue
		case op == 7 && broken:
			if r.IntN(2) == 0 {
				d.Title = " "
			} else if d.ResourceType == registry.TypePack {
				d.ResourceType = registry.TypeAction // its children lose their pack
			}
		default:
			d.Aliases = append(d.Aliases, fmt.Sprintf("alias %d", r.IntN(1000)))
		}
		ch.put = append(ch.put, d)
	}
	return ch
}

func applyTo(cur map[string]*registry.Capability, ch change) []*registry.Capability {
	for _, c := range ch.put {
		cur[c.ID] = c
	}
	for _, id := range ch.deleted {
		delete(cur, id)
	}
	all := make([]*registry.Capability, 0, len(cur))
	for _, c := range cur {
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b *registry.Capability) int { return strings.Compare(a.ID, b.ID) })
	return all
}

func cloneAll(caps []*registry.Capability) []*registry.Capability {
	out := make([]*registry.Capability, len(caps))
	for i, c := range caps {
		out[i] = c.Clone()
	}
	return out
}

// TestSnapshotApplySameAsNew applies random sequences of changes with Snapshot.Apply and
// compares each result, capability by capability (Eff included), with NewSnapshot over
// the same registry, and checks that Apply left the snapshot it started from unchanged.
func TestSnapshotApplySameAsNew(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	base := testcat.GenerateCatalog(300, 3)
	for seq := range 8 {
		cur := map[string]*registry.Capability{}
		for _, c := range base {
			cur[c.ID] = c.Clone()
		}
		snap, err := registry.NewSnapshot(1, cloneAll(applyTo(cur, change{})))
		if err != nil {
			t.Fatal(err)
		}
		for step := range 12 {
			ids := make([]string, 0, len(cur))
			for id := range cur {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			ch := randomChange(r, cur, ids, false)
			before := cloneAll(snap.Caps)
			for i, c := range snap.Caps {
				before[i].Eff = c.Eff
			}
			got, err := snap.Apply(snap.Generation+1, cloneAll(ch.put), ch.deleted)
			if err != nil {
				t.Fatalf("sequence %d step %d: %v", seq, step, err)
			}
			want, err := registry.NewSnapshot(snap.Generation+1, cloneAll(applyTo(cur, ch)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != want.Len() {
				t.Fatalf("sequence %d step %d: %d capabilities, want %d", seq, step, got.Len(), want.Len())
			}
			for d := range want.Caps {
				if !reflect.DeepEqual(got.Caps[d], want.Caps[d]) {
					t.Fatalf("sequence %d step %d: doc %d: got %+v\nwant %+v", seq, step, d, got.Caps[d], want.Caps[d])
				}
				if id, ok := got.DocID(want.Caps[d].ID); !ok || int(id) != d {
					t.Fatalf("sequence %d step %d: DocID(%s) = %d, %v; want %d", seq, step, want.Caps[d].ID, id, ok, d)
				}
			}
			for i, c := range snap.Caps {
				if !reflect.DeepEqual(c, before[i]) {
					t.Fatalf("sequence %d step %d: Apply changed %s of the old snapshot", seq, step, c.ID)
				}
			}
			snap = got
		}
	}
}

// TestLintAffectedSameAsLint lints random changes (some of which break lint) to a clean
// registry incrementally, checking only the changed capabilities and the children of
// changed or deleted ones, and compares the errors with a full Lint of the result.
func TestLintAffectedSameAsLint(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2))
	base := testcat.GenerateCatalog(400, 5)
	if errs := registry.Lint(base); len(errs) > 0 {
		t.Fatalf("the generated catalogue does not lint: %v", errs)
	}
	broke := 0
	for trial := range 200 {
		cur := map[string]*registry.Capability{}
		for _, c := range base {
			cur[c.ID] = c
		}
		ids := make([]string, 0, len(cur))
		for id := range cur {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		ch := randomChange(r, cur, ids, true)
		touched := map[string]bool{}
		for _, c := range ch.put {
			touched[c.ID] = true
		}
		for _, id := range ch.deleted {
			touched[id] = true
		}
		all := applyTo(cur, ch)
		want := registry.Lint(all)
		got := registry.LintAffected(all, func(c *registry.Capability) bool {
			return touched[c.ID] || touched[registry.Parent(c.ID)]
		})
		if len(want) > 0 {
			broke++
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: incremental lint\n%v\nfull lint\n%v", trial, got, want)
		}
	}
	if broke == 0 {
		t.Fatal("no trial broke lint: the comparison saw only clean registries")
	}
	t.Logf("200 changes compared, %d of them failing lint", broke)
}
