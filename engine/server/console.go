package server

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// The operator's console: static assets under /ui/ (embedded, public: they hold no data)
// and the JSON endpoints under /v1/console/ that its pages read, in the API's own auth.

//go:embed ui
var consoleFiles embed.FS

// ConsoleCSP is the Content-Security-Policy of every console asset: scripts and styles
// from the console itself only, no inline script or style, no framing, requests to the
// daemon only.
const ConsoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// consoleRoutes are the console's JSON endpoints (and the quarantine API when a
// QuarantineSource is plugged in). They are not part of /openapi.json: docs/console.md
// describes them.
func (s *Server) consoleRoutes() []route {
	rs := []route{
		{method: "GET", path: "/v1/console/whoami", h: s.handleWhoami},
		{method: "GET", path: "/v1/console/tree", h: s.handleTree},
		{method: "GET", path: "/v1/console/capabilities/{id}/versions", h: s.handleVersions},
		{method: "GET", path: "/v1/console/capabilities/{id}/diff", h: s.handleDiff},
		{method: "GET", path: "/v1/console/audit", h: s.handleAudit},
		{method: "POST", path: "/v1/console/audit/verify", admin: true, h: s.handleAuditVerify},
		{method: "POST", path: "/v1/console/search", h: s.handleConsoleSearch},
		{method: "GET", path: "/v1/console/quality", h: s.handleQuality},
	}
	if s.opts.Quarantine != nil {
		rs = append(rs,
			route{method: "GET", path: "/v1/quarantine", h: s.handleQuarantine},
			route{method: "POST", path: "/v1/quarantine/approve", admin: true, h: s.handleQuarantineDecision(true)},
			route{method: "POST", path: "/v1/quarantine/reject", admin: true, h: s.handleQuarantineDecision(false)},
		)
	}
	return rs
}

