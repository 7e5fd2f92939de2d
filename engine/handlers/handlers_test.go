package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

func goCap(name string, policy registry.NetworkPolicy) *registry.Capability {
	return &registry.Capability{ID: "t.go", Version: 1, ResourceType: registry.TypeAction, NetworkPolicy: policy,
		Handler: &registry.Handler{Kind: "go", Name: name}}
}

func TestGo(t *testing.T) {
	// released ends the function that ignores its deadline once the test is over (Run
	// leaves it behind by design; goleak would report it still running).
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	funcs := map[string]GoFunc{
		"add": func(ctx context.Context, args map[string]any) (any, error) {
			a, _ := args["a"].(json.Number).Int64()
			b, _ := args["b"].(json.Number).Int64()
			return map[string]int64{"sum": a + b}, nil
		},
		"raw":   func(ctx context.Context, args map[string]any) (any, error) { return json.RawMessage(`{"raw":1}`), nil },
		"bad":   func(ctx context.Context, args map[string]any) (any, error) { return json.RawMessage(`{`), nil },
		"fails": func(ctx context.Context, args map[string]any) (any, error) { return nil, errors.New("boom") },
		"panics": func(ctx context.Context, args map[string]any) (any, error) {
			panic("kaboom")
		},
		"ignores": func(ctx context.Context, args map[string]any) (any, error) {
			<-released
			return "late", nil
		},
		"honours": func(ctx context.Context, args map[string]any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"unencodable": func(ctx context.Context, args map[string]any) (any, error) { return func() {}, nil },
	}
	tests := []struct {
		name    string
		fn      string
		policy  registry.NetworkPolicy
		timeout time.Duration
		out     string
		err     error
		errText string
		network string
	}{
		{name: "returns a value", fn: "add", out: `{"sum":5}`, network: NetworkUnenforced},
		{name: "policy any", fn: "add", policy: registry.NetworkAny, out: `{"sum":5}`, network: NetworkAnyHost},
		{name: "raw message kept", fn: "raw", out: `{"raw":1}`, network: NetworkUnenforced},
		{name: "invalid raw message", fn: "bad", err: ErrHandlerFailed, network: NetworkUnenforced},
		{name: "error", fn: "fails", err: ErrHandlerFailed, errText: "boom", network: NetworkUnenforced},
		{name: "panic recovered", fn: "panics", err: ErrHandlerFailed, errText: "kaboom", network: NetworkUnenforced},
		{name: "ignores its deadline", fn: "ignores", timeout: 50 * time.Millisecond, err: ErrTimeout, network: NetworkUnenforced},
		{name: "honours its deadline", fn: "honours", timeout: 50 * time.Millisecond, err: ErrTimeout, network: NetworkUnenforced},
		{name: "unknown function", fn: "nope", err: ErrUnknownFunc, network: NetworkUnenforced},
		{name: "unencodable value", fn: "unencodable", err: ErrHandlerFailed, network: NetworkUnenforced},
	}
	g := NewGo(funcs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			res, err := g.Run(ctx, Request{Cap: goCap(tt.fn, tt.policy), ArgsJSON: []byte(`{"a": 2, "b": 3}`)})
			if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
				t.Fatalf("err %q lacks %q", err, tt.errText)
			}
			if tt.out != "" && string(res.Output) != tt.out {
				t.Fatalf("output %s, want %s", res.Output, tt.out)
			}
			if res.Network != tt.network {
				t.Fatalf("network %q, want %q", res.Network, tt.network)
			}
			if tt.timeout > 0 && time.Since(start) > tt.timeout+500*time.Millisecond {
				t.Fatalf("took %v", time.Since(start))
			}
		})
	}
}

func TestDispatcher(t *testing.T) {
	d := NewDefault(map[string]GoFunc{"one": func(context.Context, map[string]any) (any, error) { return 1, nil }})
	res, err := d.Run(context.Background(), Request{Cap: goCap("one", "")})
	if err != nil || string(res.Output) != "1" {
		t.Fatalf("go via dispatcher: %s %v", res.Output, err)
	}
	c := goCap("one", "")
	c.Handler.Kind = "mcp"
	if _, err := d.Run(context.Background(), Request{Cap: c}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("unknown kind: %v", err)
	}
	c.Handler = nil
	if _, err := d.Run(context.Background(), Request{Cap: c}); !errors.Is(err, ErrBadHandler) {
		t.Fatalf("no handler: %v", err)
	}
}

func httpCap(h registry.Handler, policy registry.NetworkPolicy, allow ...string) *registry.Capability {
	h.Kind = "http"
	return &registry.Capability{ID: "t.http", Version: 1, ResourceType: registry.TypeAction,
		NetworkPolicy: policy, NetworkAllow: allow, Handler: &h}
}

const secret = "tok-Sup3r/S3cret+x"

