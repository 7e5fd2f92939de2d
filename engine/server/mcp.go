package server

import (
	"bytes"
	"container/list"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/registry"
)

// The four meta-tools.
const (
	ToolSearch   = "capability_search"
	ToolList     = "capability_list"
	ToolDescribe = "capability_describe"
	ToolRun      = "capability_run"
)

// SearchInputSchema is capability_search's input schema, as docs/ARCHITECTURE.md "Protocol"
// gives it, with the structured match of docs/matching.md.
var SearchInputSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string"},` +
	`"within":{"type":"string"},` +
	`"types":{"type":"array","items":{"enum":["pack","action","recipe"]}},` +
	`"side_effect_max":{"enum":["R","W-local","W-shared","I"]},` +
	`"limit":{"type":"integer","minimum":1,"maximum":10,"default":5},` +
	`"match":` + matchSchema() + `},` +
	`"required":["query"],"additionalProperties":false}`

// matchSchema is the JSON Schema of a search request's structured match.
func matchSchema() string {
	names := nextStepNames()
	enum := func(vs []string) string {
		b, _ := json.Marshal(vs)
		return `{"enum":` + string(b) + `}`
	}
	strs := `{"type":"array","items":{"type":"string"},"maxItems":16}`
	return `{"type":"object","description":"Structured match for orchestrators that hold an ontology (seed 003): next_step, capability_types, domain and scenario filter; intents and risk_signals rank.","properties":{` +
		`"next_step":` + enum(names) + `,` +
		`"capability_types":{"type":"array","items":` + enum(registry.CapabilityTypes) + `,"maxItems":16},` +
		`"domain":{"type":"string"},"scenario":{"type":"string"},` +
		`"intents":` + strs + `,"risk_signals":` + strs + `},"additionalProperties":false}`
}

const listInputSchema = `{"type":"object","properties":{` +
	`"pack":{"type":"string","description":"The pack to browse, e.g. maintenance.codex; empty or absent lists the root packs."}},` +
	`"additionalProperties":false}`

const describeInputSchema = `{"type":"object","properties":{` +
	`"resource_id":{"type":"string","description":"The capability id, as capability_search's next_step names it."},` +
	`"format":{"enum":["openai","anthropic","mcp"],"description":"Also render the action as a tool in this format."}},` +
	`"required":["resource_id"],"additionalProperties":false}`

const runInputSchema = `{"type":"object","properties":{` +
	`"resource_id":{"type":"string","description":"The action id."},` +
	`"version":{"type":"integer","minimum":1,"description":"The version you described; refused when it is no longer the active one."},` +
	`"arguments":{"type":"object","description":"The arguments, valid against the action's arguments_schema."},` +
	`"confirmation_token":{"type":"string","description":"The token of an earlier confirmation_required answer, once the user agreed."}},` +
	`"required":["resource_id"],"additionalProperties":false}`

// Output schemas of the meta-tools: the JSON answer in structuredContent (an error answers
// {"error": {"code", "message"}} with isError, which they allow too).
const (
	errorProp          = `"error":{"type":"object","properties":{"code":{"type":"string"},"message":{"type":"string"}}}`
	searchOutputSchema = `{"type":"object","properties":{` +
		`"query":{"type":"string"},"resolution":{"enum":["confident","ambiguous","no_confident_match"]},"reason":{"type":"string"},` +
		`"matches":{"type":"array","items":{"type":"object","properties":{"rank":{"type":"integer"},"resource_id":{"type":"string"},` +
		`"resource_type":{"type":"string"},"title":{"type":"string"},"summary":{"type":"string"},"availability":{"type":"string"},` +
		`"availability_reasons":{"type":"array","items":{"type":"string"}},"next_step":{"type":"object"}}}},` +
		`"search_meta":{"type":"object"},` + errorProp + `}}`
	listOutputSchema = `{"type":"object","properties":{"pack":{"type":"string"},"title":{"type":"string"},"guidance":{"type":"string"},` +
		`"items":{"type":"array","items":{"type":"object","properties":{"resource_id":{"type":"string"},"resource_type":{"type":"string"},` +
		`"title":{"type":"string"},"availability":{"type":"string"}}}},` + errorProp + `}}`
	describeOutputSchema = `{"type":"object","properties":{"resource_id":{"type":"string"},"resource_type":{"type":"string"},` +
		`"version":{"type":"integer"},"title":{"type":"string"},"summary":{"type":"string"},"arguments_schema":{"type":"object"},` +
		`"output_schema":{"type":"object"},"side_effect":{"type":"string"},"requires_confirmation":{"type":"boolean"},` +
		`"schema_digest":{"type":"string"},` + errorProp + `}}`
	runOutputSchema = `{"type":"object","properties":{"status":{"type":"string"},"reason":{"type":"string"},"message":{"type":"string"},` +
		`"id":{"type":"string"},"version":{"type":"integer"},"output":{},"confirmation_token":{"type":"string"},` +
		`"summary":{"type":"string"},"expires_at":{"type":"string"},"run_id":{"type":"string"},` + errorProp + `}}`
)

