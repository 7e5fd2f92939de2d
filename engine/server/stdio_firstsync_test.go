package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/internal/testmcp"
	"github.com/capdex/capdex/registry"
)

// TestStdioWaitsForUpstreamFirstSync: capdex mcp is started by an MCP client that searches
// at once; an upstream that takes a moment to answer must still be found by that first
// search (before, it answered no_confident_match with no sign that anything was missing).
func TestStdioWaitsForUpstreamFirstSync(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	writeTools(t, file, []testmcp.Tool{{Name: "add", Description: "Adds two numbers."}, {Name: "echo", Description: "Echoes back the input string."}})
	up := testmcp.StartHTTP(t, file)
	target, _ := url.Parse("http://" + up.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond) // a server process still starting (npx)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)

	cfg := testConfig()
	cfg.Upstreams = []UpstreamConfig{{Name: "calc", URL: slow.URL + "/mcp"}}
	srv, err := Open(context.Background(), cfg, Options{Logger: testLogger(&logBuffer{}), StdioOnly: true,
		EngineOptions: func(o *engine.Options) { o.NoSync = true }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW); outW.Close() }()
	go func() {
		for _, l := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"capability_search","arguments":{"query":"echo back a message"}}}`,
		} {
			io.WriteString(inW, l+"\n")
		}
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				StructuredContent struct {
					Matches []struct {
						ResourceID string `json:"resource_id"`
					} `json:"matches"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID != 2 {
			continue
		}
		var ids []string
		for _, x := range m.Result.StructuredContent.Matches {
			ids = append(ids, x.ResourceID)
		}
		if !strings.Contains(strings.Join(ids, " "), "mcp.calc.echo") {
			t.Fatalf("the first search over stdio missed the upstream's tools: %v", ids)
		}
		inW.Close()
		<-done
		return
	}
	t.Fatalf("no answer to the search: %v", sc.Err())
}

// TestReadyzWaitsForUpstreamFirstSync: capdex serve's /readyz answers 503, naming the
// upstream, until every upstream has listed its tools once (or is down); a client that
// waits for readiness then finds the upstream's tools with its first search.
func TestReadyzWaitsForUpstreamFirstSync(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	writeTools(t, file, []testmcp.Tool{{Name: "add", Description: "Adds two numbers."}, {Name: "echo", Description: "Echoes back the input string."}})
	up := testmcp.StartHTTP(t, file)
	target, _ := url.Parse("http://" + up.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // a server process still starting (npx)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)

	cfg := testConfig()
	cfg.Upstreams = []UpstreamConfig{{Name: "calc", URL: slow.URL + "/mcp"}}
	srv, err := Open(context.Background(), cfg, Options{Logger: testLogger(&logBuffer{}),
		EngineOptions: func(o *engine.Options) { o.NoSync = true }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	readyz := func() (int, string) {
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, "calc") {
		t.Fatalf("readyz before the upstream listed its tools: %d %s", code, body)
	}
	open()
	deadline := time.Now().Add(FirstSyncWait / 2)
	for {
		code, body := readyz()
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz never ready after the upstream answered: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waiting, err := srv.upstreamsWaiting()
	if err != nil || len(waiting) != 0 {
		t.Fatalf("ready with upstreams waiting: %v %v", waiting, err)
	}
	resp, err := srv.eng.Search(context.Background(), registry.SearchRequest{Query: "echo back a message", Limit: 5},
		registry.RuntimeContext{Tenant: "default", User: "t", Scopes: []string{"*", "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range resp.Matches {
		ids = append(ids, m.ResourceID)
	}
	if !slices.Contains(ids, "mcp.calc.echo") {
		t.Fatalf("ready, but the first search missed the upstream's tools: %v", ids)
	}
}
