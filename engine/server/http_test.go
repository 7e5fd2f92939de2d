package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"go.uber.org/goleak"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

const codexQuery = "Codex 更新后还是旧版本，帮我检查并修好"

func TestAuthentication(t *testing.T) {
	ts := sharedServer(t)
	search := map[string]any{"query": "codex"}
	tests := []struct {
		name         string
		method, path string
		body         any
		headers      []string
		want         int
	}{
		{name: "no key", method: "POST", path: "/v1/search", body: search, want: 401},
		{name: "wrong key", method: "POST", path: "/v1/search", body: search, headers: []string{"Authorization: Bearer not-a-key-0123456789"}, want: 401},
		{name: "wrong scheme", method: "POST", path: "/v1/search", body: search, headers: []string{"Authorization: Basic " + devKey}, want: 401},
		{name: "bearer key", method: "POST", path: "/v1/search", body: search, headers: []string{"Authorization: Bearer " + devKey}, want: 200},
		{name: "X-API-Key", method: "POST", path: "/v1/search", body: search, headers: []string{"X-API-Key: " + devKey}, want: 200},
		{name: "healthz is public", method: "GET", path: "/healthz", want: 200},
		{name: "readyz is public", method: "GET", path: "/readyz", want: 200},
		{name: "metrics are public", method: "GET", path: "/metrics", want: 200},
		{name: "openapi needs a key", method: "GET", path: "/openapi.json", want: 401},
		{name: "an unknown route needs a key", method: "GET", path: "/v2/whatever", want: 401},
		{name: "mcp needs a key", method: "POST", path: "/mcp", body: `{}`, want: 401},
		{name: "admin write needs the admin scope", method: "DELETE", path: "/v1/capabilities/demo.echo", headers: []string{"Authorization: Bearer " + devKey}, want: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.call(t, tt.method, tt.path, "", tt.body, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
			}
			if r.status == 401 {
				if r.errorCode() != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without error body or WWW-Authenticate: %s %v", r.body, r.header)
				}
			}
		})
	}
}

