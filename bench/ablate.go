package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// AblationQuery is one labelled search of an ablation: the request, the caller and the
// labels of the relevant capabilities.
type AblationQuery struct {
	Request  registry.SearchRequest
	RC       registry.RuntimeContext
	Relevant []string
}

// AblationRow is one pipeline's quality over a set: its name ("fused", "alone:lexical",
// "without:semantic", "no_rerank", "no_diversify", or a named variant) and its means.
type AblationRow struct {
	Name     string  `json:"name"`
	Recall1  float64 `json:"recall@1"`
	Recall5  float64 `json:"recall@5"`
	Recall10 float64 `json:"recall@10"`
	NDCG5    float64 `json:"ndcg@5"`
	NDCG10   float64 `json:"ndcg@10"`
	MRR      float64 `json:"mrr"`
	// Partial is the share of searches answered partially (a retriever timed out or
	// failed); rows of retrievers alone are never partial.
	Partial float64 `json:"partial_rate"`
	// LatencyP50US is the median wall time of one search (or one retriever call, for the
	// rows of retrievers alone), in microseconds: what the row's pipeline costs.
	LatencyP50US int64 `json:"latency_p50_us"`
}

// AblationReport is the ablation of one query set.
type AblationReport struct {
	Queries int           `json:"queries"`
	Rows    []AblationRow `json:"rows"`
}

// Row returns the row of that name, nil when absent.
func (r *AblationReport) Row(name string) *AblationRow {
	for i := range r.Rows {
		if r.Rows[i].Name == name {
			return &r.Rows[i]
		}
	}
	return nil
}

// NamedVariant is an extra pipeline an ablation scores, under its name.
type NamedVariant struct {
	Name    string
	Variant engine.Variant
}

// AblateOptions tune Ablate.
type AblateOptions struct {
	// Limit is the search limit (default 10).
	Limit int
	// Label maps a capability id to the label space of the queries (default: the id).
	Label func(string) string
	// Retrievers are the retrievers scored alone and left out in turn (default Retrievers).
	Retrievers []string
	// Extra are further pipelines scored after the standard rows.
	Extra []NamedVariant
	// Progress, when set, receives a progress bar for runs longer than a second.
	Progress io.Writer
}

// AblationRows are the standard rows Ablate scores, in order, for the given retrievers:
// the fused search, each retriever alone (engine.Probe: no fusion, rerank or
// diversification), the fused search without each retriever in turn, the fused search
// without the rerank, and without the diversification.
func AblationRows(retrievers []string) []string {
	rows := []string{"fused"}
	for _, r := range retrievers {
		rows = append(rows, "alone:"+r)
	}
	for _, r := range retrievers {
		rows = append(rows, "without:"+r)
	}
	return append(rows, "no_rerank", "no_diversify")
}

