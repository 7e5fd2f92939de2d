package bench

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// CatalogSeed is the seed of the generated catalogues the benchmarks search.
const CatalogSeed = 42

// CatalogRC is the caller of searches over a generated catalogue: an ordinary developer of
// no particular tenant, so tenant-limited, admin-only and disabled entries stay hidden and
// the pre-filter has work to do.
func CatalogRC() registry.RuntimeContext {
	return registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"dev"}, Budget: -1}
}

// Catalog returns the generated catalogue of n capabilities (index/testcat, CatalogSeed):
// the same n always gives the same definitions.
func Catalog(n int) []*registry.Capability { return testcat.GenerateCatalog(n, CatalogSeed) }

// CatalogQueries derives up to count labelled queries from a generated catalogue, the same
// ones for the same arguments. Each query paraphrases one action the way a user would ask
// for it, from the generator's own aliases: "remove invoice in codex" for an English action,
// "在Codex里删除发票" for a Chinese one. Every action CatalogRC may discover that the same
// words describe is relevant, so a query is not scored against a twin it cannot tell apart.
func CatalogQueries(caps []*registry.Capability, count int) ([]LabelledQuery, error) {
	snap, err := registry.NewSnapshot(1, cloneAll(caps)) // fills Eff on copies: caps stay untouched
	if err != nil {
		return nil, err
	}
	rc := CatalogRC()
	byText := map[string][]string{}
	var texts []string
	for _, c := range snap.Caps {
		if c.ResourceType != registry.TypeAction || c.Status != registry.StatusActive ||
			!policy.Check(c, &rc, registry.GateDiscover).Allowed {
			continue
		}
		q := catalogQuery(c)
		if q == "" {
			continue
		}
		if _, ok := byText[q]; !ok {
			texts = append(texts, q)
		}
		byText[q] = append(byText[q], c.ID)
	}
	r := rand.New(rand.NewPCG(CatalogSeed, 7))
	r.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	texts = texts[:min(count, len(texts))]
	out := make([]LabelledQuery, len(texts))
	for i, t := range texts {
		lang := "en"
		if strings.HasPrefix(t, "在") {
			lang = "zh"
		}
		out[i] = LabelledQuery{QID: "gen-" + strconv.Itoa(i), Query: t, Relevant: slices.Sorted(slices.Values(byText[t])), Lang: lang}
	}
	return out, nil
}

// catalogQuery is the user's phrasing of one generated action, "" when the generator left
// out what it needs.
func catalogQuery(c *registry.Capability) string {
	if len(c.Aliases) < 2 || len(c.Entities) < 2 {
		return ""
	}
	if open := strings.Index(c.Title, "（"); open >= 0 { // a Chinese action: 删除发票（Codex）
		sys := strings.TrimSuffix(c.Title[open+len("（"):], "）")
		return "在" + sys + "里" + c.Aliases[0]
	}
	return c.Aliases[1] + " in " + strings.ReplaceAll(c.Entities[1], "_", " ")
}

func cloneAll(caps []*registry.Capability) []*registry.Capability {
	out := make([]*registry.Capability, len(caps))
	for i, c := range caps {
		out[i] = c.Clone()
	}
	return out
}

// EvalSets are the sets of ../shared/eval that have labelled queries.
var EvalSets = []string{"seal_tools", "hammerbench_zh", "metatool"}

// EvalDir locates ../shared/eval for a test running in its package directory: the
// environment variable CAPDEX_EVAL_DIR when set, else the first of ../../shared/eval and
// ../../../shared/eval (from bench and from bench/bleve) that holds a set. The second
// result is false when none is found.
func EvalDir() (string, bool) {
	if d := os.Getenv("CAPDEX_EVAL_DIR"); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	for _, rel := range []string{"../../shared/eval", "../../../shared/eval"} {
		d := filepath.FromSlash(rel)
		if _, err := os.Stat(filepath.Join(d, "seal_tools", "tools.jsonl")); err == nil {
			return d, true
		}
	}
	return filepath.FromSlash("../../shared/eval"), false
}

// ImportEvalTools imports the tools.jsonl of an evaluation set the way EvalTools does, under
// an ACL that lets every caller discover and describe them.
func ImportEvalTools(path string) ([]*registry.Capability, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
}

// ReadQueries reads the labelled queries of a queries.jsonl file (extra keys are ignored).
func ReadQueries(path string) ([]LabelledQuery, error) { return readQueries(path) }
