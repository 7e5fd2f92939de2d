package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index"
)

// TestMCPFinalGateDropsInjectedHits: a hit the dev caller may not discover, injected first
// into every retriever's answer, never reaches an MCP capability_search result.
func TestMCPFinalGateDropsInjectedHits(t *testing.T) {
	const forbidden = "maintenance.docker.prune" // discoverable by ops only
	var doc uint32
	ts := startServer(t, serverSetup{engine: func(o *engine.Options) {
		o.WrapRetriever = func(next actors.RetrieveFunc) actors.RetrieveFunc {
			return func(ctx context.Context, k index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error) {
				hits, err := next(ctx, k, q, allow, limit)
				if err != nil {
					return hits, err
				}
				return append([]index.Hit{{Doc: doc, Score: 1e9}}, hits...), nil
			}
		}
	}})
	d, ok := ts.Engine().Snapshot().DocID(forbidden)
	if !ok {
		t.Fatalf("%s is not in the built-in registry", forbidden)
	}
	doc = d
	c := connectHTTP(t, ts.url, devKey, nil)
	for _, q := range []string{"docker 磁盘满了，清理一下镜像", "prune docker images"} {
		out, isErr := c.callTool(t, ToolSearch, map[string]any{"query": q})
		if isErr {
			t.Fatalf("%q: %v", q, out)
		}
		b, _ := json.Marshal(map[string]any{"matches": out["matches"], "missing": out["missing_information"]})
		if strings.Contains(string(b), forbidden) {
			t.Fatalf("%q: MCP search shows %s: %s", q, forbidden, b)
		}
		if m, _ := out["matches"].([]any); len(m) == 0 {
			t.Fatalf("%q: no matches at all", q)
		}
	}
}
