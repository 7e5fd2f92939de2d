package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// BenchmarkDefinitionBytes reports where a decoded capability's bytes go, per capability:
// the struct itself and what each group of its fields reaches (strings, lists, schemas,
// the handler, the inherited view), each allocation counted once, for the definitions as
// an engine holds them after a reopen (put into a Badger store, read back with
// store.Active, a snapshot built over them). Catalogues: testcat.GenerateCatalog(10k) and
// the evaluation sets imported as the bench imports them (skipped when absent).
//
//	go test -run '^$' -bench DefinitionBytes -benchtime=1x ./engine/
func BenchmarkDefinitionBytes(b *testing.B) {
	sets := []string{"synthetic-10k", "seal_tools", "metatool", "livemcpbench", "hammerbench_zh"}
	for _, set := range sets {
		b.Run("set="+set, func(b *testing.B) {
			caps := definitionBytesCatalog(b, set)
			for b.Loop() {
				snap := reopenedDefinitions(b, caps)
				h := newHeapSizer()
				for _, c := range snap.Caps {
					h.fields(c)
				}
				groups := map[string]float64{}
				var total float64
				for field, n := range h.byField {
					groups[fieldGroup(field)] += float64(n)
					total += float64(n)
				}
				per := float64(len(snap.Caps))
				for g, n := range groups {
					b.ReportMetric(n/per, g+"-B/cap")
				}
				b.ReportMetric(total/per, "total-B/cap")
			}
		})
	}
}

// fieldGroup names the group of a field path of heapSizer.fields.
func fieldGroup(field string) string {
	top, _, _ := strings.Cut(field, ".")
	switch top {
	case "(struct)":
		return "struct"
	case "ArgumentsSchema", "OutputSchema", "Examples":
		return "schemas"
	case "Handler":
		return "handler"
	case "ID", "Title", "Summary", "ExternalID", "Guidance", "Steps", "Aliases", "WhenToUse", "WhenNotToUse":
		return "texts"
	case "Eff":
		return "inherited"
	case "Provenance":
		return "provenance"
	}
	return "lists" // intents, entities, tags, platforms, acl and the other short lists
}

// definitionBytesCatalog is the catalogue named set.
func definitionBytesCatalog(b *testing.B, set string) []*registry.Capability {
	if set == "synthetic-10k" {
		return testcat.GenerateCatalog(10_000, 1)
	}
	dir := os.Getenv("CAPDEX_EVAL_DIR")
	if dir == "" {
		dir = filepath.FromSlash("../../shared/eval")
	}
	f, err := os.Open(filepath.Join(dir, set, "tools.jsonl"))
	if err != nil {
		b.Skipf("evaluation set %s not found (set CAPDEX_EVAL_DIR): %v", set, err)
	}
	defer f.Close()
	caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
	if err != nil {
		b.Fatal(err)
	}
	return caps
}

// reopenedDefinitions stores caps in a Badger store and reads them back as an engine's
// reopen does.
func reopenedDefinitions(b *testing.B, caps []*registry.Capability) *registry.Snapshot {
	st, err := store.Open(store.Options{Dir: b.TempDir(), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.PutAll(context.Background(), caps, "bench"); err != nil {
		b.Fatal(err)
	}
	got, gen, err := st.Active()
	if err != nil {
		b.Fatal(err)
	}
	snap, err := registry.NewSnapshot(gen, got)
	if err != nil {
		b.Fatal(err)
	}
	if snap.Len() != len(caps) {
		b.Fatalf("%d capabilities read back, %d stored", snap.Len(), len(caps))
	}
	return snap
}
