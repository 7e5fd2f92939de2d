package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// TestPackRanges: every pack's range holds exactly the capabilities under it, including
// when sibling ids sort between the pack and its children ("a-b" before "a.b").
func TestPackRanges(t *testing.T) {
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	extra := []*registry.Capability{
		{ID: "maintenance-tools", ResourceType: registry.TypePack, Title: "x", Status: registry.StatusActive, Version: 1},
		{ID: "maintenance-tools.a", ResourceType: registry.TypeAction, Title: "x", Status: registry.StatusActive, Version: 1},
	}
	snap, err := registry.NewSnapshot(1, append(caps, extra...))
	if err != nil {
		t.Fatal(err)
	}
	g, err := index.Build(context.Background(), snap, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ranges := packRanges(g)
	packs := 0
	for d, c := range snap.Caps {
		if c.ResourceType != registry.TypePack {
			continue
		}
		packs++
		r, ok := ranges[uint32(d)]
		if !ok {
			t.Fatalf("%s: no range", c.ID)
		}
		for e, o := range snap.Caps {
			in := uint32(e) >= r[0] && uint32(e) < r[1]
			if under := strings.HasPrefix(o.ID, c.ID+"."); in != under {
				t.Errorf("%s: %s in range %v: %v, under it: %v", c.ID, o.ID, r, in, under)
			}
		}
	}
	if packs != len(ranges) || packs < 30 {
		t.Fatalf("%d packs, %d ranges", packs, len(ranges))
	}
}
