package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

type hit struct {
	ID    string  `json:"id"`
	Score float64 `json:"s"`
}

type rec struct {
	QID      string            `json:"qid"`
	Relevant []string          `json:"rel"`
	Hits     map[string][]hit  `json:"hits"`
	Intents  []string          `json:"intents,omitempty"`
}

func main() {
	set := flag.String("set", "", "")
	out := flag.String("out", "", "")
	flag.Parse()
	ctx := context.Background()
	dir := "/work/shared/eval/" + *set
	f, _ := os.Open(dir + "/tools.jsonl")
	caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval"})
	if err != nil {
		panic(err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		panic(err)
	}
	g, err := index.Build(ctx, snap, index.Options{})
	if err != nil {
		panic(err)
	}
	lex := query.NewLexicon(snap)
	rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	allow := g.Filter(&rc, index.FilterSpec{})
	label := func(c *registry.Capability) string {
		if c.ExternalID != "" {
			return c.ExternalID
		}
		return c.ID
	}
	qf, _ := os.Open(dir + "/queries.jsonl")
	sc := bufio.NewScanner(qf)
	sc.Buffer(nil, 1<<24)
	of, _ := os.Create(*out)
	w := bufio.NewWriter(of)
	defer of.Close()
	defer w.Flush()
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q struct {
			QID      string   `json:"qid"`
			Query    string   `json:"query"`
			Relevant []string `json:"relevant"`
		}
		json.Unmarshal(sc.Bytes(), &q)
		p, err := query.Rules{}.Normalize(ctx, q.Query, lex)
		if err != nil {
			continue
		}
		iq := &index.Query{Text: p.Text, Terms: p.Terms, IDs: p.IDs, Intents: p.Intents, Entities: p.Entities, Symptoms: p.Symptoms, Browse: p.Browse}
		r := rec{QID: q.QID, Relevant: q.Relevant, Hits: map[string][]hit{}, Intents: p.Intents}
		for _, k := range []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy} {
			hs, _ := g.Retrieve(ctx, k, iq, allow, 50)
			for _, h := range hs {
				r.Hits[k.String()] = append(r.Hits[k.String()], hit{label(g.Doc(h.Doc)), h.Score})
			}
		}
		b, _ := json.Marshal(r)
		w.Write(b)
		w.WriteByte('\n')
	}
}
