package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Redacted replaces every secret value in http results and errors.
const Redacted = "[REDACTED]"

// maxRedirects bounds the redirects an http handler follows, each checked against the policy.
const maxRedirects = 10

// HTTP sends one HTTP request per run.
//
// handler.method (default GET, or POST when a body is given), handler.url, handler.headers
// and handler.body are text/templates over the arguments plus two reserved names:
// {{.base_url.NAME}} from Config.BaseURLs and {{.secret.NAME}}, the value of the
// environment variable handler.secrets[NAME] read at run time (ErrSecretMissing when
// unset). Use {{urlquery .x}} to escape an argument in a URL. Without handler.body, POST,
// PUT and PATCH send the arguments as JSON.
//
// The target host must pass the network policy: none (or empty) refuses every request,
// allowlist needs the host in network_allow ("host", "host:port" or "*.domain"), any allows
// all; redirects are checked the same way. A non-2xx status is ErrHandlerFailed. Every
// occurrence of a secret value in the response and in error messages is replaced by
// Redacted.
type HTTP struct{}

// NewHTTP returns an http handler.
func NewHTTP() *HTTP { return &HTTP{} }

// Run implements Handler.
func (*HTTP) Run(ctx context.Context, req Request) (Result, error) {
	var res Result
	c := req.Cap
	if c == nil || c.Handler == nil || c.Handler.URL == "" {
		return res, fmt.Errorf("%w: http needs handler.url", ErrBadHandler)
	}
	h := c.Handler
	policy := policyOf(c)
	switch policy {
	case registry.NetworkAny:
		res.Network = NetworkAnyHost
	case registry.NetworkAllowlist:
		res.Network = NetworkAllowlist
	default:
		return res, fmt.Errorf("%w: network_policy %s", ErrNetworkRefused, policy)
	}
	args, argsJSON, err := req.args()
	if err != nil {
		return res, err
	}

	secrets := map[string]string{}
	for name, env := range h.Secrets {
		v, ok := req.Config.lookupEnv(env)
		if !ok || v == "" {
			return res, fmt.Errorf("%w: %s (environment variable %s)", ErrSecretMissing, name, env)
		}
		secrets[name] = v
	}
	red := newRedactor(secrets)
	data := templateData(args)
	baseURLs := req.Config.BaseURLs
	if baseURLs == nil {
		baseURLs = map[string]string{}
	}
	data["base_url"] = baseURLs
	data["secret"] = secrets

	rawURL, err := render("url", h.URL, data)
	if err != nil {
		return res, red.err(err)
	}
	var body []byte
	if h.Body != "" {
		s, err := render("body", h.Body, data)
		if err != nil {
			return res, red.err(err)
		}
		body = []byte(s)
	}
	method := strings.ToUpper(strings.TrimSpace(h.Method))
	if method == "" {
		method = http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
	}
	if body == nil && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch) {
		body = argsJSON
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return res, red.err(fmt.Errorf("%w: url %q is not an absolute http(s) URL", ErrBadHandler, rawURL))
	}
	if err := allowHost(u, policy, c.NetworkAllow); err != nil {
		return res, err
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return res, red.err(fmt.Errorf("%w: %w", ErrBadHandler, err))
	}
	for k, tv := range h.Headers {
		v, err := render("header "+k, tv, data)
		if err != nil {
			return res, red.err(err)
		}
		hr.Header.Set(k, v)
	}
	if len(body) > 0 && hr.Header.Get("Content-Type") == "" && json.Valid(body) {
		hr.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{
		Transport: req.Config.HTTPTransport,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrHandlerFailed, maxRedirects)
			}
			// The client re-sends custom headers on a redirect (only Authorization and
			// Cookie are dropped), so a handler holding secrets never follows one to
			// another host: the secret would go with it.
			if len(h.Secrets) > 0 && !strings.EqualFold(r.URL.Host, via[0].URL.Host) {
				return fmt.Errorf("%w: a handler with secrets does not follow a redirect to another host (%s)", ErrNetworkRefused, r.URL.Host)
			}
			return allowHost(r.URL, policy, c.NetworkAllow)
		},
	}
	resp, err := client.Do(hr)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return res, ctxErr(ctx)
		case errors.Is(err, ErrNetworkRefused):
			return res, red.err(err)
		}
		return res, red.err(fmt.Errorf("%w: %w", ErrHandlerFailed, err))
	}
	defer resp.Body.Close()
	b, truncated, err := readCapped(resp.Body, maxOutput(h))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	res.HTTPStatus = resp.StatusCode
	res.Truncated = truncated
	if err != nil {
		if ctx.Err() != nil {
			return res, ctxErr(ctx)
		}
		return res, red.err(fmt.Errorf("%w: read response: %v", ErrHandlerFailed, err))
	}
	b = red.bytes(b)
	res.Output = jsonOrWrapped(b, "body")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet := strings.TrimSpace(string(b))
		if len(snippet) > 300 {
			snippet = snippet[:300] + "…"
		}
		return res, fmt.Errorf("%w: http status %d: %s", ErrHandlerFailed, resp.StatusCode, snippet)
	}
	return res, nil
}

