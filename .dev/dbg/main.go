package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

func main() {
	tools := flag.String("tools", "", "")
	limit := flag.Int("limit", 10, "")
	as := flag.String("as", "", "json runtime context")
	flag.Parse()
	ctx := context.Background()
	opts := engine.Options{NoSync: true}
	if *tools != "" {
		f, _ := os.Open(*tools)
		caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval"})
		if err != nil {
			panic(err)
		}
		opts.Seed = caps
	}
	e, err := engine.Open(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer e.Close()
	lex := query.NewLexicon(e.Snapshot())
	rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	if *as != "" {
		json.Unmarshal([]byte(*as), &rc)
	}
	qs := flag.Args()
	if len(qs) == 0 {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			qs = append(qs, sc.Text())
		}
	}
	for _, q := range qs {
		p, _ := query.Rules{}.Normalize(ctx, q, lex)
		pj, _ := json.Marshal(p)
		fmt.Printf("=== %s\nparsed: %s\nplan: %v\n", q, pj, query.Plan(p, nil))
		resp, err := e.Search(ctx, registry.SearchRequest{Query: q, Limit: *limit, Explain: true}, rc)
		if err != nil {
			fmt.Println("err", err)
			continue
		}
		fmt.Printf("resolution %s %s %v\n", resp.Resolution, resp.Reason, resp.MissingInformation)
		for _, m := range resp.Matches {
			var ev, br []string
			for _, x := range m.Explain.Evidence {
				ev = append(ev, fmt.Sprintf("%s#%d(%.3f)", x.Retriever, x.Rank, x.RawScore))
			}
			for _, x := range m.Explain.Score {
				br = append(br, fmt.Sprintf("%s=%.4f", x.Name, x.Value))
			}
			fmt.Printf("%2d %-45s %.4f  %s | %s\n", m.Rank, m.ResourceID, m.Score, strings.Join(ev, " "), strings.Join(br, " "))
		}
	}
}
