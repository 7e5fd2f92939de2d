package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/engine/upstream"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// UpstreamConfig is one upstream MCP server of Options.Upstreams; see upstream.Config.
type UpstreamConfig = upstream.Config

// ErrUpstreamConfig is wrapped by ValidateUpstreams' errors.
var ErrUpstreamConfig = upstream.ErrConfig

// ValidateUpstreams reports every problem of upstream configurations in one error naming
// upstreams[i].
func ValidateUpstreams(cfgs []UpstreamConfig) error { return upstream.Validate(cfgs) }

// Audit decisions of the gateway's registry records.
const (
	DecisionQuarantined   = "quarantined"
	DecisionApproved      = "approved"
	DecisionRejected      = "rejected"
	DecisionTrustedChange = "trusted_change"
)

// Quarantine reasons.
const (
	QuarantineChanged = "changed"
	QuarantineNew     = "new"
)

// ErrNotQuarantined is returned (wrapped) by ApproveQuarantined and RejectQuarantined for an
// id that waits in no quarantine.
var ErrNotQuarantined = fmt.Errorf("%w: not in quarantine", ErrNotFound)

// QuarantineItem is one upstream tool held back until an administrator approves it.
type QuarantineItem struct {
	ResourceID string    `json:"resource_id"`
	Upstream   string    `json:"upstream"`
	Tool       string    `json:"tool"`
	Reason     string    `json:"reason"`
	DetectedAt time.Time `json:"detected_at"`
	// Old is the approved view (nil for a new tool); New is the upstream's current one.
	Old   *ToolView `json:"old"`
	New   ToolView  `json:"new"`
	Flags []string  `json:"flags"`
}

// ToolView is the text and schema of an upstream tool shown for review.
type ToolView = upstream.View

// UpstreamStatus is one upstream server as GET /v1/upstreams shows it.
type UpstreamStatus struct {
	Name        string     `json:"name"`
	Transport   string     `json:"transport"`
	State       string     `json:"state"`
	LastSync    *time.Time `json:"last_sync"`
	Tools       int        `json:"tools"`
	Quarantined int        `json:"quarantined"`
	Error       string     `json:"error,omitempty"`
	Pack        string     `json:"pack"`
}

// upstreamState is what the gateway keeps of one server (store blob upstream/<name>).
type upstreamState struct {
	// Listed is the last tool list, as the server sent it.
	Listed []json.RawMessage `json:"listed"`
	// Approved maps a tool name to the fingerprint of its approved view.
	Approved map[string]string `json:"approved"`
	// Views maps a tool name to its approved view (for the quarantine's "old").
	Views map[string]upstream.View `json:"views"`
	// Quarantine maps a tool name to what waits for review.
	Quarantine map[string]*QuarantineItem `json:"quarantine"`
	// Rejected maps a tool name to the fingerprint an administrator rejected.
	Rejected map[string]string `json:"rejected"`
	// Versions maps an action id to the last version the gateway stored.
	Versions map[string]int `json:"versions"`
}

func newUpstreamState() *upstreamState {
	return &upstreamState{Approved: map[string]string{}, Views: map[string]upstream.View{},
		Quarantine: map[string]*QuarantineItem{}, Rejected: map[string]string{}, Versions: map[string]int{}}
}

// gateway connects the upstream manager to the engine: each listing becomes definitions
// through Import and Delete, with the rug-pull defence in between.
type gateway struct {
	e   *Engine
	mgr *upstream.Manager
	cfg map[string]upstream.Config
	// mu serialises syncs, approvals and rejections (each reads, changes and writes one
	// server's state and the registry).
	mu sync.Mutex
}

func stateKey(server string) string { return "upstream/" + server }

func (g *gateway) load(server string) (*upstreamState, bool, error) {
	b, err := g.e.store.GetBlob(stateKey(server))
	if errors.Is(err, store.ErrNotFound) {
		return newUpstreamState(), false, nil
	}
	if err != nil {
		return nil, false, err
	}
	st := newUpstreamState()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, false, fmt.Errorf("engine: upstream %s state: %w", server, err)
	}
	for _, m := range []*map[string]string{&st.Approved, &st.Rejected} {
		if *m == nil {
			*m = map[string]string{}
		}
	}
	if st.Views == nil {
		st.Views = map[string]upstream.View{}
	}
	if st.Quarantine == nil {
		st.Quarantine = map[string]*QuarantineItem{}
	}
	if st.Versions == nil {
		st.Versions = map[string]int{}
	}
	return st, true, nil
}

func (g *gateway) save(server string, st *upstreamState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("engine: upstream %s state: %w", server, err)
	}
	return g.e.store.PutBlob(stateKey(server), b)
}

