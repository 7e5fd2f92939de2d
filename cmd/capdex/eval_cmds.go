package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/rank"
)

func cmdEval(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "eval", "(--tools FILE --queries FILE | --cases FILE [--registry DIR]) [--json] [--per-query FILE]")
	c.register(fs)
	tools := fs.String("tools", "", "a flat tool catalogue (JSON Lines: id, name, description, params)")
	queries := fs.String("queries", "", "labelled queries (JSON Lines: qid, query, relevant, lang)")
	cases := fs.String("cases", "", "cases (JSON Lines: query, runtime_context, expected_top_actions, forbidden_actions, expected_resolution)")
	reg := fs.String("registry", "", "with --cases: a registry directory instead of the built-in registry")
	perQuery := fs.String("per-query", "", "write every query's ranking to this file (JSON Lines)")
	noPer := fs.Bool("no-per-retriever", false, "skip scoring each retriever alone")
	ablate := fs.Bool("ablate", false, "print the ablation table instead: each retriever alone, the fused ranking without each retriever, without rerank, without diversification, and each fusion method")
	embedder := registerEmbedder(fs)
	fusion := fs.String("fusion", "", "fusion method: rrf (weighted RRF, seed weights) or score (default: the engine's)")
	fbFile, split, noReplay := feedbackFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("unexpected arguments %q", pos)
	}
	if (*cases == "") == (*tools == "" && *queries == "") || (*cases == "" && (*tools == "" || *queries == "")) {
		return badInput("give --tools and --queries, or --cases")
	}
	var eo engine.Options
	if *fusion != "" {
		w, err := rank.MethodWeights(*fusion)
		if err != nil {
			return badInput("--fusion: %v", err)
		}
		eo.Weights = &w
	}
	if err := applyEmbedder(env, &eo, *embedder, c.verbose); err != nil {
		return err
	}
	if *ablate {
		return evalAblate(ctx, env, &c, eo, *tools, *queries, *cases, *reg)
	}
	opts := bench.Options{PerRetriever: !*noPer, Progress: env.stderr}
	if err := setFeedback(&opts, *fbFile, *split, *noReplay, *cases != ""); err != nil {
		return err
	}
	if *perQuery != "" {
		f, err := os.Create(*perQuery)
		if err != nil {
			return badInput("%v", err)
		}
		defer f.Close()
		opts.PerQuery = f
	}
	var rep *bench.Report
	if *cases != "" {
		cs, err := bench.ReadJSONL[bench.Case](*cases)
		if err != nil {
			return badInput("%v", err)
		}
		eo.NoSync = true
		if *reg != "" {
			eo.SeedDirs = []string{*reg}
		}
		e, err := engine.Open(ctx, eo) // in memory: an evaluation never touches the data directory
		if err != nil {
			return err
		}
		defer e.Close()
		if rep, err = bench.EvalCases(ctx, e, cs, opts); err != nil {
			return err
		}
	} else {
		for _, p := range []string{*tools, *queries} {
			if _, err := os.Stat(p); err != nil {
				return badInput("%v", err)
			}
		}
		if rep, err = bench.EvalToolsWith(ctx, *tools, *queries, eo, opts); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(env.stdout, rep)
	}
	printReport(env.stdout, rep)
	return nil
}

// evalAblate runs capdex eval --ablate: the ablation table of a flat catalogue's labelled
// queries, or of cases on a registry.
func evalAblate(ctx context.Context, env *cliEnv, c *common, eo engine.Options, tools, queries, cases, reg string) error {
	opts := bench.AblateOptions{Progress: env.stderr}
	for _, m := range []string{rank.MethodRRF, rank.MethodScore} {
		w, _ := rank.MethodWeights(m) // known methods
		opts.Extra = append(opts.Extra, bench.NamedVariant{Name: "fusion:" + m, Variant: engine.Variant{Weights: &w}})
	}
	var rep *bench.AblationReport
	title := cases
	if cases != "" {
		cs, err := bench.ReadJSONL[bench.Case](cases)
		if err != nil {
			return badInput("%v", err)
		}
		eo.NoSync = true
		if reg != "" {
			eo.SeedDirs = []string{reg}
		}
		e, err := engine.Open(ctx, eo)
		if err != nil {
			return err
		}
		defer e.Close()
		if rep, err = bench.Ablate(ctx, e, bench.CaseAblation(cs), opts); err != nil {
			return err
		}
	} else {
		for _, p := range []string{tools, queries} {
			if _, err := os.Stat(p); err != nil {
				return badInput("%v", err)
			}
		}
		var err error
		if rep, err = bench.EvalToolsAblation(ctx, tools, queries, eo, opts); err != nil {
			return err
		}
		title = queries
	}
	if c.json {
		return printJSON(env.stdout, rep)
	}
	bench.PrintAblation(env.stdout, title, rep)
	return nil
}

