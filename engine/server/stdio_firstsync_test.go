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
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/internal/testmcp"
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
