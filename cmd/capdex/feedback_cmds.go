package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine"
)

// cmdStats prints the funnel of the caller's tenant (the data directory's recorded
// sessions), listing the capabilities the caller may discover.
func cmdStats(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "stats", "[--as T:U:S,...] [--json]")
	c.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("unexpected arguments %q", pos)
	}
	rc, err := c.identity()
	if err != nil {
		return err
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	f, err := e.Stats(rc)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.stdout, f)
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "search → describe\t%.3f\n", f.SearchToDescribe)
	fmt.Fprintf(tw, "describe → run\t%.3f\n", f.DescribeToRun)
	fmt.Fprintf(tw, "run success\t%.3f\n", f.RunSuccess)
	fmt.Fprintf(tw, "clarification\t%.3f\n", f.ClarificationRate)
	fmt.Fprintln(tw, "\ncapability\tsearched\tdescribed\tran\tsucceeded")
	for _, r := range f.Capabilities {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", r.ResourceID, r.Searched, r.Described, r.Ran, r.Succeeded)
	}
	return tw.Flush()
}

// feedbackFlags registers capdex eval's feedback flags.
func feedbackFlags(fs *flag.FlagSet) (file *string, split *int, noReplay *bool) {
	file = fs.String("feedback", "", "labelled queries (the --queries format) replayed as successful sessions before scoring")
	split = fs.Int("split", -1, "score only the queries of this half (0 or 1, by a hash of the qid) and replay only the --feedback queries of the other half")
	noReplay = fs.Bool("no-replay", false, "with --feedback: classify the scored queries (warm, cold, mixed) but replay nothing (the baseline)")
	return file, split, noReplay
}

// setFeedback applies the feedback flags to opts.
func setFeedback(opts *bench.Options, file string, split int, noReplay, cases bool) error {
	if file == "" && (split != -1 || noReplay) {
		return badInput("--split and --no-replay need --feedback")
	}
	if file == "" {
		return nil
	}
	if cases {
		return badInput("--feedback scores --queries, not --cases")
	}
	if split != -1 && split != 0 && split != 1 {
		return badInput("--split %d: want 0 or 1", split)
	}
	fb, err := bench.ReadQueries(file)
	if err != nil {
		return badInput("--feedback: %v", err)
	}
	opts.Feedback, opts.NoReplay = fb, noReplay
	if split >= 0 {
		opts.Split = &split
	}
	return nil
}

// printFeedback prints the warm, cold and mixed rows of a feedback run.
func printFeedback(tw *tabwriter.Writer, fr *bench.FeedbackReport, f func(*float64) string) {
	if fr == nil {
		return
	}
	fmt.Fprintf(tw, "feedback: replayed sessions\t%d\n", fr.Replayed)
	for _, row := range []struct {
		name string
		r    *bench.Report
	}{{bench.Warm, fr.Warm}, {bench.Cold, fr.Cold}, {bench.Mixed, fr.Mixed}} {
		if row.r == nil {
			continue
		}
		fmt.Fprintf(tw, "  %s (%d): recall@5 / ndcg@5 / mrr\t%s / %s / %s\n", row.name, row.r.Cases, f(row.r.Recall5), f(row.r.NDCG5), f(row.r.MRR))
	}
}