const mcpInstructions = `capdex holds many capabilities (scripts, APIs, tools, recipes) behind four tools. ` +
	`Call capability_search with the user's goal, then capability_describe on the best match to read its contract ` +
	`(an action then also appears as its own tool), then capability_run (or that tool) with valid arguments. ` +
	`A run that answers confirmation_required must be shown to the user; run again with its confirmation_token only after they agree.`

// elicitConfirmKey names the confirmation input request of a run.
const elicitConfirmKey = "confirm"

// sessionTable holds the live MCP sessions by session id.
type sessionTable struct {
	mu sync.Mutex // guards m
	m  map[string]*mcpSession
}

func (t *sessionTable) add(s *mcpSession) {
	t.mu.Lock()
	t.m[s.id] = s
	t.mu.Unlock()
}

func (t *sessionTable) get(id string) *mcpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

func (t *sessionTable) remove(id string) {
	t.mu.Lock()
	delete(t.m, id)
	t.mu.Unlock()
}

func (t *sessionTable) all() []*mcpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*mcpSession, 0, len(t.m))
	for _, s := range t.m {
		out = append(out, s)
	}
	return out
}

// closeSessions ends every MCP session (their event streams end with them).
func (s *Server) closeSessions() {
	for _, sess := range s.sessions.all() {
		for ss := range sess.srv.Sessions() {
			ss.Close()
		}
	}
}

// mcpSession is one MCP session: its own mcp.Server (so that leaf tools stay in the
// session), the identity it runs as and its leaf tools.
type mcpSession struct {
	s   *Server
	srv *mcp.Server
	who caller
	id  string

	mu sync.Mutex // guards leaves and lru
	// leaves are the session's leaf tools by tool name; lru orders their names, most
	// recently used first.
	leaves map[string]*leaf
	lru    *list.List
}

type leaf struct {
	id      string
	version int
	digest  string // the schema digest described
	elem    *list.Element
}

// newSession builds a session's MCP server with the four meta-tools. id may be empty; for
// HTTP the session id is assigned when the SDK asks for it.
func (s *Server) newSession(who caller, id string) *mcpSession {
	sess := &mcpSession{s: s, who: who, id: id, leaves: map[string]*leaf{}, lru: list.New()}
	opts := &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       s.log.With("component", "mcp"),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		GetSessionID: func() string {
			if sess.id == "" {
				sess.id = crand.Text()
				s.sessions.add(sess)
			}
			return sess.id
		},
	}
	sess.srv = mcp.NewServer(&mcp.Implementation{Name: "capdex", Title: "capdex capability registry", Version: s.opts.Version}, opts)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	sess.srv.AddTool(&mcp.Tool{Name: ToolSearch, Title: "Search capabilities", Annotations: ro,
		Description: "Find the few capabilities (packs, actions, recipes) that fit a goal. Returns ranked summaries, never schemas; describe a match before running it.",
		InputSchema: json.RawMessage(SearchInputSchema), OutputSchema: json.RawMessage(searchOutputSchema)}, sess.tool(sess.search))
	sess.srv.AddTool(&mcp.Tool{Name: ToolList, Title: "Browse a pack", Annotations: ro,
		Description: "List the children of a pack (or the root packs) with their side effect and availability.",
		InputSchema: json.RawMessage(listInputSchema), OutputSchema: json.RawMessage(listOutputSchema)}, sess.tool(sess.list))
	sess.srv.AddTool(&mcp.Tool{Name: ToolDescribe, Title: "Describe a capability", Annotations: ro,
		Description: "Disclose one capability's full contract: arguments and output schemas, side effect, risk, confirmation, examples; a recipe's steps; a pack's guidance. A described action also becomes a tool of this session.",
		InputSchema: json.RawMessage(describeInputSchema), OutputSchema: json.RawMessage(describeOutputSchema)}, sess.tool(sess.describe))
	sess.srv.AddTool(&mcp.Tool{Name: ToolRun, Title: "Run an action",
		Description: "Run a described action through permission, risk, confirmation and audit. An action that needs confirmation answers confirmation_required with a token: ask the user, then run again with confirmation_token.",
		InputSchema: json.RawMessage(runInputSchema), OutputSchema: json.RawMessage(runOutputSchema)}, sess.tool(sess.runMeta))
	return sess
}

