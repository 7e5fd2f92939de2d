package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capdex/capdex/engine"
)

// handleStats answers GET /v1/stats: the funnel of the caller's tenant, listing the
// capabilities the caller may discover (engine.Stats).
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	rc, _ := rcOf(r)
	f, err := s.eng.Stats(rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, f)
}

// registerFunnel adds the funnel of every tenant together to the metrics, read at each
// scrape. /metrics is public, so these name no tenant and no capability: the funnel by
// capability is GET /v1/stats, within the caller's gates.
func (m *metrics) registerFunnel(totals func() engine.FunnelTotals) {
	count := func(name, help string, f func(engine.FunnelTotals) int) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(totals())) })
	}
	rate := func(name, help string, f func(engine.FunnelTotals) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return f(totals()) })
	}
	m.reg.MustRegister(
		count("capdex_funnel_searches_total", "Searches recorded in sessions (since the records kept).", func(t engine.FunnelTotals) int { return t.Searches }),
		count("capdex_funnel_searches_described_total", "Recorded searches followed by a describe in their session.", func(t engine.FunnelTotals) int { return t.SearchesDescribed }),
		count("capdex_funnel_clarifications_total", "Recorded searches whose answer was not confident.", func(t engine.FunnelTotals) int { return t.Clarified }),
		count("capdex_funnel_described_total", "Capabilities described after a search (once per search and capability).", func(t engine.FunnelTotals) int { return t.Described }),
		count("capdex_funnel_described_ran_total", "Capabilities described after a search, then run.", func(t engine.FunnelTotals) int { return t.DescribedRan }),
		count("capdex_funnel_ran_total", "Capabilities run to an outcome after a search.", func(t engine.FunnelTotals) int { return t.Ran }),
		count("capdex_funnel_succeeded_total", "Capabilities run successfully after a search.", func(t engine.FunnelTotals) int { return t.Succeeded }),
		rate("capdex_funnel_search_to_describe_ratio", "Share of recorded searches followed by a describe.", func(t engine.FunnelTotals) float64 { r, _, _, _ := t.Rates(); return r }),
		rate("capdex_funnel_describe_to_run_ratio", "Share of describes after a search followed by a run.", func(t engine.FunnelTotals) float64 { _, r, _, _ := t.Rates(); return r }),
		rate("capdex_funnel_run_success_ratio", "Share of runs after a search that succeeded.", func(t engine.FunnelTotals) float64 { _, _, r, _ := t.Rates(); return r }),
		rate("capdex_funnel_clarification_ratio", "Share of recorded searches whose answer was not confident.", func(t engine.FunnelTotals) float64 { _, _, _, r := t.Rates(); return r }),
	)
}
