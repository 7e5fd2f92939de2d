// Package blevecmp compares capdex, side by side and in one process, with what a user would
// otherwise pick: a BM25 full-text library, github.com/blevesearch/bleve/v2. Both engines
// index the same catalogue and answer the same labelled queries one at a time; the package
// reports latency (mean, p50, p99) and quality (recall@5, nDCG@5, MRR@10) of each and their
// ratios.
//
// It is a module of its own (github.com/capdex/capdex/bench/bleve) so that capdex never
// depends on bleve. Run it with
//
//	cd bench/bleve && go test -bench . -run '^$'        # benchstat-friendly
//	cd bench/bleve && CAPDEX_COMPARE=1 go test -run TestCompareTable -v   # markdown table
//
// # Bleve's side
//
// Each tool is one document with three text fields: name (boosted x2), description and
// params (the names and descriptions of its parameters). A query is a disjunction of one
// match query per field, scored with BM25 (IndexMapping.ScoringModel "bm25"), analysed with
// bleve's "en" analyzer for English sets and "cjk" for Chinese and mixed ones. The index is
// scorch held in memory (NewUsing with an empty path): bleve.NewMemOnly builds an
// upside_down index instead, which cannot report field lengths, so its "bm25" silently falls
// back to TF-IDF (see BleveOptions.MemOnly).
package blevecmp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/registry"
)

// Doc is one capability as a full-text library sees it.
type Doc struct {
	ID          string
	Name        string
	Description string
	Params      string
}

// Set is a catalogue with its labelled queries, in the form each engine takes it.
type Set struct {
	Name string
	// Analyzer is bleve's analyzer for the set: "en" or "cjk".
	Analyzer string
	// Docs are what bleve indexes; Caps what capdex is seeded with.
	Docs []Doc
	Caps []*registry.Capability
	// Queries are labelled with Doc ids (the original tool ids of an evaluation set).
	Queries []bench.LabelledQuery
	// RC is the caller capdex searches as.
	RC registry.RuntimeContext
}

// LoadEvalSet reads one set of ../shared/eval (dir/name/tools.jsonl and queries.jsonl).
// maxQueries > 0 keeps that many queries, a fixed sample spread over the file.
func LoadEvalSet(dir, name string, maxQueries int) (*Set, error) {
	tools := filepath.Join(dir, name, "tools.jsonl")
	docs, err := readDocs(tools)
	if err != nil {
		return nil, err
	}
	caps, err := bench.ImportEvalTools(tools)
	if err != nil {
		return nil, err
	}
	qs, err := bench.ReadQueries(filepath.Join(dir, name, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	qs = sample(qs, maxQueries)
	zh := 0
	for _, q := range qs {
		if q.Lang == "zh" {
			zh++
		}
	}
	analyzer := en.AnalyzerName
	if 2*zh > len(qs) {
		analyzer = cjk.AnalyzerName
	}
	return &Set{Name: name, Analyzer: analyzer, Docs: docs, Caps: caps, Queries: qs,
		RC: registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}}, nil
}

// GeneratedSet is the generated catalogue of n capabilities (bench.Catalog) with nq of its
// labelled queries (bench.CatalogQueries). Bleve indexes only what bench.CatalogRC may
// discover (capdex filters the rest out itself), each definition as name = title, description
// = summary, aliases and when_to_use, params = its argument schema's text; the catalogue
// mixes Chinese and English, so with the "cjk" analyzer.
func GeneratedSet(n, nq int) (*Set, error) {
	caps := bench.Catalog(n)
	qs, err := bench.CatalogQueries(caps, nq)
	if err != nil {
		return nil, err
	}
	clones := make([]*registry.Capability, len(caps))
	for i, c := range caps {
		clones[i] = c.Clone()
	}
	snap, err := registry.NewSnapshot(1, clones) // fills Eff for the policy check
	if err != nil {
		return nil, err
	}
	rc := bench.CatalogRC()
	var docs []Doc
	for _, c := range snap.Caps {
		if !policy.Check(c, &rc, registry.GateDiscover).Allowed {
			continue
		}
		desc := strings.Join(append(append([]string{c.Summary}, c.Aliases...), c.WhenToUse...), " ")
		docs = append(docs, Doc{ID: c.ID, Name: c.Title, Description: desc, Params: paramText(c.ArgumentsSchema)})
	}
	return &Set{Name: fmt.Sprintf("generated_%dk", n/1000), Analyzer: cjk.AnalyzerName, Docs: docs, Caps: caps, Queries: qs, RC: rc}, nil
}

// sample keeps max queries spread evenly over qs (all when max <= 0 or there are fewer).
func sample(qs []bench.LabelledQuery, max int) []bench.LabelledQuery {
	if max <= 0 || len(qs) <= max {
		return qs
	}
	out := make([]bench.LabelledQuery, max)
	for i := range out {
		out[i] = qs[i*len(qs)/max]
	}
	return out
}

type rawTool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Params      json.RawMessage `json:"params"`
}

