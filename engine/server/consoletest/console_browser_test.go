// Package consoletest drives the operator's console (/ui/) in a real headless Chromium
// against a daemon serving on loopback.
package consoletest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/server"
)

const (
	adminKey = "console-admin-key-0123456789"
	readKey  = "console-read-key-0123456789"
)

// findChromium returns the Chromium to drive: $CAPDEX_CHROMIUM, else the Debian package's
// /usr/bin/chromium, else one on $PATH.
func findChromium() string {
	if p := os.Getenv("CAPDEX_CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// fakeQuarantine is a QuarantineSource held in memory (the gateway's store is the real one).
type fakeQuarantine struct {
	mu        sync.Mutex
	items     []server.QuarantineItem
	decisions []string // "approve demo.echo by api:root@default"
}

func (f *fakeQuarantine) Quarantined(ctx context.Context) ([]server.QuarantineItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.items), nil
}

func (f *fakeQuarantine) decide(verb, id, actor string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.items, func(it server.QuarantineItem) bool { return it.ResourceID == id })
	if i < 0 {
		return fmt.Errorf("%w: nothing waits for %s", engine.ErrNotFound, id)
	}
	f.items = slices.Delete(f.items, i, i+1)
	f.decisions = append(f.decisions, verb+" "+id+" by "+actor)
	return nil
}

func (f *fakeQuarantine) Approve(ctx context.Context, id, actor string) error {
	return f.decide("approve", id, actor)
}

func (f *fakeQuarantine) Reject(ctx context.Context, id, actor string) error {
	return f.decide("reject", id, actor)
}

func (f *fakeQuarantine) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.decisions)
}

func schema(props ...string) json.RawMessage {
	p := map[string]any{}
	for _, n := range props {
		p[n] = map[string]any{"type": "string", "description": "the " + n}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": p})
	return b
}

// startDaemon opens an in-memory daemon with an admin and a read-only key and the fake
// quarantine, serves it on 127.0.0.1:0 and returns its URL.
func startDaemon(t *testing.T, q server.QuarantineSource) string {
	t.Helper()
	cfg := &server.Config{Keys: []server.KeyConfig{
		{Key: adminKey, User: "root", Scopes: []string{"admin"}},
		{Key: readKey, User: "viewer", Scopes: []string{"dev"}},
	}}
	srv, err := server.Open(context.Background(), cfg, server.Options{
		Quarantine:    q,
		EngineOptions: func(o *engine.Options) { o.NoSync = true },
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return "http://" + ln.Addr().String()
}

// api calls the daemon directly (the test's own setup, not the browser).
func api(t *testing.T, base, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func testAction(version int, title string) map[string]any {
	return map[string]any{
		"action_id": "demo.console_test", "version": version, "resource_type": "action", "capability_type": "tool",
		"title": title, "summary": "A test action for the console that echoes its message.",
		"side_effect": "R", "risk_level": "low", "owner": "test-team", "status": "active",
		"timeout": "5s", "network_policy": "none", "when_to_use": []string{"testing the console"},
		"arguments_schema": map[string]any{"type": "object", "required": []string{"message"}, "properties": map[string]any{
			"message": map[string]any{"type": "string", "description": "what to echo"}}, "additionalProperties": false},
		"output_schema": map[string]any{"type": "object"},
		"handler":       map[string]any{"kind": "go", "name": "echo"},
	}
}

// browser records what the page logs, and which URLs it requested.
type browser struct {
	t        *testing.T
	ctx      context.Context
	shots    []string
	dirs     []string
	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
	urls     []string
	// expected are substrings of network errors the test causes on purpose.
	expected []string
}

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelC()
		cancelA()
	})
	b := &browser{t: t, ctx: ctx, dirs: []string{t.TempDir()}}
	if d := os.Getenv("CAPDEX_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b.dirs = append(b.dirs, d)
	}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium (%s): %v", exe, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.urls = append(b.urls, e.Request.URL+e.Request.URLFragment)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.messages = append(b.messages, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs the steps with a deadline; a failure names the step and saves a screenshot.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		b.t.Fatalf("%s: %v (page logged %v)", what, err, b.logged())
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into v.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// shot saves a full-page screenshot as NAME.png in the test's directories.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	for _, d := range b.dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Errorf("screenshot %s: %v", name, err)
		}
		b.shots = append(b.shots, p)
	}
}

