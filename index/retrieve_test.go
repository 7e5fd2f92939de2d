package index

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

func TestKindNames(t *testing.T) {
	for k := Kind(0); k < NumKinds; k++ {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Fatalf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseKind("bogus"); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("ParseKind(bogus) err = %v", err)
	}
	if s := Kind(99).String(); s != "kind(99)" {
		t.Fatalf("Kind(99) = %q", s)
	}
}

func TestRetrieveErrors(t *testing.T) {
	g := buildFixture(t, Options{})
	ctx := context.Background()
	q := &Query{Text: "codex"}
	if _, err := g.Retrieve(ctx, Lexical, q, nil, 0); !errors.Is(err, ErrBadLimit) {
		t.Errorf("limit 0: %v", err)
	}
	if _, err := g.Retrieve(ctx, NumKinds, q, nil, 5); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Retrieve(cctx, Lexical, q, nil, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := Build(ctx, nil, Options{}); !errors.Is(err, ErrNilSnapshot) {
		t.Errorf("nil snapshot: %v", err)
	}
	snap, _ := registry.NewSnapshot(1, fixtureCaps())
	if _, err := Build(cctx, snap, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("build with cancelled ctx: %v", err)
	}
}

func TestEmptyGeneration(t *testing.T) {
	g := buildCaps(t, 1, nil, Options{})
	for k := Kind(0); k < NumKinds; k++ {
		hits, err := g.Retrieve(context.Background(), k, &Query{Text: "anything", Browse: true}, nil, 5)
		if err != nil || len(hits) != 0 {
			t.Fatalf("%v on an empty generation: %v %v", k, hits, err)
		}
	}
	if b := g.Filter(nil, FilterSpec{}); !b.IsEmpty() {
		t.Fatal("empty generation filter is not empty")
	}
}

func TestExact(t *testing.T) {
	g := buildFixture(t, Options{})
	tests := []struct {
		name    string
		q       Query
		want    string // first hit
		matched string
	}{
		{name: "full id", q: Query{Text: "maintenance.codex.diagnose"}, want: "maintenance.codex.diagnose", matched: "id"},
		{name: "upper case and full width", q: Query{Text: "ＭＡＩＮＴＥＮＡＮＣＥ.Codex.Diagnose"}, want: "maintenance.codex.diagnose", matched: "id"},
		{name: "id inside a sentence", q: Query{Text: "run maintenance.codex.diagnose please."}, want: "maintenance.codex.diagnose", matched: "id"},
		{name: "id after Chinese", q: Query{Text: "请运行maintenance.codex.diagnose。"}, want: "maintenance.codex.diagnose", matched: "id"},
		{name: "version pin", q: Query{Text: "maintenance.codex.diagnose@3"}, want: "maintenance.codex.diagnose", matched: "id"},
		{name: "tool name", q: Query{Text: "maintenance__codex_diagnose"}, want: "maintenance.codex.diagnose", matched: "tool_name"},
		{name: "leaf pair", q: Query{Text: "call codex_diagnose"}, want: "maintenance.codex.diagnose", matched: "leaf"},
		{name: "schedule_create", q: Query{Text: "schedule_create"}, want: "myapp.schedule.create", matched: "leaf"},
		{name: "unique leaf alone", q: Query{Text: "path_repair"}, want: "maintenance.codex.path_repair", matched: "leaf"},
		{name: "alias", q: Query{Text: "Codex Still Runs Old Version After Update"}, want: "maintenance.codex.diagnose", matched: "alias"},
		{name: "chinese alias", q: Query{Text: "codex 更新后还是旧版本"}, want: "maintenance.codex.diagnose", matched: "alias"},
		{name: "explicit ids", q: Query{Text: "whatever", IDs: []string{"myapp.schedule.delete"}}, want: "myapp.schedule.delete", matched: "id"},
		{name: "external id", q: Query{Text: "GitHub::getPullRequest"}, want: "devtools.github.get_pull_request", matched: "external_id"},
		{name: "external tool part", q: Query{Text: "use getPullRequest"}, want: "devtools.github.get_pull_request", matched: "external_id"},
		{name: "pack id", q: Query{Text: "maintenance.codex"}, want: "maintenance.codex", matched: "id"},
		{name: "prefix without its own pack", q: Query{Text: "myapp.schedule"}, want: "myapp.schedule", matched: "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := retrieve(t, g, Exact, &tt.q, 5)
			if len(hits) == 0 || g.Doc(hits[0].Doc).ID != tt.want {
				t.Fatalf("hits %v, want %s first", ids(g, hits), tt.want)
			}
			if !slices.Contains(hits[0].Matched, tt.matched) {
				t.Fatalf("matched %v, want %s", hits[0].Matched, tt.matched)
			}
		})
	}
	// plain words in a sentence are not names
	for _, q := range []string{"please rollback codex", "update", "the schedule"} {
		if hits := retrieve(t, g, Exact, &Query{Text: q}, 5); len(hits) != 0 && q != "update" {
			t.Errorf("%q: exact hits %v", q, ids(g, hits))
		}
	}
}

