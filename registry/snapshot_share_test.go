package registry

import (
	"slices"
	"testing"
)

// TestSnapshotSharesPackLists: the children of one pack share one Eff.Packs list, in
// NewSnapshot and in Apply, with no room to append into it, and the lists are the ancestors.
func TestSnapshotSharesPackLists(t *testing.T) {
	pack := func(id string) *Capability { return &Capability{ID: id, ResourceType: TypePack} }
	act := func(id string) *Capability { return &Capability{ID: id, ResourceType: TypeAction} }
	s, err := NewSnapshot(1, []*Capability{pack("a"), pack("a.b"), act("a.b.x"), act("a.b.y"), act("a.z")})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := s.Apply(2, []*Capability{act("a.b.w")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, snap := range []*Snapshot{s, s2} {
		get := func(id string) []string {
			c, ok := snap.Get(id)
			if !ok {
				t.Fatalf("%s missing", id)
			}
			return c.Eff.Packs
		}
		x, y := get("a.b.x"), get("a.b.y")
		if !slices.Equal(x, []string{"a", "a.b"}) || !slices.Equal(get("a.z"), []string{"a"}) || get("a") != nil {
			t.Fatalf("packs: a.b.x %v, a.z %v, a %v", x, get("a.z"), get("a"))
		}
		if &x[0] != &y[0] || cap(x) != len(x) {
			t.Errorf("siblings' Packs not one shared, clipped list: %p %p cap %d", &x[0], &y[0], cap(x))
		}
	}
	if w := s2.Caps[slices.IndexFunc(s2.Caps, func(c *Capability) bool { return c.ID == "a.b.w" })].Eff.Packs; &w[0] != &s.Caps[2].Eff.Packs[0] {
		t.Error("a capability added by Apply does not share its pack's list")
	}
}
