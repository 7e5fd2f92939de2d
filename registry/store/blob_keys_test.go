package store

import (
	"slices"
	"testing"
)

func TestBlobKeys(t *testing.T) {
	s := openT(t, t.TempDir())
	for _, k := range []string{"index/state", "index/state/7/0", "index/state/7/1", "index/statex", "columns"} {
		if err := s.PutBlob(k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CachePut("index/state/9/0", []byte{1}); err != nil { // another prefix
		t.Fatal(err)
	}
	got, err := s.BlobKeys("index/state/")
	if want := []string{"index/state/7/0", "index/state/7/1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("BlobKeys = %q, %v; want %q", got, err, want)
	}
	if err := s.DeleteBlob("index/state/7/1"); err != nil {
		t.Fatal(err)
	}
	got, err = s.BlobKeys("index/")
	if want := []string{"index/state", "index/state/7/0", "index/statex"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("BlobKeys after a delete = %q, %v; want %q", got, err, want)
	}
}
