package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

const eps = 1e-12

func TestWeightsOf(t *testing.T) {
	w := DefaultWeights()
	for _, tc := range []struct {
		name string
		want float64
	}{
		{Exact, 2.0}, {Metadata, 0.6}, {Lexical, 1.2}, {Semantic, 0.4}, {Hierarchy, 0.8}, {History, 2.0}, {"bogus", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.Of(tc.name); got != tc.want {
				t.Fatalf("Of(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	if w.K != 60 || w.ScoreShare != 1 {
		t.Fatalf("K = %v, score share %v", w.K, w.ScoreShare)
	}
}

func TestFuse(t *testing.T) {
	caps := codexCaps(t)
	tests := []struct {
		name    string
		w       Weights
		cands   [][2]string // id, evidence
		want    []string    // order
		fused   []float64   // in the order of want
		compNum []int
	}{
		{
			name: "default weights",
			w:    DefaultWeights(),
			cands: [][2]string{
				{"maintenance.codex.update", "lexical:1 semantic:1 lexical:3"},      // duplicate lexical: best rank only
				{"maintenance.codex.diagnose", "exact:1 lexical:2"},                 // 2/61 + 1.2/62
				{"maintenance.codex.path_repair", "history:1 metadata:5 unknown:1"}, // unknown retriever weighs 0
				{"maintenance.codex.reinstall", "semantic:0"},                       // rank 0 ignored
				{"devops.docker.ps", "hierarchy:2 hierarchy:2"},                     // exact duplicate counted once
			},
			// No raw scores: every retriever's scores are degenerate, so ranks decide.
			want:    []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "devops.docker.ps", "maintenance.codex.reinstall"},
			fused:   []float64{2.0/61 + 1.2/62, 2.0/61 + 0.6/65, 1.2/61 + 0.4/61, 0.8 / 62, 0},
			compNum: []int{2, 2, 2, 1, 0},
		},
		{
			name: "k=10 and zero weights",
			w:    Weights{Exact: 2, Lexical: 1.2, K: 10},
			cands: [][2]string{
				{"maintenance.codex.update", "lexical:1 semantic:1"},
				{"maintenance.codex.diagnose", "exact:1 lexical:2"},
			},
			want:    []string{"maintenance.codex.diagnose", "maintenance.codex.update"},
			fused:   []float64{2.0/11 + 1.2/12, 1.2 / 11},
			compNum: []int{2, 1},
		},
		{
			name: "k=0 means 60 and ties break by id",
			w:    Weights{Lexical: 1},
			cands: [][2]string{
				{"maintenance.codex.update", "lexical:1"},
				{"maintenance.codex.diagnose", "lexical:1"},
			},
			want:    []string{"maintenance.codex.diagnose", "maintenance.codex.update"},
			fused:   []float64{1.0 / 61, 1.0 / 61},
			compNum: []int{1, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cs []Candidate
			for _, c := range tc.cands {
				cs = append(cs, cand(t, caps, c[0], c[1]))
			}
			tc.w.ScoreShare = 0 // plain weighted RRF
			Fuse(cs, tc.w)
			if got := ids(cs); !slices.Equal(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
			for i := range cs {
				if math.Abs(cs[i].Fused-tc.fused[i]) > eps || cs[i].Score != cs[i].Fused {
					t.Errorf("%s: fused %v score %v, want %v", cs[i].Cap.ID, cs[i].Fused, cs[i].Score, tc.fused[i])
				}
				if len(cs[i].Breakdown) != tc.compNum[i] {
					t.Errorf("%s: breakdown %v, want %d components", cs[i].Cap.ID, cs[i].Breakdown, tc.compNum[i])
				}
				sum := 0.0
				for _, b := range cs[i].Breakdown {
					if !strings.HasPrefix(b.Name, "rrf.") {
						t.Errorf("component %q", b.Name)
					}
					sum += b.Value
				}
				if math.Abs(sum-cs[i].Fused) > eps {
					t.Errorf("%s: breakdown sums to %v, fused %v", cs[i].Cap.ID, sum, cs[i].Fused)
				}
			}
		})
	}
	t.Run("score aware", func(t *testing.T) {
		// lexical: update 75 (rank 1), diagnose 21 (rank 2), path_repair 3 (rank 3), cut at 3
		// with floor 3; semantic: rank order reversed, scores close together.
		src := func(name string, rank int, raw, floor float64) Source {
			return Source{Retriever: name, Rank: rank, Raw: raw, Floor: floor}
		}
		cs := []Candidate{
			{Cap: caps["maintenance.codex.update"], Evidence: []Source{src(Lexical, 1, 75, 3), src(Semantic, 3, 0.40, 0)}},
			{Cap: caps["maintenance.codex.diagnose"], Evidence: []Source{src(Lexical, 2, 21, 3), src(Semantic, 2, 0.42, 0)}},
			{Cap: caps["maintenance.codex.path_repair"], Evidence: []Source{src(Lexical, 3, 3, 3), src(Semantic, 1, 0.44, 0)}},
		}
		w := Weights{Lexical: 1.2, Semantic: 0.4, K: 60, ScoreShare: 1}
		Fuse(cs, w)
		want := map[string]float64{
			"maintenance.codex.update":      1.2/61 + 0.4*(0.40/0.44)/61,
			"maintenance.codex.diagnose":    1.2*(18.0/72)/61 + 0.4*(0.42/0.44)/61,
			"maintenance.codex.path_repair": 0 + 0.4/61,
		}
		if got := ids(cs); !slices.Equal(got, []string{"maintenance.codex.update", "maintenance.codex.diagnose", "maintenance.codex.path_repair"}) {
			t.Fatalf("order %v", got)
		}
		for i := range cs {
			if math.Abs(cs[i].Fused-want[cs[i].Cap.ID]) > eps {
				t.Errorf("%s: fused %v, want %v", cs[i].Cap.ID, cs[i].Fused, want[cs[i].Cap.ID])
			}
		}
		// Plain RRF keeps the rank-1 lexical lead small: ranks 1 and 2 differ by 1.2/61-1.2/62.
		w.ScoreShare = 0
		Fuse(cs, w)
		if d := cs[0].Fused - cs[1].Fused; d > 0.001 {
			t.Errorf("plain RRF gap %v", d)
		}
		// Half and half mixes the two.
		w.ScoreShare = 0.5
		Fuse(cs, w)
		for i := range cs {
			if cs[i].Cap.ID != "maintenance.codex.diagnose" {
				continue
			}
			rrf := 1.2/62 + 0.4/62
			score := 1.2*(18.0/72)/61 + 0.4*(0.42/0.44)/61
			if want := (rrf + score) / 2; math.Abs(cs[i].Fused-want) > eps {
				t.Errorf("half: fused %v, want %v", cs[i].Fused, want)
			}
		}
	})
	t.Run("breakdown names", func(t *testing.T) {
		// named by the fusion method in use: score fusion (the default), RRF, or between
		for _, tc := range []struct {
			share  float64
			method string
			prefix string
		}{{1, MethodScore, "score."}, {0, MethodRRF, "rrf."}, {0.5, "mixed(0.5)", "mixed."}} {
			w := DefaultWeights()
			w.ScoreShare = tc.share
			if w.Method() != tc.method {
				t.Fatalf("share %v: method %q, want %q", tc.share, w.Method(), tc.method)
			}
			cs := []Candidate{cand(t, caps, "maintenance.codex.diagnose", "exact:1 lexical:2")}
			Fuse(cs, w)
			want := []registry.ScoreComponent{{Name: tc.prefix + "exact", Value: 2.0 / 61}, {Name: tc.prefix + "lexical", Value: 1.2 / 62}}
			if !slices.Equal(cs[0].Breakdown, want) {
				t.Fatalf("%s: breakdown %v, want %v", tc.method, cs[0].Breakdown, want)
			}
			// a rerank keeps the fusion components, whatever their names, and adds its own
			Rerank(cs, Signals{}, RerankOptions{})
			Rerank(cs, Signals{}, RerankOptions{})
			if n := len(slices.DeleteFunc(slices.Clone(cs[0].Breakdown), func(b registry.ScoreComponent) bool { return !strings.HasPrefix(b.Name, tc.prefix) })); n != 2 {
				t.Fatalf("%s: after two reranks %d fusion components: %v", tc.method, n, cs[0].Breakdown)
			}
		}
	})
}

// codexSignals: "先检查原因，不要直接更新" as the normaliser renders it.
func readFirstSignals() Signals {
	return Signals{
		Intents:     []string{"diagnose"},
		Constraints: []string{"read_first"},
		Forbidden:   []string{"update", "upgrade"},
		Terms:       simpleAnalyze("先检查原因 不要直接更新"),
		Lang:        "zh",
	}
}

func TestRerankOrderings(t *testing.T) {
	caps := codexCaps(t)
	all := []*registry.Capability{}
	for _, c := range caps {
		all = append(all, c)
	}
	snap, _ := registry.NewSnapshot(1, all)
	tc := NewTermCache(snap.Caps, simpleAnalyze)
	doc := func(id string) uint32 { d, _ := snap.DocID(id); return d }

	type in struct{ id, ev string }
	tests := []struct {
		name  string
		cands []in
		sig   Signals
		terms *TermCache
		want  []string
	}{
		{
			name: "read first, update forbidden, update ranked first by retrievers",
			cands: []in{
				{"maintenance.codex.update", "lexical:1 semantic:1 metadata:2"},
				{"maintenance.codex.path_repair", "lexical:2 semantic:3"},
				{"maintenance.codex.diagnose", "lexical:3 semantic:2 metadata:1"},
			},
			sig:   readFirstSignals(),
			terms: tc,
			want:  []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update"},
		},
		{
			name: "read first, diagnose last in every retriever",
			cands: []in{
				{"maintenance.codex.update", "lexical:1 semantic:1 metadata:2"},
				{"maintenance.codex.path_repair", "lexical:2 semantic:2 metadata:1"},
				{"maintenance.codex.diagnose", "lexical:3 semantic:3"},
			},
			sig:  readFirstSignals(),
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update"},
		},
		{
			name: "explicit write is not suppressed",
			cands: []in{
				{"maintenance.codex.diagnose", "lexical:1 semantic:1"},
				{"maintenance.codex.update", "lexical:2 semantic:2 metadata:1"},
				{"maintenance.codex.path_repair", "lexical:3"},
			},
			sig:  Signals{Intents: []string{"update", "upgrade"}, Entities: []string{"codex"}, ExplicitWrite: true, Terms: simpleAnalyze("帮我更新 codex")},
			want: []string{"maintenance.codex.update", "maintenance.codex.diagnose", "maintenance.codex.path_repair"},
		},
		{
			name: "explicit write beats a read action ranked first everywhere",
			cands: []in{
				{"maintenance.codex.diagnose", "lexical:1 semantic:1 metadata:1"},
				{"maintenance.codex.update", "lexical:2 semantic:2 metadata:2"},
			},
			sig:  Signals{Intents: []string{"update", "upgrade"}, Entities: []string{"codex"}, ExplicitWrite: true},
			want: []string{"maintenance.codex.update", "maintenance.codex.diagnose"},
		},
		{
			name: "symptoms lift the diagnosis",
			cands: []in{
				{"maintenance.codex.update", "lexical:1 semantic:1"},
				{"maintenance.codex.diagnose", "lexical:2 semantic:2"},
			},
			sig:  Signals{Entities: []string{"codex"}, Symptoms: []string{"active_version_mismatch"}},
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.update"},
		},
		{
			name: "reinstall forbidden with its relatives",
			cands: []in{
				{"maintenance.codex.reinstall", "lexical:1 semantic:1 metadata:1"},
				{"maintenance.codex.update", "lexical:2 semantic:2 metadata:2"},
				{"maintenance.codex.path_repair", "lexical:3 semantic:3"},
			},
			sig:  Signals{Entities: []string{"codex"}, Forbidden: []string{"reinstall", "install", "update"}},
			want: []string{"maintenance.codex.path_repair", "maintenance.codex.update", "maintenance.codex.reinstall"}, // reinstall is high risk
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs []Candidate
			for _, c := range tt.cands {
				x := cand(t, caps, c.id, c.ev)
				x.Doc = doc(c.id)
				cs = append(cs, x)
			}
			Fuse(cs, DefaultWeights())
			opts := DefaultRerankOptions()
			opts.Terms = tt.terms
			Rerank(cs, tt.sig, opts)
			if got := ids(cs); !slices.Equal(got, tt.want) {
				for _, c := range cs {
					t.Logf("%s %.4f %v", c.Cap.ID, c.Score, c.Breakdown)
				}
				t.Fatalf("order %v, want %v", got, tt.want)
			}
			for i := range cs {
				sum := 0.0
				for _, b := range cs[i].Breakdown {
					sum += b.Value
				}
				if math.Abs(sum-cs[i].Score) > eps {
					t.Errorf("%s: breakdown sums to %v, score %v", cs[i].Cap.ID, sum, cs[i].Score)
				}
			}
		})
	}
}

func TestRerankComponents(t *testing.T) {
	caps := codexCaps(t)
	snap, _ := registry.NewSnapshot(1, []*registry.Capability{caps["maintenance.codex.update"], caps["maintenance.codex.diagnose"]})
	tcache := NewTermCache(snap.Caps, simpleAnalyze)
	mk := func() []Candidate {
		var cs []Candidate
		for i, c := range snap.Caps {
			cs = append(cs, Candidate{Doc: uint32(i), Cap: c, Evidence: ev(t, "lexical:1"), Availability: registry.NeedsConfirmation})
		}
		Fuse(cs, DefaultWeights())
		return cs
	}
	o := DefaultRerankOptions()
	o.Terms = tcache
	cs := mk()
	Rerank(cs, readFirstSignals(), o)
	byID := map[string]*Candidate{}
	for i := range cs {
		byID[cs[i].Cap.ID] = &cs[i]
	}
	up, dg := byID["maintenance.codex.update"], byID["maintenance.codex.diagnose"]
	checks := []struct {
		name string
		c    *Candidate
		comp string
		want float64
	}{
		{"forbidden", up, CompForbidden, -0.080},
		{"risk with caution", up, CompRisk, -(0.0005 + 0.0005) * 8},
		{"availability", up, CompAvailability, -0.002},
		{"when_not_to_use (5 of 6 terms)", up, CompWhenNotToUse, -0.030 * 5 / 6},
		{"intent", dg, CompIntent, 0.006},
		{"read-only risk", dg, CompRisk, 0},
		{"no forbidden on diagnose", dg, CompForbidden, 0},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if got := component(c.c, c.comp); math.Abs(got-c.want) > eps {
				t.Fatalf("%s %s = %v, want %v (%v)", c.c.Cap.ID, c.comp, got, c.want, c.c.Breakdown)
			}
		})
	}
	if !slices.Equal(dg.MatchedIntents, []string{"diagnose"}) {
		t.Errorf("matched intents %v", dg.MatchedIntents)
	}
	t.Run("idempotent", func(t *testing.T) {
		before := map[string]float64{up.Cap.ID: up.Score, dg.Cap.ID: dg.Score}
		n := len(up.Breakdown)
		Rerank(cs, readFirstSignals(), o)
		for i := range cs {
			if cs[i].Score != before[cs[i].Cap.ID] {
				t.Fatalf("second rerank changed %s: %v → %v", cs[i].Cap.ID, before[cs[i].Cap.ID], cs[i].Score)
			}
		}
		if len(byIDAfter(cs, up.Cap.ID).Breakdown) != n {
			t.Fatalf("breakdown grew")
		}
	})
	t.Run("fallback without term cache", func(t *testing.T) {
		cs := mk()
		o := DefaultRerankOptions()
		s := Signals{Terms: []string{"codex", "npm"}}
		Rerank(cs, s, o)
		// "Codex 并非通过 npm 安装": both words present; approx 2 words + 8 CJK terms.
		if v := component(byIDAfter(cs, "maintenance.codex.diagnose"), CompWhenNotToUse); v != 0 {
			t.Fatalf("coverage 2/10 must not trigger the penalty, got %v", v)
		}
		s = Signals{Terms: []string{"type", "-a", "codex"}}
		Rerank(cs, s, o)
		if v := component(byIDAfter(cs, "maintenance.codex.diagnose"), CompWhenToUse); v <= 0 {
			t.Fatalf("when_to_use fallback bonus missing: %v", byIDAfter(cs, "maintenance.codex.diagnose").Breakdown)
		}
	})
}