func TestHTTPRequestErrors(t *testing.T) {
	ts := sharedServer(t)
	big := `{"query":"` + strings.Repeat("x", 2*sharedBodyLimit) + `"}`
	tests := []struct {
		name         string
		method, path string
		body         any
		want         int
		code         string
		msg          []string // substrings of the message
	}{
		{name: "oversize body", method: "POST", path: "/v1/search", body: big, want: 413, code: "body_too_large", msg: []string{fmt.Sprint(sharedBodyLimit)}},
		{name: "oversize chunked body", method: "POST", path: "/v1/search", body: io.MultiReader(strings.NewReader(big)), want: 413, code: "body_too_large", msg: []string{fmt.Sprint(sharedBodyLimit)}},
		{name: "oversize run body", method: "POST", path: "/v1/run", body: `{"id":"demo.echo","arguments":{"message":"` + strings.Repeat("y", 2*sharedBodyLimit) + `"}}`, want: 413, code: "body_too_large"},
		{name: "malformed JSON", method: "POST", path: "/v1/search", body: `{"query": "codex",}`, want: 400, code: "malformed_json", msg: []string{"byte offset 19", "invalid character"}},
		{name: "truncated JSON", method: "POST", path: "/v1/search", body: `{"query": "co`, want: 400, code: "malformed_json", msg: []string{"unexpected end of input"}},
		{name: "empty body", method: "POST", path: "/v1/search", body: ``, want: 400, code: "malformed_json", msg: []string{"empty body"}},
		{name: "wrong type", method: "POST", path: "/v1/search", body: `{"query": 3}`, want: 400, code: "malformed_json", msg: []string{"query must be a string"}},
		{name: "trailing data", method: "POST", path: "/v1/search", body: `{"query": "a"} {"query": "b"}`, want: 400, code: "malformed_json", msg: []string{"data after the JSON value"}},
		{name: "unknown field", method: "POST", path: "/v1/search", body: `{"query": "codex", "top_k": 3}`, want: 400, code: "unknown_field", msg: []string{`unknown field "top_k"`}},
		{name: "unknown field in list", method: "POST", path: "/v1/list", body: `{"pack": "demo", "depth": 2}`, want: 400, code: "unknown_field"},
		{name: "unknown field in describe", method: "POST", path: "/v1/describe", body: `{"resource_id": "demo.echo", "verbose": true}`, want: 400, code: "unknown_field"},
		{name: "unknown field in run", method: "POST", path: "/v1/run", body: `{"id": "demo.echo", "args": {}}`, want: 400, code: "invalid_request", msg: []string{`unknown field "args"`}},
		{name: "malformed run", method: "POST", path: "/v1/run", body: `{"id": "demo.echo" "arguments": {}}`, want: 400, code: "malformed_json", msg: []string{"byte offset"}},
		{name: "limit out of range", method: "POST", path: "/v1/search", body: `{"query": "codex", "limit": 11}`, want: 400, code: "invalid_request", msg: []string{"limit must be an integer between 1 and 10, got 11"}},
		{name: "empty query", method: "POST", path: "/v1/search", body: `{"query": "  "}`, want: 400, code: "invalid_request", msg: []string{"query is empty"}},
		{name: "unknown side effect", method: "POST", path: "/v1/search", body: `{"query": "x", "side_effect_max": "rw"}`, want: 400, code: "invalid_request", msg: []string{"side_effect_max"}},
		{name: "describe unknown id", method: "POST", path: "/v1/describe", body: `{"resource_id": "no.such.thing"}`, want: 404, code: "not_found"},
		{name: "describe bad id", method: "POST", path: "/v1/describe", body: `{"resource_id": "Not An Id"}`, want: 400, code: "invalid_request"},
		{name: "describe bad format", method: "POST", path: "/v1/describe", body: `{"resource_id": "demo.echo", "format": "xml"}`, want: 400, code: "invalid_request"},
		{name: "list unknown pack", method: "POST", path: "/v1/list", body: `{"pack": "no.such.pack"}`, want: 404, code: "not_found"},
		{name: "get unknown capability", method: "GET", path: "/v1/capabilities/no.such.thing", want: 404, code: "not_found"},
		{name: "method not allowed", method: "GET", path: "/v1/search", want: 405, code: "method_not_allowed"},
		{name: "unknown route", method: "GET", path: "/v2/search", want: 404, code: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.call(t, tt.method, tt.path, devKey, tt.body)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
			}
			if got := r.errorCode(); got != tt.code {
				t.Errorf("code %q, want %q: %s", got, tt.code, r.body)
			}
			var e ErrorBody
			r.json(t, &e)
			for _, m := range tt.msg {
				if !strings.Contains(e.Error.Message, m) {
					t.Errorf("message %q lacks %q", e.Error.Message, m)
				}
			}
			if e.Error.RequestID == "" || e.Error.RequestID != r.header.Get(HeaderRequestID) {
				t.Errorf("request id %q vs header %q", e.Error.RequestID, r.header.Get(HeaderRequestID))
			}
		})
	}
}