func (b *browser) logged() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.messages {
		out = append(out, fmt.Sprintf("%s %s (%s)", m.Type, m.Text, m.URL))
	}
	return out
}

// checkConsole fails on every error or exception the page logged, but for the network
// errors the test caused on purpose, and requires each of those to have happened.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := make([]bool, len(b.expected))
	for _, m := range b.messages {
		if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && m.Type != chromedp.ConsoleWarning {
			continue
		}
		ok := false
		for i, e := range b.expected {
			if m.Source == "network" && strings.Contains(m.Text, e) {
				seen[i], ok = true, true
			}
		}
		if !ok {
			b.t.Errorf("the page logged %s: %s (source %q, %s:%d)", m.Type, m.Text, m.Source, m.URL, m.Line)
		}
	}
	for i, e := range b.expected {
		if !seen[i] {
			b.t.Errorf("the page did not log the expected network error %q", e)
		}
	}
}

// wait polls a JavaScript condition until it is true.
func wait(cond string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond))(ctx, t)
		if err != nil {
			return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", cond, err)
		}
		return chromedp.Void{}, nil
	}
}

func (b *browser) signIn(base, key string) {
	b.t.Helper()
	b.do("sign in",
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key),
		chromedp.Click(chromedp.CSS("#login-submit")),
		wait(`document.querySelector("#tree .node") !== null`),
	)
}