// tool wraps a handler: it counts the call for shutdown and turns errors into tool
// errors the model can read.
func (sess *mcpSession) tool(h func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s := sess.s
		s.toolCalls.Add(1)
		defer s.toolCalls.Add(-1)
		if s.draining.Load() {
			return toolError("unavailable", ErrShuttingDown.Error()), nil
		}
		res, err := h(ctx, req)
		if err != nil {
			_, code := statusOf(err)
			msg := err.Error()
			if code == "internal" {
				s.log.Error("mcp tool failed", "tool", req.Params.Name, "session", sess.id, "err", err)
				msg = "internal error"
			}
			return toolError(code, msg), nil
		}
		return res, nil
	}
}

// rc is the engine's view of the session's caller.
func (sess *mcpSession) rc(req *mcp.CallToolRequest) registry.RuntimeContext {
	id := sess.id
	if req != nil && req.Session != nil && req.Session.ID() != "" {
		id = req.Session.ID()
	}
	return sess.who.runtimeContext(id)
}

type searchArgs struct {
	Query         string                    `json:"query"`
	Within        string                    `json:"within,omitempty"`
	Types         []registry.ResourceType   `json:"types,omitempty"`
	SideEffectMax registry.SideEffect       `json:"side_effect_max,omitempty"`
	Limit         json.RawMessage           `json:"limit,omitempty"`
	Match         *registry.StructuredMatch `json:"match,omitempty"`
}

func (sess *mcpSession) search(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a searchArgs
	if err := toolArgs(req, &a); err != nil {
		return nil, err
	}
	sr := registry.SearchRequest{Query: a.Query, Within: a.Within, Types: a.Types, SideEffectMax: a.SideEffectMax, Match: a.Match}
	if len(a.Limit) > 0 {
		n, err := parseLimit(a.Limit)
		if err != nil {
			return nil, err
		}
		sr.Limit = n
	}
	resp, err := sess.s.search(ctx, sr, sess.rc(req))
	if err != nil {
		return nil, err
	}
	return toolResult(resp, false), nil
}

func (sess *mcpSession) list(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a ListRequest
	if err := toolArgs(req, &a); err != nil {
		return nil, err
	}
	if a.Pack != "" && !registry.ValidID(a.Pack) {
		return nil, fmt.Errorf("%w: pack %q is not a pack id", engine.ErrInvalidRequest, a.Pack)
	}
	resp, err := sess.s.eng.List(ctx, a.Pack, sess.rc(req))
	if err != nil {
		return nil, err
	}
	return toolResult(resp, false), nil
}

func (sess *mcpSession) describe(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a DescribeRequest
	if err := toolArgs(req, &a); err != nil {
		return nil, err
	}
	if a.ResourceID == "" {
		return nil, fmt.Errorf("%w: resource_id is required", engine.ErrInvalidRequest)
	}
	d, err := sess.s.describe(ctx, a.ResourceID, a.Format, sess.rc(req))
	if err != nil {
		return nil, err
	}
	if d.ResourceType == registry.TypeAction {
		sess.addLeaf(d.Description)
	}
	return toolResult(d, false), nil
}

