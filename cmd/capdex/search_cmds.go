package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

func cmdSearch(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "search", "[--within P] [--types T,...] [--side-effect-max X] [--limit N] [--match JSON] [--explain] [--json] [--as T:U:S,...] QUERY")
	c.register(fs)
	within := fs.String("within", "", "limit the search to a pack and its subtree")
	types := fs.String("types", "", "resource types, comma separated: pack,action,recipe")
	sem := fs.String("side-effect-max", "", "strongest side effect allowed: R, W-local, W-shared or I")
	limit := fs.Int("limit", registry.DefaultLimit, "matches to return, 1..10")
	explain := fs.Bool("explain", false, "show each match's evidence per retriever and its score breakdown")
	match := fs.String("match", "", `structured match as a JSON object (docs/matching.md), e.g. {"next_step":"run_rule","domain":"finance"}`)
	embedder := registerEmbedder(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return badInput("want a QUERY")
	}
	rc, err := c.identity()
	if err != nil {
		return err
	}
	req := registry.SearchRequest{
		Query: strings.Join(pos, " "), Within: *within, SideEffectMax: registry.SideEffect(*sem),
		Limit: *limit, Explain: *explain,
	}
	if *types != "" {
		for _, t := range strings.Split(*types, ",") {
			req.Types = append(req.Types, registry.ResourceType(strings.TrimSpace(t)))
		}
	}
	if *match != "" {
		dec := json.NewDecoder(strings.NewReader(*match))
		dec.DisallowUnknownFields()
		req.Match = new(registry.StructuredMatch)
		if err := dec.Decode(req.Match); err != nil || dec.More() {
			return badInput("--match: not a structured match object: %v", err)
		}
	}
	if err := engine.ValidateSearch(&req); err != nil {
		return err
	}
	var eo engine.Options
	if err := applyEmbedder(env, &eo, *embedder, c.verbose); err != nil {
		return err
	}
	e, err := env.open(ctx, &c, eo)
	if err != nil {
		return err
	}
	resp, err := e.Search(ctx, req, rc)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.stdout, resp)
	}
	printSearch(env.stdout, resp)
	return nil
}

func printSearch(w io.Writer, r *registry.SearchResponse) {
	fmt.Fprintf(w, "query: %s\nresolution: %s", r.Query, r.Resolution)
	if r.Reason != "" {
		fmt.Fprintf(w, " (%s)", r.Reason)
	}
	fmt.Fprintln(w)
	if r.ReasonDetail != "" {
		fmt.Fprintf(w, "because: %s\n", r.ReasonDetail)
	}
	for _, m := range r.MissingInformation {
		fmt.Fprintf(w, "missing: %s\n", m)
	}
	if len(r.Matches) > 0 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\n#\tID\tTYPE\tSIDE\tRISK\tAVAILABILITY\tSCORE\tTITLE")
		for _, m := range r.Matches {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\n", m.Rank, m.ResourceID, m.ResourceType, dash(string(m.SideEffect)), dash(string(m.RiskLevel)), m.Availability, m.Score, m.Title)
		}
		tw.Flush()
		for _, m := range r.Matches {
			if m.Explain == nil {
				continue
			}
			fmt.Fprintf(w, "\n%d %s\n", m.Rank, m.ResourceID)
			for _, ev := range m.Explain.Evidence {
				fmt.Fprintf(w, "  %-9s rank %-3d raw %.4f %s\n", ev.Retriever, ev.Rank, ev.RawScore, strings.Join(ev.Matched, " "))
			}
			for _, s := range m.Explain.Score {
				fmt.Fprintf(w, "  %+.4f %s\n", s.Value, s.Name)
			}
		}
	}
	m := r.SearchMeta
	fmt.Fprintf(w, "\n%d of %d candidates, %d µs, retrievers %s", m.ReturnedCount, m.CandidateCount, m.TookUS, strings.Join(m.CompletedRetrievers, ","))
	if m.Partial {
		fmt.Fprintf(w, " (partial: timed out %s %s)", strings.Join(m.TimedOutRetrievers, ","), strings.Join(m.FailedRetrievers, ","))
	}
	fmt.Fprintln(w)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cmdBrowse(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "browse", "[--json] [--as T:U:S] [PACK]")
	c.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return badInput("want at most one PACK")
	}
	rc, err := c.identity()
	if err != nil {
		return err
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	pack := ""
	if len(pos) == 1 {
		pack = pos[0]
	}
	l, err := e.List(ctx, pack, rc)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.stdout, l)
	}
	if l.Guidance != "" {
		fmt.Fprintf(env.stdout, "%s\n%s\n\n", l.Title, l.Guidance)
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTYPE\tSIDE\tAVAILABILITY\tTITLE")
	for _, it := range l.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.ResourceID, it.ResourceType, dash(string(it.SideEffect)), dash(string(it.Availability)), it.Title)
	}
	return tw.Flush()
}

func cmdDescribe(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "describe", "[--format openai|anthropic|mcp] [--json] [--as T:U:S] ID")
	c.register(fs)
	format := fs.String("format", "", "render the action as a typed tool in this format")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one ID")
	}
	rc, err := c.identity()
	if err != nil {
		return err
	}
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	d, err := e.Describe(ctx, pos[0], rc)
	if isEngineNotFound(err) { // unknown or hidden: the same answer
		return noSuchCapability(pos[0])
	}
	if err != nil {
		return err
	}
	if *format != "" {
		t, err := engine.RenderTool(d, *format)
		if err != nil {
			return err
		}
		return printJSON(env.stdout, t)
	}
	if c.json {
		return printJSON(env.stdout, d)
	}
	fmt.Fprintf(env.stdout, "%s (%s v%d)\n%s\n%s\n", d.ResourceID, d.ResourceType, d.Version, d.Title, d.Summary)
	for _, s := range d.WhenToUse {
		fmt.Fprintf(env.stdout, "  use when: %s\n", s)
	}
	for _, s := range d.WhenNotToUse {
		fmt.Fprintf(env.stdout, "  not when: %s\n", s)
	}
	if d.ResourceType == registry.TypeAction {
		fmt.Fprintf(env.stdout, "side effect %s, risk %s, confirmation %v, availability %s\narguments: %s\ndigest: %s\n",
			d.SideEffect, d.RiskLevel, d.RequiresConfirmation, d.Availability, d.ArgumentsSchema, d.SchemaDigest)
	}
	for i, s := range d.Steps {
		fmt.Fprintf(env.stdout, "  %d. %s %s\n", i+1, s.Title, s.Command)
	}
	for _, k := range d.Children {
		fmt.Fprintf(env.stdout, "  - %s (%s) %s\n", k.ResourceID, k.ResourceType, k.Title)
	}
	return nil
}
