package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/capdex/capdex/engine"
)

// Test keys: dev has the scopes of the built-in registry's default ACLs; admin passes
// every gate and may write.
const (
	devKey   = "dev-key-0123456789abcdef"
	adminKey = "admin-key-0123456789abcdef"
	otherKey = "other-key-0123456789abcdef"
)

// capdexBin is the capdex binary built once by TestMain for the end-to-end tests.
var capdexBin string

// leakOptions ignore goroutines that outlive a test and are not the daemon's.
var leakOptions = []goleak.Option{
	// kelindar/column's Collection.Snapshot never closes its s2.Writer, whose Reset leaves
	// a goroutine behind: one per column snapshot the index writes.
	goleak.IgnoreTopFunction("github.com/klauspost/compress/s2.(*Writer).Reset.func1"),
	// glog (a dependency of a dependency) starts its flush daemon in an init function.
	goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	// ristretto's package-level allocator pool (Badger's cache) runs for the process.
	goleak.IgnoreTopFunction("github.com/dgraph-io/ristretto/v2/z.(*AllocatorPool).freeupAllocators"),
	// opencensus (through Badger) starts its stats worker in an init function.
	goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
}

// binaryBuilt is closed once the capdex binary is built (or failed to build); buildOutput
// holds the failure.
var (
	binaryBuilt = make(chan struct{})
	buildOutput string
)

// TestMain builds the capdex binary for the end-to-end tests (zz_*_test.go, which run
// last) while the in-process tests run, and checks for leaked goroutines at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "capdex-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The build starts here, before any test, so that its output-copying goroutines are
	// among those a test's goleak.IgnoreCurrent sees when it starts.
	bin := filepath.Join(dir, "capdex")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	gobin := "go"
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); statOK(p) {
			gobin = p
		}
	}
	build := exec.Command(gobin, "build", "-o", bin, "github.com/capdex/capdex/cmd/capdex")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	var startErr error
	if slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		// A fuzz worker runs fuzz targets only, and is restarted often: no binary.
		startErr = errors.New("not built in a fuzz worker")
	} else {
		startErr = build.Start()
	}
	go func() {
		defer close(binaryBuilt)
		if startErr != nil {
			buildOutput = fmt.Sprintf("building capdex: %v", startErr)
			return
		}
		if err := build.Wait(); err != nil {
			buildOutput = fmt.Sprintf("building capdex: %v\n%s", err, out.Bytes())
			return
		}
		capdexBin = bin
	}()
	code := m.Run()
	<-binaryBuilt
	if shared.ts != nil {
		shared.ts.stop()
	}
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines leaked by the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func needBinary(tb testing.TB) string {
	tb.Helper()
	<-binaryBuilt
	if capdexBin == "" {
		tb.Fatal(buildOutput)
	}
	return capdexBin
}

// logBuffer is a goroutine-safe log sink for assertions on log records.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testLogger logs to stderr when CAPDEX_TEST_LOG is set, else to w (or nowhere).
func testLogger(w io.Writer) *slog.Logger {
	if os.Getenv("CAPDEX_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if w == nil {
		return nil
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func testConfig() *Config {
	return &Config{
		Keys: []KeyConfig{
			{Key: devKey, User: "dev-user", Scopes: []string{"dev"}},
			{Key: adminKey, User: "root", Scopes: []string{"admin"}},
			{Key: otherKey, Tenant: "default", User: "other-user", Scopes: []string{"dev"}},
		},
	}
}

// testServer is a daemon serving on a loopback port.
type testServer struct {
	*Server
	url  string
	logs *logBuffer
	stop func() error
}

type serverSetup struct {
	// quiet discards the logs (load tests: an access log line per request costs).
	quiet   bool
	cfg     func(*Config)
	engine  func(*engine.Options)
	options func(*Options)
}

// startServer opens an in-memory daemon and serves it on 127.0.0.1:0 until the test ends.
func startServer(tb testing.TB, setup serverSetup) *testServer {
	tb.Helper()
	ts, err := launch(setup)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := ts.stop(); err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// launch opens an in-memory daemon and serves it on 127.0.0.1:0 until stop.
func launch(setup serverSetup) (*testServer, error) {
	cfg := testConfig()
	if setup.cfg != nil {
		setup.cfg(cfg)
	}
	logs := &logBuffer{}
	opts := Options{
		Logger:         testLogger(logs),
		ReloadDebounce: 100 * time.Millisecond,
		EngineOptions: func(o *engine.Options) {
			o.NoSync = true
			if setup.engine != nil {
				setup.engine(o)
			}
		},
	}
	if setup.quiet && os.Getenv("CAPDEX_TEST_LOG") == "" {
		opts.Logger = nil
	}
	if setup.options != nil {
		setup.options(&opts)
	}
	srv, err := Open(context.Background(), cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("Open: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	ts := &testServer{Server: srv, url: "http://" + ln.Addr().String(), logs: logs}
	var once sync.Once
	var serveErr error
	ts.stop = func() error {
		once.Do(func() {
			cancel()
			serveErr = <-done
			srv.Close()
		})
		return serveErr
	}
	return ts, nil
}

// shared is the daemon of the tests that neither change its configuration nor depend on
// its session table: opening an engine costs a second or two under the race detector.
var shared struct {
	once sync.Once
	ts   *testServer
	err  error
}

// sharedBodyLimit is the shared daemon's limits.max_body_bytes.
const sharedBodyLimit = 16 << 10

func sharedServer(tb testing.TB) *testServer {
	tb.Helper()
	shared.once.Do(func() {
		shared.ts, shared.err = launch(serverSetup{cfg: func(c *Config) { c.Limits.MaxBodyBytes = sharedBodyLimit }})
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.ts
}

// apiResponse is a decoded answer of the HTTP API.
type apiResponse struct {
	status int
	header http.Header
	body   []byte
}

func (r *apiResponse) json(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		tb.Fatalf("decoding %s: %v", r.body, err)
	}
}

// errorCode returns the error code of an error answer ("" when it is none).
func (r *apiResponse) errorCode() string {
	var e ErrorBody
	if json.Unmarshal(r.body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// call sends one request with the key (none when empty) and extra headers "K: V".
func (ts *testServer) call(tb testing.TB, method, path, key string, body any, headers ...string) *apiResponse {
	tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader: // sent chunked: no Content-Length
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading: %v", method, path, err)
	}
	return &apiResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// testAction is a valid action definition under the built-in demo pack.
func testAction(id string, version int, title string) map[string]any {
	return map[string]any{
		"action_id": id, "version": version, "resource_type": "action", "capability_type": "tool",
		"title": title, "summary": "A test action that echoes its message.",
		"side_effect": "R", "risk_level": "low", "owner": "test-team", "status": "active",
		"timeout": "5s", "network_policy": "none", "when_to_use": []string{"testing the daemon"},
		"arguments_schema": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "additionalProperties": false},
		"output_schema":    map[string]any{"type": "object"},
		"handler":          map[string]any{"kind": "go", "name": "echo"},
	}
}

func statOK(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