type runArgs struct {
	ResourceID        string          `json:"resource_id"`
	Version           int             `json:"version,omitempty"`
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	ConfirmationToken string          `json:"confirmation_token,omitempty"`
}

func (sess *mcpSession) runMeta(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a runArgs
	if err := toolArgs(req, &a); err != nil {
		return nil, err
	}
	if a.ResourceID == "" {
		return nil, fmt.Errorf("%w: resource_id is required", engine.ErrInvalidRequest)
	}
	if a.Version < 0 {
		return nil, fmt.Errorf("%w: version must be a positive integer", engine.ErrInvalidRequest)
	}
	if t := bytes.TrimSpace(a.Arguments); len(t) > 0 && string(t) != "null" && t[0] != '{' {
		return nil, fmt.Errorf("%w: arguments must be a JSON object", engine.ErrInvalidRequest)
	}
	id, pin, err := registry.SplitVersion(a.ResourceID)
	if err != nil || !registry.ValidID(id) {
		return nil, fmt.Errorf("%w: resource_id %q is not a capability id", engine.ErrInvalidRequest, a.ResourceID)
	}
	if pin != 0 {
		if a.Version != 0 && a.Version != pin {
			return nil, fmt.Errorf("%w: resource_id pins version %d but version is %d", engine.ErrInvalidRequest, pin, a.Version)
		}
		a.Version = pin
	}
	return sess.run(ctx, req, engine.RunRequest{ID: id, Version: a.Version, Arguments: a.Arguments, ConfirmationToken: a.ConfirmationToken})
}

// run runs an action for a tool call. When the action needs confirmation and the client
// can elicit, the user is asked through the client (an input request, SEP-2322: the SDK
// elicits directly for older clients) and, on accept, the run is redeemed with the token.
func (sess *mcpSession) run(ctx context.Context, req *mcp.CallToolRequest, rr engine.RunRequest) (*mcp.CallToolResult, error) {
	rc := sess.rc(req)
	if p := req.Params; len(p.InputResponses) > 0 && p.RequestState != "" && rr.ConfirmationToken == "" {
		ans, _ := p.InputResponses[elicitConfirmKey].(*mcp.ElicitResult)
		if ans == nil || ans.Action != "accept" || ans.Content["confirm"] != true {
			action := "decline"
			if ans != nil {
				action = ans.Action
			}
			sess.s.m.runs.WithLabelValues("declined", action).Inc()
			return toolResult(map[string]any{
				"status": "declined", "id": rr.ID, "reason": "user_" + action,
				"message": "the user did not confirm the run; nothing ran",
			}, false), nil
		}
		rr.ConfirmationToken = p.RequestState
	}
	res, err := sess.s.run(ctx, rr, rc)
	if err != nil {
		return nil, err
	}
	if res.Status == govern.StatusConfirmationRequired && rr.ConfirmationToken == "" && canElicit(req) {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{elicitConfirmKey: &mcp.ElicitParams{
				Message: confirmMessage(res),
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"confirm": map[string]any{"type": "boolean", "title": "Run it", "description": "Run " + res.ID + " now"},
					},
					"required": []string{"confirm"},
				},
			}},
			RequestState: res.ConfirmationToken,
		}, nil
	}
	isErr := res.Status == govern.StatusRefused || res.Status == govern.StatusFailed
	return toolResult(res, isErr), nil
}

func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

func confirmMessage(res *engine.RunResult) string {
	var b strings.Builder
	b.WriteString(res.Summary)
	if len(res.AffectedResources) > 0 {
		b.WriteString("\nAffects: ")
		b.WriteString(strings.Join(res.AffectedResources, ", "))
	}
	if !res.ExpiresAt.IsZero() {
		b.WriteString("\nThe approval expires at ")
		b.WriteString(res.ExpiresAt.Format("15:04:05 MST"))
	}
	b.WriteString("\nRun it?")
	return b.String()
}

