package registry_test

import (
	"testing"

	"github.com/capdex/capdex/registry"
)

func TestSnapshotSameIDs(t *testing.T) {
	caps := func(ids ...string) *registry.Snapshot {
		s := &registry.Snapshot{}
		for _, id := range ids {
			s.Caps = append(s.Caps, &registry.Capability{ID: id, Summary: "s " + id})
		}
		return s
	}
	a := caps("a", "a.b", "c")
	changed := caps("a", "a.b", "c") // other definitions of the same ids
	changed.Caps[1].Summary = "changed"
	shared := &registry.Snapshot{Caps: append([]*registry.Capability(nil), a.Caps...)}
	for _, c := range []struct {
		name string
		b    *registry.Snapshot
		want bool
	}{
		{"itself", a, true},
		{"the same pointers", shared, true},
		{"changed definitions", changed, true},
		{"an id added", caps("a", "a.b", "c", "d"), false},
		{"an id deleted", caps("a", "c"), false},
		{"an id replaced", caps("a", "a.x", "c"), false},
		{"ids moved", caps("a", "c", "a.b"), false},
		{"empty", caps(), false},
	} {
		if got := a.SameIDs(c.b); got != c.want {
			t.Errorf("%s: SameIDs = %v, want %v", c.name, got, c.want)
		}
	}
	if !caps().SameIDs(caps()) {
		t.Error("two empty snapshots: SameIDs = false")
	}
}
