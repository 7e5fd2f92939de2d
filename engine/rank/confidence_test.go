package rank

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestFitRecoversSignal fits samples whose labels follow one feature and checks that the
// fitted probabilities track the truth (a calibrated model) and that the weight of a noise
// feature stays small.
func TestFitRecoversSignal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var samples []Labelled
	for i := 0; i < 4000; i++ {
		var f [NumFeatures]float64
		f[fCoverage] = r.Float64()
		f[fTerms] = r.NormFloat64() // noise
		p := sigmoid(8*f[fCoverage] - 4)
		samples = append(samples, Labelled{Features: f, Correct: r.Float64() < p, Found: f[fCoverage] > 0.3})
	}
	m, err := Fit(samples, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, cov := range []float64{0.1, 0.5, 0.9} {
		var f [NumFeatures]float64
		f[fCoverage] = cov
		pc, _ := m.Predict(f)
		if want := sigmoid(8*cov - 4); math.Abs(pc-want) > 0.06 {
			t.Errorf("coverage %.1f: p %.3f, want %.3f", cov, pc, want)
		}
	}
	if w := m.Correct[1+fTerms]; math.Abs(w) > 0.15 {
		t.Errorf("noise weight %.3f", w)
	}
	var lo, hi [NumFeatures]float64
	lo[fCoverage], hi[fCoverage] = 0.1, 0.6
	if _, f := m.Predict(lo); f > 0.2 {
		t.Errorf("found at coverage 0.1: %.3f", f)
	}
	if _, f := m.Predict(hi); f < 0.8 {
		t.Errorf("found at coverage 0.6: %.3f", f)
	}
	if _, err := Fit(nil, FitOptions{}); err == nil {
		t.Error("Fit(nil) succeeded")
	}
}

// TestDefaultModelFits: the embedded model matches this build's features (refit it with
// `capdex calibrate model` when they change).
func TestDefaultModelFits(t *testing.T) {
	if DefaultModel() == nil {
		_, err := DecodeModel(defaultModelJSON)
		t.Fatalf("embedded confidence model unusable: %v", err)
	}
	if DefaultThresholds().Model == nil {
		t.Fatal("default thresholds carry no model")
	}
}

// TestDecodeModelRejects names what is wrong with a bad model.
func TestDecodeModelRejects(t *testing.T) {
	good, _ := json.Marshal(DefaultModel())
	for name, edit := range map[string]func(*Model){
		"short weights":  func(m *Model) { m.Correct = m.Correct[:3] },
		"renamed":        func(m *Model) { m.Features = append([]string{"x"}, m.Features[1:]...) },
		"zero scale":     func(m *Model) { m.Scale[0] = 0 },
		"cut-off over 1": func(m *Model) { m.ConfidentAt = 2 },
	} {
		var m Model
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		edit(&m)
		b, _ := json.Marshal(&m)
		if _, err := DecodeModel(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := DecodeThresholds([]byte(`{"floor":0,"confident":0,"margin":0,"model":` + string(b) + `}`)); err == nil {
			t.Errorf("%s: thresholds accepted", name)
		}
	}
	if _, err := DecodeModel([]byte(`{"bogus":1}`)); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestResolveWithModel: with a model, the decision follows its two probabilities, and
// Confidence reports the first.
func TestResolveWithModel(t *testing.T) {
	cands := func() []Candidate {
		a := &registry.Capability{ID: "p.a", ResourceType: registry.TypeAction, Title: "A"}
		b := &registry.Capability{ID: "p.b", ResourceType: registry.TypeAction, Title: "B"}
		return []Candidate{
			{Cap: a, Score: 0.05, Coverage: 0.9, Evidence: []Source{{Retriever: Lexical, Rank: 1, Raw: 9}}},
			{Cap: b, Score: 0.01, Evidence: []Source{{Retriever: Lexical, Rank: 2, Raw: 2}}},
		}
	}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	th := Thresholds{Model: m}
	for _, tt := range []struct {
		name           string
		correct, found float64 // the biases
		want           registry.Resolution
	}{
		{"sure", 3, 3, registry.Confident},
		{"found, unsure", 0, 3, registry.Ambiguous},
		{"not found", 3, -3, registry.NoConfidentMatch},
	} {
		m.Correct[0], m.Found[0] = tt.correct, tt.found
		cs := cands()
		res, _, missing := Resolve(cs, Signals{}, th)
		if res != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, res, tt.want)
		}
		if res == registry.Ambiguous && len(missing) == 0 {
			t.Errorf("%s: ambiguous without missing_information", tt.name)
		}
		if c := Confidence(cs, Signals{}, th); math.Abs(c-sigmoid(tt.correct)) > 1e-9 {
			t.Errorf("%s: confidence %v, want %v", tt.name, c, sigmoid(tt.correct))
		}
	}
}

