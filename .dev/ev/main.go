package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

func main() {
	sets := flag.String("sets", "seal_tools,hammerbench_zh,metatool", "")
	nodiv := flag.Bool("nodiv", false, "")
	norr := flag.Bool("norerank", false, "")
	w := flag.String("w", "", "name=v,...")
	k := flag.Float64("k", 0, "")
	per := flag.Bool("per", false, "")
	now2u := flag.Bool("nowtu", false, "")
	norisk := flag.Bool("norisk", false, "")
	wtu := flag.Float64("wtu", -1, "")
	cov := flag.Float64("cov", -1, "")
	rf := flag.Float64("rf", -1, "")
	ab := flag.Float64("ab", -1, "")
	riskp := flag.Float64("risk", -1, "")
	cf := flag.Float64("cf", -1, "")
	pq := flag.String("pq", "", "per query prefix")
	wm := flag.Int("wm", 0, "")
	mpp := flag.Int("mpp", -1, "")
	cg := flag.Float64("cg", -1, "")
	flag.Parse()
	_ = wm
	ctx := context.Background()
	opts := engine.Options{NoSync: true}
	if *mpp >= 0 || *cg >= 0 {
		d := rank.DefaultDiversifyOptions()
		if *mpp >= 0 {
			d.MaxPerPack = *mpp
		}
		if *cg >= 0 {
			d.CloseGap = *cg
		}
		opts.Diversify = &d
	}
	if *nodiv {
		d := rank.DiversifyOptions{}
		opts.Diversify = &d
	}
	if *norr {
		r := rank.RerankOptions{}
		if *riskp >= 0 {
			r.RiskPenalty, r.SideEffectPenalty = *riskp, *riskp
		}
		if *cov >= 0 {
			_ = cov
		}
		if *ab >= 0 {
			r.AliasBonus = *ab
		}
		if *rf >= 0 {
			_ = rf
		}
		if *wtu >= 0 {
			r.WhenToUseBonus = *wtu
		}
		if *cf >= 0 {
			r.CautionFactor = *cf
		}
		opts.Rerank = &r
	}
	if *now2u || *norisk || *riskp >= 0 || *cf >= 0 || *wtu >= 0 || *cov >= 0 || *rf >= 0 || *ab >= 0 {
		r := rank.DefaultRerankOptions()
		r.ReadIntents = query.ReadIntents()
		if *now2u {
			r.WhenToUseBonus = 0
		}
		if *norisk {
			r.RiskPenalty, r.SideEffectPenalty = 0, 0
		}
		if *riskp >= 0 {
			r.RiskPenalty, r.SideEffectPenalty = *riskp, *riskp
		}
		if *cov >= 0 {
			_ = cov
		}
		if *ab >= 0 {
			r.AliasBonus = *ab
		}
		if *rf >= 0 {
			_ = rf
		}
		if *wtu >= 0 {
			r.WhenToUseBonus = *wtu
		}
		if *cf >= 0 {
			r.CautionFactor = *cf
		}
		opts.Rerank = &r
	}
	if *w != "" || *k != 0 {
		ww := rank.DefaultWeights()
		if *k != 0 {
			ww.K = *k
		}
		for _, kv := range strings.Split(*w, ",") {
			if kv == "" {
				continue
			}
			n, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch n {
			case "exact":
				ww.Exact = f
			case "lexical":
				ww.Lexical = f
			case "semantic":
				ww.Semantic = f
			case "metadata":
				ww.Metadata = f
			case "hierarchy":
				ww.Hierarchy = f
			case "history":
				ww.History = f
			}
		}
		opts.Weights = &ww
	}
	_ = query.Exact
	for _, s := range strings.Split(*sets, ",") {
		dir := "/work/shared/eval/" + s
		f, _ := os.Open(dir + "/tools.jsonl")
		caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval"})
		f.Close()
		if err != nil {
			panic(err)
		}
		qs, err := readQ(dir + "/queries.jsonl")
		if err != nil {
			panic(err)
		}
		o := opts
		o.Seed = caps
		e, err := engine.Open(ctx, o)
		if err != nil {
			panic(err)
		}
		bo := bench.Options{PerRetriever: *per}
		if *pq != "" {
			pf, _ := os.Create(*pq + s + ".jsonl")
			defer pf.Close()
			bo.PerQuery = pf
		}
		rep, err := bench.EvalQueries(ctx, e, qs, bo)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-15s R@1 %.4f R@5 %.4f MRR %.4f nDCG5 %.4f p50 %d\n", s, *rep.Recall1, *rep.Recall5, *rep.MRR, *rep.NDCG5, rep.LatencyP50US)
		if *per {
			for n, r := range rep.PerRetriever {
				fmt.Printf("   %-10s R@5 %.4f MRR %.4f\n", n, *r.Recall5, *r.MRR)
			}
		}
		e.Close()
	}
}

func readQ(p string) ([]bench.LabelledQuery, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []bench.LabelledQuery
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var q bench.LabelledQuery
		if err := json.Unmarshal([]byte(l), &q); err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}
