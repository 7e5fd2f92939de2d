package engine

import (
	"context"
	"testing"
	"time"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkSearchMatch times a search of the generated 10k catalogue by an action's title,
// without a structured match and with hard filters taken from that action (its domain; its
// next_step, domain and scenario), and reports µs per search and the share of searches
// whose first match is the action (top1).
func BenchmarkSearchMatch(b *testing.B) {
	caps := testcat.GenerateCatalog(10_000, 42)
	var targets []*registry.Capability
	for i, c := range caps {
		if c.ResourceType == registry.TypeAction && i%7 == 0 && c.CapabilityType != "" && c.Domain != "" && len(c.Scenarios) > 0 {
			targets = append(targets, c)
		}
	}
	stepOf := map[string]string{}
	for _, s := range query.NextSteps {
		if len(s.Types) == 1 {
			stepOf[s.Types[0]] = s.Step
		}
	}
	e, rc := openStageEngine(b, caps)
	ctx := context.Background()
	for _, v := range []struct {
		name  string
		match func(c *registry.Capability) *registry.StructuredMatch
	}{
		{"none", func(*registry.Capability) *registry.StructuredMatch { return nil }},
		{"domain", func(c *registry.Capability) *registry.StructuredMatch {
			return &registry.StructuredMatch{Domain: c.Domain}
		}},
		{"next_step+domain+scenario", func(c *registry.Capability) *registry.StructuredMatch {
			return &registry.StructuredMatch{NextStep: stepOf[c.CapabilityType], Domain: c.Domain, Scenario: c.Scenarios[0]}
		}},
	} {
		b.Run("match="+v.name, func(b *testing.B) {
			var took time.Duration
			n, top := 0, 0
			for b.Loop() {
				c := targets[n%len(targets)]
				start := time.Now()
				resp, err := e.Search(ctx, registry.SearchRequest{Query: c.Title, Match: v.match(c)}, rc)
				took += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Matches) > 0 && resp.Matches[0].ResourceID == c.ID {
					top++
				}
				n++
			}
			b.ReportMetric(float64(took.Microseconds())/float64(n), "us/search")
			b.ReportMetric(float64(top)/float64(n), "top1")
		})
	}
}