func TestExactPrefix(t *testing.T) {
	caps := []*registry.Capability{
		{ID: "nav.bus.query_realtime", ResourceType: registry.TypeAction, Status: registry.StatusActive},
		{ID: "nav.bus.pay", ResourceType: registry.TypeAction, Status: registry.StatusActive},
		{ID: "nav.bus.x.deep", ResourceType: registry.TypeAction, Status: registry.StatusActive},
		{ID: "other", ResourceType: registry.TypeAction, Status: registry.StatusActive},
	}
	g := buildCaps(t, 1, caps, Options{})
	hits := retrieve(t, g, Exact, &Query{Text: "nav.bus"}, 10)
	got := ids(g, hits)
	if len(got) != 3 || got[2] != "nav.bus.x.deep" || !slices.Contains(hits[0].Matched, "id_prefix") {
		t.Fatalf("prefix hits %v", got)
	}
}

// nameForms lists every exact name of c that must find it.
func nameForms(c *registry.Capability, uniqueLeaf bool) []string {
	forms := []string{c.ID, strings.ToUpper(c.ID), registry.ToolName(c.ID), strings.ReplaceAll(c.ID, ".", "_")}
	if p := registry.Parent(c.ID); p != "" {
		forms = append(forms, registry.Leaf(p)+"_"+registry.Leaf(c.ID))
	}
	if uniqueLeaf {
		forms = append(forms, registry.Leaf(c.ID))
	}
	forms = append(forms, c.Aliases...)
	if c.ExternalID != "" {
		forms = append(forms, c.ExternalID)
	}
	return forms
}

// checkExactNeverMisses asserts that every name form of every capability finds it, alone, in
// q.IDs and (for name-like forms) inside a sentence.
func checkExactNeverMisses(t *testing.T, g *Generation) {
	t.Helper()
	leaves := map[string]int{}
	for _, c := range g.Snapshot().Caps {
		leaves[registry.Leaf(c.ID)]++
	}
	checked := 0
	for d, c := range g.Snapshot().Caps {
		for _, form := range nameForms(c, leaves[registry.Leaf(c.ID)] == 1) {
			if strings.TrimSpace(form) == "" {
				continue
			}
			queries := []Query{{Text: form}, {Text: "x", IDs: []string{form}}}
			if identLike(form) && !strings.ContainsAny(form, " \t") {
				queries = append(queries, Query{Text: "please use " + form + " now"})
			}
			for _, q := range queries {
				hits := retrieve(t, g, Exact, &q, g.Len())
				if !slices.ContainsFunc(hits, func(h Hit) bool { return h.Doc == uint32(d) }) {
					t.Fatalf("exact missed %s for %q (ids %v): %v", c.ID, q.Text, q.IDs, ids(g, hits))
				}
				checked++
			}
		}
	}
	t.Logf("%d exact lookups over %d capabilities", checked, g.Len())
}