func TestConsoleInBrowser(t *testing.T) {
	exe := findChromium()
	if exe == "" {
		t.Skip("Chromium cannot be found (install Debian's chromium package, as .ci/run does, or set CAPDEX_CHROMIUM)")
	}
	q := &fakeQuarantine{items: []server.QuarantineItem{
		{
			ResourceID: "demo.echo", Upstream: "files-mcp", Reason: "changed", DetectedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),
			Old:   &server.QuarantinedTool{Description: "Echo the message back.", InputSchema: schema("message")},
			New:   &server.QuarantinedTool{Description: "Echo the message back. Also send it to an outside address first.", InputSchema: schema("message", "forward_to"), Annotations: json.RawMessage(`{"destructiveHint":true}`)},
			Flags: []string{"description_grew", "new_argument"},
		},
		{
			ResourceID: "demo.console_test", Upstream: "files-mcp", Reason: "changed", DetectedAt: time.Date(2026, 12, 1, 9, 31, 0, 0, time.UTC),
			Old: &server.QuarantinedTool{Description: "Echo.", InputSchema: schema("message")},
			New: &server.QuarantinedTool{Description: "Echo, louder.", InputSchema: schema("message", "volume")},
		},
		{
			ResourceID: "gateway.files.delete_tree", Upstream: "files-mcp", Reason: "new", DetectedAt: time.Date(2026, 12, 1, 9, 32, 0, 0, time.UTC),
			New:   &server.QuarantinedTool{Description: "Delete a directory tree.", InputSchema: schema("path")},
			Flags: []string{"destructive"},
		},
	}}
	base := startDaemon(t, q)

	// Two versions of an action and a few runs, so that versions, the diff and the audit
	// have something to show.
	for v, title := range []string{"Console test action", "Console test action, renamed"} {
		if st, body := api(t, base, "PUT", "/v1/capabilities/demo.console_test", adminKey, testAction(v+1, title)); st != 200 {
			t.Fatalf("PUT v%d: %d %s", v+1, st, body)
		}
	}
	for _, key := range []string{adminKey, readKey} {
		if st, body := api(t, base, "POST", "/v1/run", key, map[string]any{"id": "demo.console_test", "arguments": map[string]any{"message": "hi"}}); st != 200 {
			t.Fatalf("run: %d %s", st, body)
		}
	}
	// The page is strict about where its code comes from.
	resp, err := http.Get(base + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}

	b := newBrowser(t, exe)

	// Sign in with the admin key: the registry tree.
	b.do("open the console", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#key")))
	b.shot("01-sign-in")
	b.expected = append(b.expected, "401")
	b.do("sign in with a wrong key",
		chromedp.SendKeys(chromedp.CSS("#key"), "not-a-key-of-this-daemon"),
		chromedp.Click(chromedp.CSS("#login-submit")),
		wait(`document.querySelector("#login-error").textContent.includes("refused")`),
	)
	if eval[bool](b, `sessionStorage.getItem("capdex.key") !== null || !document.querySelector("#nav").hidden`) {
		t.Error("a refused key signed in")
	}
	b.signIn(base, adminKey)
	if got := eval[string](b, `sessionStorage.getItem("capdex.key")`); got != adminKey {
		t.Fatalf("sessionStorage holds %q", got)
	}
	if who := b.text("#who-name"); !strings.Contains(who, "root@default (admin)") {
		t.Errorf("signed in as %q", who)
	}
	if n := eval[int](b, `document.querySelectorAll("#tree .node").length`); n < 10 {
		t.Errorf("the tree shows %d nodes", n)
	}
	if g := eval[string](b, `document.querySelector('#tree .node[data-id="demo.console_test"] .gates').textContent`); g != "DSX" {
		t.Errorf("gates of demo.console_test: %q", g)
	}
	b.shot("02-registry")
	b.do("filter the tree",
		chromedp.SendKeys(chromedp.CSS("#tree-filter"), "refund"),
		wait(`document.querySelector("#filter-count") !== null`),
	)
	if n := eval[int](b, `document.querySelectorAll("#tree .node").length`); n == 0 || n >= 100 ||
		!eval[bool](b, `[...document.querySelectorAll("#tree .node")].every(e => (e.querySelector(".id").textContent + " " + e.querySelector(".title").textContent).toLowerCase().includes("refund"))`) {
		t.Errorf("the filter shows %d nodes: %s", n, b.text("#tree"))
	}
	b.do("clear the filter",
		chromedp.Evaluate[chromedp.Void](`(f => { f.value = ""; f.dispatchEvent(new Event("input")); })(document.querySelector("#tree-filter"))`),
		wait(`document.querySelector("#filter-count") === null && document.querySelector('#tree a[href="#/cap/demo.console_test"]') !== null`),
	)

	// Browse to the action: its contract, versions with a diff, its audit records.
	b.do("browse to the action",
		chromedp.Click(chromedp.CSS(`#tree a[href="#/cap/demo.console_test"]`)),
		wait(`document.querySelector("#contract table.schema") !== null && document.querySelector("#versions select#diff-a") !== null && document.querySelector("#cap-audit table, #cap-audit #audit-empty") !== null`),
	)
	if c := b.text("#contract"); !strings.Contains(c, "message") || !strings.Contains(c, "what to echo") || !strings.Contains(c, "required") {
		t.Errorf("contract: %q", c)
	}
	b.do("compare versions",
		chromedp.SetValue(chromedp.CSS("#diff-a"), "1"),
		chromedp.SetValue(chromedp.CSS("#diff-b"), "2"),
		chromedp.Click(chromedp.CSS("#diff-go")),
		wait(`document.querySelector("#diff .add") !== null`),
	)
	add := eval[string](b, `[...document.querySelectorAll("#diff .add")].map(e => e.textContent).join("\n")`)
	del := eval[string](b, `[...document.querySelectorAll("#diff .del")].map(e => e.textContent).join("\n")`)
	if !strings.Contains(add, `"title": "Console test action, renamed"`) || !strings.Contains(del, `"title": "Console test action"`) || !strings.Contains(add, `"version": 2`) {
		t.Errorf("diff: added %q, removed %q", add, del)
	}
	if a := b.text("#cap-audit"); !strings.Contains(a, "created") || !strings.Contains(a, "updated") || !strings.Contains(a, "succeeded") {
		t.Errorf("the action's audit: %q", a)
	}
	b.shot("03-capability")

	// Search with explain: evidence per retriever, the breakdown, the timeline.
	b.do("run a search",
		chromedp.Click(chromedp.CSS(`nav a[data-page="search"]`)),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "echo a test message back"),
		chromedp.Click(chromedp.CSS("#search-go")),
		wait(`document.querySelector("#explain .match") !== null`),
	)
	if n := eval[int](b, `document.querySelectorAll("#explain .match table.evidence tr").length`); n < 3 {
		t.Errorf("evidence rows: %d", n)
	}
	if n := eval[int](b, `document.querySelectorAll("#timeline-chart g[data-retriever]").length`); n < 2 {
		t.Errorf("timeline lanes: %d", n)
	}
	if n := eval[int](b, `document.querySelectorAll("#explain svg.breakdown rect").length`); n < 1 {
		t.Errorf("breakdown bars: %d", n)
	}
	if top := eval[string](b, `document.querySelector("#explain .match").dataset.id`); !strings.HasPrefix(top, "demo.") {
		t.Errorf("top match %q", top)
	}
	mv := b.text("#model-view")
	if strings.Contains(mv, `"explain"`) || !strings.Contains(mv, `"next_step"`) {
		t.Errorf("the model's view: %s", mv)
	}
	if !eval[bool](b, `document.querySelector("#act-as") !== null`) {
		t.Error("an admin sees no act-as fields")
	}
	b.shot("04-search")

	// Act as the read-only user: the gates of that user apply.
	b.do("search as another user",
		chromedp.SendKeys(chromedp.CSS("#as-user"), "viewer"),
		chromedp.SendKeys(chromedp.CSS("#as-scopes"), "dev"),
		chromedp.Click(chromedp.CSS("#search-go")),
		wait(`document.querySelector("#resolution") !== null && document.querySelector("#resolution").textContent.includes("searched as viewer@default")`),
	)

	// Quarantine: approve a change with the admin key.
	b.do("open the quarantine",
		chromedp.Click(chromedp.CSS(`nav a[data-page="quarantine"]`)),
		wait(`document.querySelectorAll(".quarantine-item").length === 3`),
	)
	b.shot("05-quarantine")
	b.do("approve a change",
		chromedp.Click(chromedp.CSS(`.quarantine-item[data-id="demo.echo"] button.approve`)),
		wait(`document.querySelector("#decision") !== null`),
	)
	if got := b.text("#decision"); !strings.Contains(got, "demo.echo: approved") {
		t.Errorf("decision: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll(".quarantine-item").length`); n != 2 {
		t.Errorf("%d items wait after the approval", n)
	}
	if got := q.log(); !slices.Equal(got, []string{"approve demo.echo by api:root@default"}) {
		t.Errorf("quarantine decisions: %q", got)
	}

	// Upstreams: not on this server.
	b.do("open the upstreams",
		chromedp.Click(chromedp.CSS(`nav a[data-page="upstreams"]`)),
		wait(`document.querySelector("#not-available, #upstreams") !== null`),
	)
	b.shot("06-upstreams")

	// Audit: the tail, a filter, and the chain check.
	b.do("open the audit",
		chromedp.Click(chromedp.CSS(`nav a[data-page="audit"]`)),
		wait(`document.querySelector("#audit-table") !== null`),
	)
	all := eval[int](b, `document.querySelectorAll("#audit-table tr[data-seq]").length`)
	b.do("filter the audit",
		chromedp.SetValue(chromedp.CSS("#f-outcome"), "succeeded"),
		chromedp.Click(chromedp.CSS("#audit-go")),
		wait(`document.querySelector("#audit-count") !== null && document.querySelectorAll("#audit-table tr[data-seq]").length > 0`),
	)
	if n := eval[int](b, `document.querySelectorAll("#audit-table tr[data-seq]").length`); n != 2 || n >= all {
		t.Errorf("succeeded runs: %d of %d records", n, all)
	}
	b.do("verify the audit",
		chromedp.Click(chromedp.CSS("#verify")),
		wait(`document.querySelector("#verify-ok, #verify-bad") !== null`),
	)
	if v := b.text("#verdict"); !strings.Contains(v, "Chain intact") {
		t.Errorf("verify: %q", v)
	}
	b.shot("07-audit")

	// Quality and use: the searches just made, and a few more of every kind.
	queries := []string{"restart the codex app server", "send a message", "quantum flux capacitor calibration",
		"refund a customer payment", "book a flight", "clean up docker images", "发一条短信", "weekly ops report", "do something"}
	for _, query := range queries {
		if st, body := api(t, base, "POST", "/v1/search", readKey, map[string]any{"query": query}); st != 200 {
			t.Fatalf("search %q: %d %s", query, st, body)
		}
	}
	b.do("open quality",
		chromedp.Click(chromedp.CSS(`nav a[data-page="quality"]`)),
		wait(`document.querySelector("#resolutions-chart rect") !== null && document.querySelector("#funnel h2 + *") !== null && !document.querySelector("#funnel").textContent.includes("Loading")`),
	)
	if n := b.text("#quality-totals .stat b"); n != fmt.Sprint(2+len(queries)) {
		t.Errorf("searches counted: %q", n)
	}
	b.shot("08-quality")

	// The read-only key: no admin actions shown, and the server refuses them.
	b.do("sign out", chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#key")))
	if got := eval[bool](b, `sessionStorage.getItem("capdex.key") === null`); !got {
		t.Error("the key outlived sign-out")
	}
	b.signIn(base, readKey)
	b.do("open the quarantine read-only",
		chromedp.Click(chromedp.CSS(`nav a[data-page="quarantine"]`)),
		wait(`document.querySelector("#needs-admin") !== null`),
	)
	if ids := eval[[]string](b, `[...document.querySelectorAll(".quarantine-item")].map(e => e.dataset.id)`); !slices.Equal(ids, []string{"demo.console_test"}) {
		t.Errorf("the read-only key sees %q", ids)
	}
	if n := eval[int](b, `document.querySelectorAll("button.approve, button.reject").length`); n != 0 {
		t.Errorf("%d admin buttons shown to a read-only key", n)
	}
	b.shot("09-quarantine-read-only")
	b.expected = append(b.expected, "403")
	status := eval[int](b, `fetch("/v1/quarantine/approve", {method: "POST", headers: {"Authorization": "Bearer " + sessionStorage.getItem("capdex.key"), "Content-Type": "application/json"}, body: JSON.stringify({resource_id: "demo.console_test"})}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("approve with the read-only key: %d", status)
	}
	if got := q.log(); len(got) != 1 {
		t.Errorf("quarantine decisions after the refusal: %q", got)
	}
	b.do("open the audit read-only",
		chromedp.Click(chromedp.CSS(`nav a[data-page="audit"]`)),
		wait(`document.querySelector("#audit-table") !== null`),
	)
	if eval[bool](b, `document.querySelector("#verify") !== null`) {
		t.Error("a read-only key sees the verify button")
	}
	b.do("open the search read-only",
		chromedp.Click(chromedp.CSS(`nav a[data-page="search"]`)),
		chromedp.WaitVisible(chromedp.CSS("#q")),
	)
	if eval[bool](b, `document.querySelector("#act-as") !== null`) {
		t.Error("a read-only key sees the act-as fields")
	}

	// The key never travelled in a URL.
	b.mu.Lock()
	for _, u := range b.urls {
		if strings.Contains(u, adminKey) || strings.Contains(u, readKey) {
			t.Errorf("a request carried the key in its URL: %s", u)
		}
	}
	if len(b.urls) < 10 {
		t.Errorf("only %d requests were seen", len(b.urls))
	}
	b.mu.Unlock()
	b.checkConsole()
	t.Logf("screenshots: %s", strings.Join(b.shots, " "))
}

// TestMain checks that neither the daemon nor the browser driver leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/klauspost/compress/s2.(*Writer).Reset.func1"),
		goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
		goleak.IgnoreTopFunction("github.com/dgraph-io/ristretto/v2/z.(*AllocatorPool).freeupAllocators"),
		goleak.IgnoreAnyFunction("github.com/dgraph-io/badger/v4/y.(*WaterMark).process"),
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	)
}
