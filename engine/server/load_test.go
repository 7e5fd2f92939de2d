package server

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var loadQueries = []string{
	`{"query": "Codex 更新后还是旧版本，帮我检查并修好"}`,
	`{"query": "clean the npm cache", "limit": 3}`,
	`{"query": "docker 容器日志"}`,
	`{"query": "which python version is active", "types": ["action"]}`,
	`{"query": "send a notification to the team"}`,
}

type loadResult struct {
	status  int // 0: transport error
	latency time.Duration
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

// loadFigures is what one shedLoad run measured.
type loadFigures struct {
	saturation           float64 // closed-loop searches/s at the limit
	closedP50, closedP99 time.Duration
	closedErrors         int
	offered, sent        int // offered: answered; sent: offered + not sent (client full)
	admitted             []time.Duration
	rejected             []time.Duration // latencies of the 429s
	failed               int             // neither 200 nor 429
	offeredFor           time.Duration
	baseHeap, peakHeap   uint64
}

// shedLoad measures the closed-loop saturation throughput of POST /v1/search on loopback
// with limit workers for closedFor, then offers twice that rate open loop for openFor.
func shedLoad(tb testing.TB, ts *testServer, limit int, closedFor, openFor time.Duration) loadFigures {
	tb.Helper()
	tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var qi atomic.Uint64
	do := func() loadResult {
		q := loadQueries[qi.Add(1)%uint64(len(loadQueries))]
		req, _ := http.NewRequest("POST", ts.url+"/v1/search", strings.NewReader(q))
		req.Header.Set("Authorization", "Bearer "+devKey)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return loadResult{}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return loadResult{status: resp.StatusCode, latency: time.Since(start)}
	}
	for range 50 { // warm up connections and caches
		do()
	}
	var f loadFigures

	// Phase 1: closed loop with as many workers as the limit admits: the saturation rate.
	var mu sync.Mutex
	var closedLat []time.Duration
	stop := time.Now().Add(closedFor)
	var wg sync.WaitGroup
	start := time.Now()
	for range limit {
		wg.Go(func() {
			for time.Now().Before(stop) {
				r := do()
				mu.Lock()
				if r.status == 200 {
					closedLat = append(closedLat, r.latency)
				} else {
					f.closedErrors++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	f.saturation = float64(len(closedLat)) / time.Since(start).Seconds()
	f.closedP50, f.closedP99 = percentile(closedLat, 0.5), percentile(closedLat, 0.99)

	// Phase 2: open loop at twice the saturation rate (at least 100/s), bounded in count
	// and concurrency.
	rate := max(2*f.saturation, 100)
	maxRequests := min(int(rate*openFor.Seconds())+1, 30000)
	const maxClientConcurrency = 256
	clientSlots := make(chan struct{}, maxClientConcurrency)
	results := make([]loadResult, 0, maxRequests)
	var clientDropped int
	sampleDone := make(chan struct{})
	var sampler sync.WaitGroup
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.baseHeap = ms.HeapAlloc
	sampler.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampleDone:
				return
			case <-tick.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				f.peakHeap = max(f.peakHeap, ms.HeapAlloc)
			}
		}
	})
	start = time.Now()
	launched := 0
	for launched < maxRequests {
		elapsed := time.Since(start)
		if elapsed > openFor+time.Second {
			break
		}
		due := int(rate * elapsed.Seconds())
		for ; launched < due && launched < maxRequests; launched++ {
			select {
			case clientSlots <- struct{}{}:
			default:
				clientDropped++ // the client itself cannot keep up; not offered
				continue
			}
			wg.Go(func() {
				r := do()
				<-clientSlots
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			})
		}
		time.Sleep(500 * time.Microsecond)
	}
	f.offeredFor = time.Since(start)
	wg.Wait()
	close(sampleDone)
	sampler.Wait()
	for _, r := range results {
		switch r.status {
		case 200:
			f.admitted = append(f.admitted, r.latency)
		case 429:
			f.rejected = append(f.rejected, r.latency)
		default:
			f.failed++
		}
	}
	f.offered, f.sent = len(results), len(results)+clientDropped
	return f
}

// TestLoadShedding offers twice the closed-loop saturation rate of POST /v1/search open
// loop: every request is either answered or refused with 429 (nothing else), some are
// refused, some admitted, memory stays bounded, and afterwards the daemon is ready, serves
// a search and holds no search slot. It asserts behaviour only; the latencies and rates are
// BenchmarkLoadShedding's figures.
func TestLoadShedding(t *testing.T) {
	const limit = 4
	ts := startServer(t, serverSetup{quiet: true, cfg: func(c *Config) { c.Limits.MaxInflightSearches = limit }})
	closedFor, openFor := time.Second, 2500*time.Millisecond
	if testing.Short() {
		closedFor, openFor = 500*time.Millisecond, time.Second
	}
	f := shedLoad(t, ts, limit, closedFor, openFor)
	t.Logf("saturation %.0f/s; offered %d, admitted %d, 429 %d, other %d", f.saturation, f.offered, len(f.admitted), len(f.rejected), f.failed)
	if f.closedErrors > 0 {
		t.Errorf("closed loop within the limit: %d requests not answered 200", f.closedErrors)
	}
	if f.failed > 0 {
		t.Errorf("%d requests failed with neither 200 nor 429", f.failed)
	}
	if len(f.rejected) == 0 {
		t.Errorf("no request was refused at twice the saturation rate")
	}
	if len(f.admitted) == 0 {
		t.Errorf("nothing admitted under overload")
	}
	if f.peakHeap > f.baseHeap+256<<20 {
		t.Errorf("heap grew from %d to %d bytes", f.baseHeap, f.peakHeap)
	}
	if r := ts.call(t, "GET", "/readyz", "", nil); r.status != 200 {
		t.Errorf("not ready after the load: %d", r.status)
	}
	if r := ts.call(t, "POST", "/v1/search", devKey, loadQueries[0]); r.status != 200 {
		t.Errorf("search after the load: %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(ts.searchSlots) > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(ts.searchSlots); n != 0 {
		t.Errorf("%d search slots still taken after the load", n)
	}
}

// BenchmarkLoadShedding reports the figures of load shedding: the closed-loop saturation
// rate and its latencies, then under twice that rate open loop the goodput, the admitted
// latencies (which must not queue behind the limit) and the latency of a 429 (which must
// not wait). One iteration is one run of about 3.5 s; run with -benchtime=1x.
func BenchmarkLoadShedding(b *testing.B) {
	const limit = 4
	ts := startServer(b, serverSetup{quiet: true, cfg: func(c *Config) { c.Limits.MaxInflightSearches = limit }})
	var f loadFigures
	for b.Loop() {
		f = shedLoad(b, ts, limit, time.Second, 2500*time.Millisecond)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(f.saturation, "saturation_searches/s")
	b.ReportMetric(ms(f.closedP99), "closed_p99_ms")
	b.ReportMetric(float64(len(f.admitted))/f.offeredFor.Seconds()/max(f.saturation, 1)*100, "goodput_%")
	b.ReportMetric(ms(percentile(f.admitted, 0.5)), "admitted_p50_ms")
	b.ReportMetric(ms(percentile(f.admitted, 0.99)), "admitted_p99_ms")
	b.ReportMetric(ms(percentile(f.rejected, 0.99)), "429_p99_ms")
	b.ReportMetric(100*float64(len(f.rejected))/float64(max(f.offered, 1)), "refused_%")
	b.ReportMetric(float64(f.peakHeap-min(f.peakHeap, f.baseHeap))/(1<<20), "heap_growth_MiB")
	b.ReportMetric(float64(f.failed), "failed")
}