// addLeaf registers a described action as a leaf tool of this session (the SDK sends
// tools/list_changed), dropping the least recently used leaf past limits.max_leaf_tools.
func (sess *mcpSession) addLeaf(d *engine.Description) {
	name := registry.ToolName(d.ResourceID)
	switch name {
	case ToolSearch, ToolList, ToolDescribe, ToolRun:
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if l, ok := sess.leaves[name]; ok && l.id == d.ResourceID && l.version == d.Version && l.digest == d.SchemaDigest {
		sess.lru.MoveToFront(l.elem)
		return
	}
	t, err := leafTool(d)
	if err != nil {
		sess.s.log.Warn("not registering a leaf tool", "resource_id", d.ResourceID, "err", err)
		return
	}
	id, version := d.ResourceID, d.Version
	tokenArg := withTokenArgument(t, d)
	h := sess.tool(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess.touch(name)
		args := req.Params.Arguments
		if t := bytes.TrimSpace(args); len(t) > 0 && string(t) != "null" && t[0] != '{' {
			return nil, fmt.Errorf("%w: arguments must be a JSON object", engine.ErrInvalidRequest)
		}
		rr := engine.RunRequest{ID: id, Version: version, Arguments: args}
		if tokenArg {
			var err error
			if rr.Arguments, rr.ConfirmationToken, err = splitToken(args); err != nil {
				return nil, err
			}
		}
		return sess.run(ctx, req, rr)
	})
	if err := safeAddTool(sess.srv, t, h); err != nil {
		sess.s.log.Warn("not registering a leaf tool", "resource_id", d.ResourceID, "err", err)
		return
	}
	sess.s.m.leafTools.Inc()
	if l, ok := sess.leaves[name]; ok { // a new version replaced the tool
		l.id, l.version, l.digest = id, version, d.SchemaDigest
		sess.lru.MoveToFront(l.elem)
		return
	}
	sess.leaves[name] = &leaf{id: id, version: version, digest: d.SchemaDigest, elem: sess.lru.PushFront(name)}
	var drop []string
	for sess.lru.Len() > sess.s.cfg.Limits.MaxLeafTools {
		e := sess.lru.Back()
		n := e.Value.(string)
		sess.lru.Remove(e)
		delete(sess.leaves, n)
		drop = append(drop, n)
	}
	if len(drop) > 0 {
		sess.srv.RemoveTools(drop...)
	}
}

