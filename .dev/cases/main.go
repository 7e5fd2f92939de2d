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
	"github.com/capdex/capdex/registry"
)

func main() {
	file := flag.String("f", "testdata/eval/seed_cases.jsonl", "")
	only := flag.String("only", "", "substring of name")
	fails := flag.Bool("fails", false, "")
	n := flag.Int("n", 5, "")
	flag.Parse()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Options{NoSync: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	lex := query.NewLexicon(e.Snapshot())
	cs, err := bench.ReadJSONL[bench.Case](*file)
	if err != nil {
		panic(err)
	}
	for _, c := range cs {
		if *only != "" && !strings.Contains(c.Name, *only) && !strings.Contains(c.Query, *only) {
			continue
		}
		req := registry.SearchRequest{Query: c.Query, Within: c.Within, SideEffectMax: c.SideEffectMax, Types: c.Types, Limit: *n, Explain: true}
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
			fmt.Printf("  %d %-40s %.4f %s | %s\n", m.Rank, m.ResourceID, m.Score, strings.Join(ev, " "), strings.Join(br, " "))
		}
	}
}