func byIDAfter(cs []Candidate, id string) *Candidate {
	for i := range cs {
		if cs[i].Cap.ID == id {
			return &cs[i]
		}
	}
	return nil
}

func TestRerankAvailability(t *testing.T) {
	base := &registry.Capability{ResourceType: registry.TypeAction, SideEffect: registry.SideEffectRead}
	av := []registry.Availability{registry.Incompatible, registry.MissingCredentials, registry.Available, registry.NeedsConfirmation, registry.Forbidden}
	var cs []Candidate
	for i, a := range av {
		c := *base
		c.ID = "p.a" + string(rune('a'+i))
		cs = append(cs, Candidate{Cap: &c, Evidence: ev(t, "lexical:1"), Availability: a})
	}
	Fuse(cs, DefaultWeights())
	Rerank(cs, Signals{}, DefaultRerankOptions())
	var got []registry.Availability
	for _, c := range cs {
		got = append(got, c.Availability)
	}
	want := []registry.Availability{registry.Available, registry.NeedsConfirmation, registry.MissingCredentials, registry.Forbidden, registry.Incompatible}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// scored builds candidates with fixed scores, in the given order.
func scored(tb testing.TB, caps map[string]*registry.Capability, spec ...any) []Candidate {
	tb.Helper()
	var cs []Candidate
	for i := 0; i < len(spec); i += 2 {
		c := caps[spec[i].(string)]
		if c == nil {
			tb.Fatalf("no cap %v", spec[i])
		}
		s := spec[i+1].(float64)
		cs = append(cs, Candidate{Cap: c, Fused: s, Score: s, Availability: registry.Available, Coverage: 1})
	}
	return cs
}

func TestDiversify(t *testing.T) {
	caps := codexCaps(t)
	extra := []*registry.Capability{
		{ID: "x.a.upd1", ResourceType: registry.TypeAction, Intents: []string{"update"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "x.b.upd2", ResourceType: registry.TypeAction, Intents: []string{"update"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "x.c.upd3", ResourceType: registry.TypeAction, Intents: []string{"update"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "x.d.crit", ResourceType: registry.TypeAction, Intents: []string{"delete"}, SideEffect: registry.SideEffectWriteShared, RiskLevel: registry.RiskCritical},
		{ID: "x.e.pay", ResourceType: registry.TypeAction, Intents: []string{"pay"}, SideEffect: registry.SideEffectImpact, RiskLevel: registry.RiskLow},
	}
	for _, c := range extra {
		caps[c.ID] = c
	}
	def := DefaultDiversifyOptions()
	amb := def
	amb.Ambiguous = true
	strict := amb
	strict.Strict = true
	tests := []struct {
		name  string
		cands []Candidate
		limit int
		opts  DiversifyOptions
		want  []string
	}{
		{
			name: "confident: the pack cap breaks a near tie",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.0605, "devops.docker.ps", 0.06, "devops.npm.update", 0.04),
			limit: 4, opts: def,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "devops.docker.ps"},
		},
		{
			name: "confident: no near tie, relevance keeps the fourth of a pack",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.065, "devops.docker.ps", 0.05, "devops.npm.update", 0.04),
			limit: 4, opts: def,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "maintenance.codex.reinstall"},
		},
		{
			name: "ambiguous: at most three per pack",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.065, "devops.docker.ps", 0.05, "devops.npm.update", 0.04),
			limit: 5, opts: amb,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "devops.docker.ps", "devops.npm.update"},
		},
		{
			name: "confident: ranked by relevance, no pack cap",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.065, "devops.docker.ps", 0.05, "devops.npm.update", 0.04),
			limit: 4, opts: def,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "maintenance.codex.reinstall"},
		},
		{
			name: "pack cap relaxed to fill the list",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.065),
			limit: 4, opts: amb,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "maintenance.codex.reinstall"},
		},
		{
			name: "strict pack cap",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.path_repair", 0.08,
				"maintenance.codex.update", 0.07, "maintenance.codex.reinstall", 0.065),
			limit: 4, opts: strict,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update"},
		},
		{
			name:  "at most two per primary intent",
			cands: scored(t, caps, "x.a.upd1", 0.09, "x.b.upd2", 0.08, "x.c.upd3", 0.07, "devops.docker.ps", 0.02),
			limit: 3, opts: amb,
			want: []string{"x.a.upd1", "x.b.upd2", "devops.docker.ps"},
		},
		{
			name:  "high risk never fills the list",
			cands: scored(t, caps, "x.d.crit", 0.09, "x.e.pay", 0.08, "devops.docker.prune", 0.07, "maintenance.codex.diagnose", 0.01),
			limit: 3, opts: def,
			want: []string{"x.d.crit", "x.e.pay", "maintenance.codex.diagnose"},
		},
		{
			name:  "limit one prefers the safe candidate",
			cands: scored(t, caps, "x.d.crit", 0.09, "maintenance.codex.update", 0.01),
			limit: 1, opts: def,
			want: []string{"maintenance.codex.update"},
		},
		{
			name:  "limit one keeps an explicitly asked write",
			cands: scored(t, caps, "x.d.crit", 0.09, "maintenance.codex.update", 0.01),
			limit: 1, opts: DiversifyOptions{MaxPerPack: 3, MaxPerIntent: 2, ExplicitWrite: true},
			want: []string{"x.d.crit"},
		},
		{
			name:  "only high risk candidates",
			cands: scored(t, caps, "x.d.crit", 0.09, "x.e.pay", 0.08),
			limit: 5, opts: def,
			want: []string{"x.d.crit", "x.e.pay"},
		},
		{
			name: "ambiguous keeps a read-only action",
			cands: scored(t, caps, "maintenance.codex.update", 0.09, "maintenance.codex.path_repair", 0.08, "devops.npm.update", 0.07,
				"devops.docker.ps", 0.01),
			limit: 3, opts: amb,
			want: []string{"maintenance.codex.update", "maintenance.codex.path_repair", "devops.docker.ps"},
		},
		{
			name: "not ambiguous: no read-only forced",
			cands: scored(t, caps, "maintenance.codex.update", 0.09, "maintenance.codex.path_repair", 0.08, "devops.npm.update", 0.07,
				"devops.docker.ps", 0.01),
			limit: 3, opts: def,
			want: []string{"maintenance.codex.update", "maintenance.codex.path_repair", "devops.npm.update"},
		},
		{
			name: "close leaves folded into their pack after the best",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.050, "maintenance.codex.path_repair", 0.049,
				"maintenance.codex.update", 0.047, "devops.docker.ps", 0.03, "maintenance.codex", 0.02),
			limit: 5, opts: amb,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex", "devops.docker.ps"},
		},
		{
			name: "confident: close leaves stay",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.050, "maintenance.codex.path_repair", 0.049,
				"maintenance.codex.update", 0.047, "devops.docker.ps", 0.03, "maintenance.codex", 0.02),
			limit: 5, opts: def,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "devops.docker.ps", "maintenance.codex"},
		},
		{
			name: "spread leaves stay",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.070, "maintenance.codex.path_repair", 0.049,
				"maintenance.codex.update", 0.047, "devops.docker.ps", 0.03, "maintenance.codex", 0.02),
			limit: 5, opts: amb,
			want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair", "maintenance.codex.update", "devops.docker.ps", "maintenance.codex"},
		},
		{
			name:  "limit zero",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.07),
			limit: 0, opts: def,
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.cands)
			got := Diversify(tt.cands, tt.limit, tt.opts)
			if g := ids(got); !slices.Equal(g, tt.want) {
				t.Fatalf("got %v, want %v", g, tt.want)
			}
			if len(tt.cands) != n {
				t.Fatalf("input length changed")
			}
			// Nothing lost: the full slice still holds every candidate once.
			seen := map[string]bool{}
			for _, c := range tt.cands {
				if seen[c.Cap.ID] {
					t.Fatalf("duplicate %s after reordering", c.Cap.ID)
				}
				seen[c.Cap.ID] = true
			}
		})
	}
	t.Run("pack lifted and explained", func(t *testing.T) {
		cs := scored(t, caps, "maintenance.codex.diagnose", 0.050, "maintenance.codex.path_repair", 0.049,
			"maintenance.codex.update", 0.047, "maintenance.codex", 0.02)
		got := Diversify(cs, 5, amb)
		if got[1].Cap.ID != "maintenance.codex" || got[1].Score != 0.049 || math.Abs(component(&got[1], CompPack)-0.029) > eps {
			t.Fatalf("pack %s score %v breakdown %v", got[1].Cap.ID, got[1].Score, got[1].Breakdown)
		}
	})
}