// TestResolveNoWordsMet: a best candidate that covers none of the request's words is no
// match, however sure the model is (a linear model extrapolates there: "how many grand
// slams has serena williams won" reached .88 on a semantic-only hit).
func TestResolveNoWordsMet(t *testing.T) {
	a := &registry.Capability{ID: "p.a", ResourceType: registry.TypeAction, Title: "A"}
	b := &registry.Capability{ID: "p.b", ResourceType: registry.TypeAction, Title: "B"}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[0], m.Found[0] = 3, 3
	for _, tt := range []struct {
		coverage float64
		want     registry.Resolution
	}{{0, registry.NoConfidentMatch}, {0.05, registry.Confident}} {
		cs := []Candidate{
			{Cap: a, Score: 0.002, Coverage: tt.coverage, Evidence: []Source{{Retriever: Semantic, Rank: 1, Raw: 0.01}}},
			{Cap: b, Score: 0.001, Evidence: []Source{{Retriever: Semantic, Rank: 2, Raw: 0.005}}},
		}
		res, reason, _ := Resolve(cs, Signals{}, Thresholds{Model: m})
		if res != tt.want {
			t.Errorf("coverage %v: %s, want %s", tt.coverage, res, tt.want)
		}
		if res == registry.NoConfidentMatch && reason != ReasonNoMatch {
			t.Errorf("coverage %v: reason %q, want %q", tt.coverage, reason, ReasonNoMatch)
		}
	}
	// A browse request lists what there is, words met or not.
	cs := []Candidate{{Cap: a, Score: 0.002, Coverage: 0}, {Cap: b, Score: 0.001}}
	if res, _, _ := Resolve(cs, Signals{Browse: true}, Thresholds{Model: m}); res != registry.Ambiguous {
		t.Errorf("browse: %s, want ambiguous", res)
	}
}

// TestFeaturesAgreementAndDuplicates: the entity and intent agreement features say whether
// the best candidate is about what the request names ("docker 把磁盘占满了" answered by an
// npm action is a mismatch), and the duplicate features see a runner-up of near-identical
// text doing the same thing.
func TestFeaturesAgreementAndDuplicates(t *testing.T) {
	npm := &registry.Capability{ID: "m.npm.cache_clean", ResourceType: registry.TypeAction, Title: "Clean the npm cache",
		Intents: []string{"clean"}, Entities: []string{"npm", "cache"}}
	dock := &registry.Capability{ID: "m.docker.prune", ResourceType: registry.TypeAction, Title: "Prune docker data",
		Intents: []string{"clean"}, Entities: []string{"docker"}}
	list := func(top *registry.Capability, ents []string) []Candidate {
		return []Candidate{
			{Cap: top, Score: 0.05, Coverage: 0.5, MatchedEntities: ents, MatchedIntents: []string{"clean"}, Evidence: []Source{{Retriever: Lexical, Rank: 1, Raw: 9}}},
			{Cap: dock, Score: 0.01, Evidence: []Source{{Retriever: Lexical, Rank: 2, Raw: 2}}},
		}
	}
	s := Signals{Entities: []string{"docker"}, Intents: []string{"clean"}}
	f, ok := Features(list(npm, nil), s)
	if !ok || f[fEntityMiss] != 1 || f[fEntityAgree] != 0 || f[fIntentAgree] != 1 || f[fIntentMiss] != 0 {
		t.Errorf("npm for docker: entity agree %v miss %v, intent agree %v miss %v", f[fEntityAgree], f[fEntityMiss], f[fIntentAgree], f[fIntentMiss])
	}
	g, _ := Features(list(dock, []string{"docker"}), s)
	if g[fEntityMiss] != 0 || g[fEntityAgree] != 1 {
		t.Errorf("docker for docker: entity agree %v miss %v", g[fEntityAgree], g[fEntityMiss])
	}
	if f[fDupVerb] != 1 || f[fDupText] >= 0.5 {
		t.Errorf("npm then docker: dup verb %v text %v", f[fDupVerb], f[fDupText])
	}
	if m := DefaultModel(); m != nil {
		if pf, pg := must(m.Predict(f)), must(m.Predict(g)); pf >= pg {
			t.Errorf("the shipped model is as sure of a mismatched entity (%.3f) as of a matched one (%.3f)", pf, pg)
		}
	}
	a := &registry.Capability{ID: "tax.queryPersonalTaxInfo", Summary: "查询用户个人的税务相关信息"}
	b := &registry.Capability{ID: "tax.queryPropertyTaxInfo", Summary: "查询房产相关的税务信息"}
	if j := jaccard(capWords(a), capWords(b)); j < 0.3 {
		t.Errorf("near-duplicate tools: similarity %.3f", j)
	}
	if v := leadVerb(a); v != "query" {
		t.Errorf("lead verb %q", v)
	}
}