// Ablate scores qs through every standard row (AblationRows) and opts.Extra, on one engine.
// Queries the engine refuses as invalid are left out of every row alike.
func Ablate(ctx context.Context, e *engine.Engine, qs []AblationQuery, opts AblateOptions) (*AblationReport, error) {
	if opts.Limit == 0 {
		opts.Limit = 10
	}
	if opts.Label == nil {
		opts.Label = func(s string) string { return s }
	}
	if opts.Retrievers == nil {
		opts.Retrievers = Retrievers
	}
	type row struct {
		name  string
		alone string
		v     *engine.Variant
	}
	var rows []row
	for _, name := range AblationRows(opts.Retrievers) {
		r := row{name: name}
		switch {
		case name == "fused":
		case name == "no_rerank":
			r.v = &engine.Variant{NoRerank: true}
		case name == "no_diversify":
			r.v = &engine.Variant{NoDiversify: true}
		case len(name) > 6 && name[:6] == "alone:":
			r.alone = name[6:]
		default: // without:
			r.v = &engine.Variant{Skip: []string{name[len("without:"):]}}
		}
		rows = append(rows, r)
	}
	for _, x := range opts.Extra {
		v := x.Variant
		rows = append(rows, row{name: x.Name, v: &v})
	}
	// The queries every pipeline can run: the engine validates them alike.
	valid := qs[:0:0]
	for _, q := range qs {
		req := q.Request
		if err := engine.ValidateSearch(&req); err != nil {
			continue
		}
		valid = append(valid, q)
	}
	rep := &AblationReport{Queries: len(valid)}
	bar := newProgress(opts.Progress, len(rows)*len(valid))
	step := 0
	for _, r := range rows {
		var r1, r5, r10, n5, n10, mrr, partial float64
		lat := make([]time.Duration, 0, len(valid))
		for _, q := range valid {
			bar.step(step)
			step++
			req := q.Request
			req.Limit = opts.Limit
			var ids []string
			start := time.Now()
			switch {
			case r.alone != "":
				caps, err := e.Probe(ctx, r.alone, req, q.RC)
				if err != nil {
					return nil, fmt.Errorf("%s: %q: %w", r.name, req.Query, err)
				}
				for _, c := range caps {
					ids = append(ids, c.ID)
				}
			default:
				var resp *registry.SearchResponse
				var err error
				if r.v == nil {
					resp, err = e.Search(ctx, req, q.RC)
				} else {
					resp, err = e.SearchVariant(ctx, req, q.RC, *r.v)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %q: %w", r.name, req.Query, err)
				}
				if resp.SearchMeta.Partial {
					partial++
				}
				for _, m := range resp.Matches {
					ids = append(ids, m.ResourceID)
				}
			}
			lat = append(lat, time.Since(start))
			rk := make(Ranking, len(ids))
			for i, id := range ids {
				rk[i] = opts.Label(id)
			}
			r1 += RecallAt(rk, q.Relevant, 1)
			r5 += RecallAt(rk, q.Relevant, 5)
			r10 += RecallAt(rk, q.Relevant, 10)
			n5 += NDCGAt(rk, q.Relevant, 5)
			n10 += NDCGAt(rk, q.Relevant, 10)
			mrr += ReciprocalRank(rk, q.Relevant, 10)
		}
		n := float64(max(len(valid), 1))
		r6 := func(v float64) float64 { return math.Round(v/n*1e6) / 1e6 }
		rep.Rows = append(rep.Rows, AblationRow{Name: r.name, Recall1: r6(r1), Recall5: r6(r5), Recall10: r6(r10),
			NDCG5: r6(n5), NDCG10: r6(n10), MRR: r6(mrr), Partial: r6(partial), LatencyP50US: percentile(lat, 0.5)})
	}
	bar.done()
	return rep, nil
}

// PrintAblation writes the report as a table, one row per pipeline, with each row's
// recall@5 and nDCG@5 relative to the fused search.
func PrintAblation(w io.Writer, title string, r *AblationReport) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (%d queries)\tR@1\tR@5\tR@10\tnDCG@5\tnDCG@10\tMRR\tΔR@5\tΔnDCG@5\tpartial\tp50 µs\n", title, r.Queries)
	fused := r.Row("fused")
	for _, x := range r.Rows {
		dr, dn := "", ""
		if fused != nil && x.Name != "fused" {
			dr, dn = fmt.Sprintf("%+.3f", x.Recall5-fused.Recall5), fmt.Sprintf("%+.3f", x.NDCG5-fused.NDCG5)
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f\t%d\n", x.Name, x.Recall1, x.Recall5, x.Recall10,
			x.NDCG5, x.NDCG10, x.MRR, dr, dn, x.Partial, x.LatencyP50US)
	}
	tw.Flush()
}

// EvalToolsAblation imports a flat catalogue (../shared/eval format) into a temporary
// in-memory engine opened with eo (its Seed replaced) and ablates its labelled queries,
// matching labels by the catalogue's original ids.
func EvalToolsAblation(ctx context.Context, toolsPath, queriesPath string, eo engine.Options, opts AblateOptions) (*AblationReport, error) {
	caps, err := ImportEvalTools(toolsPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", toolsPath, err)
	}
	e, lq, err := openEval(ctx, caps, queriesPath, eo)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if opts.Label == nil {
		opts.Label = labeller(e.Snapshot())
	}
	return Ablate(ctx, e, LabelledAblation(lq), opts)
}

// LabelledAblation turns labelled queries into ablation queries searched by an admin of
// tenant "default" who may discover everything.
func LabelledAblation(lq []LabelledQuery) []AblationQuery {
	rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	out := make([]AblationQuery, len(lq))
	for i, q := range lq {
		out[i] = AblationQuery{Request: registry.SearchRequest{Query: q.Query}, RC: rc, Relevant: q.Relevant}
	}
	return out
}

// CaseAblation turns the cases that name an expected top action into ablation queries.
func CaseAblation(cases []Case) []AblationQuery {
	var out []AblationQuery
	for _, c := range cases {
		if len(c.ExpectedTopActions) == 0 {
			continue
		}
		out = append(out, AblationQuery{
			Request:  registry.SearchRequest{Query: c.Query, Within: c.Within, Types: c.Types, SideEffectMax: c.SideEffectMax},
			RC:       c.RuntimeContext,
			Relevant: c.ExpectedTopActions,
		})
	}
	return out
}