func TestSearchDescribeListHTTP(t *testing.T) {
	ts := sharedServer(t)
	r := ts.call(t, "POST", "/v1/search", devKey, registry.SearchRequest{Query: codexQuery}, "X-Request-ID: my-request-1")
	if r.status != 200 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	if got := r.header.Get(HeaderRequestID); got != "my-request-1" {
		t.Errorf("X-Request-ID not echoed: %q", got)
	}
	var resp registry.SearchResponse
	r.json(t, &resp)
	if len(resp.Matches) == 0 || resp.Matches[0].ResourceID != "maintenance.codex.diagnose" {
		t.Fatalf("want maintenance.codex.diagnose first, got %+v", resp.Matches)
	}
	if resp.Matches[0].NextStep.Tool != "capability_describe" {
		t.Errorf("next_step: %+v", resp.Matches[0].NextStep)
	}

	r = ts.call(t, "POST", "/v1/describe", devKey, DescribeRequest{ResourceID: "maintenance.codex.diagnose", Format: "openai"})
	var d struct {
		ResourceID      string          `json:"resource_id"`
		Version         int             `json:"version"`
		ArgumentsSchema json.RawMessage `json:"arguments_schema"`
		Tool            struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tool"`
	}
	r.json(t, &d)
	if r.status != 200 || d.Version != 3 || len(d.ArgumentsSchema) == 0 || d.Tool.Function.Name != "maintenance__codex_diagnose" {
		t.Fatalf("describe: %d %s", r.status, r.body)
	}
	r = ts.call(t, "GET", "/v1/capabilities/maintenance.codex.diagnose?format=mcp", devKey, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"inputSchema"`) {
		t.Fatalf("GET capability: %d %s", r.status, r.body)
	}
	r = ts.call(t, "POST", "/v1/list", devKey, ListRequest{Pack: "maintenance.codex"})
	var l engine.ListResponse
	r.json(t, &l)
	if r.status != 200 || len(l.Items) < 3 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
}

// readSSE reads a Server-Sent Events stream into (event, data) pairs.
func readSSE(tb testing.TB, body io.Reader) (events []string, data []string) {
	tb.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			events = append(events, ev)
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return events, data
}

func TestSearchStreamSSE(t *testing.T) {
	ts := sharedServer(t)
	for _, tt := range []struct {
		name, path string
		headers    []string
	}{
		{name: "stream route", path: "/v1/search/stream"},
		{name: "accept header", path: "/v1/search", headers: []string{"Accept: text/event-stream"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", ts.url+tt.path, strings.NewReader(`{"query": "`+codexQuery+`"}`))
			req.Header.Set("Authorization", "Bearer "+devKey)
			req.Header.Set("Content-Type", "application/json")
			for _, h := range tt.headers {
				k, v, _ := strings.Cut(h, ": ")
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			events, data := readSSE(t, resp.Body)
			if len(events) < 2 {
				t.Fatalf("want partial events then a final one, got %q", events)
			}
			for i, ev := range events {
				want := "partial"
				if i == len(events)-1 {
					want = "final"
				}
				if ev != want {
					t.Fatalf("event %d is %q, want %q (events %q)", i, ev, want, events)
				}
				var r registry.SearchResponse
				if err := json.Unmarshal([]byte(data[i]), &r); err != nil {
					t.Fatalf("event %d data: %v", i, err)
				}
				if ev == "partial" && !r.SearchMeta.Partial {
					t.Errorf("a partial update not marked partial: %+v", r.SearchMeta)
				}
				if ev == "final" && (len(r.Matches) == 0 || r.Matches[0].ResourceID != "maintenance.codex.diagnose") {
					t.Errorf("final ranking: %+v", r.Matches)
				}
			}
		})
	}
	t.Run("a refused stream is a JSON error", func(t *testing.T) {
		r := ts.call(t, "POST", "/v1/search/stream", devKey, `{"query": ""}`)
		if r.status != 400 || r.errorCode() != "invalid_request" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestRunConfirmationHTTP(t *testing.T) {
	ts := sharedServer(t)
	run := func(session string, body string) *engine.RunResult {
		t.Helper()
		r := ts.call(t, "POST", "/v1/run", devKey, body, HeaderSession+": "+session)
		if r.status != 200 {
			t.Fatalf("run: %d %s", r.status, r.body)
		}
		var res engine.RunResult
		r.json(t, &res)
		return &res
	}
	res := run("s1", `{"id": "maintenance.codex.path_repair"}`)
	if res.Status != "confirmation_required" || res.ConfirmationToken == "" || res.Summary == "" || res.ExpiresAt.IsZero() {
		t.Fatalf("want confirmation_required with a token, got %+v", res)
	}
	token := res.ConfirmationToken
	body := `{"id": "maintenance.codex.path_repair", "confirmation_token": "` + token + `"}`
	if other := run("s2", body); other.Status != "refused" || other.Reason != "invalid_confirmation" {
		t.Errorf("a token redeemed from another session: %+v", other)
	}
	if ok := run("s1", body); ok.Status != "succeeded" {
		t.Fatalf("redeeming the token: %+v", ok)
	}
	if again := run("s1", body); again.Status != "refused" || again.Reason != "invalid_confirmation" {
		t.Errorf("a spent token redeemed again: %+v", again)
	}
	if echo := run("s1", `{"id": "demo.echo", "arguments": {"message": "hi"}}`); echo.Status != "succeeded" || !strings.Contains(string(echo.Output), "hi") {
		t.Errorf("demo.echo: %+v", echo)
	}
}

func TestAdminWrites(t *testing.T) {
	ts := sharedServer(t)
	put := func(key, id string, def any) *apiResponse {
		t.Helper()
		return ts.call(t, "PUT", "/v1/capabilities/"+id, key, def)
	}
	const id = "demo.admin_test"
	steps := []struct {
		name string
		do   func() *apiResponse
		want int
		code string
	}{
		{name: "dev may not write", do: func() *apiResponse { return put(devKey, id, testAction(id, 1, "First")) }, want: 403, code: "forbidden"},
		{name: "create", do: func() *apiResponse { return put(adminKey, id, testAction(id, 1, "First")) }, want: 200},
		{name: "identical again is accepted", do: func() *apiResponse { return put(adminKey, id, testAction(id, 1, "First")) }, want: 200},
		{name: "changed without a bump", do: func() *apiResponse { return put(adminKey, id, testAction(id, 1, "Changed")) }, want: 409, code: "conflict"},
		{name: "new version", do: func() *apiResponse { return put(adminKey, id, testAction(id, 2, "Second")) }, want: 200},
		{name: "stale version", do: func() *apiResponse { return put(adminKey, id, testAction(id, 1, "First")) }, want: 409, code: "conflict"},
		{name: "id mismatch", do: func() *apiResponse { return put(adminKey, "demo.other", testAction(id, 3, "x")) }, want: 400, code: "invalid_request"},
		{name: "lint error", do: func() *apiResponse {
			d := testAction("demo.no_owner", 1, "No owner")
			delete(d, "owner")
			return put(adminKey, "demo.no_owner", d)
		}, want: 400, code: "invalid_request"},
		{name: "unknown field", do: func() *apiResponse {
			d := testAction("demo.typo", 1, "Typo")
			d["titel"] = "x"
			return put(adminKey, "demo.typo", d)
		}, want: 400, code: "invalid_request"},
		{name: "malformed", do: func() *apiResponse { return put(adminKey, id, `{"action_id": `) }, want: 400, code: "malformed_json"},
		{name: "delete a pack with children", do: func() *apiResponse { return ts.call(t, "DELETE", "/v1/capabilities/demo", adminKey, nil) }, want: 409, code: "conflict"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := st.do()
			if r.status != st.want || (st.code != "" && r.errorCode() != st.code) {
				t.Fatalf("status %d code %q, want %d %q: %s", r.status, r.errorCode(), st.want, st.code, r.body)
			}
		})
	}
	r := ts.call(t, "GET", "/v1/capabilities/"+id, devKey, nil)
	var d engine.Description
	r.json(t, &d)
	if d.Version != 2 || d.Title != "Second" {
		t.Fatalf("after the writes: %+v", d)
	}
	if r := ts.call(t, "DELETE", "/v1/capabilities/"+id, adminKey, nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := ts.call(t, "GET", "/v1/capabilities/"+id, devKey, nil); r.status != 404 {
		t.Fatalf("after delete: %d %s", r.status, r.body)
	}
	if r := ts.call(t, "DELETE", "/v1/capabilities/"+id, adminKey, nil); r.status != 404 {
		t.Fatalf("delete again: %d %s", r.status, r.body)
	}
	recs, err := ts.Engine().AuditTail(5)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if rec.Action == id && strings.Contains(rec.Actor, "root") {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit record of the admin's writes in %+v", recs)
	}
	if n, err := ts.Engine().VerifyAudit(); err != nil || n == 0 {
		t.Errorf("audit chain: %d %v", n, err)
	}
}

func TestDescribeForbidden(t *testing.T) {
	ts := sharedServer(t)
	def := testAction("demo.secret", 1, "Secret")
	def["acl"] = map[string]any{"discover": []string{"dev"}, "describe": []string{"ops"}, "execute": []string{"ops"}}
	if r := ts.call(t, "PUT", "/v1/capabilities/demo.secret", adminKey, def); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	if r := ts.call(t, "POST", "/v1/describe", devKey, DescribeRequest{ResourceID: "demo.secret"}); r.status != 403 || r.errorCode() != "forbidden" {
		t.Fatalf("describe without the describe gate: %d %s", r.status, r.body)
	}
	if r := ts.call(t, "POST", "/v1/describe", adminKey, DescribeRequest{ResourceID: "demo.secret"}); r.status != 200 {
		t.Fatalf("admin describe: %d %s", r.status, r.body)
	}
}

// slowRetrievers makes every retriever call take d (tests of limits and shutdown).
func slowRetrievers(d time.Duration) func(*engine.Options) {
	return func(o *engine.Options) {
		o.Deadlines = map[string]time.Duration{"exact": 5 * time.Second, "metadata": 5 * time.Second, "hierarchy": 5 * time.Second,
			"lexical": 5 * time.Second, "history": 5 * time.Second, "semantic": 5 * time.Second}
		o.WrapRetriever = func(next actors.RetrieveFunc) actors.RetrieveFunc {
			return func(ctx context.Context, k index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error) {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
				return next(ctx, k, q, allow, limit)
			}
		}
	}
}

func TestOverloadIs429(t *testing.T) {
	release := make(chan struct{})
	ts := startServer(t, serverSetup{
		cfg:    func(c *Config) { c.Limits.MaxInflightSearches = 1; c.Limits.MaxInflightRuns = 1 },
		engine: slowRetrievers(300 * time.Millisecond),
		options: func(o *Options) {
			inner := o.EngineOptions
			o.EngineOptions = func(eo *engine.Options) {
				inner(eo)
				eo.GoFuncs = map[string]handlers.GoFunc{"echo": func(ctx context.Context, args map[string]any) (any, error) {
					<-release
					return args, nil
				}}
			}
		},
	})
	var wg sync.WaitGroup
	first := make(chan *apiResponse, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		first <- ts.call(t, "POST", "/v1/search", devKey, `{"query": "codex"}`)
	}()
	go func() {
		defer wg.Done()
		first <- ts.call(t, "POST", "/v1/run", devKey, `{"id": "demo.echo", "arguments": {"message": "m"}}`)
	}()
	// Wait until both slots are taken.
	deadline := time.Now().Add(5 * time.Second)
	for len(ts.searchSlots) < 1 || len(ts.runSlots) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the slots were never taken")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, tt := range []struct{ name, path, body string }{
		{name: "search", path: "/v1/search", body: `{"query": "codex"}`},
		{name: "stream", path: "/v1/search/stream", body: `{"query": "codex"}`},
		{name: "run", path: "/v1/run", body: `{"id": "demo.echo", "arguments": {"message": "m"}}`},
	} {
		r := ts.call(t, "POST", tt.path, devKey, tt.body)
		if r.status != 429 || r.errorCode() != "overloaded" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s past the limit: %d %s %v", tt.name, r.status, r.body, r.header)
		}
	}
	close(release)
	wg.Wait()
	close(first)
	for r := range first {
		if r.status != 200 {
			t.Errorf("the admitted request: %d %s", r.status, r.body)
		}
	}
	m := ts.call(t, "GET", "/metrics", "", nil)
	for _, want := range []string{
		`capdex_overload_rejections_total{kind="search"} 2`,
		`capdex_overload_rejections_total{kind="run"} 1`,
		`capdex_runs_total{reason="",status="rejected"} 1`,
		`capdex_runs_total{reason="",status="succeeded"} 1`,
		`capdex_search_duration_seconds_count 1`,
		`capdex_retriever_duration_seconds_count{retriever="lexical"}`,
		`capdex_inflight{kind="search"} 0`,
		`capdex_http_requests_total{code="429",route="POST /v1/search"} 1`,
	} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestGracefulShutdownDrains(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	ts := startServer(t, serverSetup{engine: slowRetrievers(400 * time.Millisecond)})
	// An MCP session holds its event stream open: shutdown must end it, not wait for it.
	c := connectHTTP(t, ts.url, devKey, nil)
	c.toolNames(t)
	got := make(chan *apiResponse, 1)
	go func() { got <- ts.call(t, "POST", "/v1/search", devKey, `{"query": "codex"}`) }()
	for len(ts.searchSlots) == 0 {
		time.Sleep(2 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() {
		if err := ts.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		close(stopped)
	}()
	// While draining: not ready, and the listener is closed.
	time.Sleep(50 * time.Millisecond)
	if !ts.draining.Load() {
		t.Error("not draining after the context ended")
	}
	if _, err := http.Get(ts.url + "/healthz"); err == nil {
		t.Error("a new connection was accepted while draining")
	}
	r := <-got
	if r.status != 200 {
		t.Fatalf("the in-flight search was not drained: %d %s", r.status, r.body)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second): // shutdown_timeout is 15s
		t.Fatal("shutdown waited for the MCP session's stream")
	}
	c.cs.Close()
}

// TestShutdownClosesIdleNewConnections: a connection accepted just before shutdown that
// never sends a request (http.Server.Shutdown counts it busy for 5 s) does not hold the
// drain.
func TestShutdownClosesIdleNewConnections(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// make sure the server accepted it before shutting down
	if r := ts.call(t, "GET", "/healthz", "", nil); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
	start := time.Now()
	if err := ts.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("shutdown took %v with a connection that sent nothing", took)
	}
}
