package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// metrics are the daemon's Prometheus collectors, kept in the server's own registry (never
// the global default one).
type metrics struct {
	reg *prometheus.Registry

	searchSeconds    prometheus.Histogram
	retrieverSeconds *prometheus.HistogramVec
	retrieverTimeout *prometheus.CounterVec
	retrieverFailed  *prometheus.CounterVec
	searches         *prometheus.CounterVec
	partial          prometheus.Counter
	runs             *prometheus.CounterVec
	inflight         *prometheus.GaugeVec
	rejected         *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpSeconds      *prometheus.HistogramVec
	generation       prometheus.Gauge
	reloads          *prometheus.CounterVec
	leafTools        prometheus.Counter
}

// latencyBuckets span 100 µs to 5 s: searches are sub-millisecond in process and bounded
// by the largest retriever deadline.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.searchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "capdex_search_duration_seconds", Help: "Search latency in the engine (HTTP, SSE and MCP searches), overall.",
		Buckets: latencyBuckets,
	})
	m.retrieverSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "capdex_retriever_duration_seconds", Help: "Latency of one retriever's answer within a search.",
		Buckets: latencyBuckets,
	}, []string{"retriever"})
	m.retrieverTimeout = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_retriever_timeouts_total", Help: "Searches in which a retriever timed out (the search went on partial).",
	}, []string{"retriever"})
	m.retrieverFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_retriever_failures_total", Help: "Searches in which a retriever failed, such as an embeddings endpoint that errs (the search went on partial).",
	}, []string{"retriever"})
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_searches_total", Help: "Searches by outcome: ok, invalid (bad request), error, rejected (overload).",
	}, []string{"outcome"})
	m.partial = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "capdex_searches_partial_total", Help: "Searches answered partial (a retriever timed out or failed).",
	})
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_runs_total", Help: "Runs by status (succeeded, confirmation_required, refused, failed, error, rejected) and reason code.",
	}, []string{"status", "reason"})
	m.inflight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capdex_inflight", Help: "Operations in flight: search, run, http.",
	}, []string{"kind"})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_overload_rejections_total", Help: "Requests refused with 429 (or an MCP overload error) because the in-flight limit was reached.",
	}, []string{"kind"})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_http_requests_total", Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	m.httpSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "capdex_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: latencyBuckets,
	}, []string{"route"})
	m.generation = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "capdex_registry_generation", Help: "The registry generation being searched.",
	})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capdex_registry_reloads_total", Help: "Hot reloads of watched registry directories by result: applied, unchanged, invalid, failed.",
	}, []string{"result"})
	m.leafTools = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "capdex_mcp_leaf_tools_registered_total", Help: "Leaf tools registered in MCP sessions after a describe.",
	})
	m.reg.MustRegister(m.searchSeconds, m.retrieverSeconds, m.retrieverTimeout, m.retrieverFailed, m.searches, m.partial,
		m.runs, m.inflight, m.rejected, m.httpRequests, m.httpSeconds, m.generation, m.reloads, m.leafTools,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range engine.RetrieverNames() {
		m.retrieverTimeout.WithLabelValues(r)
		m.retrieverFailed.WithLabelValues(r)
	}
	for _, kind := range []string{"search", "run"} {
		m.rejected.WithLabelValues(kind)
		m.inflight.WithLabelValues(kind)
	}
	m.inflight.WithLabelValues("http")
	return m
}

// observeRetriever records how long one retriever of a search ran
// (engine.Options.RetrieverTimes).
func (m *metrics) observeRetriever(retriever string, took time.Duration) {
	m.retrieverSeconds.WithLabelValues(retriever).Observe(took.Seconds())
}

// observeSearch records one finished search.
func (m *metrics) observeSearch(took time.Duration, resp *registry.SearchResponse) {
	m.searchSeconds.Observe(took.Seconds())
	m.searches.WithLabelValues("ok").Inc()
	if resp == nil {
		return
	}
	if resp.SearchMeta.Partial {
		m.partial.Inc()
	}
	for _, r := range resp.SearchMeta.TimedOutRetrievers {
		m.retrieverTimeout.WithLabelValues(r).Inc()
	}
	for _, r := range resp.SearchMeta.FailedRetrievers {
		m.retrieverFailed.WithLabelValues(r).Inc()
	}
}