func TestResolve(t *testing.T) {
	caps := codexCaps(t)
	caps["x.gh"] = &registry.Capability{ID: "x.gh", ResourceType: registry.TypeAction, Requirements: registry.Requirements{Credentials: []string{"github_token"}}}
	th := DefaultThresholdsNoModel()
	withEv := func(cs []Candidate, i int, spec string) []Candidate { cs[i].Evidence = ev(t, spec); return cs }
	withAv := func(cs []Candidate, i int, a registry.Availability) []Candidate { cs[i].Availability = a; return cs }
	withCov := func(cs []Candidate, i int, c float64) []Candidate { cs[i].Coverage = c; return cs }
	tests := []struct {
		name    string
		cands   []Candidate
		sig     Signals
		res     registry.Resolution
		reason  string
		missing []string
	}{
		{name: "nothing", res: registry.NoConfidentMatch, reason: ReasonNoMatch},
		{name: "nothing, policy hides", sig: Signals{PolicyHidden: true}, res: registry.NoConfidentMatch, reason: ReasonPolicyHidden},
		{name: "below floor", cands: scored(t, caps, "maintenance.codex.diagnose", 0.015), res: registry.NoConfidentMatch, reason: ReasonNoMatch},
		{
			name:  "exact hit is confident whatever the score",
			cands: withEv(scored(t, caps, "maintenance.codex.diagnose", 0.01, "maintenance.codex.update", 0.009), 0, "exact:1"),
			res:   registry.Confident,
		},
		{
			name:  "clear winner",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.08, "maintenance.codex.update", 0.06),
			res:   registry.Confident,
		},
		{
			name:  "single candidate above confident",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.06),
			res:   registry.Confident,
		},
		{
			name:    "tied: which tool",
			cands:   scored(t, caps, "maintenance.codex.diagnose", 0.070, "devops.docker.ps", 0.070, "devops.npm.update", 0.070),
			res:     registry.Ambiguous,
			missing: []string{"which tool: codex, docker or npm?", "read only or change?", "which action: diagnose, list or update?"},
		},
		{
			name:    "tied, chinese",
			cands:   scored(t, caps, "maintenance.codex.diagnose", 0.070, "maintenance.codex.update", 0.070),
			sig:     Signals{Lang: "zh"},
			res:     registry.Ambiguous,
			missing: []string{"只读查看还是修改？", "哪个操作：diagnose 还是 update？"},
		},
		{
			name:    "vague request",
			cands:   scored(t, caps, "maintenance.codex.diagnose", 0.040, "maintenance.codex.update", 0.020),
			sig:     Signals{Vague: true},
			res:     registry.Ambiguous,
			missing: []string{"more detail: is 诊断 Codex 安装与路径冲突 what you want?"},
		},
		{
			name:  "vague request inside a scope",
			cands: scored(t, caps, "maintenance.codex.diagnose", 0.040, "maintenance.codex.update", 0.020),
			sig:   Signals{Vague: true, Scope: "maintenance.codex"},
			res:   registry.Confident,
		},
		{
			name:    "pack at the top",
			cands:   scored(t, caps, "maintenance.codex", 0.09, "maintenance.codex.diagnose", 0.05, "maintenance.codex.update", 0.04),
			res:     registry.Ambiguous,
			missing: []string{"which capability in maintenance.codex: diagnose or update?"},
		},
		{
			name:    "pack alone",
			cands:   scored(t, caps, "maintenance.codex", 0.09),
			res:     registry.Ambiguous,
			missing: []string{"which capability in maintenance.codex?"},
		},
		{
			name:  "browse",
			cands: scored(t, caps, "devops.docker.ps", 0.09, "devops.docker.prune", 0.05),
			sig:   Signals{Browse: true},
			res:   registry.Ambiguous,
		},
		{
			name:   "best covers too little of the query",
			cands:  withCov(scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.update", 0.05), 0, 0.1),
			res:    registry.NoConfidentMatch,
			reason: ReasonNoMatch,
		},
		{
			name:  "coverage does not bound a browse",
			cands: withCov(scored(t, caps, "devops.docker", 0.09, "devops.docker.ps", 0.05), 0, 0.05),
			sig:   Signals{Browse: true},
			res:   registry.Ambiguous,
		},
		{
			name:   "ids written but none visible",
			cands:  scored(t, caps, "devops.docker.ps", 0.09, "devops.docker", 0.05),
			sig:    Signals{IDs: []string{"devops.docker.prune"}},
			res:    registry.NoConfidentMatch,
			reason: ReasonNoMatch,
		},
		{
			name:   "ids written, hidden by the request's own filters",
			cands:  scored(t, caps, "devops.docker.ps", 0.09),
			sig:    Signals{IDs: []string{"devops.docker.prune"}, PolicyHidden: true},
			res:    registry.NoConfidentMatch,
			reason: ReasonPolicyHidden,
		},
		{
			name:  "ids written and found, not first",
			cands: withEv(scored(t, caps, "devops.docker.ps", 0.09, "devops.docker.prune", 0.05), 1, "exact:1"),
			sig:   Signals{IDs: []string{"devops.docker.prune"}},
			res:   registry.Confident,
		},
		{
			name:   "best unavailable",
			cands:  withAv(withAv(scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.update", 0.05), 0, registry.Unavailable), 1, registry.Forbidden),
			res:    registry.NoConfidentMatch,
			reason: ReasonUnavailable,
		},
		{
			name:   "best incompatible",
			cands:  withAv(scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.update", 0.01), 0, registry.Incompatible),
			res:    registry.NoConfidentMatch,
			reason: ReasonIncompatible,
		},
		{
			name:  "missing credentials is still the match",
			cands: withAv(scored(t, caps, "x.gh", 0.09), 0, registry.MissingCredentials),
			res:   registry.Confident,
		},
		{
			name:  "unusable top, usable runner-up decides",
			cands: withAv(scored(t, caps, "maintenance.codex.diagnose", 0.09, "maintenance.codex.update", 0.08, "devops.docker.ps", 0.01), 0, registry.Incompatible),
			res:   registry.Confident,
		},
		{
			name:  "exact hit unusable",
			cands: withAv(withEv(scored(t, caps, "maintenance.codex.diagnose", 0.09), 0, "exact:1"), 0, registry.Incompatible),
			res:   registry.NoConfidentMatch, reason: ReasonIncompatible,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, reason, missing := Resolve(tt.cands, tt.sig, th)
			if res != tt.res || reason != tt.reason {
				t.Fatalf("got %s/%q, want %s/%q (missing %v)", res, reason, tt.res, tt.reason, missing)
			}
			if tt.missing != nil && !slices.Equal(missing, tt.missing) {
				t.Fatalf("missing %q, want %q", missing, tt.missing)
			}
			if res == registry.Ambiguous && len(missing) == 0 {
				t.Fatalf("ambiguous without missing information")
			}
			// The calibration model agrees with Resolve.
			if p := th.Predict(SampleOf(tt.cands, tt.sig, res)); p != res {
				t.Fatalf("Predict(SampleOf) = %s, Resolve = %s", p, res)
			}
		})
	}
}

func TestCalibrate(t *testing.T) {
	truth := Thresholds{Floor: 0.031, Confident: 0.062, Margin: 0.011, MinCoverage: 0.3}
	gen := func(r *rand.Rand, n int) []Sample {
		var out []Sample
		for i := 0; i < n; i++ {
			top := r.Float64() * 0.1
			s := Sample{TopScore: top, SecondScore: top - r.Float64()*0.03, ExactHit: r.IntN(20) == 0,
				Coverage: r.Float64(), Browse: r.IntN(15) == 0}
			switch r.IntN(10) {
			case 0:
				s.Fixed = registry.Ambiguous
			case 1:
				s.Fixed = registry.NoConfidentMatch
			}
			s.Expected = truth.Predict(s)
			out = append(out, s)
		}
		return out
	}
	r := rand.New(rand.NewPCG(1, 2))
	train, test := gen(r, 400), gen(r, 2000)
	got := Calibrate(train)
	if got.Score(train) != 1 || got.Accuracy != 1 || got.Samples != 400 {
		t.Fatalf("train accuracy %v (%+v)", got.Score(train), got)
	}
	if acc := got.Score(test); acc < 0.97 {
		t.Fatalf("held-out accuracy %v with %+v (truth %+v)", acc, got, truth)
	}
	if math.Abs(got.Floor-truth.Floor) > 0.003 || math.Abs(got.Confident-truth.Confident) > 0.003 || math.Abs(got.Margin-truth.Margin) > 0.003 ||
		math.Abs(got.MinCoverage-truth.MinCoverage) > 0.03 {
		t.Fatalf("thresholds %+v far from truth %+v", got, truth)
	}
	t.Run("noisy labels never worse than defaults", func(t *testing.T) {
		noisy := gen(r, 300)
		for i := range noisy {
			if r.IntN(5) == 0 {
				noisy[i].Expected = []registry.Resolution{registry.Confident, registry.Ambiguous, registry.NoConfidentMatch}[r.IntN(3)]
			}
		}
		c := Calibrate(noisy)
		if c.Score(noisy) < DefaultThresholdsNoModel().Score(noisy) {
			t.Fatalf("calibrated %v < default %v", c.Score(noisy), DefaultThresholdsNoModel().Score(noisy))
		}
	})
	t.Run("no samples", func(t *testing.T) {
		if got := Calibrate(nil); got != DefaultThresholdsNoModel() {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("ties keep defaults", func(t *testing.T) {
		// Every sample is an exact hit: any thresholds are right, so the defaults stay.
		s := []Sample{{TopScore: 0.5, ExactHit: true, Expected: registry.Confident}}
		got := Calibrate(s)
		d := DefaultThresholdsNoModel()
		if math.Abs(got.Floor-d.Floor) > 0.01 || math.Abs(got.Confident-d.Confident) > 0.01 || math.Abs(got.Margin-d.Margin) > 0.01 ||
			math.Abs(got.MinCoverage-d.MinCoverage) > 0.05 {
			t.Fatalf("got %+v, want near %+v", got, d)
		}
	})
}

func TestThresholdsJSON(t *testing.T) {
	in := Thresholds{Floor: 0.03, Confident: 0.05, Margin: 0.006, MinCoverage: 0.2, Samples: 12, Accuracy: 0.91}
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeThresholds(b)
	if err != nil || out != in {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	for _, bad := range []string{``, `{`, `[]`, `{"floor":-1}`, `{"floor":0.1,"bogus":1}`, `{"accuracy":2}`, `{"samples":-3}`, `{"min_coverage":1.5}`, `{"min_coverage":-0.1}`} {
		t.Run(bad, func(t *testing.T) {
			if _, err := DecodeThresholds([]byte(bad)); err == nil {
				t.Fatalf("accepted %q", bad)
			}
		})
	}
}

// TestRerankReferral: a when_not_to_use entry that names another capability ("… (use
// b.diagnose)") is met when the query fits that capability's when_to_use better than the
// referring one's, and only while that capability is a usable candidate.
func TestRerankReferral(t *testing.T) {
	status := &registry.Capability{
		ID: "b.status", ResourceType: registry.TypeAction, Title: "check the installed version",
		Aliases:      []string{"tool --version"},
		WhenToUse:    []string{"which version is installed"},
		WhenNotToUse: []string{"several copies conflict (use b.diagnose)"},
		SideEffect:   registry.SideEffectRead, RiskLevel: registry.RiskLow,
	}
	diagnose := &registry.Capability{
		ID: "b.diagnose", ResourceType: registry.TypeAction, Title: "diagnose the installation",
		WhenToUse:  []string{"tool --version and the npm version disagree"},
		SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow,
	}
	snap, err := registry.NewSnapshot(1, []*registry.Capability{status, diagnose})
	if err != nil {
		t.Fatal(err)
	}
	tc := NewTermCache(snap.Caps, simpleAnalyze)
	sd, _ := snap.DocID("b.status")
	dd, _ := snap.DocID("b.diagnose")
	run := func(query string, diagAvail registry.Availability, withDiagnose bool) []Candidate {
		cs := []Candidate{{Doc: sd, Cap: status, Evidence: ev(t, "lexical:1 semantic:1")}}
		if withDiagnose {
			cs = append(cs, Candidate{Doc: dd, Cap: diagnose, Evidence: ev(t, "lexical:2 semantic:2"), Availability: diagAvail})
		}
		Fuse(cs, DefaultWeights())
		opts := DefaultRerankOptions()
		opts.Terms = tc
		Rerank(cs, Signals{Terms: simpleAnalyze(query)}, opts)
		return cs
	}
	penalty := func(cs []Candidate, id string) float64 {
		for _, c := range cs {
			if c.Cap.ID == id {
				for _, b := range c.Breakdown {
					if b.Name == CompWhenNotToUse {
						return b.Value
					}
				}
			}
		}
		return 0
	}
	q := "tool --version and the npm version disagree"
	cs := run(q, registry.Available, true)
	if got := ids(cs); !slices.Equal(got, []string{"b.diagnose", "b.status"}) {
		t.Fatalf("order %v, want the referred diagnose first", got)
	}
	if p := penalty(cs, "b.status"); p >= 0 {
		t.Fatalf("status has no when_not_to_use penalty (%v)", p)
	}
	if p := penalty(run(q, registry.Available, false), "b.status"); p != 0 {
		t.Errorf("penalty %v without the referred candidate", p)
	}
	if p := penalty(run(q, registry.Forbidden, true), "b.status"); p != 0 {
		t.Errorf("penalty %v with the referred candidate forbidden to the caller", p)
	}
	if p := penalty(run("which tool version is installed", registry.Available, true), "b.status"); p != 0 {
		t.Errorf("penalty %v for a query fitting status's own when_to_use", p)
	}
}