func TestHTTP(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{
				"method": r.Method, "q": r.URL.Query().Get("q"), "auth": r.Header.Get("Authorization"),
				"body": string(body), "ctype": r.Header.Get("Content-Type"), "raw_query": r.URL.RawQuery,
			})
		case "/text":
			fmt.Fprint(w, "hello "+r.Header.Get("Authorization"))
		case "/fail":
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "upstream said: bad token "+r.Header.Get("Authorization"))
		case "/slow":
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		case "/redirect":
			http.Redirect(w, r, "http://elsewhere.invalid/x", http.StatusFound)
		case "/big":
			fmt.Fprint(w, strings.Repeat("b", 500))
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("CAPDEX_TEST_TOKEN", secret)
	cfg := Config{BaseURLs: map[string]string{"api": srv.URL}}

	tests := []struct {
		name    string
		cap     *registry.Capability
		args    string
		timeout time.Duration
		err     error
		status  int
		network string
		check   func(t *testing.T, out map[string]any)
		noHit   bool
	}{
		{name: "get with templates and secret header",
			cap: httpCap(registry.Handler{URL: "{{.base_url.api}}/echo?q={{urlquery .q}}",
				Headers: map[string]string{"Authorization": "Bearer {{.secret.token}}"}, Secrets: map[string]string{"token": "CAPDEX_TEST_TOKEN"}},
				registry.NetworkAllowlist, "127.0.0.1"),
			args: `{"q": "a b&c"}`, status: 200, network: NetworkAllowlist,
			check: func(t *testing.T, out map[string]any) {
				if out["method"] != "GET" || out["q"] != "a b&c" || out["auth"] != "Bearer "+Redacted {
					t.Fatalf("echo %v", out)
				}
			}},
		{name: "post sends arguments as json", cap: httpCap(registry.Handler{Method: "post", URL: "{{.base_url.api}}/echo"}, registry.NetworkAny),
			args: `{"n": 1}`, status: 200, network: NetworkAnyHost,
			check: func(t *testing.T, out map[string]any) {
				if out["method"] != "POST" || out["body"] != `{"n": 1}` || out["ctype"] != "application/json" {
					t.Fatalf("echo %v", out)
				}
			}},
		{name: "body template", cap: httpCap(registry.Handler{URL: "{{.base_url.api}}/echo", Body: `{"x": {{json .x}}}`}, registry.NetworkAny),
			args: `{"x": "q\"uote"}`, status: 200, network: NetworkAnyHost,
			check: func(t *testing.T, out map[string]any) {
				if out["method"] != "POST" || out["body"] != `{"x": "q\"uote"}` {
					t.Fatalf("echo %v", out)
				}
			}},
		{name: "secret in url query redacted", cap: httpCap(registry.Handler{URL: "{{.base_url.api}}/echo?key={{urlquery .secret.token}}",
			Secrets: map[string]string{"token": "CAPDEX_TEST_TOKEN"}}, registry.NetworkAny),
			status: 200, network: NetworkAnyHost,
			check: func(t *testing.T, out map[string]any) {
				if out["raw_query"] != "key="+Redacted {
					t.Fatalf("raw query %v", out["raw_query"])
				}
			}},
		{name: "text body wrapped and redacted", cap: httpCap(registry.Handler{URL: srv.URL + "/text",
			Headers: map[string]string{"Authorization": "{{.secret.token}}"}, Secrets: map[string]string{"token": "CAPDEX_TEST_TOKEN"}}, registry.NetworkAny),
			status: 200, network: NetworkAnyHost,
			check: func(t *testing.T, out map[string]any) {
				if out["body"] != "hello "+Redacted {
					t.Fatalf("body %v", out)
				}
			}},
		{name: "allowlist host:port entry", cap: httpCap(registry.Handler{URL: srv.URL + "/echo"}, registry.NetworkAllowlist, host),
			status: 200, network: NetworkAllowlist},
		{name: "allowlist refuses other host", cap: httpCap(registry.Handler{URL: srv.URL + "/echo"}, registry.NetworkAllowlist, "example.com"),
			err: ErrNetworkRefused, network: NetworkAllowlist, noHit: true},
		{name: "policy none refuses", cap: httpCap(registry.Handler{URL: srv.URL + "/echo"}, registry.NetworkNone),
			err: ErrNetworkRefused, noHit: true},
		{name: "empty policy refuses", cap: httpCap(registry.Handler{URL: srv.URL + "/echo"}, ""),
			err: ErrNetworkRefused, noHit: true},
		{name: "redirect to a host off the list refused", cap: httpCap(registry.Handler{URL: srv.URL + "/redirect"}, registry.NetworkAllowlist, "127.0.0.1"),
			err: ErrNetworkRefused, network: NetworkAllowlist},
		{name: "handler with secrets does not follow a redirect to another host", cap: httpCap(registry.Handler{URL: srv.URL + "/redirect",
			Headers: map[string]string{"X-Api-Key": "{{.secret.token}}"}, Secrets: map[string]string{"token": "CAPDEX_TEST_TOKEN"}}, registry.NetworkAny),
			err: ErrNetworkRefused, network: NetworkAnyHost},
		{name: "non-2xx fails with status, redacted", cap: httpCap(registry.Handler{URL: srv.URL + "/fail",
			Headers: map[string]string{"Authorization": "{{.secret.token}}"}, Secrets: map[string]string{"token": "CAPDEX_TEST_TOKEN"}}, registry.NetworkAny),
			err: ErrHandlerFailed, status: 502, network: NetworkAnyHost},
		{name: "timeout", cap: httpCap(registry.Handler{URL: srv.URL + "/slow"}, registry.NetworkAny), timeout: 100 * time.Millisecond,
			err: ErrTimeout, network: NetworkAnyHost},
		{name: "missing secret", cap: httpCap(registry.Handler{URL: srv.URL + "/echo", Secrets: map[string]string{"k": "CAPDEX_TEST_UNSET_VAR"}}, registry.NetworkAny),
			err: ErrSecretMissing, network: NetworkAnyHost, noHit: true},
		{name: "missing argument", cap: httpCap(registry.Handler{URL: srv.URL + "/echo?q={{.q}}"}, registry.NetworkAny),
			err: ErrBadHandler, network: NetworkAnyHost, noHit: true},
		{name: "not http url", cap: httpCap(registry.Handler{URL: "file:///etc/passwd"}, registry.NetworkAny),
			err: ErrBadHandler, network: NetworkAnyHost, noHit: true},
		{name: "body capped", cap: httpCap(registry.Handler{URL: srv.URL + "/big", MaxOutput: 10}, registry.NetworkAny),
			status: 200, network: NetworkAnyHost,
			check: func(t *testing.T, out map[string]any) {
				if out["body"] != strings.Repeat("b", 10) {
					t.Fatalf("body %v", out)
				}
			}},
	}
	h := NewHTTP()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			before := hits.Load()
			args := tt.args
			if args == "" {
				args = "{}"
			}
			res, err := h.Run(ctx, Request{Cap: tt.cap, ArgsJSON: []byte(args), Config: cfg})
			if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if res.HTTPStatus != tt.status || res.Network != tt.network {
				t.Fatalf("status %d network %q, want %d %q", res.HTTPStatus, res.Network, tt.status, tt.network)
			}
			if tt.noHit && hits.Load() != before {
				t.Fatal("refused request reached the server")
			}
			for _, s := range []string{string(res.Output), fmt.Sprint(err), url.QueryEscape(secret)} {
				if strings.Contains(s, secret) {
					t.Fatalf("secret echoed: %s", s)
				}
			}
			if err != nil && strings.Contains(err.Error(), url.QueryEscape(secret)) {
				t.Fatalf("escaped secret echoed: %v", err)
			}
			if tt.check != nil {
				var out map[string]any
				if err := json.Unmarshal(res.Output, &out); err != nil {
					t.Fatalf("output %s: %v", res.Output, err)
				}
				tt.check(t, out)
			}
		})
	}
}

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		name  string
		host  string
		allow []string
		want  bool
	}{
		{name: "exact host any port", host: "api.example.com:443", allow: []string{"api.example.com"}, want: true},
		{name: "case folded", host: "API.Example.com", allow: []string{"api.example.COM"}, want: true},
		{name: "host:port exact", host: "api.example.com:8443", allow: []string{"api.example.com:8443"}, want: true},
		{name: "host:port other port", host: "api.example.com:9000", allow: []string{"api.example.com:8443"}, want: false},
		{name: "wildcard subdomain", host: "a.b.example.com", allow: []string{"*.example.com"}, want: true},
		{name: "wildcard not apex", host: "example.com", allow: []string{"*.example.com"}, want: false},
		{name: "suffix trick refused", host: "evilexample.com", allow: []string{"*.example.com"}, want: false},
		{name: "other host", host: "example.org", allow: []string{"example.com"}, want: false},
		{name: "ipv6", host: "[::1]:8080", allow: []string{"::1"}, want: true},
		{name: "ipv6 bracketed entry", host: "[::1]:8080", allow: []string{"[::1]"}, want: true},
		{name: "empty list", host: "example.com", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HostAllowed(tt.host, tt.allow); got != tt.want {
				t.Fatalf("HostAllowed(%q, %q) = %v", tt.host, tt.allow, got)
			}
		})
	}
}

// TestNetworkRefusalNamesTheSetting: a refusal by network_policy none says which setting
// lets the action reach the network.
func TestNetworkRefusalNamesTheSetting(t *testing.T) {
	c := &registry.Capability{ID: "myapp.fetch", Handler: &registry.Handler{Kind: "http", URL: "http://example.com/"}}
	_, err := NewHTTP().Run(context.Background(), Request{Cap: c})
	if !errors.Is(err, ErrNetworkRefused) || !strings.Contains(err.Error(), "network_policy allowlist (with network_allow") || !strings.Contains(err.Error(), "myapp.fetch") {
		t.Fatalf("refusal: %v", err)
	}
}
