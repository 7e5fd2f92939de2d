package main

import (
	"context"
	"fmt"
	"os"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func main() {
	ctx := context.Background()
	caps, _ := registry.Builtin()
	snap, _ := registry.NewSnapshot(1, caps)
	g, err := index.Build(ctx, snap, index.Options{})
	if err != nil {
		panic(err)
	}
	lex := query.NewLexicon(snap)
	rc := registry.RuntimeContext{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"}
	allow := g.Filter(&rc, index.FilterSpec{})
	fmt.Println("allow", allow.GetCardinality(), "of", len(snap.Caps))
	for _, q := range os.Args[1:] {
		p, _ := query.Rules{}.Normalize(ctx, q, lex)
		iq := &index.Query{Text: p.Text, Terms: p.Terms, IDs: p.IDs, Intents: p.Intents, Entities: p.Entities, Symptoms: p.Symptoms}
		for _, k := range []index.Kind{index.Lexical, index.Semantic, index.Metadata} {
			hs, _ := g.Retrieve(ctx, k, iq, allow, 50)
			fmt.Printf("%s %s: %d hits:", q, k, len(hs))
			for i, h := range hs {
				if i < 12 {
					fmt.Printf(" %s(%.2f)", g.Doc(h.Doc).ID, h.Score)
				}
			}
			fmt.Println()
		}
	}
}