func printReport(w io.Writer, r *bench.Report) {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "cases\t%d\n", r.Cases)
	fmt.Fprintf(tw, "recall@1 / @5 / @10\t%s / %s / %s\n", f(r.Recall1), f(r.Recall5), f(r.Recall10))
	fmt.Fprintf(tw, "mrr\t%s\n", f(r.MRR))
	fmt.Fprintf(tw, "ndcg@5 / @10\t%s / %s\n", f(r.NDCG5), f(r.NDCG10))
	fmt.Fprintf(tw, "top1\t%s\n", f(r.Top1))
	fmt.Fprintf(tw, "pack hit rate\t%s\n", f(r.PackHitRate))
	fmt.Fprintf(tw, "forbidden exposure\t%s\n", f(r.ForbiddenExposureRate))
	fmt.Fprintf(tw, "when_not_to_use violations\t%s\n", f(r.WhenNotToUseViolationRate))
	fmt.Fprintf(tw, "high-risk top1\t%s\n", f(r.HighRiskTop1Rate))
	fmt.Fprintf(tw, "resolution accuracy\t%s\n", f(r.ResolutionAccuracy))
	fmt.Fprintf(tw, "latency p50 / p95\t%d µs / %d µs\n", r.LatencyP50US, r.LatencyP95US)
	fmt.Fprintf(tw, "partial rate\t%s\n", f(r.PartialRate))
	fmt.Fprintf(tw, "avg candidates / returned\t%s / %s\n", f(r.AvgCandidates), f(r.AvgReturned))
	printCalibration(tw, r.Calibration)
	printFeedback(tw, r.Feedback, f)
	names := make([]string, 0, len(r.PerRetriever))
	for n := range r.PerRetriever {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(tw, "  %s alone: recall@5 / mrr\t%s / %s\n", n, f(r.PerRetriever[n].Recall5), f(r.PerRetriever[n].MRR))
	}
	tw.Flush()
}

func cmdCalibrate(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && args[0] == "model" {
		return cmdCalibrateModel(ctx, env, args[1:])
	}
	var c common
	fs := newFlags(env, "calibrate", "--cases FILE [--registry DIR] [--dry-run]")
	c.register(fs)
	cases := fs.String("cases", "", "cases with expected_resolution (JSON Lines)")
	reg := fs.String("registry", "", "calibrate on this registry directory instead of the stored registry")
	dry := fs.Bool("dry-run", false, "print the thresholds without storing them")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *cases == "" || len(pos) > 0 {
		return badInput("want --cases FILE")
	}
	cs, err := bench.ReadJSONL[bench.Case](*cases)
	if err != nil {
		return badInput("%v", err)
	}
	eo := engine.Options{}
	if *reg != "" {
		eo.SeedDirs = []string{*reg}
	}
	e, err := env.open(ctx, &c, eo)
	if err != nil {
		return err
	}
	samples, err := bench.CalibrationSamples(ctx, e, cs)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return badInput("%s: no case has expected_resolution", *cases)
	}
	t := rank.Calibrate(samples)
	if !*dry {
		if err := e.SaveThresholds(t); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(env.stdout, t)
	}
	fmt.Fprintf(env.stdout, "thresholds: floor %.4f confident %.4f margin %.4f min_coverage %.3f; accuracy %.3f on %d samples", t.Floor, t.Confident, t.Margin, t.MinCoverage, t.Accuracy, t.Samples)
	if *dry {
		fmt.Fprintln(env.stdout, " (dry run: not stored)")
	} else {
		fmt.Fprintln(env.stdout, " (stored)")
	}
	return nil
}
