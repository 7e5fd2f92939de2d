package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/registry"
)

// route is one operation of the HTTP API. The route table is the single source of the
// mux's patterns and of the OpenAPI test's list of operations.
type route struct {
	method, path string
	// public routes answer without an API key.
	public bool
	// admin routes need the admin scope.
	admin bool
	h     http.HandlerFunc
}

// routes returns the HTTP API's operations.
func (s *Server) routes() []route {
	mcpH := s.mcpHTTP.ServeHTTP
	return []route{
		{method: "POST", path: "/v1/search", h: s.handleSearch},
		{method: "POST", path: "/v1/search/stream", h: s.handleSearchStream},
		{method: "POST", path: "/v1/list", h: s.handleList},
		{method: "POST", path: "/v1/describe", h: s.handleDescribe},
		{method: "POST", path: "/v1/run", h: s.handleRun},
		{method: "GET", path: "/v1/capabilities/{id}", h: s.handleGetCapability},
		{method: "PUT", path: "/v1/capabilities/{id}", admin: true, h: s.handlePutCapability},
		{method: "DELETE", path: "/v1/capabilities/{id}", admin: true, h: s.handleDeleteCapability},
		{method: "GET", path: "/v1/upstreams", h: s.handleUpstreams},
		{method: "GET", path: "/v1/stats", h: s.handleStats},
		{method: "GET", path: "/healthz", public: true, h: s.handleHealthz},
		{method: "GET", path: "/readyz", public: true, h: s.handleReadyz},
		{method: "GET", path: "/metrics", public: true, h: s.handleMetrics},
		{method: "GET", path: "/openapi.json", h: s.handleOpenAPI},
		{method: "POST", path: "/mcp", h: mcpH},
		{method: "GET", path: "/mcp", h: mcpH},
		{method: "DELETE", path: "/mcp", h: mcpH},
	}
}

// newHandler builds the mux and wraps it: panic recovery, request ids, access logs and
// HTTP metrics, the body limit, and authentication (all but the public routes).
func (s *Server) newHandler() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	public := map[string]bool{}
	for _, rt := range append(s.routes(), s.consoleRoutes()...) {
		h := rt.h
		if rt.admin {
			h = requireAdmin(h)
		}
		mux.HandleFunc(rt.method+" "+rt.path, h)
		allowed[rt.path] = append(allowed[rt.path], rt.method)
		if rt.public {
			public[rt.path] = true
		}
	}
	for path, methods := range allowed {
		allow := strings.Join(methods, ", ")
		if strings.Contains(allow, "GET") {
			allow += ", HEAD"
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	s.mux = mux
	var h http.Handler = mux
	h = s.authenticate(h, public)
	h = s.serveConsole(h)
	h = s.limitBody(h)
	h = s.observe(h, mux)
	return h
}

// observe assigns the request id, recovers panics, logs the request and records the HTTP
// metrics by route pattern.
func (s *Server) observe(next http.Handler, mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(HeaderRequestID)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(HeaderRequestID, id)
		rec := &statusWriter{ResponseWriter: w}
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		r = r.WithContext(ctx)
		_, pattern := mux.Handler(r)
		if pattern == "" || pattern == "/" {
			pattern = "other"
		}
		inflight := s.m.inflight.WithLabelValues("http")
		inflight.Inc()
		defer func() {
			inflight.Dec()
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "request_id", id, "panic", fmt.Sprint(p))
				if !rec.wrote {
					writeError(rec, r, http.StatusInternalServerError, "internal", "internal error (request "+id+")")
				}
			}
			took := time.Since(start)
			code := rec.status
			if code == 0 {
				code = http.StatusOK
			}
			s.m.httpRequests.WithLabelValues(pattern, fmt.Sprint(code)).Inc()
			s.m.httpSeconds.WithLabelValues(pattern).Observe(took.Seconds())
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", code), slog.Float64("took_ms", float64(took.Microseconds())/1000), slog.String("remote", r.RemoteAddr),
			}
			if c := rec.caller; c != nil {
				attrs = append(attrs, slog.String("tenant", c.Tenant), slog.String("user", c.User), slog.String("key", c.KeyID))
			}
			lvl := slog.LevelInfo
			if code >= 500 {
				lvl = slog.LevelError
			}
			s.log.LogAttrs(context.Background(), lvl, "http request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// limitBody bounds every request body: its size (413 past it) and the time to read it
// (limits.read_timeout; see deadlineBody).
func (s *Server) limitBody(next http.Handler) http.Handler {
	max := s.cfg.Limits.MaxBodyBytes
	readTimeout := s.cfg.Limits.ReadTimeout.D()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			writeError(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, max))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, max)
			if readTimeout > 0 {
				rc := http.NewResponseController(w)
				if rc.SetReadDeadline(time.Now().Add(readTimeout)) == nil {
					r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body has been read (or failed):
// http.Server's ReadTimeout would instead stay on the connection while the handler answers,
// and its background read would cancel a run or an event stream that lasts longer.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if !isTimeout(err) {
			_ = b.rc.SetReadDeadline(time.Time{}) // the connection is gone if this fails
		}
	}
	return n, err
}

