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

// TestLoadShedding measures the closed-loop saturation throughput of POST /v1/search on
// loopback, then offers twice that rate open loop: the admitted searches keep a bounded
// latency, the excess is refused with 429 at once, memory stays bounded and the daemon
// stays healthy. The figures go to the test log.
func TestLoadShedding(t *testing.T) {
	const limit = 4
	ts := startServer(t, serverSetup{quiet: true, cfg: func(c *Config) { c.Limits.MaxInflightSearches = limit }})
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
	closedFor, openFor := time.Second, 2500*time.Millisecond
	if testing.Short() {
		closedFor, openFor = 800*time.Millisecond, 1500*time.Millisecond
	}
	for range 50 { // warm up connections and caches
		do()
	}

	// Phase 1: closed loop with as many workers as the limit admits: the saturation rate.
	var mu sync.Mutex
	var closedLat []time.Duration
	var closedErr int
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
					closedErr++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	saturation := float64(len(closedLat)) / time.Since(start).Seconds()
	if closedErr > 0 || saturation < 20 {
		t.Fatalf("closed loop: %d errors, %.0f searches/s", closedErr, saturation)
	}
	closedP50, closedP99 := percentile(closedLat, 0.5), percentile(closedLat, 0.99)
	t.Logf("saturation (closed loop, %d workers = max_inflight_searches): %.0f searches/s, p50 %v, p99 %v",
		limit, saturation, closedP50, closedP99)

	// Phase 2: open loop at twice the saturation rate, bounded in count and concurrency.
	rate := 2 * saturation
	maxRequests := int(rate*openFor.Seconds()) + 1
	if maxRequests > 30000 {
		maxRequests = 30000
	}
	const maxClientConcurrency = 256
	clientSlots := make(chan struct{}, maxClientConcurrency)
	results := make([]loadResult, 0, maxRequests)
	var clientDropped int
	var peakHeap uint64
	sampleDone := make(chan struct{})
	var sampler sync.WaitGroup
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapAlloc
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
				if ms.HeapAlloc > peakHeap {
					peakHeap = ms.HeapAlloc
				}
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
	offeredFor := time.Since(start)
	wg.Wait()
	close(sampleDone)
	sampler.Wait()

	var admitted []time.Duration
	var rejected, failed int
	var rejectedLat []time.Duration
	for _, r := range results {
		switch r.status {
		case 200:
			admitted = append(admitted, r.latency)
		case 429:
			rejected++
			rejectedLat = append(rejectedLat, r.latency)
		default:
			failed++
		}
	}
	offered := len(results)
	admittedRate := float64(len(admitted)) / offeredFor.Seconds()
	p50, p99 := percentile(admitted, 0.5), percentile(admitted, 0.99)
	t.Logf("open loop at 2x (%.0f/s target) for %v: offered %d (%.0f/s; %d not sent, client at %d concurrent), admitted %d (%.0f/s), 429 %d (%.1f%%), other %d",
		rate, offeredFor.Round(time.Millisecond), offered, float64(offered)/offeredFor.Seconds(), clientDropped, maxClientConcurrency,
		len(admitted), admittedRate, rejected, 100*float64(rejected)/float64(max(offered, 1)), failed)
	t.Logf("admitted latency p50 %v p99 %v max %v; 429 latency p50 %v p99 %v", p50, p99, percentile(admitted, 1),
		percentile(rejectedLat, 0.5), percentile(rejectedLat, 0.99))
	t.Logf("heap: %.1f MiB before, peak %.1f MiB during the open loop", float64(baseHeap)/(1<<20), float64(peakHeap)/(1<<20))

	if failed > 0 {
		t.Errorf("%d requests failed with neither 200 nor 429", failed)
	}
	if rejected == 0 {
		t.Errorf("no request was refused at twice the saturation rate")
	}
	// The load generator shares the cores (and refusing costs CPU too), so the goodput under
	// overload is reported, not asserted beyond "the daemon keeps serving".
	if len(admitted) == 0 {
		t.Errorf("nothing admitted under overload")
	}
	t.Logf("goodput under 2x overload: %.0f%% of the saturation rate", 100*admittedRate/saturation)
	// Admitted searches never queue behind the limit: their p99 stays within a generous
	// multiple of the unloaded tail (the client shares the 2 cores) and under 2 s.
	if bound := min(20*closedP99+500*time.Millisecond, 3*time.Second); p99 > bound {
		t.Errorf("admitted p99 %v exceeds %v (closed-loop p99 %v)", p99, bound, closedP99)
	}
	if p := percentile(rejectedLat, 0.99); p > time.Second {
		t.Errorf("429s are slow (p99 %v): the refusal must not wait", p)
	}
	if peakHeap > baseHeap+256<<20 {
		t.Errorf("heap grew from %d to %d bytes", baseHeap, peakHeap)
	}
	if r := ts.call(t, "GET", "/readyz", "", nil); r.status != 200 {
		t.Errorf("not ready after the load: %d", r.status)
	}
	if r := ts.call(t, "POST", "/v1/search", devKey, loadQueries[0]); r.status != 200 {
		t.Errorf("search after the load: %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for len(ts.searchSlots) > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(ts.searchSlots); n != 0 {
		t.Errorf("%d search slots still taken after the load", n)
	}
}
