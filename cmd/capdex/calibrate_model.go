package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine/rank"
)

// crossPairs are the cross-set negatives: one set's queries on another set's catalogue,
// chosen where the domains do not meet (Chinese phone-app requests against English API
// catalogues and the reverse).
var crossPairs = [][2]string{{"hammerbench_zh", "seal_tools"}, {"seal_tools", "hammerbench_zh"}, {"metatool", "hammerbench_zh"}}

// crossSample is how many queries of each cross pair are run (every k-th query).
const crossSample = 300

// cmdCalibrateModel fits the confidence model (`capdex calibrate model`).
func cmdCalibrateModel(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "calibrate model", "--eval DIR --cases FILE [--negatives FILE,...] [--out FILE]")
	c.register(fs)
	evalDir := fs.String("eval", "", "a folder of evaluation sets (SET/tools.jsonl and SET/queries.jsonl)")
	cases := fs.String("cases", "", "cases on the built-in registry (JSON Lines)")
	negs := fs.String("negatives", "", "comma-separated case files of requests the built-in registry cannot serve")
	out := fs.String("out", "", "write the fitted model here (JSON), for engine/rank/confidence_model.json")
	confAt := fs.Float64("confident-at", 0.9, "the least probability of a right top answer for a confident answer")
	noMatch := fs.Float64("no-match-below", 0.5, "the probability of a match among the first five under which the answer is no_confident_match")
	precision := fs.Float64("precision", 0, "choose the confident cut-offs (curated definitions and bare tools apart): the least at which the fitted sets' weighted precision@1 among confident answers reaches this; 0 keeps --confident-at")
	l2 := fs.Float64("l2", 1, "the L2 penalty on the standardised weights")
	caseWeight := fs.Float64("cases-weight", 3, "the weight of the cases against one evaluation set")
	negWeight := fs.Float64("negatives-weight", 1, "the weight of each --negatives file against one evaluation set")
	dumpTo := fs.String("samples", "", "write every labelled search (set, features, labels) to this file (JSON Lines)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *evalDir == "" || *cases == "" || len(pos) > 0 {
		return badInput("want --eval DIR --cases FILE")
	}
	var sets []bench.LabelledSet
	queries := map[string][]bench.LabelledQuery{}
	for _, name := range []string{"metatool", "seal_tools", "hammerbench_zh"} {
		qs, err := bench.ReadQueries(filepath.Join(*evalDir, name, "queries.jsonl"))
		if err != nil {
			return badInput("%v", err)
		}
		queries[name] = qs
		sets = append(sets, bench.LabelledSet{Name: name, Tools: filepath.Join(*evalDir, name, "tools.jsonl"), Queries: qs})
	}
	for _, p := range crossPairs {
		qs := queries[p[0]]
		step := max(1, len(qs)/crossSample)
		var neg []bench.LabelledQuery
		for i := 0; i < len(qs) && len(neg) < crossSample; i += step {
			q := qs[i]
			q.Relevant = []string{"\x00none"} // no tool of the other catalogue is right
			neg = append(neg, q)
		}
		sets = append(sets, bench.LabelledSet{Name: p[0] + "→" + p[1], Tools: filepath.Join(*evalDir, p[1], "tools.jsonl"), Queries: neg})
	}
	cs, err := bench.ReadJSONL[bench.Case](*cases)
	if err != nil {
		return badInput("%v", err)
	}
	// The cases are the only searches labelled with the resolution wanted, on the only
	// registry with curated definitions: they weigh as three sets.
	sets = append(sets, bench.LabelledSet{Name: "seed_cases", Cases: cs, Weight: *caseWeight})
	if *negs != "" {
		for _, f := range strings.Split(*negs, ",") {
			ns, err := bench.ReadJSONL[bench.Case](f)
			if err != nil {
				return badInput("%v", err)
			}
			sets = append(sets, bench.LabelledSet{Name: strings.TrimSuffix(filepath.Base(f), ".jsonl"), Cases: ns, Weight: *negWeight})
		}
	}
	var dump io.Writer
	if *dumpTo != "" {
		f, err := os.Create(*dumpTo)
		if err != nil {
			return badInput("%v", err)
		}
		defer f.Close()
		dump = f
	}
	rep, err := bench.FitConfidence(ctx, sets, rank.FitOptions{ConfidentAt: *confAt, NoMatchBelow: *noMatch, Precision: *precision, L2: *l2}, dump)
	if err != nil {
		return err
	}
	if *out != "" {
		b, err := json.MarshalIndent(rep.Model, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(env.stdout, rep)
	}
	printFit(env.stdout, rep)
	return nil
}

// printFit prints the leave-one-set-out table.
func printFit(w io.Writer, rep *bench.FitReport) {
	names := make([]string, 0, len(rep.PerSet))
	for n := range rep.PerSet {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "set\tsearches\theld out: confident / no match / p@1 conf / right not conf / ECE\thalf out\tall sets")
	for _, n := range names {
		s := rep.PerSet[n]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", n, s.Searches, calLine(s.HeldOut), calLine(s.HalfOut), calLine(s.All))
	}
	tw.Flush()
	fmt.Fprintf(w, "fitted on %d searches\n", rep.Model.Samples)
}

func calLine(c *bench.Calibration) string {
	return fmt.Sprintf("%s / %s / %s / %s / %s", pct(c.Confident), pct(c.NoMatch), pct(c.PrecisionConfident), pct(c.RightNotConfident), pct(c.ECE))
}

func pct(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

// printCalibration prints the calibration part of an eval report.
func printCalibration(tw io.Writer, c *bench.Calibration) {
	if c == nil {
		return
	}
	fmt.Fprintf(tw, "confident / no match\t%s / %s\n", pct(c.Confident), pct(c.NoMatch))
	fmt.Fprintf(tw, "precision@1 among confident\t%s\n", pct(c.PrecisionConfident))
	fmt.Fprintf(tw, "right top-1 not confident\t%s\n", pct(c.RightNotConfident))
	fmt.Fprintf(tw, "ECE\t%s\n", pct(c.ECE))
	for _, b := range c.Bins {
		fmt.Fprintf(tw, "  confidence %.1f-%.1f\t%d answers, mean %.3f, right %.3f\n", b.Lo, b.Hi, b.Answers, b.MeanConf, b.Right)
	}
}
