package rank

import (
	"math"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// conceptAnalyze analyses text as the engine's query.FieldTerms does: its terms plus
// "~"-prefixed concept names.
func conceptAnalyze(s string) []string {
	out := text.Analyze(s)
	for _, c := range text.ConceptsIn(s) {
		out = append(out, "~"+c)
	}
	return out
}

// symptomCaps are two capabilities alike but for one documenting the symptom
// "unreachable" in another language than the query's, in an alias.
func symptomCaps() []*registry.Capability {
	return []*registry.Capability{
		{ID: "ops.docker.info", Title: "Docker daemon status", Summary: "Reports whether the docker daemon runs.",
			Aliases: []string{"cannot connect to the docker daemon"}, Entities: []string{"docker"},
			Symptoms: append(make([]string, 0, 4), "docker_daemon_not_running")},
		{ID: "ops.docker.logs", Title: "Docker container logs", Summary: "Shows the docker logs of a container.",
			Entities: []string{"docker"}},
	}
}

func TestSymptomValues(t *testing.T) {
	caps := symptomCaps()
	info := caps[0]
	info.WhenToUse = []string{"容器闪退以后"}
	if got, want := symptomValues(info), []string{"docker_daemon_not_running", "unreachable", "crash"}; !slices.Equal(got, want) {
		t.Fatalf("symptomValues = %q, want %q", got, want)
	}
	if got := info.Symptoms[:cap(info.Symptoms)][1]; got != "" || len(info.Symptoms) != 1 {
		t.Fatalf("symptomValues wrote into the capability's own symptoms: %q", info.Symptoms[:cap(info.Symptoms)])
	}
	// a symptom named by a declared symptom's words, once
	own := &registry.Capability{ID: "x", Symptoms: []string{"npm_registry_unreachable"}, WhenToUse: []string{"npm 连不上 registry"}}
	if got, want := symptomValues(own), []string{"npm_registry_unreachable", "unreachable"}; !slices.Equal(got, want) {
		t.Fatalf("symptomValues = %q, want %q", got, want)
	}
	if got := symptomValues(caps[1]); len(got) != 0 {
		t.Fatalf("logs documents %q", got)
	}
}

// TestRerankSymptomConcept checks that a query reporting a symptom in Chinese gives the
// symptom bonus to the capability documenting it in English, with or without a TermCache.
func TestRerankSymptomConcept(t *testing.T) {
	caps := symptomCaps()
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	q := "docker 连不上"
	terms := conceptAnalyze(q)
	slices.Sort(terms)
	s := Signals{Terms: slices.Compact(terms), Entities: []string{"docker"}, Symptoms: []string{"unreachable"}}
	for _, tc := range []*TermCache{NewTermCache(snap.Caps, conceptAnalyze), nil} {
		var cands []Candidate
		for d, c := range snap.Caps {
			cands = append(cands, Candidate{Doc: uint32(d), Cap: c, Availability: registry.Available,
				Evidence: []Source{{Retriever: Lexical, Rank: 1, Raw: 1}}})
		}
		Fuse(cands, DefaultWeights())
		opts := DefaultRerankOptions()
		opts.Terms = tc
		Rerank(cands, s, opts)
		Complete(cands)
		top := &cands[0]
		if top.Cap.ID != "ops.docker.info" || !slices.Equal(top.MatchedSymptoms, []string{"unreachable"}) ||
			component(top, CompSymptom) != opts.SymptomBonus {
			t.Fatalf("cache %v: top %s, matched symptoms %q, symptom bonus %v", tc != nil, top.Cap.ID, top.MatchedSymptoms, component(top, CompSymptom))
		}
		if len(cands[1].MatchedSymptoms) != 0 || component(&cands[1], CompSymptom) != 0 {
			t.Fatalf("cache %v: logs matched %q", tc != nil, cands[1].MatchedSymptoms)
		}
	}
}

// TestCoverageSpelledSymptom checks that a capability holding a symptom concept covers the
// query's words that spell it, counted once, and that other concepts cover nothing more
// than their "~" term.
func TestCoverageSpelledSymptom(t *testing.T) {
	caps := symptomCaps()
	caps = append(caps, &registry.Capability{ID: "ops.menu", Title: "Canteen menu", Summary: "Today's meals and soups."})
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	tc := NewTermCache(snap.Caps, conceptAnalyze)
	coverage := func(query, id string) (direct, total float64) {
		terms := conceptAnalyze(query)
		slices.Sort(terms)
		q := tc.query(slices.Compact(terms))
		defer q.release()
		d, _ := snap.DocID(id)
		doc := &tc.docs[d]
		return tc.textShare(tc.nums[doc.text:doc.end], q).value() / q.weight, tc.textCoverage(doc, q)
	}
	// 连不上 spells unreachable: 连, 连不, 不, 不上, 上, none of them in the capability's text
	direct, total := coverage("docker 连不上", "ops.docker.info")
	terms := conceptAnalyze("docker 连不上")
	slices.Sort(terms)
	q := tc.query(slices.Compact(terms))
	want := direct
	for _, term := range []string{"连", "连不", "不", "不上", "上"} {
		i, _ := slices.BinarySearch(slices.Compact(terms), term)
		switch id := q.ids[i]; {
		case id >= 0:
			want += float64(tc.idf[id]) / q.weight
		case informative(term):
			want += float64(tc.maxIDF) / q.weight
		}
	}
	q.release()
	if math.Abs(total-want) > 1e-9 || total <= direct || total > 1 {
		t.Fatalf("coverage %v (direct %v), want %v", total, direct, want)
	}
	if direct, total := coverage("docker 连不上", "ops.docker.logs"); total != direct {
		t.Fatalf("logs, without the symptom, covers %v beyond its own terms (%v)", total-direct, direct)
	}
	// food is a concept but no symptom: the menu (meals) covers "~food", not the word "bread"
	if direct, total := coverage("bake bread", "ops.menu"); total != direct || direct == 0 {
		t.Fatalf("menu: coverage %v, direct %v", total, direct)
	}
}