// serveConsole answers /ui/ with the embedded assets, and redirects GET / and /ui there;
// other requests go to next.
func (s *Server) serveConsole(next http.Handler) http.Handler {
	sub, err := fs.Sub(consoleFiles, "ui")
	if err != nil {
		panic(err) // the embedded tree always has ui/
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if (p == "/" || p == "/ui") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			http.Redirect(w, r, "/ui/", http.StatusFound)
			return
		}
		if !strings.HasPrefix(p, "/ui/") {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s %s: method not allowed (allowed: GET, HEAD)", r.Method, p))
			return
		}
		name := strings.TrimPrefix(p, "/ui/")
		if name == "" {
			name = "index.html"
		}
		b, err := fs.ReadFile(sub, name)
		if err != nil { // fs.ReadFile refuses names with ".." or a leading "/"
			writeError(w, r, http.StatusNotFound, "not_found", "no console asset "+p)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ConsoleCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Type", contentTypeOf(name))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}

func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// Whoami is the answer of GET /v1/console/whoami: the key's identity and which optional
// endpoints this daemon has.
type Whoami struct {
	Tenant     string          `json:"tenant"`
	User       string          `json:"user"`
	Scopes     []string        `json:"scopes"`
	Admin      bool            `json:"admin"`
	KeyID      string          `json:"key_id"`
	Generation uint64          `json:"generation"`
	Features   map[string]bool `json:"features"`
}

// optionalEndpoints are the endpoints other parts of capdex may or may not serve; the
// console shows "not available on this server" for those missing.
var optionalEndpoints = map[string]string{
	"upstreams":  "/v1/upstreams",
	"quarantine": "/v1/quarantine",
	"stats":      "/v1/stats",
}

func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	_, c := rcOf(r)
	out := Whoami{
		Tenant: c.Tenant, User: c.User, Scopes: nonNilStrings(c.Scopes), Admin: c.admin(), KeyID: c.KeyID,
		Generation: s.eng.Generation(), Features: map[string]bool{},
	}
	for name, p := range optionalEndpoints {
		probe, err := http.NewRequest(http.MethodGet, p, nil)
		if err != nil {
			continue // a constant path always parses
		}
		// Unrouted paths fall to the catch-all "/" (or a subtree pattern ending in "/").
		_, pattern := s.mux.Handler(probe)
		out.Features[name] = pattern != "" && !strings.HasSuffix(pattern, "/")
	}
	writeJSON(w, http.StatusOK, out)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// GateView is whether the caller passes one gate, and why.
type GateView struct {
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
}

// TreeNode is one capability of the console's registry tree.
type TreeNode struct {
	ID           string                `json:"id"`
	Parent       string                `json:"parent"`
	Type         registry.ResourceType `json:"type"`
	Title        string                `json:"title"`
	Version      int                   `json:"version"`
	Status       registry.Status       `json:"status"`
	Health       registry.Health       `json:"health"`
	SideEffect   registry.SideEffect   `json:"side_effect,omitempty"`
	RiskLevel    registry.RiskLevel    `json:"risk_level,omitempty"`
	Availability registry.Availability `json:"availability"`
	Enabled      bool                  `json:"enabled"`
	Gates        map[string]GateView   `json:"gates"`
	// Children and Descendants count the caller's visible nodes below this one.
	Children    int `json:"children"`
	Descendants int `json:"descendants"`
}

// Tree is the answer of GET /v1/console/tree: every node the caller may discover.
type Tree struct {
	Generation uint64     `json:"generation"`
	Nodes      []TreeNode `json:"nodes"`
}

func (s *Server) handleTree(w http.ResponseWriter, r *http.Request) {
	rc, _ := rcOf(r)
	snap := s.eng.Snapshot()
	out := Tree{Generation: snap.Generation, Nodes: []TreeNode{}}
	at := map[string]int{}
	for _, c := range snap.Caps {
		if !engine.CheckGate(c, &rc, registry.GateDiscover).Allowed {
			continue
		}
		n := TreeNode{
			ID: c.ID, Type: c.ResourceType, Title: c.Title, Version: c.Version, Status: c.Status,
			Health: c.Health, SideEffect: c.SideEffect, RiskLevel: c.RiskLevel, Enabled: c.Eff.Enabled,
			Gates: map[string]GateView{},
		}
		if n.Status == "" {
			n.Status = registry.StatusActive
		}
		n.Availability, _ = engine.AvailabilityFor(c, &rc)
		for _, g := range []registry.Gate{registry.GateDiscover, registry.GateDescribe, registry.GateExecute} {
			d := engine.CheckGate(c, &rc, g)
			n.Gates[g.String()] = GateView{Allowed: d.Allowed, Reason: d.Reason}
		}
		// The nearest visible ancestor is the parent (Caps are sorted: ancestors come first).
		for p := registry.Parent(c.ID); p != ""; p = registry.Parent(p) {
			if i, ok := at[p]; ok {
				n.Parent = p
				out.Nodes[i].Children++
				break
			}
		}
		for p := n.Parent; p != ""; p = out.Nodes[at[p]].Parent {
			out.Nodes[at[p]].Descendants++
		}
		at[c.ID] = len(out.Nodes)
		out.Nodes = append(out.Nodes, n)
	}
	writeJSON(w, http.StatusOK, out)
}

// describable returns the capability id of the request's path when the caller may
// describe it; otherwise it has answered (404 for one it may not discover, as for one
// that does not exist).
func (s *Server) describable(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !registry.ValidID(id) {
		writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("%q is not a capability id", id))
		return "", false
	}
	rc, _ := rcOf(r)
	c, ok := s.eng.Snapshot().Get(id)
	if !ok || !engine.CheckGate(c, &rc, registry.GateDiscover).Allowed {
		writeError(w, r, http.StatusNotFound, "not_found", "not found: "+id)
		return "", false
	}
	if d := engine.CheckGate(c, &rc, registry.GateDescribe); !d.Allowed {
		writeError(w, r, http.StatusForbidden, "forbidden", fmt.Sprintf("describe %s: %s", id, d.Reason))
		return "", false
	}
	return id, true
}

// VersionInfo is one stored version of a capability.
type VersionInfo struct {
	Version int             `json:"version"`
	Title   string          `json:"title"`
	Status  registry.Status `json:"status,omitempty"`
	Digest  string          `json:"digest"`
}

// Versions is the answer of GET /v1/console/capabilities/{id}/versions.
type Versions struct {
	ID       string        `json:"id"`
	Active   int           `json:"active"`
	Versions []VersionInfo `json:"versions"`
}

func (s *Server) handleVersions(w http.ResponseWriter, r *http.Request) {
	id, ok := s.describable(w, r)
	if !ok {
		return
	}
	active, err := s.eng.Definition(id, 0)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	out := Versions{ID: id, Active: active.Version, Versions: []VersionInfo{}}
	for v := active.Version; v >= 1; v-- {
		c := active
		if v != active.Version {
			if c, err = s.eng.Definition(id, v); err != nil {
				if errors.Is(err, registry.ErrNotFound) || errors.Is(err, engine.ErrNotFound) {
					continue // a version number that was skipped
				}
				writeEngineError(w, r, s.log, err)
				return
			}
		}
		out.Versions = append(out.Versions, VersionInfo{Version: c.Version, Title: c.Title, Status: c.Status, Digest: registry.Digest(c)})
	}
	writeJSON(w, http.StatusOK, out)
}

// contractFields are the fields of a definition a caller who is no administrator sees in
// a version diff: the contract, not the handler, the ACL or the provenance.
var contractFields = []string{
	"id", "version", "resource_type", "capability_type", "title", "summary", "aliases", "intents",
	"entities", "symptoms", "when_to_use", "when_not_to_use", "domain", "scenarios", "side_effect",
	"risk_level", "requires_confirmation", "timeout", "network_policy", "owner", "status",
	"arguments_schema", "output_schema", "produces", "examples", "guidance", "steps",
}

// Diff is the answer of GET /v1/console/capabilities/{id}/diff?a=N&b=M: a line diff of the
// two versions' definitions as indented JSON.
type Diff struct {
	ID    string     `json:"id"`
	A     int        `json:"a"`
	B     int        `json:"b"`
	Lines []DiffLine `json:"lines"`
}

func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	id, ok := s.describable(w, r)
	if !ok {
		return
	}
	_, c := rcOf(r)
	var texts [2][]string
	var vs [2]int
	for i, name := range []string{"a", "b"} {
		q := r.URL.Query().Get(name)
		v, err := strconv.Atoi(q)
		if err != nil || v < 1 {
			writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("%s=%q: want a version number (1 or more)", name, q))
			return
		}
		def, err := s.eng.Definition(id, v)
		if err != nil {
			writeEngineError(w, r, s.log, err)
			return
		}
		text, err := definitionText(def, c.admin())
		if err != nil {
			writeEngineError(w, r, s.log, err)
			return
		}
		texts[i], vs[i] = text, v
	}
	writeJSON(w, http.StatusOK, Diff{ID: id, A: vs[0], B: vs[1], Lines: diffLines(texts[0], texts[1])})
}