// recheckLeaves drops the leaf tools the session's caller may no longer describe, or whose
// action changed (another version or digest: describe it again), after a new registry
// generation; the SDK sends tools/list_changed for the removal.
func (sess *mcpSession) recheckLeaves(ctx context.Context) {
	type entry struct {
		name string
		l    leaf
	}
	sess.mu.Lock()
	check := make([]entry, 0, len(sess.leaves))
	for name, l := range sess.leaves {
		check = append(check, entry{name, *l})
	}
	sess.mu.Unlock()
	rc := sess.who.runtimeContext(sess.id)
	var stale []entry
	for _, e := range check {
		d, err := sess.s.eng.Describe(ctx, e.l.id, rc)
		if err != nil || d.Version != e.l.version || d.SchemaDigest != e.l.digest {
			stale = append(stale, e)
		}
	}
	if len(stale) == 0 {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var drop []string
	for _, e := range stale {
		// A describe in the meantime may have replaced the leaf: drop only what was checked.
		if l, ok := sess.leaves[e.name]; ok && l.id == e.l.id && l.version == e.l.version && l.digest == e.l.digest {
			sess.lru.Remove(l.elem)
			delete(sess.leaves, e.name)
			drop = append(drop, e.name)
		}
	}
	if len(drop) > 0 {
		sess.srv.RemoveTools(drop...)
		sess.s.log.Info("mcp leaf tools dropped after a registry change", "session", sess.id, "tools", drop)
	}
}

// recheckSessions runs recheckLeaves on every live MCP session.
func (s *Server) recheckSessions(ctx context.Context) {
	for _, sess := range s.sessions.all() {
		sess.recheckLeaves(ctx)
	}
}

func (sess *mcpSession) touch(name string) {
	sess.mu.Lock()
	if l, ok := sess.leaves[name]; ok {
		sess.lru.MoveToFront(l.elem)
	}
	sess.mu.Unlock()
}

// leafTool renders a described action as an MCP tool: the MCP rendering of
// engine.RenderTool without the output schema (a call answers a run result, not the
// action's bare output).
func leafTool(d *engine.Description) (*mcp.Tool, error) {
	raw, err := engine.RenderTool(d, engine.FormatMCP)
	if err != nil {
		return nil, err
	}
	var t mcp.Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	t.OutputSchema = nil
	var schema map[string]any
	b, _ := json.Marshal(t.InputSchema) // it was just unmarshalled from JSON
	if err := json.Unmarshal(b, &schema); err != nil || schema["type"] != "object" {
		return nil, errors.New("the arguments schema is not an object schema")
	}
	t.InputSchema = json.RawMessage(b)
	return &t, nil
}

// tokenProperty is the argument a leaf tool of an action that needs confirmation takes
// besides the action's own: the token of an earlier confirmation_required answer, for
// clients that cannot elicit.
const tokenProperty = "confirmation_token"

// withTokenArgument adds confirmation_token to the input schema of t when d needs
// confirmation and its own arguments do not already use that name; it reports whether it
// did (the leaf then takes the token out of the arguments).
func withTokenArgument(t *mcp.Tool, d *engine.Description) bool {
	if !d.RequiresConfirmation {
		return false
	}
	var schema map[string]any
	raw, ok := t.InputSchema.(json.RawMessage)
	if !ok || json.Unmarshal(raw, &schema) != nil {
		return false
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, taken := props[tokenProperty]; taken {
		return false
	}
	props[tokenProperty] = map[string]any{"type": "string",
		"description": "The confirmation_token of an earlier confirmation_required answer, once the user agreed (not an argument of the action)."}
	schema["properties"] = props
	b, err := json.Marshal(schema)
	if err != nil {
		return false
	}
	t.InputSchema = json.RawMessage(b)
	return true
}

// splitToken takes confirmation_token out of a leaf tool's arguments.
func splitToken(args json.RawMessage) (json.RawMessage, string, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return args, "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, "", fmt.Errorf("%w: arguments: %w", engine.ErrInvalidRequest, err)
	}
	raw, ok := m[tokenProperty]
	if !ok {
		return args, "", nil
	}
	var tok string
	if err := json.Unmarshal(raw, &tok); err != nil {
		return nil, "", fmt.Errorf("%w: confirmation_token must be a string", engine.ErrInvalidRequest)
	}
	delete(m, tokenProperty)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, "", fmt.Errorf("%w: arguments: %w", engine.ErrInvalidRequest, err)
	}
	return b, tok, nil
}

// safeAddTool adds a tool; the SDK panics on a tool it cannot accept.
func safeAddTool(srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	srv.AddTool(t, h)
	return nil
}

// toolArgs decodes a tool call's arguments strictly (unknown fields are errors).
func toolArgs(req *mcp.CallToolRequest, v any) error {
	raw := bytes.TrimSpace(req.Params.Arguments)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if err := strictJSON(raw, v, "arguments"); err != nil {
		return fmt.Errorf("%w: arguments: %v", engine.ErrInvalidRequest, err)
	}
	return nil
}

func toolResult(v any, isErr bool) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return toolError("internal", "encoding the result failed")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isErr,
	}
}

func toolError(code, msg string) *mcp.CallToolResult {
	res := toolResult(ErrorBody{Error: ErrorDetail{Code: code, Message: msg}}, true)
	res.IsError = true
	return res
}

