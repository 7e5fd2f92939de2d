package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestGetActiveSameAsGet: GetActive returns what Get(id, 0) returns for each id, in the
// order asked, on both of its paths (a few ids looked up, many read in one walk), with
// status overrides, new versions and deleted ids; a deleted or unknown id is ErrNotFound.
func TestGetActiveSameAsGet(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	var caps []*registry.Capability
	for i := range 300 {
		caps = append(caps, genCap(fmt.Sprintf("ga.p%d.c%d", i%7, i), 1, i))
	}
	if err := s.PutAll(ctx, caps, "t"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, genCap("ga.p1.c8", 2, 1000), "t"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, "ga.p2.c9", registry.StatusDeprecated, "t"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "ga.p3.c10", "t"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, getActiveScan + 1, 299} {
		var ids []string
		for i := n - 1; i >= 0; i-- { // reverse order: the answer follows the ids
			if i != 10 {
				ids = append(ids, caps[i].ID)
			}
		}
		ids = append(ids, "ga.p1.c8", "ga.p2.c9")
		got, err := s.GetActive(ids)
		if err != nil {
			t.Fatalf("%d ids: %v", len(ids), err)
		}
		if len(got) != len(ids) {
			t.Fatalf("%d ids: %d definitions", len(ids), len(got))
		}
		for i, id := range ids {
			want, err := s.Get(id, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%d ids: GetActive[%d] = %+v, Get(%s) = %+v", len(ids), i, got[i], id, want)
			}
		}
		if got[len(got)-1].Status != registry.StatusDeprecated || got[len(got)-2].Version != 2 {
			t.Fatalf("%d ids: status override or new version missing", len(ids))
		}
		for _, bad := range []string{"ga.p3.c10", "ga.nope"} {
			if _, err := s.GetActive(append(ids[:len(ids):len(ids)], bad)); !errors.Is(err, ErrNotFound) {
				t.Errorf("%d ids and %s: err = %v, want ErrNotFound", len(ids), bad, err)
			}
		}
	}
}