func TestExactNeverMissesFixture(t *testing.T) {
	checkExactNeverMisses(t, buildFixture(t, Options{}))
}

func TestExactNeverMissesGenerated(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 300
	}
	checkExactNeverMisses(t, buildCaps(t, 1, testcat.GenerateCatalog(n, 11), cheap))
}

func TestLexical(t *testing.T) {
	g := buildFixture(t, Options{})
	tests := []struct {
		name string
		q    string
		top  int
		want []string // each within the first top hits
	}{
		{name: "english words", q: "codex path conflict", top: 3, want: []string{"maintenance.codex.diagnose", "maintenance.codex.path_repair"}},
		{name: "chinese words", q: "诊断 codex 路径冲突", top: 1, want: []string{"maintenance.codex.diagnose"}},
		{name: "chinese finds english via concepts", q: "删除日程", top: 2, want: []string{"myapp.schedule.delete"}},
		{name: "english finds chinese-titled", q: "diagnose codex install", top: 1, want: []string{"maintenance.codex.diagnose"}},
		{name: "parameter names count", q: "include shell resolution", top: 1, want: []string{"maintenance.codex.diagnose"}},
		{name: "refund", q: "refund a customer payment", top: 1, want: []string{"payments.create_refund"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := retrieve(t, g, Lexical, &Query{Text: tt.q}, 10)
			got := ids(g, hits)
			for _, w := range tt.want {
				if i := slices.Index(got, w); i < 0 || i >= tt.top {
					t.Fatalf("%q: %s not in top %d of %v", tt.q, w, tt.top, got)
				}
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Fatalf("hits not sorted: %v", hits)
				}
			}
			if len(hits[0].Matched) == 0 {
				t.Fatalf("no matched fields on %v", hits[0])
			}
		})
	}
	hits := retrieve(t, g, Lexical, &Query{Text: "删除日程"}, 3)
	if !slices.Contains(hits[0].Matched, "concepts") {
		t.Errorf("concept match not reported: %v", hits[0].Matched)
	}
	// when_not_to_use is not indexed
	if hits := retrieve(t, g, Lexical, &Query{Text: "用户已经明确要求回滚"}, 10); slices.Contains(ids(g, hits), "maintenance.codex.diagnose") &&
		ids(g, hits)[0] == "maintenance.codex.diagnose" {
		t.Errorf("when_not_to_use text ranked diagnose first: %v", ids(g, hits))
	}
}

// exhaustiveLexical scores every document without pruning: the reference for MaxScore.
func exhaustiveLexical(g *Generation, q *Query) map[uint32]float32 {
	s := getScratch()
	defer putScratch(s)
	x := &g.lex
	scores := map[uint32]float32{}
	terms := queryTerms(q)
	var seen []uint32
	add := func(id uint32, w float32) {
		docs, ftf := x.list(id)
		e := 0
		for _, d := range docs {
			var imp float32
			imp, _, e = x.norms.impact(d, ftf, e)
			scores[d] += x.idf[id] * w * imp
		}
	}
	for _, t := range terms {
		if id, ok := x.dict[t]; ok && !slices.Contains(seen, id) {
			seen = append(seen, id)
			add(id, 1)
		}
	}
	if p := x.params; p.VariantWeight > 0 {
		var vars []uint32
		for _, t := range terms {
			for _, id := range variantsRef(x, t, p.VariantSuffix) {
				if !slices.Contains(seen, id) {
					seen = append(seen, id)
					vars = append(vars, id)
				}
			}
		}
		if len(vars) > maxVariantTerms { // the strongest, the earlier at equal idf
			slices.SortStableFunc(vars, func(a, b uint32) int { return cmp.Compare(x.idf[b], x.idf[a]) })
			vars = vars[:maxVariantTerms]
		}
		for _, id := range vars {
			add(id, float32(p.VariantWeight))
		}
	}
	for _, c := range queryConcepts(q, terms) {
		for _, id := range g.conceptTerms(c) {
			if !slices.Contains(seen, id) {
				seen = append(seen, id)
				add(id, conceptWeight)
			}
		}
	}
	return scores
}