// definitionText renders a definition as indented JSON lines with sorted keys: all of it
// for an administrator, its contract fields for anyone else.
func definitionText(c *registry.Capability, full bool) ([]string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding %s@%d: %w", c.ID, c.Version, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding %s@%d: %w", c.ID, c.Version, err)
	}
	if !full {
		for k := range m {
			if !slices.Contains(contractFields, k) {
				delete(m, k)
			}
		}
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s@%d: %w", c.ID, c.Version, err)
	}
	return strings.Split(string(out), "\n"), nil
}

// AuditPage is the answer of GET /v1/console/audit.
type AuditPage struct {
	// Scanned is how many of the newest records were read before filtering.
	Scanned int                  `json:"scanned"`
	Records []engine.AuditRecord `json:"records"`
}

const (
	defaultAuditScan = 500
	maxAuditScan     = 10000
)

// handleAudit answers the newest audit records, newest first, filtered by actor
// (substring), capability (the id or its subtree) and outcome (the decision). A caller
// who is no administrator sees only records of capabilities it may discover now, and of
// runs only its own tenant's, without their arguments.
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n := defaultAuditScan
	if v := q.Get("n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxAuditScan {
			writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("n=%q: want 1..%d", v, maxAuditScan))
			return
		}
	}
	actor, capID, outcome := strings.ToLower(q.Get("actor")), q.Get("capability"), q.Get("outcome")
	recs, err := s.eng.AuditTail(n)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	rc, c := rcOf(r)
	snap := s.eng.Snapshot()
	out := AuditPage{Scanned: len(recs), Records: []engine.AuditRecord{}}
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		if !c.admin() {
			cp, ok := snap.Get(rec.Action)
			if !ok || !engine.CheckGate(cp, &rc, registry.GateDiscover).Allowed {
				continue
			}
			if rec.Kind == engine.AuditKindRun && !strings.HasPrefix(rec.Actor, rc.Tenant+"/") {
				continue // another tenant's run
			}
			rec.Args = nil
		}
		if actor != "" && !strings.Contains(strings.ToLower(rec.Actor), actor) {
			continue
		}
		if capID != "" && rec.Action != capID && !strings.HasPrefix(rec.Action, capID+".") {
			continue
		}
		if outcome != "" && rec.Decision != outcome {
			continue
		}
		out.Records = append(out.Records, rec)
	}
	writeJSON(w, http.StatusOK, out)
}

// AuditVerdict is the answer of POST /v1/console/audit/verify.
type AuditVerdict struct {
	OK      bool   `json:"ok"`
	Records int    `json:"records"`
	Error   string `json:"error,omitempty"`
	TookMS  int64  `json:"took_ms"`
}