func readDocs(path string) ([]Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs []Doc
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var t rawTool
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		docs = append(docs, Doc{ID: t.ID, Name: t.Name, Description: t.Description, Params: paramText(t.Params)})
	}
	return docs, sc.Err()
}

// paramText is the parameter names and descriptions of a JSON Schema, nested ones too.
func paramText(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, name := range slices.Sorted(mapKeys(props)) {
				sb.WriteString(name)
				sb.WriteByte(' ')
				if p, ok := props[name].(map[string]any); ok {
					if d, ok := p["description"].(string); ok {
						sb.WriteString(d)
						sb.WriteByte(' ')
					}
				}
				walk(props[name])
			}
		}
		walk(m["items"])
	}
	walk(v)
	return strings.TrimSpace(sb.String())
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Searcher answers a query with up to 10 ids in the label space of its set, best first.
type Searcher interface {
	Search(ctx context.Context, q string) ([]string, error)
	Close() error
}

// BleveOptions choose how the bleve index is built.
type BleveOptions struct {
	// MemOnly uses bleve.NewMemOnly (upside_down over gtreap) instead of scorch in memory.
	// Its readers cannot report field lengths, so BM25 falls back to TF-IDF.
	MemOnly bool
}

// Bleve is a bleve index over a set's documents.
type Bleve struct {
	idx bleve.Index
}

// NewBleve indexes the set's documents in memory.
func NewBleve(s *Set, opts BleveOptions) (*Bleve, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	im.DefaultAnalyzer = s.Analyzer
	dm := bleve.NewDocumentMapping()
	for _, f := range []string{"name", "description", "params"} {
		fm := mapping.NewTextFieldMapping()
		fm.Analyzer = s.Analyzer
		fm.Store = false
		fm.IncludeInAll = false
		fm.IncludeTermVectors = false
		fm.DocValues = false
		dm.AddFieldMappingsAt(f, fm)
	}
	im.DefaultMapping = dm
	var idx bleve.Index
	var err error
	if opts.MemOnly {
		idx, err = bleve.NewMemOnly(im)
	} else {
		idx, err = bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
	}
	if err != nil {
		return nil, err
	}
	batch := idx.NewBatch()
	for _, d := range s.Docs {
		if err := batch.Index(d.ID, map[string]any{"name": d.Name, "description": d.Description, "params": d.Params}); err != nil {
			idx.Close()
			return nil, err
		}
	}
	if err := idx.Batch(batch); err != nil {
		idx.Close()
		return nil, err
	}
	return &Bleve{idx: idx}, nil
}

// Request is the bleve search request for a query: one match query per field, name x2.
func (b *Bleve) Request(q string) *bleve.SearchRequest {
	field := func(name string, boost float64) query.Query {
		m := bleve.NewMatchQuery(q)
		m.SetField(name)
		m.SetBoost(boost)
		return m
	}
	dq := bleve.NewDisjunctionQuery(field("name", 2), field("description", 1), field("params", 1))
	return bleve.NewSearchRequestOptions(dq, 10, 0, false)
}

// Search implements Searcher.
func (b *Bleve) Search(ctx context.Context, q string) ([]string, error) {
	res, err := b.idx.SearchInContext(ctx, b.Request(q))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.ID
	}
	return out, nil
}

// Index is the underlying bleve index.
func (b *Bleve) Index() bleve.Index { return b.idx }

// Close implements Searcher.
func (b *Bleve) Close() error { return b.idx.Close() }

// Capdex is a capdex engine over a set, in memory.
type Capdex struct {
	e     *engine.Engine
	rc    registry.RuntimeContext
	label map[string]string
}