// variantsRef is the plain reading of a query term's variants (lexical_variants.go), over
// the whole vocabulary: the longer terms in sorted order, then the shorter, longest first.
func variantsRef(x *lexIndex, t string, maxSuffix int) []uint32 {
	var voc []string
	for _, m := range []map[string]uint32{x.dict, x.more} {
		for u, id := range m {
			if x.df[id] > 0 {
				voc = append(voc, u)
			}
		}
	}
	slices.Sort(voc)
	letters := func(s string) bool { return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == "" }
	word := func(s string) bool {
		if len(s) < 3 {
			return false
		}
		for _, v := range voc {
			if strings.HasPrefix(v, s) && len(v) <= len(s)+1 {
				return true
			}
		}
		return false
	}
	if len(t) < variantMinLen || !letters(t) {
		return nil
	}
	var out []uint32
	id := func(u string) uint32 {
		if i, ok := x.dict[u]; ok {
			return i
		}
		return x.more[u]
	}
	for _, u := range voc {
		if letters(u) && len(u) > len(t) && len(u)-len(t) <= maxSuffix && strings.HasPrefix(u, t) && !word(u[len(t):]) {
			out = append(out, id(u))
		}
	}
	for n := len(t) - 1; n >= variantMinLen && len(t)-n <= maxSuffix; n-- {
		if slices.Contains(voc, t[:n]) && !word(t[n:]) {
			out = append(out, id(t[:n]))
		}
	}
	return out
}

func TestMaxScoreIsExact(t *testing.T) {
	caps := testcat.GenerateCatalog(2000, 5)
	// the reference scores the whole text: a generation built without the clause lift
	// matches it on every query, the default one on queries of one clause
	p := DefaultLexicalParams()
	p.ClauseLift = 0
	withLexicalParams(t, p)
	noLift := buildCaps(t, 1, caps, cheap)
	p.VariantWeight, p.VariantSuffix = 0.3, 4 // variants on (the default has none)
	withLexicalParams(t, p)
	noLiftVariants := buildCaps(t, 1, caps, cheap)
	withLexicalParams(t, DefaultLexicalParams())
	for _, g := range []*Generation{buildCaps(t, 1, caps, cheap), noLift, noLiftVariants} {
		maxScoreIsExact(t, g, caps, g == noLift || g == noLiftVariants)
	}
}