func (s *Server) handleAuditVerify(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	n, err := s.eng.VerifyAudit()
	out := AuditVerdict{OK: err == nil, Records: n, TookMS: time.Since(start).Milliseconds()}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, out)
}

// ActAs is the identity an administrator searches as in the console's playground.
type ActAs struct {
	Tenant string   `json:"tenant"`
	User   string   `json:"user"`
	Scopes []string `json:"scopes"`
}

// ConsoleSearchRequest is the body of POST /v1/console/search.
type ConsoleSearchRequest struct {
	Request registry.SearchRequest `json:"request"`
	// ActAs, for administrators only, searches as another caller.
	ActAs *ActAs `json:"act_as,omitempty"`
}

// ConsoleSearchEvent is the data of each event of POST /v1/console/search.
type ConsoleSearchEvent struct {
	// AtUS is when the ranking was ready, in microseconds since the search started.
	AtUS     int64                    `json:"at_us"`
	Response *registry.SearchResponse `json:"response"`
}

// handleConsoleSearch streams a search as Server-Sent Events ("partial" per retriever
// answer, then "final"), each stamped with the time it was ready: the playground's
// timeline.
func (s *Server) handleConsoleSearch(w http.ResponseWriter, r *http.Request) {
	var req ConsoleSearchRequest
	if !decodeBody(w, r, &req) {
		return
	}
	rc, c := rcOf(r)
	if req.ActAs != nil {
		if !c.admin() {
			writeError(w, r, http.StatusForbidden, "forbidden", "act_as needs the admin scope")
			return
		}
		if req.ActAs.User == "" {
			writeError(w, r, http.StatusBadRequest, "invalid_request", "act_as.user is required")
			return
		}
		as := caller{Tenant: req.ActAs.Tenant, User: req.ActAs.User, Scopes: req.ActAs.Scopes}
		if as.Tenant == "" {
			as.Tenant = "default"
		}
		rc = as.runtimeContext(r.Header.Get(HeaderSession))
	}
	start := time.Now()
	started := false
	rw := http.NewResponseController(w)
	err := s.searchStream(r.Context(), req.Request, rc, func(u engine.Update) error {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
		}
		b, err := json.Marshal(ConsoleSearchEvent{AtUS: time.Since(start).Microseconds(), Response: u.Response})
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
		return rw.Flush()
	})
	if err != nil && !started {
		writeEngineError(w, r, s.log, err)
	}
}

func (s *Server) handleQuality(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bucket, span := time.Minute, time.Hour
	for _, p := range []struct {
		name string
		d    *time.Duration
	}{{"bucket", &bucket}, {"span", &span}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 7*24*time.Hour {
			writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("%s=%q: want a duration from 1s to 168h", p.name, v))
			return
		}
		*p.d = d
	}
	if span/bucket > maxQualityBuckets {
		writeError(w, r, http.StatusBadRequest, "invalid_request", fmt.Sprintf("span %s / bucket %s is more than %d buckets", span, bucket, maxQualityBuckets))
		return
	}
	writeJSON(w, http.StatusOK, s.quality.series(time.Now(), bucket, span))
}

func (s *Server) handleQuarantine(w http.ResponseWriter, r *http.Request) {
	items, err := s.opts.Quarantine.Quarantined(r.Context())
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	rc, c := rcOf(r)
	out := []QuarantineItem{}
	snap := s.eng.Snapshot()
	for _, it := range items {
		if !c.admin() {
			// Anyone else sees only changes of tools it may already discover.
			cp, ok := snap.Get(it.ResourceID)
			if !ok || !engine.CheckGate(cp, &rc, registry.GateDiscover).Allowed {
				continue
			}
		}
		if it.Flags == nil {
			it.Flags = []string{}
		}
		out = append(out, it)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

// QuarantineDecision is the body of POST /v1/quarantine/approve and /reject.
type QuarantineDecision struct {
	ResourceID string `json:"resource_id"`
}

func (s *Server) handleQuarantineDecision(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req QuarantineDecision
		if !decodeBody(w, r, &req) {
			return
		}
		if req.ResourceID == "" {
			writeError(w, r, http.StatusBadRequest, "invalid_request", "resource_id is required")
			return
		}
		_, c := rcOf(r)
		decide, verb := s.opts.Quarantine.Reject, "rejected"
		if approve {
			decide, verb = s.opts.Quarantine.Approve, "approved"
		}
		if err := decide(r.Context(), req.ResourceID, c.actor()); err != nil {
			writeEngineError(w, r, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"resource_id": req.ResourceID, "decision": verb})
	}
}