// allowHost checks u's host against the network policy.
func allowHost(u *url.URL, policy registry.NetworkPolicy, allow []string) error {
	switch policy {
	case registry.NetworkAny:
		return nil
	case registry.NetworkAllowlist:
		if HostAllowed(u.Host, allow) {
			return nil
		}
		return fmt.Errorf("%w: host %s not in network_allow", ErrNetworkRefused, u.Host)
	}
	return fmt.Errorf("%w: network_policy %s", ErrNetworkRefused, policy)
}

// HostAllowed reports whether hostport ("example.com", "example.com:8443", "[::1]:80")
// matches an allow-list entry: a host name or IP (any port), "host:port" (that port only),
// or "*.domain" (any subdomain of domain, not domain itself). Matching ignores case.
func HostAllowed(hostport string, allow []string) bool {
	hostport = strings.ToLower(hostport)
	host := hostport
	if u, err := url.Parse("//" + hostport); err == nil {
		host = u.Hostname()
	}
	for _, e := range allow {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case strings.HasPrefix(e, "*."):
			if strings.HasSuffix(host, e[1:]) && len(host) > len(e)-1 {
				return true
			}
		case e == host, e == hostport:
			return true
		case strings.Trim(e, "[]") == host:
			return true
		}
	}
	return false
}

// redactor replaces secret values (raw, JSON-escaped and URL-escaped) by Redacted.
type redactor struct {
	r *strings.Replacer // nil when there are no secrets
}

func newRedactor(secrets map[string]string) *redactor {
	var vals []string
	seen := map[string]bool{}
	addVal := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	for _, v := range secrets {
		addVal(v)
		if b, err := json.Marshal(v); err == nil {
			addVal(string(b[1 : len(b)-1]))
		}
		addVal(url.QueryEscape(v))
		addVal(url.PathEscape(v))
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	rd := &redactor{}
	if len(vals) > 0 {
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals { // longest first, so a secret's prefix never hides the rest
			pairs = append(pairs, v, Redacted)
		}
		rd.r = strings.NewReplacer(pairs...)
	}
	return rd
}

func (rd *redactor) bytes(b []byte) []byte {
	if rd.r == nil {
		return b
	}
	return []byte(rd.r.Replace(string(b)))
}

// err keeps err's sentinel chain but redacts its message.
func (rd *redactor) err(err error) error {
	if rd.r == nil || err == nil {
		return err
	}
	msg := err.Error()
	red := rd.r.Replace(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// redactedError is an error whose message had secrets replaced; errors.Is still sees the
// original chain (for the sentinels), but Error never prints a secret.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is matches the package's sentinels of the wrapped chain without exposing the
// wrapped error's text through Unwrap.
func (e *redactedError) Is(target error) bool {
	for _, s := range []error{ErrTimeout, ErrHandlerFailed, ErrNetworkRefused, ErrBadHandler, ErrSecretMissing} {
		if target == s {
			return errors.Is(e.err, s)
		}
	}
	return false
}