func maxScoreIsExact(t *testing.T, g *Generation, caps []*registry.Capability, noLift bool) {
	t.Helper()
	queries := []string{"create invoice", "删除 日程", "diagnose npm cache timeout", "export report in billing finance",
		"sync user account permissions", "查询 订单 物流", "update", "monitor cluster node alert metric log", "a b c"}
	for _, c := range caps[100:125] {
		queries = append(queries, c.Title, c.Summary)
	}
	allows := []struct {
		name string
		rc   *registry.RuntimeContext
	}{{"all", nil}, {"public", &registry.RuntimeContext{Scopes: []string{"dev"}}}, {"acme finance", &registry.RuntimeContext{Tenant: "acme", Scopes: []string{"finance"}}}}
	for _, a := range allows {
		allow := g.Filter(a.rc, FilterSpec{})
		if a.rc == nil {
			allow = nil
		}
		for _, qt := range queries {
			q := &Query{Text: qt}
			// every answer is a prefix, bit for bit, of the answer for the whole catalogue
			all, err := g.Retrieve(context.Background(), Lexical, q, allow, len(caps)+1)
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{1, 5, 20, 50} {
				hits, err := g.Retrieve(context.Background(), Lexical, q, allow, limit)
				if err != nil {
					t.Fatal(err)
				}
				if want := all[:min(limit, len(all))]; !slices.EqualFunc(hits, want, func(a, b Hit) bool {
					return a.Doc == b.Doc && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
				}) {
					t.Fatalf("%s %q limit %d: %v, unpruned %v", a.name, qt, limit, hits, want)
				}
				if !noLift && len(text.Clauses(qt)) > 1 {
					continue
				}
				ref := exhaustiveLexical(g, q)
				var refList []cand
				for d, sc := range ref {
					if sc > 0 && (allow == nil || allow.Contains(d)) {
						refList = append(refList, cand{doc: d, score: sc})
					}
				}
				slices.SortFunc(refList, func(a, b cand) int {
					switch {
					case worse(b, a):
						return -1
					case worse(a, b):
						return 1
					}
					return 0
				})
				if len(refList) > limit {
					refList = refList[:limit]
				}
				if len(hits) != len(refList) {
					t.Fatalf("%s %q limit %d: %d hits, reference %d", a.name, qt, limit, len(hits), len(refList))
				}
				for i := range hits {
					if math.Abs(hits[i].Score-float64(refList[i].score)) > 1e-3*math.Max(1, float64(refList[i].score)) {
						t.Fatalf("%s %q limit %d rank %d: score %v, reference %v", a.name, qt, limit, i, hits[i].Score, refList[i].score)
					}
				}
			}
		}
	}
}

func TestMetadata(t *testing.T) {
	g := buildFixture(t, Options{})
	tests := []struct {
		name    string
		q       Query
		want    string
		matched []string
	}{
		{name: "intents and entities", q: Query{Intents: []string{"diagnose"}, Entities: []string{"codex"}}, want: "maintenance.codex.diagnose", matched: []string{"intents:diagnose", "entities:codex"}},
		{name: "chinese intent through concepts", q: Query{Intents: []string{"删除"}, Entities: []string{"日程"}}, want: "myapp.schedule.delete", matched: []string{"intents:delete"}},
		{name: "symptoms", q: Query{Symptoms: []string{"npm_prefix_mismatch"}}, want: "maintenance.codex.diagnose", matched: []string{"symptoms:npm_prefix_mismatch"}},
		{name: "symptom words normalised", q: Query{Symptoms: []string{"NPM prefix mismatch"}}, want: "maintenance.codex.diagnose", matched: []string{"symptoms:npm_prefix_mismatch"}},
		{name: "structured match", q: Query{Match: &registry.StructuredMatch{Domain: "maintenance", Scenario: "cli_upgrade", Intents: []string{"inspect"}}}, want: "maintenance.codex.diagnose", matched: []string{"domain:maintenance", "scenarios:cli_upgrade"}},
		{name: "risk signals", q: Query{Match: &registry.StructuredMatch{RiskSignals: []string{"irreversible"}, Intents: []string{"refund"}}}, want: "payments.create_refund", matched: []string{"risk_signals:irreversible", "intents:refund"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := retrieve(t, g, Metadata, &tt.q, 5)
			if len(hits) == 0 || g.Doc(hits[0].Doc).ID != tt.want {
				t.Fatalf("hits %v, want %s first", ids(g, hits), tt.want)
			}
			for _, m := range tt.matched {
				if !slices.Contains(hits[0].Matched, m) {
					t.Fatalf("matched %v, want %s", hits[0].Matched, m)
				}
			}
		})
	}
	if hits := retrieve(t, g, Metadata, &Query{Text: "codex"}, 5); len(hits) != 0 {
		t.Fatalf("metadata without structured values: %v", ids(g, hits))
	}
}

