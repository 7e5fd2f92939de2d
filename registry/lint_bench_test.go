package registry

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkLintAffectedOne measures the lint of one changed action in a registry of n
// (LintAffected, as a Put runs it): what every registry change pays besides the store and
// the index, whatever its size.
func BenchmarkLintAffectedOne(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("registry=%dk", n/1000), func(b *testing.B) {
			caps := make([]*Capability, 0, n)
			for p := 0; len(caps) < n; p++ {
				caps = append(caps, &Capability{ID: fmt.Sprintf("pack%d", p), Version: 1, ResourceType: TypePack, Title: "P", Owner: "o", Status: StatusActive})
				for a := 0; a < 19 && len(caps) < n; a++ {
					caps = append(caps, &Capability{
						ID: fmt.Sprintf("pack%d.action_%d", p, a), Version: 1, ResourceType: TypeAction, Title: "A", Owner: "o",
						Status: StatusActive, SideEffect: SideEffectRead, RiskLevel: RiskLow, WhenToUse: []string{"w"},
						ArgumentsSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string"}}}`, a)),
						OutputSchema:    json.RawMessage(`{"type":"object"}`), Handler: &Handler{Kind: "go", Name: "h"},
					})
				}
			}
			changed := *caps[n/2+1]
			changed.Version++
			caps[n/2+1] = &changed
			b.ReportAllocs()
			for b.Loop() {
				if errs := LintAffected(caps, func(c *Capability) bool { return c == &changed }); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
