package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// EnvServerEverything names the directory where .ci/run installed
// @modelcontextprotocol/server-everything (npm install --prefix DIR).
const EnvServerEverything = "CAPDEX_SERVER_EVERYTHING_DIR"

// serverEverything returns node and the server's entry point, or skips saying why.
func serverEverything(t *testing.T) (node, entry string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("Node.js is not installed (.ci/run installs it from Debian's packages when apt-get can): skipping the server-everything test")
	}
	dir := os.Getenv(EnvServerEverything)
	if dir == "" {
		t.Skipf("%s is not set: .ci/run installs @modelcontextprotocol/server-everything and sets it", EnvServerEverything)
	}
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s=%s but the server is not there: %v", EnvServerEverything, dir, err)
	}
	return node, entry
}

// TestServerEverything runs the reference server from npm behind the gateway, over stdio
// and streamable HTTP: every tool is listed and imported, search finds one, runs return its
// content and structuredContent (validated against its outputSchema), and an image comes
// back as an image block.
func TestServerEverything(t *testing.T) {
	node, entry := serverEverything(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	httpSrv := exec.Command(node, entry, "streamableHttp")
	httpSrv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := httpSrv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { httpSrv.Process.Kill(); httpSrv.Wait() })

	e := open(t, engine.Options{Seed: []*registry.Capability{}, Upstreams: []engine.UpstreamConfig{
		{Name: "everything", Command: node, Args: []string{entry, "stdio"}},
		{Name: "everything-http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), MaxBackoff: 500 * time.Millisecond},
	}})
	ctx := context.Background()
	for _, name := range []string{"everything", "everything-http"} {
		eventually(t, name+" connected", func() bool { u := upstreamOf(t, e, name); return u.State == "connected" && u.Tools >= 10 })
		u := upstreamOf(t, e, name)
		t.Logf("%s: %d tools, transport %s", name, u.Tools, u.Transport)
	}
	rc := registry.RuntimeContext{User: "alice", Scopes: []string{"dev"}}
	m := searchIDs(t, e, "sum of two numbers", rc)
	if _, ok := m["mcp.everything.get_sum"]; !ok {
		t.Fatalf("search did not find get-sum: %v", m)
	}
	for _, pack := range []string{"mcp.everything", "mcp.everything_http"} {
		res, err := e.Run(ctx, engine.RunRequest{ID: pack + ".get_sum", Arguments: json.RawMessage(`{"a":2,"b":40}`)}, rc)
		if err != nil || res.Status != "succeeded" || !strings.Contains(string(res.Output), "42") {
			t.Fatalf("%s get-sum: %+v %v", pack, res, err)
		}
		res, err = e.Run(ctx, engine.RunRequest{ID: pack + ".echo", Arguments: json.RawMessage(`{"message":"hello"}`)}, rc)
		if err != nil || res.Status != "succeeded" || !strings.Contains(string(res.Output), "Echo: hello") {
			t.Fatalf("%s echo: %+v %v", pack, res, err)
		}
		res, err = e.Run(ctx, engine.RunRequest{ID: pack + ".get_structured_content", Arguments: json.RawMessage(`{"location":"Chicago"}`)}, rc)
		if err != nil || res.Status != "succeeded" || !strings.Contains(string(res.Output), `"structuredContent":{`) {
			t.Fatalf("%s get-structured-content: %+v %v", pack, res, err)
		}
		res, err = e.Run(ctx, engine.RunRequest{ID: pack + ".get_tiny_image"}, rc)
		if err != nil || res.Status != "succeeded" || !strings.Contains(string(res.Output), `"type":"image"`) {
			t.Fatalf("%s get-tiny-image: %+v %v", pack, res, err)
		}
		res, err = e.Run(ctx, engine.RunRequest{ID: pack + ".get_sum", Arguments: json.RawMessage(`{"a":"two"}`)}, rc)
		if err != nil || res.Reason != "invalid_arguments" {
			t.Fatalf("%s get-sum with bad arguments: %+v %v", pack, res, err)
		}
	}
	if q := quarantined(t, e); len(q) != 0 {
		t.Fatalf("quarantined at the first sync: %+v", q)
	}
}
