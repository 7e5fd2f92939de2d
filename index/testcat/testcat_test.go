package testcat

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

func TestGenerateCatalog(t *testing.T) {
	tests := []struct {
		name string
		n    int
	}{{"empty", 0}, {"one", 1}, {"small", 37}, {"thousand", 1000}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := GenerateCatalog(tt.n, 3), GenerateCatalog(tt.n, 3)
			if len(a) != tt.n {
				t.Fatalf("%d capabilities, want %d", len(a), tt.n)
			}
			seen := map[string]bool{}
			zh := 0
			for i, c := range a {
				if !registry.ValidID(c.ID) || seen[c.ID] {
					t.Fatalf("bad or duplicate id %q", c.ID)
				}
				if p := registry.Parent(c.ID); p != "" && !seen[p] {
					t.Fatalf("%s comes before its pack %s", c.ID, p)
				}
				seen[c.ID] = true
				if c.ID != b[i].ID || c.Title != b[i].Title || c.Summary != b[i].Summary {
					t.Fatalf("not deterministic at %d: %q vs %q", i, c.Title, b[i].Title)
				}
				for _, r := range c.Title {
					if r >= 0x4e00 && r <= 0x9fff {
						zh++
						break
					}
				}
			}
			if _, err := registry.NewSnapshot(1, a); err != nil {
				t.Fatal(err)
			}
			if errs := registry.Lint(a); errs != nil {
				t.Fatalf("generated catalogue fails lint: %v", errs)
			}
			if tt.n >= 1000 && (zh < tt.n/5 || zh > tt.n*3/4) {
				t.Fatalf("%d of %d titles are Chinese", zh, tt.n)
			}
		})
	}
	if slices.EqualFunc(GenerateCatalog(50, 1), GenerateCatalog(50, 2), func(a, b *registry.Capability) bool { return a.ID == b.ID && a.Title == b.Title }) {
		t.Fatal("different seeds gave the same catalogue")
	}
}