func must(p, _ float64) float64 { return p }

// TestChooseCutoffs: the cut-off of each regime is the least at which the weighted
// precision of the searches at or above it reaches the target.
func TestChooseCutoffs(t *testing.T) {
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1)}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[1+fCoverage] = 1 // p = sigmoid(coverage)
	var samples []Labelled
	for k := 0; k <= 40; k++ {
		var f [NumFeatures]float64
		f[fCoverage] = float64(k) / 10 // p from 0.5 to 0.98
		samples = append(samples, Labelled{Features: f, Correct: k >= 20})
		f[fRich] = 1
		samples = append(samples, Labelled{Features: f, Correct: k >= 5})
	}
	ChooseCutoffs(m, samples, 0.95)
	// bare: 21 right from coverage 2.0; .95 allows one wrong (1.9, p .870), not two (1.8,
	// p .858): the least cut-off above .858 is .86. Curated: 36 right from 0.5; one wrong
	// (0.4, p .599), not 0.3 (p .574): .58.
	if want := 0.86; math.Abs(m.ConfidentAt-want) > 0.006 {
		t.Errorf("bare cut-off %v, want %v", m.ConfidentAt, want)
	}
	if want := 0.58; math.Abs(m.ConfidentAtCurated-want) > 0.006 {
		t.Errorf("curated cut-off %v, want %v", m.ConfidentAtCurated, want)
	}
	var f [NumFeatures]float64
	if m.ConfidentFor(f) != m.ConfidentAt {
		t.Error("bare search read the curated cut-off")
	}
	f[fRich] = 1
	if m.ConfidentFor(f) != m.ConfidentAtCurated {
		t.Error("curated search read the bare cut-off")
	}
}