// NewCapdex opens an in-memory engine seeded with the set's capabilities.
func NewCapdex(ctx context.Context, s *Set) (*Capdex, error) {
	e, err := engine.Open(ctx, engine.Options{Seed: s.Caps, NoSync: true})
	if err != nil {
		return nil, err
	}
	label := map[string]string{}
	for _, c := range e.Snapshot().Caps {
		if c.ExternalID != "" {
			label[c.ID] = c.ExternalID
		}
	}
	return &Capdex{e: e, rc: s.RC, label: label}, nil
}

// Search implements Searcher: the whole search (every default retriever, actors, fusion,
// rerank, diversification), limit 10.
func (c *Capdex) Search(ctx context.Context, q string) ([]string, error) {
	resp, err := c.e.Search(ctx, registry.SearchRequest{Query: q, Limit: 10}, c.rc)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(resp.Matches))
	for i, m := range resp.Matches {
		out[i] = m.ResourceID
		if x, ok := c.label[m.ResourceID]; ok {
			out[i] = x
		}
	}
	return out, nil
}

// Close implements Searcher.
func (c *Capdex) Close() error { return c.e.Close() }

// Result is one engine's run over a set's queries, one query at a time.
type Result struct {
	Queries int
	// Mean, P50 and P99 are wall times of one query; CPU is the process CPU time per query
	// over the run (every goroutine's), which a loaded machine does not stretch.
	Mean, P50, P99, CPU time.Duration
	Recall5, NDCG5, MRR float64
}

// Run searches every query once, in order, and scores the rankings.
func Run(ctx context.Context, s Searcher, qs []bench.LabelledQuery) (Result, error) {
	lat := make([]time.Duration, 0, len(qs))
	var r Result
	var total time.Duration
	cpu := cputime.Process()
	for _, q := range qs {
		start := time.Now()
		ids, err := s.Search(ctx, q.Query)
		took := time.Since(start)
		if err != nil {
			return Result{}, fmt.Errorf("query %s: %w", q.QID, err)
		}
		total += took
		lat = append(lat, took)
		rk := bench.Ranking(ids)
		r.Recall5 += bench.RecallAt(rk, q.Relevant, 5)
		r.NDCG5 += bench.NDCGAt(rk, q.Relevant, 5)
		r.MRR += bench.ReciprocalRank(rk, q.Relevant, 10)
	}
	cpu = cputime.Process() - cpu
	n := len(qs)
	if n == 0 {
		return r, nil
	}
	r.Queries = n
	r.CPU = cpu / time.Duration(n)
	r.Recall5 /= float64(n)
	r.NDCG5 /= float64(n)
	r.MRR /= float64(n)
	r.Mean = total / time.Duration(n)
	slices.Sort(lat)
	r.P50, r.P99 = quantile(lat, 0.50), quantile(lat, 0.99)
	return r, nil
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// Row is one set's comparison.
type Row struct {
	Set           string
	Docs          int
	Capdex, Bleve Result
}

// Markdown renders rows as a table: per set one line per engine, then the ratios
// (capdex/bleve latency and CPU time, capdex−bleve quality).
func Markdown(rows []Row) string {
	var sb strings.Builder
	sb.WriteString("| set (tools) | engine | queries | mean µs | CPU µs | p50 µs | p99 µs | R@5 | nDCG@5 | MRR |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }
	for _, r := range rows {
		name := fmt.Sprintf("%s (%d)", r.Set, r.Docs)
		for _, e := range []struct {
			name string
			res  Result
		}{{"bleve", r.Bleve}, {"capdex", r.Capdex}} {
			fmt.Fprintf(&sb, "| %s | %s | %d | %s | %s | %s | %s | %.3f | %.3f | %.3f |\n", name, e.name, e.res.Queries,
				us(e.res.Mean), us(e.res.CPU), us(e.res.P50), us(e.res.P99), e.res.Recall5, e.res.NDCG5, e.res.MRR)
		}
		fmt.Fprintf(&sb, "| %s | capdex/bleve | | ×%.2f | ×%.2f | ×%.2f | ×%.2f | %+.3f | %+.3f | %+.3f |\n", name,
			ratio(r.Capdex.Mean, r.Bleve.Mean), ratio(r.Capdex.CPU, r.Bleve.CPU), ratio(r.Capdex.P50, r.Bleve.P50), ratio(r.Capdex.P99, r.Bleve.P99),
			r.Capdex.Recall5-r.Bleve.Recall5, r.Capdex.NDCG5-r.Bleve.NDCG5, r.Capdex.MRR-r.Bleve.MRR)
	}
	return sb.String()
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