func TestHierarchy(t *testing.T) {
	g := buildFixture(t, Options{})
	tests := []struct {
		name   string
		q      Query
		prefix []string // the first hits, in order
		has    []string
		absent []string
	}{
		{name: "within a pack", q: Query{Within: "maintenance.codex"}, prefix: []string{"maintenance.codex"},
			has: []string{"maintenance.codex.diagnose", "maintenance.codex.path_conflict_guide", "maintenance.npm"}, absent: []string{"myapp.schedule.create"}},
		{name: "within an action lists its pack", q: Query{Within: "maintenance.codex.update"}, prefix: []string{"maintenance.codex"}},
		{name: "browse by pack id", q: Query{Browse: true, IDs: []string{"myapp.schedule"}}, prefix: []string{"myapp.schedule"}, has: []string{"myapp.schedule.create"}},
		{name: "browse by words", q: Query{Browse: true, Text: "what schedule tools exist"}, prefix: []string{"myapp.schedule"}, has: []string{"myapp.schedule.delete"}},
		{name: "browse chinese", q: Query{Browse: true, Text: "日程"}, prefix: []string{"myapp.schedule"}},
		{name: "browse without scope lists roots", q: Query{Browse: true, Text: "zzz"}, has: []string{"maintenance", "myapp", "maintenance.codex"}},
		{name: "depth order", q: Query{Within: "maintenance"}, prefix: []string{"maintenance"}, has: []string{"maintenance.codex", "maintenance.codex.diagnose"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := retrieve(t, g, Hierarchy, &tt.q, 30)
			got := ids(g, hits)
			if len(got) < len(tt.prefix) || !slices.Equal(got[:len(tt.prefix)], tt.prefix) {
				t.Fatalf("hits %v, want prefix %v", got, tt.prefix)
			}
			for _, id := range tt.has {
				if !slices.Contains(got, id) {
					t.Fatalf("%s missing from %v", id, got)
				}
			}
			for _, id := range tt.absent {
				if slices.Contains(got, id) {
					t.Fatalf("%s must not be listed: %v", id, got)
				}
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Fatalf("not sorted: %v", hits)
				}
			}
		})
	}
	// children before grandchildren
	hits := retrieve(t, g, Hierarchy, &Query{Within: "maintenance"}, 30)
	got := ids(g, hits)
	if slices.Index(got, "maintenance.codex") > slices.Index(got, "maintenance.codex.diagnose") {
		t.Fatalf("a grandchild ranked above a child: %v", got)
	}
	if hits := retrieve(t, g, Hierarchy, &Query{Text: "codex"}, 5); len(hits) != 0 {
		t.Fatalf("no scope and no browse must find nothing: %v", ids(g, hits))
	}
}

type fakeHistory map[string]float64

func (h fakeHistory) Uses(user, project string) map[string]float64 {
	if user != "alice" {
		return nil
	}
	return h
}

func TestHistory(t *testing.T) {
	g := buildFixture(t, Options{History: fakeHistory{"myapp.schedule.list": 3, "maintenance.codex.update": 1, "gone.id": 9, "payments.create_refund": 5}})
	rc := &registry.RuntimeContext{User: "alice", Scopes: []string{"dev"}}
	hits, err := g.Retrieve(context.Background(), History, &Query{User: "alice"}, g.Filter(rc, FilterSpec{}), 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(g, hits); !slices.Equal(got, []string{"myapp.schedule.list", "maintenance.codex.update"}) {
		t.Fatalf("history hits %v", got)
	}
	if hits := retrieve(t, g, History, &Query{User: "bob"}, 5); len(hits) != 0 {
		t.Fatalf("bob has no history: %v", hits)
	}
	if hits := retrieve(t, buildFixture(t, Options{}), History, &Query{User: "alice"}, 5); len(hits) != 0 {
		t.Fatalf("nil history source: %v", hits)
	}
}

func TestSemanticSparse(t *testing.T) {
	g := buildFixture(t, Options{})
	tests := []struct {
		q    string
		want string
		top  int
	}{
		{q: "codex still runs the old version", want: "maintenance.codex.diagnose", top: 2},
		{q: "删除日程", want: "myapp.schedule.delete", top: 3},
		{q: "remove a calendar event", want: "myapp.schedule.delete", top: 3},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			hits := retrieve(t, g, Semantic, &Query{Text: tt.q}, 10)
			if i := slices.Index(ids(g, hits), tt.want); i < 0 || i >= tt.top {
				t.Fatalf("%q: %s not in top %d: %v", tt.q, tt.want, tt.top, ids(g, hits))
			}
		})
	}
}