// ServeMCP serves one MCP session over t as the configured local identity (capdex mcp
// uses stdio). It returns when the client disconnects or ctx is done.
func (s *Server) ServeMCP(ctx context.Context, t mcp.Transport) error {
	li := s.cfg.LocalIdentity
	sess := s.newSession(caller{Tenant: li.Tenant, User: li.User, Scopes: li.Scopes, KeyID: "local"}, "mcp-"+crand.Text())
	s.sessions.add(sess)
	defer s.sessions.remove(sess.id)
	err := sess.srv.Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ServeStdio serves MCP on in and out, newline-delimited JSON-RPC (capdex mcp passes its
// stdin and stdout). A malformed line is answered with a JSON-RPC error and skipped (see
// lineTransport); a line is at most limits.max_mcp_line_bytes. It returns when in ends or
// ctx is done.
//
// With upstreams it first waits, at most FirstSyncWait, until every upstream has listed its
// tools once or is down: an MCP client starts capdex mcp for a conversation and searches at
// once, and a search before the first listing would find none of the upstream's tools.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	max := s.cfg.Limits.MaxMCPLineBytes
	if max <= 0 {
		max = DefaultMaxMCPLineBytes
	}
	s.waitFirstSync(ctx, FirstSyncWait)
	return s.ServeMCP(ctx, &lineTransport{in: in, out: out, maxLine: max, log: s.log.With("component", "mcp")})
}

// sessionHolder lets the two getServer calls the SDK makes for one request share the
// session it creates.
type sessionHolder struct{ sess *mcpSession }

type holderKey struct{}

// newMCPHandler returns the streamable HTTP handler of /mcp: one mcp.Server per session,
// running as the identity of the API key that opened it; a request for a session opened
// with another key is refused (403).
func (s *Server) newMCPHandler() http.Handler {
	proto := mcp.NewServer(&mcp.Implementation{Name: "capdex", Version: s.opts.Version}, nil)
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") != "" {
			return proto // only asked for its protocol versions
		}
		hold, _ := r.Context().Value(holderKey{}).(*sessionHolder)
		c := callerFrom(r.Context())
		if hold == nil || c == nil {
			return nil
		}
		if hold.sess == nil {
			hold.sess = s.newSession(*c, "")
		}
		return hold.sess.srv
	}, &mcp.StreamableHTTPOptions{
		Logger:              s.log.With("component", "mcp"),
		MaxRequestBodyBytes: s.cfg.Limits.MaxBodyBytes,
		SessionTimeout:      s.cfg.Limits.SessionIdleTimeout.D(),
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callerFrom(r.Context())
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			if sess := s.sessions.get(sid); sess != nil && (c == nil || sess.who.KeyID != c.KeyID) {
				writeError(w, r, http.StatusForbidden, "forbidden", "this MCP session belongs to another API key")
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if s.draining.Load() {
			writeError(w, r, http.StatusServiceUnavailable, "unavailable", "shutting down: no new MCP sessions")
			return
		}
		hold := &sessionHolder{}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holderKey{}, hold)))
		if hold.sess == nil || hold.sess.id == "" {
			return
		}
		// Forget the session when it ends (closed by the client, idle timeout or shutdown).
		for ss := range hold.sess.srv.Sessions() {
			go func(id string) {
				ss.Wait()
				s.sessions.remove(id)
			}(hold.sess.id)
		}
		if s.sessions.get(hold.sess.id) != nil && !hasSessions(hold.sess.srv) {
			s.sessions.remove(hold.sess.id)
		}
	})
}

func hasSessions(srv *mcp.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}

// FirstSyncWait bounds how long ServeStdio waits for the upstreams' first tool listing,
// and how long after Open /readyz waits for it.
const FirstSyncWait = 20 * time.Second

// waitFirstSync returns once every upstream server has listed its tools in this process or
// is down, after max, or when ctx is done.
func (s *Server) waitFirstSync(ctx context.Context, max time.Duration) {
	if !s.eng.HasUpstreams() {
		return
	}
	deadline := time.Now().Add(max)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		waiting, err := s.upstreamsWaiting()
		if err != nil {
			s.log.Warn("upstreams: reading their state", "err", err)
			return
		}
		if len(waiting) == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("upstreams have not listed their tools yet: serving without them", "upstreams", waiting, "waited", max)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// upstreamsWaiting returns the upstream servers that have neither listed their tools in this
// process nor are down: their tools are not (all) in the registry yet.
func (s *Server) upstreamsWaiting() ([]string, error) {
	if !s.eng.HasUpstreams() {
		return nil, nil
	}
	ups, err := s.eng.Upstreams(registry.RuntimeContext{Scopes: []string{"admin"}})
	if err != nil {
		return nil, err
	}
	var waiting []string
	for _, u := range ups {
		if u.LastSync == nil && u.State != "down" {
			waiting = append(waiting, u.Name)
		}
	}
	return waiting, nil
}