// TestPredictClipsToFittedRange: a feature outside the range of the fitted searches reads
// as the range's end (no extrapolation), and Fit records the range.
func TestPredictClipsToFittedRange(t *testing.T) {
	var samples []Labelled
	for k := 0; k < 40; k++ {
		var f [NumFeatures]float64
		f[fCoverage] = float64(k%10) / 10 // 0 .. 0.9
		samples = append(samples, Labelled{Features: f, Correct: k%10 >= 5 || k%7 == 0, Found: true})
	}
	m, err := Fit(samples, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Lo[fCoverage] != 0 || m.Hi[fCoverage] != 0.9 {
		t.Fatalf("coverage range [%v, %v], want [0, 0.9]", m.Lo[fCoverage], m.Hi[fCoverage])
	}
	var in, out [NumFeatures]float64
	in[fCoverage], out[fCoverage] = 0.9, 5
	if a, b := must(m.Predict(in)), must(m.Predict(out)); a != b {
		t.Errorf("coverage 5 predicts %v, coverage 0.9 (the fitted maximum) %v: want equal", b, a)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Lo[fCoverage] = 1
	if err := m.Validate(); err == nil {
		t.Error("lo above hi accepted")
	}
	m.Lo = m.Lo[:3]
	if err := m.Validate(); err == nil {
		t.Error("short lo accepted")
	}
}

// TestResolvePackCannotServe: a pack at the top that declares what the request asks, with
// nothing usable inside it that does (its approving child hidden or forbidden), cannot
// serve the request: no_confident_match. With that child usable, or a request it does not
// declare, the pack answers ambiguous (the caller picks inside it).
func TestResolvePackCannotServe(t *testing.T) {
	pack := &registry.Capability{ID: "fin.claims", ResourceType: registry.TypePack, Title: "Claims", Intents: []string{"submit", "approve"}}
	submit := &registry.Capability{ID: "fin.claims.submit", ResourceType: registry.TypeAction, Title: "Submit", Intents: []string{"submit"}}
	approve := &registry.Capability{ID: "fin.claims.approve", ResourceType: registry.TypeAction, Title: "Approve", Intents: []string{"approve"}}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[0], m.Found[0] = -3, 3 // found, unsure: ambiguous unless a rule says otherwise
	ev := []Source{{Retriever: Lexical, Rank: 1, Raw: 5}}
	for _, tt := range []struct {
		name    string
		intents []string
		approve registry.Availability // "" = not among the candidates
		want    registry.Resolution
	}{
		{"approving child hidden", []string{"approve"}, "", registry.NoConfidentMatch},
		{"approving child forbidden", []string{"approve"}, registry.Forbidden, registry.NoConfidentMatch},
		{"approving child usable", []string{"approve"}, registry.Available, registry.Ambiguous},
		{"a request the pack does not declare", []string{"delete"}, "", registry.Ambiguous},
		{"no intent", nil, "", registry.Ambiguous},
	} {
		cs := []Candidate{
			{Cap: pack, Score: 0.03, Coverage: 0.5, Evidence: ev},
			{Cap: submit, Score: 0.02, Coverage: 0.5, Evidence: ev},
		}
		if tt.approve != "" {
			cs = append(cs, Candidate{Cap: approve, Score: 0.01, Availability: tt.approve, Evidence: ev})
		}
		for _, th := range []Thresholds{{Model: m}, {Confident: 1}} { // the model, and the thresholds alone
			res, _, _ := Resolve(cs, Signals{Intents: tt.intents}, th)
			if res != tt.want {
				t.Errorf("%s (model %v): %s, want %s", tt.name, th.Model != nil, res, tt.want)
			}
		}
	}
	// With Signals.Serves the subtree decides, not the candidates: a usable approving child
	// that no retriever returned still serves (ambiguous), and the pack's own answer that
	// nothing serves wins over a candidate list that shows none.
	cs := []Candidate{
		{Cap: pack, Score: 0.03, Coverage: 0.5, Evidence: ev},
		{Cap: submit, Score: 0.02, Coverage: 0.5, Evidence: ev},
	}
	for _, tt := range []struct {
		name   string
		serves bool
		want   registry.Resolution
	}{
		{"a serving child not retrieved", true, registry.Ambiguous},
		{"nothing in the subtree serves", false, registry.NoConfidentMatch},
	} {
		var asked []string
		serves := func(id string, intents []string) bool {
			asked = append(asked, id)
			return tt.serves
		}
		for _, th := range []Thresholds{{Model: m}, {Confident: 1}} {
			asked = nil
			res, _, _ := Resolve(cs, Signals{Intents: []string{"approve"}, Serves: serves}, th)
			if res != tt.want || !slices.Equal(asked, []string{"fin.claims"}) {
				t.Errorf("%s (model %v): %s after asking %v, want %s after asking [fin.claims]", tt.name, th.Model != nil, res, asked, tt.want)
			}
		}
	}
}

// TestFeaturesEntityOwn: entity_own is set when a matched entity of the request is the best
// candidate's area's own (no candidate of its domain outside its pack declares it; the packs
// above it do not count, nor other domains), not when other areas of the domain declare it
// too ("ticket" is sold by trains, flights and trips alike).
func TestFeaturesEntityOwn(t *testing.T) {
	book := &registry.Capability{ID: "travel.trains.book", ResourceType: registry.TypeAction, Title: "Buy a train ticket",
		Intents: []string{"book"}, Entities: []string{"train", "ticket", "seat"}}
	search := &registry.Capability{ID: "travel.trains.search", ResourceType: registry.TypeAction, Title: "Search trains",
		Intents: []string{"search"}, Entities: []string{"train", "ticket", "station"}}
	travel := &registry.Capability{ID: "travel", ResourceType: registry.TypePack, Title: "Travel",
		Entities: []string{"flight", "train", "trip", "ticket"}}
	flights := &registry.Capability{ID: "travel.flights.search", ResourceType: registry.TypeAction, Title: "Search flights",
		Intents: []string{"search"}, Entities: []string{"flight", "ticket"}}
	policy := &registry.Capability{ID: "reimbursement.policy.search", ResourceType: registry.TypeAction, Title: "Search the travel policy",
		Intents: []string{"search"}, Entities: []string{"policy", "seat", "train"}}
	list := func(matched ...string) []Candidate {
		return []Candidate{
			{Cap: book, Score: 0.05, Coverage: 0.5, MatchedEntities: matched, Evidence: []Source{{Retriever: Lexical, Rank: 1, Raw: 9}}},
			{Cap: search, Score: 0.03, Evidence: []Source{{Retriever: Lexical, Rank: 2, Raw: 5}}},
			{Cap: travel, Score: 0.02, Evidence: []Source{{Retriever: Lexical, Rank: 3, Raw: 4}}},
			{Cap: flights, Score: 0.01, Evidence: []Source{{Retriever: Lexical, Rank: 4, Raw: 2}}},
			{Cap: policy, Score: 0.005, Evidence: []Source{{Retriever: Lexical, Rank: 5, Raw: 1}}},
		}
	}
	for _, tt := range []struct {
		ents, matched []string
		want          float64
	}{
		{[]string{"ticket"}, []string{"ticket"}, 0},                   // flights sell tickets too
		{[]string{"train", "ticket"}, []string{"train", "ticket"}, 1}, // in travel only the trains pack and the travel pack above it hold train (a reimbursement action too: another domain)
		{[]string{"seat"}, []string{"seat"}, 1},                       // a sibling need not declare it; another domain's does not count
		{[]string{"train"}, nil, 0},                                   // nothing matched: no agreement, no own entity
		{nil, []string{"train"}, 0},                                   // the request names no entity
	} {
		f, ok := Features(list(tt.matched...), Signals{Entities: tt.ents})
		if !ok || f[fEntityOwn] != tt.want {
			t.Errorf("request %v, matched %v: entity_own %v, want %v", tt.ents, tt.matched, f[fEntityOwn], tt.want)
		}
	}
}

// TestResolveVagueGoalAsks: a vague goal without scope (seed 000 §17) is answered with a
// question when the best candidate speaks to some of its words, even where the model finds
// no match; with no word met it stays no_confident_match.
func TestResolveVagueGoalAsks(t *testing.T) {
	a := &registry.Capability{ID: "p.a", ResourceType: registry.TypeAction, Title: "A"}
	b := &registry.Capability{ID: "p.b", ResourceType: registry.TypeAction, Title: "B"}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[0], m.Found[0] = -3, -3 // sure there is no match
	for _, tt := range []struct {
		coverage float64
		s        Signals
		want     registry.Resolution
	}{
		{0.4, Signals{Vague: true}, registry.Ambiguous},
		{0, Signals{Vague: true}, registry.NoConfidentMatch},
		{0.4, Signals{}, registry.NoConfidentMatch},
		{0.4, Signals{Vague: true, Scope: "p"}, registry.NoConfidentMatch},
	} {
		cs := []Candidate{
			{Cap: a, Score: 0.002, Coverage: tt.coverage, Evidence: []Source{{Retriever: Lexical, Rank: 1, Raw: 1}}},
			{Cap: b, Score: 0.001, Evidence: []Source{{Retriever: Lexical, Rank: 2, Raw: 0.5}}},
		}
		if res, _, _ := Resolve(cs, tt.s, Thresholds{Model: m}); res != tt.want {
			t.Errorf("coverage %v, vague %v, scope %q: %s, want %s", tt.coverage, tt.s.Vague, tt.s.Scope, res, tt.want)
		}
	}
}

// TestResolvePackServesAsks: a pack at the top that declares an intent of the request and
// holds a usable child that does it is answered with a question even where the model finds
// no match (the request is about this area); without the intent, or when nothing usable
// inside serves it, the model's no_confident_match stands.
func TestResolvePackServesAsks(t *testing.T) {
	pack := &registry.Capability{ID: "ops", ResourceType: registry.TypePack, Title: "Ops", Intents: []string{"diagnose", "update"}}
	diag := &registry.Capability{ID: "ops.diagnose", ResourceType: registry.TypeAction, Title: "Diagnose", Intents: []string{"diagnose"}}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[0], m.Found[0] = -3, -3 // sure there is no match
	ev := []Source{{Retriever: Lexical, Rank: 1, Raw: 5}}
	for _, tt := range []struct {
		name    string
		intents []string
		child   registry.Availability // "" = not among the candidates
		want    registry.Resolution
	}{
		{"a usable child diagnoses", []string{"diagnose"}, registry.Available, registry.Ambiguous},
		{"the diagnosing child forbidden", []string{"diagnose"}, registry.Forbidden, registry.NoConfidentMatch},
		{"the pack declares an intent its listed children do not", []string{"update"}, registry.Available, registry.NoConfidentMatch},
		{"an intent the pack does not declare", []string{"delete"}, registry.Available, registry.NoConfidentMatch},
		{"no intent", nil, registry.Available, registry.NoConfidentMatch},
	} {
		cs := []Candidate{{Cap: pack, Score: 0.03, Coverage: 0.3, Evidence: ev}}
		if tt.child != "" {
			cs = append(cs, Candidate{Cap: diag, Score: 0.02, Coverage: 0.3, Availability: tt.child, Evidence: ev})
		}
		if res, _, _ := Resolve(cs, Signals{Intents: tt.intents}, Thresholds{Model: m}); res != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, res, tt.want)
		}
	}
}

