package rank

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestBuiltinCodex ranks the built-in Codex actions for the design's two cases.
func TestBuiltinCodex(t *testing.T) {
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	tc := NewTermCache(snap.Caps, simpleAnalyze)
	build := func(spec [][2]string) []Candidate {
		var cs []Candidate
		for _, s := range spec {
			c, ok := snap.Get(s[0])
			if !ok {
				t.Fatalf("builtin has no %s", s[0])
			}
			d, _ := snap.DocID(s[0])
			cs = append(cs, Candidate{Doc: d, Cap: c, Evidence: ev(t, s[1]), Availability: registry.Available})
		}
		return cs
	}
	// The retrievers like "update" best: the text says 更新 twice.
	spec := [][2]string{
		{"maintenance.codex.update", "lexical:1 semantic:1 metadata:2"},
		{"maintenance.codex.path_repair", "lexical:2 semantic:3 metadata:3"},
		{"maintenance.codex.diagnose", "lexical:3 semantic:2 metadata:1"},
		{"maintenance.codex.rollback", "lexical:4 semantic:4"},
		{"maintenance.codex.status", "lexical:5 semantic:5"},
	}
	opts := DefaultRerankOptions()
	opts.Terms = tc
	t.Run("先检查原因，不要直接更新", func(t *testing.T) {
		cs := build(spec)
		sig := Signals{
			Intents: []string{"diagnose", "inspect"}, Entities: []string{"codex"}, Symptoms: []string{"active_version_mismatch"},
			Forbidden: []string{"update", "upgrade"}, Constraints: []string{"read_first", "no_update"},
			Terms: simpleAnalyze("codex 更新后还是旧版本 先检查原因 不要直接更新"), Lang: "zh",
		}
		Fuse(cs, DefaultWeights())
		Rerank(cs, sig, opts)
		got := ids(cs)
		pos := func(id string) int { return slices.Index(got, id) }
		if !(pos("maintenance.codex.diagnose") < pos("maintenance.codex.path_repair") && pos("maintenance.codex.path_repair") < pos("maintenance.codex.update")) {
			t.Fatalf("order %v", got)
		}
		if got[0] != "maintenance.codex.diagnose" {
			t.Fatalf("top %s", got[0])
		}
		if res, _, _ := Resolve(cs, sig, DefaultThresholdsNoModel()); res != registry.Confident {
			t.Fatalf("resolution %s (top %.4f, second %.4f)", res, cs[0].Score, cs[1].Score)
		}
	})
	t.Run("帮我升级 codex", func(t *testing.T) {
		cs := build(spec)
		// Here the read-only diagnosis leads every retriever.
		cs[0].Evidence, cs[2].Evidence = cs[2].Evidence, cs[0].Evidence
		sig := Signals{Intents: []string{"update", "upgrade"}, Entities: []string{"codex"}, ExplicitWrite: true,
			Terms: simpleAnalyze("帮我升级 codex"), Lang: "zh"}
		Fuse(cs, DefaultWeights())
		Rerank(cs, sig, opts)
		if cs[0].Cap.ID != "maintenance.codex.update" {
			t.Fatalf("order %v", ids(cs))
		}
		top := Diversify(cs, 3, DefaultDiversifyOptions())
		if top[0].Cap.ID != "maintenance.codex.update" {
			t.Fatalf("diversified %v", ids(top))
		}
	})
}

// TestNoBreakdown checks that skipping the breakdown changes nothing else: same order,
// bit-identical scores, and an empty Breakdown.
func TestNoBreakdown(t *testing.T) {
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	tc := NewTermCache(snap.Caps, simpleAnalyze)
	spec := [][2]string{
		{"maintenance.codex", "lexical:6 hierarchy:1"},
		{"maintenance.codex.update", "lexical:1 semantic:1 metadata:2"},
		{"maintenance.codex.path_repair", "lexical:2 semantic:3 metadata:3"},
		{"maintenance.codex.diagnose", "lexical:3 semantic:2 metadata:1"},
		{"maintenance.codex.rollback", "lexical:4 semantic:4"},
		{"maintenance.codex.status", "lexical:5 semantic:5"},
	}
	tests := []struct {
		name string
		sig  Signals
	}{
		{name: "forbidden update", sig: Signals{Intents: []string{"diagnose"}, Entities: []string{"codex"},
			Forbidden: []string{"update"}, Constraints: []string{"read_first"}, Terms: simpleAnalyze("codex 先检查原因 不要直接更新"), Lang: "zh"}},
		{name: "browse", sig: Signals{Entities: []string{"codex"}, Browse: true, Scope: "maintenance.codex", Terms: simpleAnalyze("codex")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(no bool) []Candidate {
				var cs []Candidate
				for _, s := range spec {
					c, ok := snap.Get(s[0])
					if !ok {
						t.Fatalf("builtin has no %s", s[0])
					}
					d, _ := snap.DocID(s[0])
					cs = append(cs, Candidate{Doc: d, Cap: c, Evidence: ev(t, s[1]), Availability: registry.Available})
				}
				w := DefaultWeights()
				w.NoBreakdown = no
				ro := DefaultRerankOptions()
				ro.Terms, ro.NoBreakdown = tc, no
				Fuse(cs, w)
				Rerank(cs, tt.sig, ro)
				do := DefaultDiversifyOptions()
				do.Ambiguous, do.NoBreakdown = true, no
				return Diversify(cs, 5, do)
			}
			with, without := run(false), run(true)
			if !slices.Equal(ids(with), ids(without)) {
				t.Fatalf("order %v, without breakdown %v", ids(with), ids(without))
			}
			for i := range with {
				if with[i].Score != without[i].Score || with[i].Fused != without[i].Fused {
					t.Errorf("%s: score %v/%v, without breakdown %v/%v", with[i].Cap.ID, with[i].Score, with[i].Fused, without[i].Score, without[i].Fused)
				}
				if len(with[i].Breakdown) == 0 || len(without[i].Breakdown) != 0 {
					t.Errorf("%s: breakdown %d components, without %d", with[i].Cap.ID, len(with[i].Breakdown), len(without[i].Breakdown))
				}
			}
		})
	}
}