// isTimeout reports whether err is a read deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// authenticate resolves the API key to a caller; without a valid key only the public
// routes answer (401 otherwise).
func (s *Server) authenticate(next http.Handler, public map[string]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		key := presentedKey(r)
		c, ok := s.keys.lookup(key)
		if !ok {
			// capdex takes API keys, not OAuth: say so in the challenge too, so that an MCP
			// client tells its user to configure a key rather than to log in
			desc := "send your capdex API key: Authorization: Bearer <key> or X-API-Key: <key>"
			msg := "missing API key: send Authorization: Bearer <key> or X-API-Key"
			if key != "" {
				desc = "the API key is not valid: send a key configured in capdex.yaml (keys) or the admin key"
				msg = "invalid API key"
			}
			if r.URL.Path == "/mcp" {
				msg += " (this MCP endpoint takes an API key, not OAuth: configure your MCP client to send the header; capdex serve prints where the admin key is kept)"
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="capdex", error="invalid_token", error_description="`+desc+`"`)
			writeError(w, r, http.StatusUnauthorized, "unauthorized", msg)
			return
		}
		if sw, ok := w.(*statusWriter); ok {
			sw.caller = &c
		}
		next.ServeHTTP(w, r.WithContext(withCaller(r.Context(), &c)))
	})
}

func requireAdmin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c := callerFrom(r.Context()); c == nil || !c.admin() {
			writeError(w, r, http.StatusForbidden, "forbidden", "this operation needs the admin scope")
			return
		}
		next(w, r)
	}
}

// rc returns the engine's runtime context of the request: the key's identity and the
// X-Capdex-Session header.
func rcOf(r *http.Request) (registry.RuntimeContext, *caller) {
	c := callerFrom(r.Context())
	if c == nil { // unreachable behind authenticate
		c = &caller{}
	}
	return c.runtimeContext(r.Header.Get(HeaderSession)), c
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeSearch(w, r)
	if !ok {
		return
	}
	if wantsEventStream(r) {
		s.streamSearch(w, r, req)
		return
	}
	rc, _ := rcOf(r)
	resp, err := s.search(r.Context(), req, rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleSearchStream(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeSearch(w, r)
	if !ok {
		return
	}
	s.streamSearch(w, r, req)
}

// decodeSearch reads a search body (400 for a limit that is not an integer in 1..10).
func decodeSearch(w http.ResponseWriter, r *http.Request) (registry.SearchRequest, bool) {
	var body searchBody
	if !decodeBody(w, r, &body) {
		return registry.SearchRequest{}, false
	}
	req, err := body.request()
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request", err.Error())
		return req, false
	}
	return req, true
}

// streamSearch answers with Server-Sent Events: "event: partial" for each partial ranking,
// then one "event: final"; data is the SearchResponse as JSON. A request refused before
// the stream starts gets an ordinary JSON error.
func (s *Server) streamSearch(w http.ResponseWriter, r *http.Request, req registry.SearchRequest) {
	rc, _ := rcOf(r)
	flusher, _ := w.(http.Flusher)
	rc2 := http.NewResponseController(w)
	started := false
	err := s.searchStream(r.Context(), req, rc, func(u engine.Update) error {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-store")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		b, err := json.Marshal(u.Response)
		if err != nil {
			return err
		}
		ev := "partial"
		if u.Final {
			ev = "final"
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, b); err != nil {
			return err
		}
		if flusher != nil {
			return rc2.Flush()
		}
		return nil
	})
	if err != nil && !started {
		writeEngineError(w, r, s.log, err)
	}
}

func wantsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			if mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

// ListRequest is the body of POST /v1/list.
type ListRequest struct {
	// Pack is the pack to browse; empty lists the root packs.
	Pack string `json:"pack"`
}

// DescribeRequest is the body of POST /v1/describe.
type DescribeRequest struct {
	// ResourceID is the capability to describe (as search's next_step names it).
	ResourceID string `json:"resource_id"`
	// Format, when set (openai, anthropic or mcp), adds the action rendered as a tool.
	Format string `json:"format,omitempty"`
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	var req ListRequest
	if !decodeBody(w, r, &req) {
		return
	}
	rc, _ := rcOf(r)
	if req.Pack != "" && !registry.ValidID(req.Pack) {
		writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("pack %q is not a pack id", req.Pack))
		return
	}
	resp, err := s.eng.List(r.Context(), req.Pack, rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleDescribe(w http.ResponseWriter, r *http.Request) {
	var req DescribeRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.ResourceID == "" {
		writeError(w, r, http.StatusBadRequest, "invalid_request", "resource_id is required")
		return
	}
	rc, _ := rcOf(r)
	d, err := s.describe(r.Context(), req.ResourceID, req.Format, rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handleGetCapability(w http.ResponseWriter, r *http.Request) {
	rc, _ := rcOf(r)
	d, err := s.describe(r.Context(), r.PathValue("id"), r.URL.Query().Get("format"), rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var raw json.RawMessage
	if !decodeStrict(w, r, body, &raw) { // a syntax error gets its offset here
		return
	}
	req, err := govern.DecodeRunRequest(body)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	rc, _ := rcOf(r)
	res, err := s.run(r.Context(), req, rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handlePutCapability(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var raw json.RawMessage
	if !decodeStrict(w, r, body, &raw) {
		return
	}
	_, c := rcOf(r)
	res, err := s.put(r.Context(), r.PathValue("id"), body, c)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleDeleteCapability(w http.ResponseWriter, r *http.Request) {
	_, c := rcOf(r)
	id := r.PathValue("id")
	gen, err := s.remove(r.Context(), id, c)
	if err != nil {
		if errors.Is(err, engine.ErrInvalidRequest) && registry.ValidID(id) {
			writeError(w, r, http.StatusConflict, "conflict", err.Error()) // a pack with children
			return
		}
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, DeleteResult{ID: id, Deleted: true, Generation: gen})
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "shutting down")
		return
	}
	gen := s.eng.Generation()
	if gen == 0 && s.cfg.SeedExamples() { // a registry that starts empty on purpose is ready
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "no registry generation loaded")
		return
	}
	// Not ready while an upstream is first listing its tools (a search would miss them),
	// at most FirstSyncWait after Open; past that, ready without them (logged by the sync).
	if time.Since(s.opened) < FirstSyncWait {
		waiting, err := s.upstreamsWaiting()
		if err != nil {
			writeError(w, r, http.StatusServiceUnavailable, "unavailable", "upstreams: "+err.Error())
			return
		}
		if len(waiting) > 0 {
			writeError(w, r, http.StatusServiceUnavailable, "unavailable",
				"waiting for the first tool listing of upstream MCP servers: "+strings.Join(waiting, ", "))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "generation": gen})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{Registry: s.m.reg}).ServeHTTP(w, r)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDocument)
}

// readBody reads the whole (size-limited) body: 415 unless it is declared
// application/json, 413 past the limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !checkContentType(w, r) {
		return nil, false
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body exceeds the limit of %d bytes", mbe.Limit))
			return nil, false
		}
		if isTimeout(err) {
			w.Header().Set("Connection", "close")
			writeError(w, r, http.StatusRequestTimeout, "request_timeout", fmt.Sprintf("the body was not received within limits.read_timeout (%d of %d bytes read)", len(b), r.ContentLength))
			return nil, false
		}
		writeError(w, r, http.StatusBadRequest, "bad_request", "reading the body: "+err.Error())
		return nil, false
	}
	return b, true
}

// decodeBody reads and strictly decodes a JSON object body into v.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, ok := readBody(w, r)
	if !ok {
		return false
	}
	return decodeStrict(w, r, b, v)
}

// decodeStrict decodes exactly one JSON object from b into v: another kind of value,
// unknown fields, trailing data and syntax errors are 400s whose message names the byte
// offset.
func decodeStrict(w http.ResponseWriter, r *http.Request, b []byte, v any) bool {
	if err := strictJSON(b, v, "body"); err != nil {
		code := "malformed_json"
		if strings.Contains(err.Error(), "unknown field") {
			code = "unknown_field"
		}
		writeError(w, r, http.StatusBadRequest, code, err.Error())
		return false
	}
	return true
}

// strictJSON is decodeStrict's decoder; what names b in messages ("body", "arguments").
func strictJSON(b []byte, v any, what string) error {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return fmt.Errorf("empty %s: want a JSON object", what)
	}
	if t[0] != '{' {
		return fmt.Errorf("malformed JSON at byte offset %d: %s must be a JSON object, got %s", len(b)-len(bytes.TrimLeft(b, " \t\r\n")), what, jsonValueKind(t[0]))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("malformed JSON at byte offset %d: %s", se.Offset, se.Error())
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "the " + what
			}
			return fmt.Errorf("malformed JSON at byte offset %d: %s must be %s, not a JSON %s", te.Offset, field, jsonKind(te.Type.String()), te.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("malformed JSON at byte offset %d: unexpected end of input", len(b))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return fmt.Errorf("%s at byte offset %d (the accepted fields are in /openapi.json)", strings.TrimPrefix(err.Error(), "json: "), dec.InputOffset())
		}
		return fmt.Errorf("malformed JSON: %v", err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		_ = tok // only its presence matters
		return fmt.Errorf("malformed JSON at byte offset %d: data after the JSON value", dec.InputOffset())
	}
	return nil
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string" || strings.HasPrefix(goType, "registry."):
		return "a string"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "a boolean"
	}
	return "an object"
}

// ErrorBody is the JSON of every error answer: {"error": {"code", "message"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's code and message.
type ErrorDetail struct {
	// Code is a stable code: malformed_json, unknown_field, invalid_request, body_too_large,
	// request_timeout, unsupported_media_type, unauthorized, forbidden, not_found, conflict, method_not_allowed, overloaded,
	// unavailable, internal.
	Code    string `json:"code"`
	Message string `json:"message"`
	// RequestID is the request's X-Request-ID.
	RequestID string `json:"request_id,omitempty"`
}

func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: msg, RequestID: id}})
}

// writeEngineError maps an engine (or server) error to its status.
func writeEngineError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, code := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		id, _ := r.Context().Value(requestIDKey{}).(string)
		log.Error("request failed", "request_id", id, "err", err)
		msg = "internal error (request " + id + ")"
	}
	writeError(w, r, status, code, msg)
}

func statusOf(err error) (int, string) {
	switch {
	case errors.Is(err, ErrOverloaded):
		return http.StatusTooManyRequests, "overloaded"
	case errors.Is(err, engine.ErrNoVersionBump), errors.Is(err, engine.ErrStaleVersion):
		return http.StatusConflict, "conflict"
	case errors.Is(err, engine.ErrInvalidRequest), errors.Is(err, registry.ErrLint), errors.Is(err, govern.ErrBadRequest):
		return http.StatusBadRequest, "invalid_request"
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, registry.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, engine.ErrForbidden):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, engine.ErrClosed), errors.Is(err, ErrShuttingDown), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "unavailable"
	}
	return http.StatusInternalServerError, "internal"
}

// writeJSON answers v as JSON and a newline, with its Content-Length: an answer over
// net/http's 2 KiB buffer (most search answers) would otherwise go out chunked, which
// costs the client a chunk parse and the server a terminating write.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			jsonBufs.Put(buf)
		}
	}()
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil { // Marshal and a newline
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal","message":"encoding the answer failed"}}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// jsonBufs are writeJSON's buffers; one grown past maxPooledJSON is not kept.
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledJSON = 1 << 20

type requestIDKey struct{}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// statusWriter records the status (and the caller, for the access log) and passes Flush
// and the other optional interfaces through Unwrap.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	caller *caller
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through to the underlying writer (SSE and MCP streams).
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
