package main

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

func main() {
	caps, _ := registry.Builtin()
	snap, _ := registry.NewSnapshot(1, caps)
	lex := query.NewLexicon(snap)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		p, _ := query.Rules{}.Normalize(context.Background(), sc.Text(), lex)
		fmt.Printf("%-45s vague=%v I=%v E=%v W=%v howto=%v\n", sc.Text(), p.Vague, p.Intents, p.Entities, p.ExplicitWrite, p.HowTo)
	}
}