// Synced implements upstream.Sink: the rug-pull defence, then the registry.
func (g *gateway) Synced(ctx context.Context, server string, tools []*mcp.Tool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	cfg := g.cfg[server]
	st, existed, err := g.load(server)
	if err != nil {
		return err
	}
	// resource ids of every listed tool (quarantined ones included, for the review list)
	_, all, err := upstream.Capabilities(cfg, tools)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	st.Listed = st.Listed[:0]
	listed := map[string]bool{}
	var audits []store.AuditRecord
	for _, t := range tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("engine: upstream %s tool %s: %w", server, t.Name, err)
		}
		st.Listed = append(st.Listed, raw)
		listed[t.Name] = true
		v := upstream.ViewOf(t)
		fp := v.Fingerprint()
		id := all[t.Name].ID
		old, known := st.Approved[t.Name]
		switch {
		case known && old == fp:
			delete(st.Quarantine, t.Name)
		case !existed || cfg.TrustChanges:
			if existed {
				audits = append(audits, gatewayRecord(server, id, DecisionTrustedChange, "trust_changes: "+changeWord(known)+" tool accepted"))
			}
			st.Approved[t.Name], st.Views[t.Name] = fp, v
			delete(st.Quarantine, t.Name)
		case st.Rejected[t.Name] == fp:
			delete(st.Quarantine, t.Name) // stays rejected until it changes again
		default:
			if q := st.Quarantine[t.Name]; q != nil && q.New.Fingerprint() == fp {
				q.ResourceID = id
				continue
			}
			item := &QuarantineItem{ResourceID: id, Upstream: server, Tool: t.Name, Reason: QuarantineNew, DetectedAt: now,
				New: v, Flags: registry.PoisoningFlags(t.Title + "\n" + t.Description + "\n" + string(v.InputSchema))}
			if known {
				item.Reason = QuarantineChanged
				ov := st.Views[t.Name]
				item.Old = &ov
			}
			if item.Flags == nil {
				item.Flags = []string{}
			}
			st.Quarantine[t.Name] = item
			audits = append(audits, gatewayRecord(server, id, DecisionQuarantined, changeWord(known)+" tool held for review"+flagNote(item.Flags)))
		}
	}
	for n := range st.Approved {
		if !listed[n] {
			delete(st.Approved, n)
			delete(st.Views, n)
		}
	}
	for n := range st.Quarantine {
		if !listed[n] {
			delete(st.Quarantine, n)
		}
	}
	// the registry first: a tool is listed in quarantine only once it is out of search
	if err := g.apply(ctx, cfg, st); err != nil {
		return err
	}
	for _, r := range audits {
		if _, err := g.e.store.AppendAudit(context.WithoutCancel(ctx), r); err != nil {
			return err
		}
	}
	return nil
}

func changeWord(known bool) string {
	if known {
		return "changed"
	}
	return "new"
}

func flagNote(flags []string) string {
	if len(flags) == 0 {
		return ""
	}
	return " (" + strings.Join(flags, "; ") + ")"
}

func gatewayRecord(server, id, decision, detail string) store.AuditRecord {
	return store.AuditRecord{Kind: store.KindRegistry, Actor: "upstream:" + server, Action: id, Decision: decision, Detail: detail}
}