func TestEmbedText(t *testing.T) {
	c := fixtureCaps()[2]
	s := embedText(c)
	for _, want := range []string{c.Title, "when to use: 更新后实际运行版本仍然较旧", "when not to use: 用户已经明确要求回滚", "entities: codex", "intents: diagnose"} {
		if !strings.Contains(s, want) {
			t.Errorf("embedding text lacks %q:\n%s", want, s)
		}
	}
}

func TestAnalyzedTermsAccepted(t *testing.T) {
	g := buildFixture(t, Options{})
	a := retrieve(t, g, Lexical, &Query{Text: "codex path conflict"}, 5)
	b := retrieve(t, g, Lexical, &Query{Text: "codex path conflict", Terms: text.Analyze("codex path conflict")}, 5)
	if !slices.Equal(ids(g, a), ids(g, b)) {
		t.Fatalf("explicit terms changed the answer: %v vs %v", ids(g, a), ids(g, b))
	}
}

type fakeFeedback map[string][]Vote

func (f fakeFeedback) Votes(tenant, query string) []Vote { return f[tenant] }

// TestHistoryVotes: the tenant's votes join the caller's uses as absolute strengths, only
// among the allowed documents, and name their sessions, not their queries.
func TestHistoryVotes(t *testing.T) {
	fb := fakeFeedback{"acme": {
		{ID: "myapp.schedule.list", Weight: 0.5, Sessions: 3},
		{ID: "payments.create_refund", Weight: 0.9, Sessions: 1}, // not allowed for dev
		{ID: "gone.id", Weight: 0.9, Sessions: 1},
	}}
	g := buildFixture(t, Options{History: fakeHistory{"myapp.schedule.list": 1, "maintenance.codex.update": 1}, Feedback: fb})
	rc := &registry.RuntimeContext{User: "alice", Scopes: []string{"dev"}}
	hits, err := g.Retrieve(context.Background(), History, &Query{User: "alice", Tenant: "acme", Text: "schedule"}, g.Filter(rc, FilterSpec{}), 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(g, hits); !slices.Equal(got, []string{"myapp.schedule.list", "maintenance.codex.update"}) {
		t.Fatalf("history hits %v", got)
	}
	if want := 1 - (1-0.5)*(1-useStrength(1)); math.Abs(hits[0].Score-want) > 1e-6 || !slices.Equal(hits[0].Matched, []string{"history", "3 past successful sessions"}) {
		t.Fatalf("voted and used: %+v, want strength %v", hits[0], want)
	}
	if math.Abs(hits[1].Score-useStrength(1)) > 1e-6 || !slices.Equal(hits[1].Matched, []string{"history"}) {
		t.Fatalf("used only: %+v", hits[1])
	}
	// votes alone, for a caller without uses; none for another tenant
	hits = retrieve(t, g, History, &Query{User: "bob", Tenant: "acme"}, 5)
	if len(hits) == 0 || !slices.Equal(hits[0].Matched, []string{"1 past successful session"}) {
		t.Fatalf("bob's votes: %+v", hits)
	}
	if hits := retrieve(t, g, History, &Query{User: "bob", Tenant: "globex"}, 5); len(hits) != 0 {
		t.Fatalf("globex got acme's votes: %v", ids(g, hits))
	}
}