// TestResolveEmptyAreaFirst: when the lexical retriever's best hit was a pack in which
// nothing is visible to the caller (Signals.EmptyAreaFirst), the answer is
// no_confident_match whatever the model or the thresholds say of the neighbours; a browse
// still lists, and an exact id still answers.
func TestResolveEmptyAreaFirst(t *testing.T) {
	a := &registry.Capability{ID: "fly.search", ResourceType: registry.TypeAction, Title: "Search flights"}
	m := &Model{Features: FeatureNames[:], Mean: make([]float64, NumFeatures), Scale: make([]float64, NumFeatures),
		Correct: make([]float64, NumFeatures+1), Found: make([]float64, NumFeatures+1), ConfidentAt: 0.8, NoMatchBelow: 0.3}
	for i := range m.Scale {
		m.Scale[i] = 1
	}
	m.Correct[0], m.Found[0] = 3, 3 // sure the top answer is right
	ev := []Source{{Retriever: Lexical, Rank: 1, Raw: 5}}
	for _, tt := range []struct {
		name  string
		s     Signals
		exact bool
		want  registry.Resolution
	}{
		{"an empty area first", Signals{EmptyAreaFirst: true}, false, registry.NoConfidentMatch},
		{"no empty area", Signals{}, false, registry.Confident},
		{"a browse", Signals{EmptyAreaFirst: true, Browse: true}, false, registry.Ambiguous},
		{"an exact id", Signals{EmptyAreaFirst: true}, true, registry.Confident},
	} {
		evs := ev
		if tt.exact {
			evs = []Source{{Retriever: Exact, Rank: 1, Raw: 1}}
		}
		cs := []Candidate{{Cap: a, Score: 0.05, Coverage: 0.8, Evidence: evs}}
		for _, th := range []Thresholds{{Model: m}, {Confident: 0.01}} {
			if res, _, _ := Resolve(cs, tt.s, th); res != tt.want {
				t.Errorf("%s (model %v): %s, want %s", tt.name, th.Model != nil, res, tt.want)
			}
		}
	}
}