// apply makes the registry hold exactly the approved tools of st under the server's pack:
// changed definitions get a new version, tools no longer approved are deleted.
func (g *gateway) apply(ctx context.Context, cfg upstream.Config, st *upstreamState) error {
	var tools []*mcp.Tool
	for _, raw := range st.Listed {
		t := &mcp.Tool{}
		if err := json.Unmarshal(raw, t); err != nil {
			return fmt.Errorf("engine: upstream %s: stored tool: %w", cfg.Name, err)
		}
		if fp, ok := st.Approved[t.Name]; ok && fp == upstream.ViewOf(t).Fingerprint() {
			tools = append(tools, t)
		}
	}
	packs, actions, err := upstream.Capabilities(cfg, tools)
	if err != nil {
		return err
	}
	pack := cfg.PackID()
	stored, err := g.e.store.List(pack)
	if err != nil {
		return err
	}
	have := map[string]*registry.Capability{}
	for _, c := range stored {
		have[c.ID] = c
	}
	for _, c := range packs {
		if c.ID == pack || strings.HasPrefix(pack, c.ID+".") {
			if old, err := g.e.store.Get(c.ID, 0); err == nil {
				have[c.ID] = old
			}
		}
	}
	var put []*registry.Capability
	want := map[string]bool{}
	for _, c := range append(packs, slices.Collect(maps.Values(actions))...) {
		want[c.ID] = true
		old := have[c.ID]
		v := max(st.Versions[c.ID], 0)
		if old != nil {
			v = max(v, old.Version)
			if sameDefinition(old, c) {
				st.Versions[c.ID] = old.Version
				continue
			}
		}
		c.Version = v + 1
		c.Provenance.SchemaDigest = ""
		registry.Seal(c)
		st.Versions[c.ID] = c.Version
		put = append(put, c)
	}
	slices.SortFunc(put, func(a, b *registry.Capability) int { return strings.Compare(a.ID, b.ID) })
	var gone []string
	for id := range have {
		if !want[id] && (id == pack || strings.HasPrefix(id, pack+".")) {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	if len(put) > 0 || len(gone) > 0 {
		// one change: the new tools and the vanished ones are stored together or not at all
		if err := g.e.change(ctx, put, gone, "upstream:"+cfg.Name); err != nil {
			return err
		}
	}
	return g.save(cfg.Name, st)
}

// sameDefinition reports whether c equals old but for the version.
func sameDefinition(old, c *registry.Capability) bool {
	x := c.Clone()
	x.Version = old.Version
	x.Provenance.SchemaDigest = ""
	registry.Seal(x)
	a, err1 := json.Marshal(old)
	b, err2 := json.Marshal(x)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// Health implements upstream.Sink: a server that is down makes its pack and tools health
// down (seed 003's health status), so search reports them unavailable with the reason.
func (g *gateway) Health(ctx context.Context, server string, st upstream.State, msg string) {
	cfg := g.cfg[server]
	h := registry.Health{Status: "up", CheckedAt: time.Now().UTC().Format(time.RFC3339)}
	if st != upstream.StateConnected {
		h.Status = "down"
		h.Message = "upstream MCP server " + server + " is " + string(st)
		if msg != "" {
			h.Message += ": " + msg
		}
	}
	if err := g.e.setHealth(ctx, cfg.PackID(), h); err != nil {
		g.e.log.Warn("engine: upstream health", "upstream", server, "err", err)
	}
}

// find returns the server and tool of a quarantined resource id.
func (g *gateway) find(id string) (string, *upstreamState, string, error) {
	for _, c := range g.mgr.Configs() {
		st, _, err := g.load(c.Name)
		if err != nil {
			return "", nil, "", err
		}
		for name, q := range st.Quarantine {
			if q.ResourceID == id {
				return c.Name, st, name, nil
			}
		}
	}
	return "", nil, "", fmt.Errorf("%w: %s", ErrNotQuarantined, id)
}

func (g *gateway) decide(ctx context.Context, id, actor string, approve bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	server, st, name, err := g.find(id)
	if err != nil {
		return err
	}
	q := st.Quarantine[name]
	delete(st.Quarantine, name)
	v := q.New
	decision := DecisionRejected
	if approve {
		decision = DecisionApproved
		st.Approved[name], st.Views[name] = v.Fingerprint(), v
		delete(st.Rejected, name)
	} else {
		st.Rejected[name] = v.Fingerprint()
	}
	if err := g.apply(ctx, g.cfg[server], st); err != nil {
		return err
	}
	rec := gatewayRecord(server, id, decision, q.Reason+" tool "+decision+" by "+actor)
	rec.Actor = actor
	_, err = g.e.store.AppendAudit(context.WithoutCancel(ctx), rec)
	return err
}

// HasUpstreams reports whether the engine runs the gateway (Options.Upstreams).
func (e *Engine) HasUpstreams() bool { return e.gw != nil }

// Quarantined lists the upstream tools waiting for review, oldest first. It is an
// administrator's view.
func (e *Engine) Quarantined() ([]QuarantineItem, error) {
	out := []QuarantineItem{}
	if e.gw == nil {
		return out, nil
	}
	for _, c := range e.gw.mgr.Configs() {
		st, _, err := e.gw.load(c.Name)
		if err != nil {
			return nil, err
		}
		for _, q := range st.Quarantine {
			out = append(out, *q)
		}
	}
	slices.SortFunc(out, func(a, b QuarantineItem) int {
		if c := a.DetectedAt.Compare(b.DetectedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ResourceID, b.ResourceID)
	})
	return out, nil
}

// ApproveQuarantined approves the quarantined upstream tool id: it becomes a new version
// of its action (or a new action), audited. An id not in quarantine is ErrNotQuarantined.
func (e *Engine) ApproveQuarantined(ctx context.Context, id, actor string) error {
	if e.gw == nil {
		return fmt.Errorf("%w: %s (no upstreams configured)", ErrNotQuarantined, id)
	}
	return e.gw.decide(ctx, id, actor, true)
}

// RejectQuarantined rejects the quarantined upstream tool id: it stays out of the registry
// until the server changes it again, audited.
func (e *Engine) RejectQuarantined(ctx context.Context, id, actor string) error {
	if e.gw == nil {
		return fmt.Errorf("%w: %s (no upstreams configured)", ErrNotQuarantined, id)
	}
	return e.gw.decide(ctx, id, actor, false)
}

// Upstreams returns the upstream servers rc may see: an administrator sees every one; any
// other caller only those whose pack it may discover, with tools counting the actions it
// may discover and no quarantine count.
func (e *Engine) Upstreams(rc registry.RuntimeContext) ([]UpstreamStatus, error) {
	out := []UpstreamStatus{}
	if e.gw == nil {
		return out, nil
	}
	admin := slices.Contains(rc.Scopes, "admin")
	snap := e.Snapshot()
	for _, s := range e.gw.mgr.Statuses() {
		cfg := e.gw.cfg[s.Name]
		pack := cfg.PackID()
		p, ok := snap.Get(pack)
		if !admin && (!ok || !policy.Check(p, &rc, registry.GateDiscover).Allowed) {
			continue
		}
		st, _, err := e.gw.load(s.Name)
		if err != nil {
			return nil, err
		}
		u := UpstreamStatus{Name: s.Name, Transport: s.Transport, State: string(s.State), Error: s.Error, Pack: pack}
		if !s.LastSync.IsZero() {
			t := s.LastSync
			u.LastSync = &t
		}
		for _, c := range snap.Caps {
			if c.ResourceType == registry.TypeAction && strings.HasPrefix(c.ID, pack+".") &&
				(admin || policy.Check(c, &rc, registry.GateDiscover).Allowed) {
				u.Tools++
			}
		}
		if admin {
			u.Quarantined = len(st.Quarantine)
		}
		out = append(out, u)
	}
	return out, nil
}

func (e *Engine) newGateway() error {
	g := &gateway{e: e, cfg: map[string]upstream.Config{}}
	mgr, err := upstream.New(e.opts.Upstreams, g, e.log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	for _, c := range mgr.Configs() {
		g.cfg[c.Name] = c
		acl := c.EffectiveACL()
		e.log.Info("upstream MCP server configured", "upstream", c.Name, "transport", c.Transport(), "pack", c.PackID(),
			"discover", acl.Discover, "describe", acl.Describe, "execute", acl.Execute, "acl_default", c.ACL == nil,
			"trust_changes", c.TrustChanges, "network_policy", string(c.NetworkPolicy))
	}
	g.mgr = mgr
	e.gw = g
	// every server is connecting until it has answered: its tools are unavailable
	e.health = map[string]registry.Health{}
	for _, c := range mgr.Configs() {
		e.health[c.PackID()] = registry.Health{Status: "down", Message: "upstream MCP server " + c.Name + " is connecting"}
	}
	e.healthVer.Add(1)
	return nil
}

// setHealth lays h over the pack and everything under it, and rebuilds the generation.
func (e *Engine) setHealth(ctx context.Context, pack string, h registry.Health) error {
	e.healthMu.Lock()
	if e.health == nil {
		e.health = map[string]registry.Health{}
	}
	old, ok := e.health[pack]
	if ok && old.Status == h.Status && old.Message == h.Message {
		e.healthMu.Unlock()
		return nil
	}
	e.health[pack] = h
	e.healthVer.Add(1)
	e.healthMu.Unlock()
	return e.Reload(ctx)
}

// overlayHealth returns caps with the upstream health laid over (copies of the changed
// definitions; the store's are never modified), and whether anything was overlaid.
func (e *Engine) overlayHealth(caps []*registry.Capability) ([]*registry.Capability, bool) {
	e.healthMu.Lock()
	defer e.healthMu.Unlock()
	if len(e.health) == 0 {
		return caps, false
	}
	out := caps
	copied := false
	for i, c := range caps {
		for pack, h := range e.health {
			if c.ID != pack && !strings.HasPrefix(c.ID, pack+".") {
				continue
			}
			if !copied {
				out = slices.Clone(caps)
				copied = true
			}
			x := c.Clone()
			x.Health = h
			out[i] = x
			break
		}
	}
	return out, true
}

// change stores put and deletes the ids of deleted as one change, all or nothing (see
// changeLocked), and swaps in the new generation.
func (e *Engine) change(ctx context.Context, put []*registry.Capability, deleted []string, actor string) error {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	return e.changeLocked(ctx, put, deleted, actor)
}
