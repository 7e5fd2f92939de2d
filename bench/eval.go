package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Retrievers are the retrievers scored alone in Report.PerRetriever: every index.Kind.
var Retrievers = func() []string {
	names := make([]string, 0, index.NumKinds)
	for k := index.Kind(0); k < index.NumKinds; k++ {
		names = append(names, k.String())
	}
	return names
}()

// LabelledQuery is one line of a queries.jsonl file of ../shared/eval.
type LabelledQuery struct {
	QID      string   `json:"qid"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Lang     string   `json:"lang,omitempty"`
}

// Case is one line of a cases file: a query under a runtime context with what must and must
// not come back.
type Case struct {
	Name           string                  `json:"name,omitempty"`
	Query          string                  `json:"query"`
	RuntimeContext registry.RuntimeContext `json:"runtime_context"`
	Within         string                  `json:"within,omitempty"`
	SideEffectMax  registry.SideEffect     `json:"side_effect_max,omitempty"`
	Types          []registry.ResourceType `json:"types,omitempty"`
	// ExpectedTopActions: the first is the expected top result; all count as relevant.
	ExpectedTopActions []string `json:"expected_top_actions"`
	// AcceptableActions may appear in the top results without counting against the case.
	AcceptableActions []string `json:"acceptable_actions,omitempty"`
	// ForbiddenActions must not appear among the returned matches at all.
	ForbiddenActions   []string            `json:"forbidden_actions"`
	ExpectedResolution registry.Resolution `json:"expected_resolution,omitempty"`
}

// Report is the result of an evaluation run. Its JSON has exactly the keys of the capdex
// eval contract; rates whose cases are absent are null.
type Report struct {
	Cases                     int                  `json:"cases"`
	Recall1                   *float64             `json:"recall@1"`
	Recall5                   *float64             `json:"recall@5"`
	Recall10                  *float64             `json:"recall@10"`
	MRR                       *float64             `json:"mrr"`
	NDCG5                     *float64             `json:"ndcg@5"`
	NDCG10                    *float64             `json:"ndcg@10"`
	Top1                      *float64             `json:"top1"`
	PackHitRate               *float64             `json:"pack_hit_rate"`
	ForbiddenExposureRate     *float64             `json:"forbidden_exposure_rate"`
	WhenNotToUseViolationRate *float64             `json:"when_not_to_use_violation_rate"`
	HighRiskTop1Rate          *float64             `json:"high_risk_top1_rate"`
	ResolutionAccuracy        *float64             `json:"resolution_accuracy"`
	LatencyP50US              int64                `json:"latency_p50_us"`
	LatencyP95US              int64                `json:"latency_p95_us"`
	PartialRate               *float64             `json:"partial_rate"`
	AvgCandidates             *float64             `json:"avg_candidates"`
	AvgReturned               *float64             `json:"avg_returned"`
	PerRetriever              map[string]Retriever `json:"per_retriever"`
	Calibration               *Calibration         `json:"calibration"`
	// Feedback is set by runs with Options.Feedback or a split (capdex eval --feedback).
	Feedback *FeedbackReport `json:"feedback,omitempty"`
}

// Retriever is one retriever's quality alone.
type Retriever struct {
	Recall5 *float64 `json:"recall@5"`
	MRR     *float64 `json:"mrr"`
}

// Options tune an evaluation run.
type Options struct {
	// Limit is the search limit (default 10, so recall@10 and MRR@10 are defined).
	Limit int
	// PerRetriever also scores each retriever alone (default true via Run helpers).
	PerRetriever bool
	// PerQuery, when set, receives one JSON line per query with its ranking.
	PerQuery io.Writer
	// Progress, when set, receives a progress bar for runs longer than a second.
	Progress io.Writer
	// RuntimeContext is the caller EvalQueries searches as; nil means an admin of tenant
	// "default" who may discover everything.
	RuntimeContext *registry.RuntimeContext
	// Feedback are queries replayed as successful sessions (Replay) before scoring; with
	// Feedback or Split set, the Report has a Feedback part.
	Feedback []LabelledQuery
	// Split, when set (to 0 or 1), scores only the queries of that half (Half) and replays
	// only the Feedback queries of the other half; nil keeps both whole.
	Split *int
	// NoReplay classifies the scored queries as Feedback and Split would but replays
	// nothing: the baseline of a feedback run.
	NoReplay bool
}

// QueryResult is one line written to Options.PerQuery.
type QueryResult struct {
	ID         string              `json:"id"`
	Query      string              `json:"query"`
	Relevant   []string            `json:"relevant"`
	Ranking    []string            `json:"ranking"`
	Scores     []float64           `json:"scores,omitempty"`
	Confidence float64             `json:"confidence"`
	Resolution registry.Resolution `json:"resolution"`
	Expected   registry.Resolution `json:"expected_resolution,omitempty"`
	Forbidden  []string            `json:"forbidden_exposed,omitempty"`
	TookUS     int64               `json:"took_us"`
	Partial    bool                `json:"partial,omitempty"`
}

// accum collects the metrics of one run.
type accum struct {
	n                                             int
	r1, r5, r10, mrr, n5, n10, top1, pack         mean
	forbidden, wnt, highRisk, resolution, partial mean
	cands, returned                               mean
	lat                                           []time.Duration
	per                                           map[string]*[2]mean
	cal                                           Calibration
}

func newAccum() *accum { return &accum{per: map[string]*[2]mean{}} }

func (a *accum) report() *Report {
	r := &Report{
		Cases: a.n, Recall1: a.r1.value(), Recall5: a.r5.value(), Recall10: a.r10.value(),
		MRR: a.mrr.value(), NDCG5: a.n5.value(), NDCG10: a.n10.value(), Top1: a.top1.value(),
		PackHitRate: a.pack.value(), ForbiddenExposureRate: a.forbidden.value(),
		WhenNotToUseViolationRate: a.wnt.value(), HighRiskTop1Rate: a.highRisk.value(),
		ResolutionAccuracy: a.resolution.value(),
		LatencyP50US:       percentile(a.lat, 0.50), LatencyP95US: percentile(a.lat, 0.95),
		PartialRate: a.partial.value(), AvgCandidates: a.cands.value(), AvgReturned: a.returned.value(),
		PerRetriever: map[string]Retriever{}, Calibration: a.cal.finish(),
	}
	for name, m := range a.per {
		r.PerRetriever[name] = Retriever{Recall5: m[0].value(), MRR: m[1].value()}
	}
	return r
}

func (a *accum) ranking(r Ranking, relevant []string) {
	a.r1.add(RecallAt(r, relevant, 1))
	a.r5.add(RecallAt(r, relevant, 5))
	a.r10.add(RecallAt(r, relevant, 10))
	a.mrr.add(ReciprocalRank(r, relevant, 10))
	a.n5.add(NDCGAt(r, relevant, 5))
	a.n10.add(NDCGAt(r, relevant, 10))
	a.top1.addBool(len(r) > 0 && slices.Contains(relevant, r[0]))
}

func (a *accum) meta(resp *registry.SearchResponse, took time.Duration) {
	a.lat = append(a.lat, took)
	a.partial.addBool(resp.SearchMeta.Partial)
	a.cands.add(float64(resp.SearchMeta.CandidateCount))
	a.returned.add(float64(resp.SearchMeta.ReturnedCount))
}

// ReadJSONL decodes one JSON value per non-empty line of path into a slice, naming the
// line of the first bad one.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var v T
		dec := json.NewDecoder(strings.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// EvalToolsWith imports a flat catalogue (../shared/eval format) into a temporary in-memory
// engine opened with eo (its Seed, Dir and NoSync replaced) and scores its labelled queries,
// matching labels by the catalogue's original ids.
func EvalToolsWith(ctx context.Context, toolsPath, queriesPath string, eo engine.Options, opts Options) (*Report, error) {
	f, err := os.Open(toolsPath)
	if err != nil {
		return nil, err
	}
	caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval"})
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", toolsPath, err)
	}
	e, queries, err := openEval(ctx, caps, queriesPath, eo)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return EvalQueries(ctx, e, queries, opts)
}

// openEval opens a temporary in-memory engine over caps with eo (its Seed, Dir and NoSync
// replaced) and reads the labelled queries of queriesPath.
func openEval(ctx context.Context, caps []*registry.Capability, queriesPath string, eo engine.Options) (*engine.Engine, []LabelledQuery, error) {
	queries, err := readQueries(queriesPath)
	if err != nil {
		return nil, nil, err
	}
	eo.Seed, eo.NoSync, eo.Dir = caps, true, ""
	e, err := engine.Open(ctx, eo)
	if err != nil {
		return nil, nil, err
	}
	return e, queries, nil
}

func readQueries(path string) ([]LabelledQuery, error) {
	// Query files carry extra keys (subset, difficulty); decode leniently.
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []LabelledQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q LabelledQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if q.Query == "" || len(q.Relevant) == 0 {
			return nil, fmt.Errorf("%s:%d: a labelled query needs query and relevant", path, line)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

// EvalQueries scores labelled queries against an open engine. Labels name capabilities by
// id or by external id (the original name of an imported tool).
func EvalQueries(ctx context.Context, e *engine.Engine, queries []LabelledQuery, opts Options) (*Report, error) {
	if opts.Limit == 0 {
		opts.Limit = 10
	}
	label := labeller(e.Snapshot())
	packs := newPackIndex(e.Snapshot(), label)
	rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	if opts.RuntimeContext != nil {
		rc = *opts.RuntimeContext
	}
	var class func(LabelledQuery) string
	classes := map[string]*accum{}
	var fr *FeedbackReport
	if opts.Feedback != nil || opts.Split != nil {
		var replayed []LabelledQuery
		queries, replayed = splitFeedback(queries, opts.Feedback, splitOf(opts))
		fr = &FeedbackReport{}
		if !opts.NoReplay {
			if err := Replay(ctx, e, replayed, rc); err != nil {
				return nil, err
			}
			fr.Replayed = len(replayed)
		}
		class = classOf(replayed)
		for _, c := range []string{Warm, Cold, Mixed} {
			classes[c] = newAccum()
		}
	}
	a := newAccum()
	bar := newProgress(opts.Progress, len(queries))
	for i, q := range queries {
		bar.step(i)
		req := registry.SearchRequest{Query: q.Query, Limit: opts.Limit}
		start := time.Now()
		resp, err := e.Search(ctx, req, rc)
		took := time.Since(start)
		if err != nil {
			if errors.Is(err, engine.ErrInvalidRequest) {
				continue
			}
			return nil, fmt.Errorf("query %s: %w", q.QID, err)
		}
		a.n++
		r := make(Ranking, 0, len(resp.Matches))
		for _, m := range resp.Matches {
			r = append(r, label(m.ResourceID))
		}
		a.ranking(r, q.Relevant)
		a.meta(resp, took)
		a.cal.add(resp.Confidence, resp.Resolution, len(r) > 0 && slices.Contains(q.Relevant, r[0]))
		if class != nil {
			ca := classes[class(q)]
			ca.n++
			ca.ranking(r, q.Relevant)
			ca.meta(resp, took)
		}
		a.pack.addBool(len(r) > 0 && packs.samePack(resp.Matches[0].ResourceID, q.Relevant))
		if opts.PerRetriever {
			if err := probeAll(ctx, e, a, req, rc, q.Relevant, label); err != nil {
				return nil, err
			}
		}
		if opts.PerQuery != nil {
			writeLine(opts.PerQuery, QueryResult{ID: q.QID, Query: q.Query, Relevant: q.Relevant, Ranking: r,
				Scores: scoresOf(resp.Matches), Confidence: resp.Confidence, Resolution: resp.Resolution, TookUS: took.Microseconds(), Partial: resp.SearchMeta.Partial})
		}
	}
	bar.done()
	rep := a.report()
	if fr != nil {
		for c, p := range map[string]**Report{Warm: &fr.Warm, Cold: &fr.Cold, Mixed: &fr.Mixed} {
			if classes[c].n > 0 {
				*p = classes[c].report()
			}
		}
		rep.Feedback = fr
	}
	return rep, nil
}

// splitOf returns the half opts.Split names, else -1.
func splitOf(opts Options) int {
	if opts.Split == nil {
		return -1
	}
	return *opts.Split
}

func probeAll(ctx context.Context, e *engine.Engine, a *accum, req registry.SearchRequest, rc registry.RuntimeContext, relevant []string, label func(string) string) error {
	for _, name := range Retrievers {
		caps, err := e.Probe(ctx, name, req, rc)
		if err != nil {
			return err
		}
		r := make(Ranking, len(caps))
		for i, c := range caps {
			r[i] = label(c.ID)
		}
		m := a.per[name]
		if m == nil {
			m = &[2]mean{}
			a.per[name] = m
		}
		m[0].add(RecallAt(r, relevant, 5))
		m[1].add(ReciprocalRank(r, relevant, 10))
	}
	return nil
}

// labeller maps a capability id to the id labels use: its external id when imported.
func labeller(snap *registry.Snapshot) func(string) string {
	ext := make(map[string]string)
	for _, c := range snap.Caps {
		if c.ExternalID != "" {
			ext[c.ID] = c.ExternalID
		}
	}
	return func(id string) string {
		if x, ok := ext[id]; ok {
			return x
		}
		return id
	}
}

// packIndex finds the pack of the capability a label names, without a scan per query.
type packIndex map[string]string // label (or id) → capability id

func newPackIndex(snap *registry.Snapshot, label func(string) string) packIndex {
	p := make(packIndex, 2*len(snap.Caps))
	for _, c := range snap.Caps {
		p[c.ID] = c.ID
	}
	for _, c := range snap.Caps {
		if l := label(c.ID); l != c.ID {
			if _, taken := p[l]; !taken {
				p[l] = c.ID
			}
		}
	}
	return p
}

// samePack reports whether the top result shares its pack with the first relevant one.
func (p packIndex) samePack(top string, relevant []string) bool {
	id, ok := p[relevant[0]]
	if !ok {
		return false
	}
	want := registry.Parent(id)
	if want == "" {
		return false
	}
	return top == want || registry.Parent(top) == want
}

// EvalCases scores cases against an open engine.
func EvalCases(ctx context.Context, e *engine.Engine, cases []Case, opts Options) (*Report, error) {
	if opts.Limit == 0 {
		opts.Limit = registry.DefaultLimit
	}
	snap := e.Snapshot()
	packs := newPackIndex(snap, func(s string) string { return s })
	a := newAccum()
	bar := newProgress(opts.Progress, len(cases))
	for i, c := range cases {
		bar.step(i)
		req := registry.SearchRequest{Query: c.Query, Within: c.Within, SideEffectMax: c.SideEffectMax, Types: c.Types, Limit: opts.Limit}
		start := time.Now()
		resp, err := e.Search(ctx, req, c.RuntimeContext)
		took := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", i+1, c.Name, err)
		}
		a.n++
		a.meta(resp, took)
		r := make(Ranking, 0, len(resp.Matches))
		for _, m := range resp.Matches {
			r = append(r, m.ResourceID)
		}
		a.cal.add(resp.Confidence, resp.Resolution, len(r) > 0 && slices.Contains(c.ExpectedTopActions, r[0]))
		if len(c.ExpectedTopActions) > 0 {
			a.ranking(r, c.ExpectedTopActions)
			a.pack.addBool(len(r) > 0 && packs.samePack(r[0], c.ExpectedTopActions))
			if len(r) > 0 {
				top, _ := snap.Get(r[0])
				want, _ := snap.Get(c.ExpectedTopActions[0])
				a.highRisk.addBool(top != nil && rank.HighRisk(top) && (want == nil || !rank.HighRisk(want)))
				a.wnt.addBool(top != nil && violatesWhenNotToUse(top, c.Query))
			}
			if opts.PerRetriever {
				if err := probeAll(ctx, e, a, req, c.RuntimeContext, c.ExpectedTopActions, func(s string) string { return s }); err != nil {
					return nil, err
				}
			}
		}
		var exposed []string
		if len(c.ForbiddenActions) > 0 {
			for _, id := range r {
				if slices.Contains(c.ForbiddenActions, id) {
					exposed = append(exposed, id)
				}
			}
			a.forbidden.addBool(len(exposed) > 0)
		}
		if c.ExpectedResolution != "" {
			a.resolution.addBool(resp.Resolution == c.ExpectedResolution)
		}
		if opts.PerQuery != nil {
			writeLine(opts.PerQuery, QueryResult{ID: c.Name, Query: c.Query, Relevant: c.ExpectedTopActions, Ranking: r,
				Scores: scoresOf(resp.Matches), Confidence: resp.Confidence, Resolution: resp.Resolution, Expected: c.ExpectedResolution, Forbidden: exposed,
				TookUS: took.Microseconds(), Partial: resp.SearchMeta.Partial})
		}
	}
	bar.done()
	return a.report(), nil
}

// violatesWhenNotToUse reports whether the query covers at least half the terms of one of
// the capability's when_not_to_use entries: the top result is one the definition says not to
// use for such a request.
func violatesWhenNotToUse(c *registry.Capability, query string) bool {
	q := text.Analyze(query)
	for _, w := range c.WhenNotToUse {
		terms := text.Analyze(w)
		if len(terms) == 0 {
			continue
		}
		hit := 0
		for _, t := range terms {
			if slices.Contains(q, t) {
				hit++
			}
		}
		if 2*hit >= len(terms) {
			return true
		}
	}
	return false
}

func writeLine(w io.Writer, v any) {
	b, _ := json.Marshal(v) // QueryResult always marshals
	w.Write(append(b, '\n'))
}

// progress draws a bar once a run has lasted a second: redrawn in place on a terminal,
// a line per quarter elsewhere (logs stay readable).
type progress struct {
	w     io.Writer
	tty   bool
	n     int
	start time.Time
	last  time.Time
	shown bool
	quart int
}

func newProgress(w io.Writer, n int) *progress {
	p := &progress{w: w, n: n, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) step(i int) {
	if p.w == nil || p.n == 0 {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	done := i * width / p.n
	if p.tty {
		p.shown = true
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("#", done), strings.Repeat(".", width-done), i, p.n)
	} else if q := 4 * i / p.n; q > p.quart {
		p.quart, p.shown = q, true
		fmt.Fprintf(p.w, "%d/%d (%d%%) %.1fs\n", i, p.n, 100*i/p.n, now.Sub(p.start).Seconds())
	}
}

func (p *progress) done() {
	switch {
	case p.shown && p.tty:
		fmt.Fprintf(p.w, "\r[%s] %d/%d %.1fs\n", strings.Repeat("#", 30), p.n, p.n, time.Since(p.start).Seconds())
	case p.shown:
		fmt.Fprintf(p.w, "%d/%d done in %.1fs\n", p.n, p.n, time.Since(p.start).Seconds())
	}
}

// CalibrationSamples runs every case that names an expected resolution and returns the
// samples rank.Calibrate fits thresholds to.
func CalibrationSamples(ctx context.Context, e *engine.Engine, cases []Case) ([]rank.Sample, error) {
	var out []rank.Sample
	for i, c := range cases {
		if c.ExpectedResolution == "" {
			continue
		}
		req := registry.SearchRequest{Query: c.Query, Within: c.Within, SideEffectMax: c.SideEffectMax, Types: c.Types}
		_, s, err := e.CalibrationSample(ctx, req, c.RuntimeContext, c.ExpectedResolution)
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", i+1, c.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// scoresOf returns the final score of every match, in order (for the per-query file).
func scoresOf(ms []registry.Match) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = m.Score
	}
	return out
}
