package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

// BenchmarkHTTPSearch is the throughput of POST /v1/search on loopback with keep-alive
// connections, clients=C keeping C callers searching at once, beside the same searches
// made in process on the daemon's engine. clients=1 alternates an HTTP search and an
// in-process one, query by query, and reports both p50s and their ratio (http/inproc);
// the others report searches/s and the p50 of HTTP searches. clients=1 also reports the
// loopback floor: the p50 of the same requests, on the same client, answered by a handler
// that only reads the body and writes a fixed answer of 3 KB (a typical answer's size), and the daemon's handler
// called in process (handler-p50-us: everything but the network).
//
//	go test -run '^$' -bench HTTPSearch -benchtime=2000x ./engine/server/
func BenchmarkHTTPSearch(b *testing.B) {
	ts := startServer(b, serverSetup{quiet: true, cfg: func(c *Config) { c.Limits.MaxInflightSearches = 1024 }})
	tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	doHTTP := func(q string) time.Duration {
		req, _ := http.NewRequest("POST", ts.url+"/v1/search", strings.NewReader(q))
		req.Header.Set("Authorization", "Bearer "+devKey)
		req.Header.Set("Content-Type", "application/json")
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(t)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Errorf("POST /v1/search: %d %v", resp.StatusCode, err)
		}
		return took
	}
	reqs := make([]registry.SearchRequest, len(loadQueries))
	for i, q := range loadQueries {
		if err := json.Unmarshal([]byte(q), &reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
	rc := registry.RuntimeContext{User: "dev-user", Scopes: []string{"dev"}, OS: localOS()}
	eng := ts.Engine()
	doInproc := func(i int) time.Duration {
		t := time.Now()
		resp, err := eng.Search(context.Background(), reqs[i%len(reqs)], rc)
		took := time.Since(t)
		if err != nil {
			b.Error(err)
		}
		// the daemon encodes every answer: so does the in-process side of the comparison
		if _, err := json.Marshal(resp); err != nil {
			b.Error(err)
		}
		return took
	}
	for i := range 20 { // warm the connection and the caches
		doHTTP(loadQueries[i%len(loadQueries)])
		doInproc(i)
	}
	p50 := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2].Nanoseconds()) / 1e3
	}
	// The loopback floor: the same client, connection reuse and request against a handler
	// that reads the body and answers a fixed JSON object of a typical answer's size.
	fixed := []byte(`{"matches":[],"pad":"` + strings.Repeat("x", 3000) + `"}` + "\n") // the size of a typical answer
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(fixed)))
		w.Write(fixed)
	}))
	defer floor.Close()
	doFloor := func(q string) time.Duration {
		req, _ := http.NewRequest("POST", floor.URL+"/v1/search", strings.NewReader(q))
		req.Header.Set("Authorization", "Bearer "+devKey)
		req.Header.Set("Content-Type", "application/json")
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t)
	}
	// The daemon's handler called in process (middleware, auth, decoding, search, encoding;
	// no network), beside the two.
	handler := ts.Handler()
	doHandler := func(q string) time.Duration {
		req := httptest.NewRequest("POST", "/v1/search", strings.NewReader(q))
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req = req.WithContext(cctx)
		req.Header.Set("Authorization", "Bearer "+devKey)
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "127.0.0.1:1234"
		w := httptest.NewRecorder()
		t := time.Now()
		handler.ServeHTTP(w, req)
		took := time.Since(t)
		if w.Code != http.StatusOK {
			b.Errorf("handler: %d %s", w.Code, w.Body)
		}
		return took
	}
	b.Run("clients=1", func(b *testing.B) {
		var th, ti, tf, tx []time.Duration
		i := 0
		for b.Loop() {
			q := loadQueries[i%len(loadQueries)]
			switch i % 4 { // rotate the order, so that no side always runs first
			case 0:
				th, ti, tf, tx = append(th, doHTTP(q)), append(ti, doInproc(i)), append(tf, doFloor(q)), append(tx, doHandler(q))
			case 1:
				ti, tf, tx, th = append(ti, doInproc(i)), append(tf, doFloor(q)), append(tx, doHandler(q)), append(th, doHTTP(q))
			case 2:
				tf, tx, th, ti = append(tf, doFloor(q)), append(tx, doHandler(q)), append(th, doHTTP(q)), append(ti, doInproc(i))
			default:
				tx, th, ti, tf = append(tx, doHandler(q)), append(th, doHTTP(q)), append(ti, doInproc(i)), append(tf, doFloor(q))
			}
			i++
		}
		h, in, fl, hd := p50(th), p50(ti), p50(tf), p50(tx)
		b.ReportMetric(h, "http-p50-us")
		b.ReportMetric(in, "inproc-p50-us")
		b.ReportMetric(fl, "floor-p50-us")
		b.ReportMetric(hd, "handler-p50-us")
		b.ReportMetric(h/in, "http/inproc")
		b.ReportMetric((h-fl)/in, "(http-floor)/inproc")
	})
	for _, clients := range []int{2, 8, 64} {
		for _, side := range []string{"http", "inproc"} {
			b.Run(fmt.Sprintf("clients=%d/%s", clients, side), func(b *testing.B) {
				var mu sync.Mutex
				var all []time.Duration
				var wg sync.WaitGroup
				next := make(chan int)
				start := time.Now()
				for range clients {
					wg.Go(func() {
						var mine []time.Duration
						for i := range next {
							if side == "http" {
								mine = append(mine, doHTTP(loadQueries[i%len(loadQueries)]))
							} else {
								mine = append(mine, doInproc(i))
							}
						}
						mu.Lock()
						all = append(all, mine...)
						mu.Unlock()
					})
				}
				i := 0
				for b.Loop() {
					next <- i
					i++
				}
				close(next)
				wg.Wait()
				b.ReportMetric(float64(len(all))/time.Since(start).Seconds(), "searches/s")
				b.ReportMetric(p50(all), "p50-us")
			})
		}
	}
}
