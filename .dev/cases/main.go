package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

func main() {
	file := flag.String("f", "testdata/eval/seed_cases.jsonl", "")
	only := flag.String("only", "", "substring of name")
	fails := flag.Bool("fails", false, "")
	n := flag.Int("n", 5, "")
	sum := flag.Bool("sum", false, "")
	sum2 := flag.Bool("sum2", false, "")
	ib := flag.Float64("ib", -1, "")
	eb := flag.Float64("eb", -1, "")
	sb := flag.Float64("sb", -1, "")
	wtu := flag.Float64("wtu", -1, "")
	mw := flag.Float64("mw", -1, "")
	sw := flag.Float64("sw", -1, "")
	lw := flag.Float64("lw", -1, "")
	covb := flag.Float64("cov", -1, "")
	rf := flag.Float64("rf", -1, "")
	mi := flag.Int("mi", -1, "")
	ab := flag.Float64("ab", -1, "")
	flag.Parse()
	ctx := context.Background()
	ro := rank.DefaultRerankOptions()
	ro.ReadIntents = query.ReadIntents()
	if *ib >= 0 {
		ro.IntentBonus = *ib
	}
	if *eb >= 0 {
		ro.EntityBonus = *eb
	}
	if *sb >= 0 {
		ro.SymptomBonus = *sb
	}
	if *wtu >= 0 {
		ro.WhenToUseBonus = *wtu
	}
	if *covb >= 0 {
		_ = covb
	}
	if *rf >= 0 {
		_ = rf
	}
	if *ab >= 0 {
		ro.AliasBonus = *ab
	}
	if *mi >= 0 {
		ro.MaxIntents = *mi
	}
	w := rank.DefaultWeights()
	if *mw >= 0 {
		w.Metadata = *mw
	}
	if *sw >= 0 {
		w.Semantic = *sw
	}
	if *lw >= 0 {
		w.Lexical = *lw
	}
	e, err := engine.Open(ctx, engine.Options{NoSync: true, Rerank: &ro, Weights: &w})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	lex := query.NewLexicon(e.Snapshot())
	cov := map[string]float64{}
	var feat string
	engine.DebugRank = func(q string, cands []rank.Candidate) {
		for _, c := range cands {
			cov[c.Cap.ID] = c.Coverage
		}
		feat = ""
		b, n := -1, -1
		for i := range cands {
			a := cands[i].Availability
			if a == "" || a == registry.Available || a == registry.NeedsConfirmation || a == registry.MissingCredentials {
				if b < 0 {
					b = i
				} else if n < 0 {
					n = i
				}
			}
		}
		if b >= 0 {
			sec := 0.0
			if n >= 0 {
				sec = cands[n].Score
			}
			em := len(cands[b].MatchedEntities) == 0 && len(cands[b].Cap.Entities) > 0
			im := len(cands[b].MatchedIntents) == 0 && len(cands[b].Cap.Intents) > 0
			feat = fmt.Sprintf("%-6s s%.4f m%.4f c%.2f ex%v em%v im%v %s", cands[b].Cap.ResourceType, cands[b].Score, cands[b].Score-sec, cands[b].Coverage, cands[b].ExactHit(), b2i(em), b2i(im), cands[b].Cap.ID)
		}
	}
	cs, err := bench.ReadJSONL[bench.Case](*file)
	if err != nil {
		panic(err)
	}
	for _, c := range cs {
		if *only != "" && !strings.Contains(c.Name, *only) && !strings.Contains(c.Query, *only) {
			continue
		}
		req := registry.SearchRequest{Query: c.Query, Within: c.Within, SideEffectMax: c.SideEffectMax, Types: c.Types, Limit: *n, Explain: true}
		clear(cov)
		resp, err := e.Search(ctx, req, c.RuntimeContext)
		if err != nil {
			fmt.Println("ERR", c.Name, err)
			continue
		}
		top := ""
		if len(resp.Matches) > 0 {
			top = resp.Matches[0].ResourceID
		}
		okTop := len(c.ExpectedTopActions) == 0 || top == c.ExpectedTopActions[0]
		okRes := c.ExpectedResolution == "" || c.ExpectedResolution == resp.Resolution
		if *fails && okTop && okRes {
			continue
		}
		if *sum2 {
			pp, _ := query.Rules{}.Normalize(ctx, c.Query, lex)
			fmt.Printf("%-18s %-18s %-50s | E%d S%d I%d %-5v %-14s| %s\n", c.ExpectedResolution, resp.Resolution, feat, len(pp.Entities), len(pp.Symptoms), len(pp.Intents), pp.ExplicitWrite, c.Within, c.Name)
			continue
		}
		if *sum {
			bestA, bestP := "", ""
			for _, m := range resp.Matches {
				if m.ResourceType == registry.TypePack {
					if bestP == "" {
						bestP = fmt.Sprintf("P c%.2f s%.4f", cov[m.ResourceID], m.Score)
					}
				} else if bestA == "" {
					bestA = fmt.Sprintf("A c%.2f s%.4f %s", cov[m.ResourceID], m.Score, m.ResourceID)
				}
			}
			fmt.Printf("%-18s %-18s %-5v %-5v | %-20s | %-50s | %s\n", c.ExpectedResolution, resp.Resolution, okTop, okRes, bestP, bestA, c.Name)
			continue
		}
		p, _ := query.Rules{}.Normalize(ctx, c.Query, lex)
		pj, _ := json.Marshal(struct {
			I, E, S, C, F, IDs []string
			B                  bool
			Sc                 string
			W                  bool
		}{p.Intents, p.Entities, p.Symptoms, p.Constraints, p.Forbidden, p.IDs, p.Browse, p.Scope, p.ExplicitWrite})
		mark := func(b bool) string {
			if b {
				return "ok"
			}
			return "XX"
		}
		fmt.Printf("=== [%s top %s res] %s: %s  (within=%s)\n  parsed %s\n  want %v %s got %s %s %v\n", mark(okTop), mark(okRes), c.Name, c.Query, c.Within, pj, c.ExpectedTopActions, c.ExpectedResolution, resp.Resolution, resp.Reason, resp.MissingInformation)
		for _, m := range resp.Matches {
			var ev, br []string
			for _, x := range m.Explain.Evidence {
				ev = append(ev, fmt.Sprintf("%s#%d(%.3g)", x.Retriever[:3], x.Rank, x.RawScore))
			}
			for _, x := range m.Explain.Score {
				br = append(br, fmt.Sprintf("%s=%.4f", strings.TrimPrefix(x.Name, "rrf."), x.Value))
			}
			fmt.Printf("  %d %-40s c%.2f %.4f %s | %s\n", m.Rank, m.ResourceID, cov[m.ResourceID], m.Score, strings.Join(ev, " "), strings.Join(br, " "))
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
