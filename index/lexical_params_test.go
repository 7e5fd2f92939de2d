package index

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

// withLexicalParams builds with p for the rest of the test.
func withLexicalParams(t *testing.T, p LexicalParams) {
	t.Helper()
	old, err := SetLexicalParams(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetLexicalParams(old) })
}

func action(id, title, summary string) *registry.Capability {
	return &registry.Capability{ID: id, Title: title, Summary: summary, ResourceType: registry.TypeAction, Status: registry.StatusActive}
}

// multiTaskCaps: five near twins of a hotel-booking task and one weather tool, so that the
// hotel clause of a two-task query outweighs the weather one over the whole text.
func multiTaskCaps() []*registry.Capability {
	return []*registry.Capability{
		action("hotel.book", "Book hotel room", "Book a hotel room reservation in a city"),
		action("hotel.book_suite", "Book hotel suite", "Book a hotel suite reservation in a city"),
		action("hotel.reserve", "Reserve hotel room", "Reserve a hotel room for a stay in a city"),
		action("hotel.cancel", "Cancel hotel reservation", "Cancel a hotel room reservation"),
		action("hotel.price", "Hotel room price", "Get the price of a hotel room reservation in a city"),
		action("weather.forecast", "Weather forecast", "Get the weather forecast of a place"),
		action("news.latest", "Latest news", "Get the latest news headlines"),
	}
}

func TestLiftClausesKeepsEveryTask(t *testing.T) {
	const q = "Book a hotel room reservation in the city of Paris for a hotel stay. Then get the forecast."
	const limit = 2
	p := DefaultLexicalParams()
	p.ClauseLift = 0
	withLexicalParams(t, p)
	g0 := buildCaps(t, 1, multiTaskCaps(), cheap)
	off := ids(g0, retrieve(t, g0, Lexical, &Query{Text: q}, limit))
	if slices.Contains(off, "weather.forecast") {
		t.Fatalf("without the lift the weather tool is already in the top %d (%v): the fixture tests nothing", limit, off)
	}
	p.ClauseLift = 0.9
	withLexicalParams(t, p)
	g := buildCaps(t, 1, multiTaskCaps(), cheap)
	on := ids(g, retrieve(t, g, Lexical, &Query{Text: q}, limit))
	if !slices.Contains(on, "weather.forecast") || !slices.Contains(on, "hotel.book") {
		t.Errorf("with the lift, top %d = %v, want both tasks' answers (hotel.book, weather.forecast); without: %v", limit, on, off)
	}
	if len(on) != limit {
		t.Errorf("got %d hits, want the limit %d", len(on), limit)
	}
	// one sentence: the ranking of the whole text, whatever the lift
	one := "Book a hotel room reservation in the city of Paris and get the forecast"
	p2 := DefaultLexicalParams()
	p2.ClauseLift = 0
	withLexicalParams(t, p2)
	g0 = buildCaps(t, 1, multiTaskCaps(), cheap)
	h0 := retrieve(t, g0, Lexical, &Query{Text: one}, 5)
	p2.ClauseLift = 0.9
	withLexicalParams(t, p2)
	g1 := buildCaps(t, 1, multiTaskCaps(), cheap)
	h1 := retrieve(t, g1, Lexical, &Query{Text: one}, 5)
	if !slices.Equal(ids(g0, h0), ids(g1, h1)) {
		t.Errorf("one clause: %v with the lift, %v without", ids(g1, h1), ids(g0, h0))
	}
	for i := range h0 {
		if h0[i].Score != h1[i].Score {
			t.Errorf("one clause: hit %d scores %g with the lift, %g without", i, h1[i].Score, h0[i].Score)
		}
	}
}

func TestLiftClausesLightClause(t *testing.T) {
	// "Can you get it?" carries little of the query's weight: with ClauseMass its best
	// match is lifted less than with every clause lifted fully.
	const q = "Book a hotel room reservation in the city of Paris for a hotel stay. Can you get the news?"
	score := func(mass float64) (float64, float64) {
		p := DefaultLexicalParams()
		p.ClauseLift, p.ClauseMass = 0.6, mass
		withLexicalParams(t, p)
		g := buildCaps(t, 1, multiTaskCaps(), cheap)
		hits := retrieve(t, g, Lexical, &Query{Text: q}, 10)
		for _, h := range hits {
			if g.Doc(h.Doc).ID == "news.latest" {
				return h.Score, hits[0].Score
			}
		}
		t.Fatalf("news.latest not found: %v", ids(g, hits))
		return 0, 0
	}
	full, top := score(0)
	light, _ := score(1)
	if !(light < full) || !(full < top) {
		t.Errorf("news.latest scores %g with ClauseMass 1, %g with 0 (top %g): want the light clause lifted less", light, full, top)
	}
}

func TestLexicalParamsBSummary(t *testing.T) {
	// with BSummary 0 a summary's length does not lower its term's weight
	caps := []*registry.Capability{
		action("a.short", "", "alpha beta"),
		action("a.long", "", "alpha beta gamma delta epsilon zeta eta theta iota kappa"),
		action("a.other", "", "omega"),
	}
	scores := func(b float64) map[string]float64 {
		p := DefaultLexicalParams()
		p.BSummary = b
		withLexicalParams(t, p)
		g := buildCaps(t, 1, caps, cheap)
		out := map[string]float64{}
		for _, h := range retrieve(t, g, Lexical, &Query{Text: "alpha"}, 5) {
			out[g.Doc(h.Doc).ID] = h.Score
		}
		return out
	}
	flat, full := scores(0), scores(1)
	if math.Abs(flat["a.short"]-flat["a.long"]) > 1e-6 {
		t.Errorf("BSummary 0: short %g, long %g, want equal", flat["a.short"], flat["a.long"])
	}
	if !(full["a.short"] > full["a.long"]) {
		t.Errorf("BSummary 1: short %g, long %g, want the short summary ahead", full["a.short"], full["a.long"])
	}
}

func TestSetLexicalParams(t *testing.T) {
	def := DefaultLexicalParams()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []LexicalParams{
		{K1: -1}, {K1: math.NaN()}, {K1: 1, BSummary: 1.5}, {K1: 1, ClauseLift: -0.1}, {K1: 1, ClauseMass: 2}, {K1: 1, BOther: math.Inf(1)},
	} {
		if _, err := SetLexicalParams(bad); !errors.Is(err, ErrLexicalParams) {
			t.Errorf("SetLexicalParams(%+v) = %v, want ErrLexicalParams", bad, err)
		}
	}
	if got := currentLexicalParams(); got != def {
		t.Errorf("after refused sets the parameters are %+v, want the defaults %+v", got, def)
	}
	p := def
	p.K1 = 2
	old, err := SetLexicalParams(p)
	if err != nil || old != def {
		t.Fatalf("SetLexicalParams = %+v, %v", old, err)
	}
	back, err := SetLexicalParams(def)
	if err != nil || back != p {
		t.Fatalf("restoring: %+v, %v", back, err)
	}
}
