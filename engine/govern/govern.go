package govern

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// Run statuses (RunResult.Status).
const (
	// StatusSucceeded: the handler ran and its output matched output_schema.
	StatusSucceeded = "succeeded"
	// StatusConfirmationRequired: nothing ran; redeem the token to run.
	StatusConfirmationRequired = "confirmation_required"
	// StatusRefused: nothing ran (or, for network_unenforceable, the handler refused to start).
	StatusRefused = "refused"
	// StatusFailed: the handler ran and failed, timed out or produced invalid output.
	StatusFailed = "failed"
)

// Reason codes (RunResult.Reason), one per refusal or failure.
const (
	// ReasonNotFound: no definition with the id, or the caller may not discover it (another
	// tenant, acl.deny, no discover grant, offline or disabled): describe's answer.
	ReasonNotFound = "not_found"
	// ReasonNotRunnable: the id is a pack or a recipe; a recipe's steps are in RunResult.Steps.
	ReasonNotRunnable = "not_runnable"
	// ReasonUnavailable: the action's backend is down (health down, such as an upstream MCP
	// server that is not connected) or the caller's budget is below its min_budget; the
	// message says why.
	ReasonUnavailable = "unavailable"
	// ReasonIncompatible: the caller's context does not fit the action: supported_os,
	// required_executors, compatibility.regions or agent_runtime, or a feature flag
	// (policy.Unusable); Errors lists every reason.
	ReasonIncompatible = "incompatible"
	// ReasonVersionMismatch: the pinned version is not the active one.
	ReasonVersionMismatch = "version_mismatch"
	// ReasonInvalidArguments: the arguments do not match arguments_schema; Errors lists all.
	ReasonInvalidArguments = "invalid_arguments"
	// ReasonForbidden: the caller may discover the action but the describe gate refuses
	// (describe's answer, before the contract is looked at) or the execute gate does.
	ReasonForbidden = "forbidden"
	// ReasonNetworkUnenforceable: side effect I with a network policy this machine cannot
	// enforce for the handler.
	ReasonNetworkUnenforceable = "network_unenforceable"
	// ReasonConfirmationRequired: the action needs confirmation and no token was given.
	ReasonConfirmationRequired = "confirmation_required"
	// ReasonInvalidConfirmation: the token is malformed, forged, expired, replayed or bound
	// to something else (caller, action, version, schema digest, arguments).
	ReasonInvalidConfirmation = "invalid_confirmation"
	// ReasonTimedOut: the handler ran past the action's timeout and was killed.
	ReasonTimedOut = "timed_out"
	// ReasonHandlerFailed: the handler failed (exit status, HTTP status, error) or the
	// definition cannot run.
	ReasonHandlerFailed = "handler_failed"
	// ReasonInvalidOutput: the output does not match output_schema; Errors lists all.
	ReasonInvalidOutput = "invalid_output"
)

// Audit decisions of run records (store.AuditRecord.Decision).
const (
	DecisionAllowed              = "allowed"
	DecisionDenied               = "denied"
	DecisionConfirmationRequired = "confirmation_required"
	DecisionSucceeded            = "succeeded"
	DecisionFailed               = "failed"
	DecisionTimedOut             = "timed_out"
)

// Defaults of Options.
const (
	// DefaultTokenTTL is how long a confirmation token stays valid.
	DefaultTokenTTL = 10 * time.Minute
	// DefaultTimeout applies to actions without a timeout.
	DefaultTimeout = 30 * time.Second
	// TokenKeySecret is the SecretStore name of the generated token key.
	TokenKeySecret = "confirmation_token_key"
	// MinTokenKeyBytes is the shortest Options.TokenKey accepted.
	MinTokenKeyBytes = 16
)

const (
	maxStderr      = 4 << 10 // RunResult.Stderr keeps the tail
	maxAuditErrors = 20
)

// Options configure a Governor. Definitions, Audit and Tokens are required; so is Secrets
// unless TokenKey is set. *store.Store implements Audit, Tokens, Secrets and History.
type Options struct {
	// Definitions resolves ids (see FromSnapshot and WithInheritance).
	Definitions Definitions
	// Audit receives every run record.
	Audit AuditLog
	// Tokens spends confirmation tokens together with the run's first audit record.
	Tokens TokenSpender
	// Secrets keeps the generated token key when TokenKey is empty.
	Secrets SecretStore
	// History, when set, records each succeeded run.
	History UseRecorder
	// Handler runs actions (default handlers.NewDefault(GoFuncs)).
	Handler handlers.Handler
	// GoFuncs are the go handler's functions when Handler is nil.
	GoFuncs map[string]handlers.GoFunc
	// Config is passed to handlers; a ScriptsFS is materialised by New and removed by Close.
	Config handlers.Config
	// TokenKey is the HMAC key of confirmation tokens (at least MinTokenKeyBytes); when
	// empty, a random 32-byte key is generated once and kept in Secrets as TokenKeySecret.
	TokenKey []byte
	// TokenTTL is a token's lifetime (default DefaultTokenTTL).
	TokenTTL time.Duration
	// DefaultTimeout applies to actions without a timeout (default DefaultTimeout).
	DefaultTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

// Governor runs actions through the governed pipeline. It is safe for concurrent use.
type Governor struct {
	opts    Options
	handler handlers.Handler
	signer  *signer
	schemas schemaCache
	cleanup func() error
	log     *slog.Logger
}

// New checks opts, loads (or generates and keeps) the token key and prepares the handler
// configuration. Errors wrap ErrConfig or ErrBackend.
func New(opts Options) (*Governor, error) {
	switch {
	case opts.Definitions == nil:
		return nil, fmt.Errorf("%w: Definitions is required", ErrConfig)
	case opts.Audit == nil:
		return nil, fmt.Errorf("%w: Audit is required", ErrConfig)
	case opts.Tokens == nil:
		return nil, fmt.Errorf("%w: Tokens is required", ErrConfig)
	case len(opts.TokenKey) == 0 && opts.Secrets == nil:
		return nil, fmt.Errorf("%w: TokenKey or Secrets is required", ErrConfig)
	case len(opts.TokenKey) > 0 && len(opts.TokenKey) < MinTokenKeyBytes:
		return nil, fmt.Errorf("%w: TokenKey shorter than %d bytes", ErrConfig, MinTokenKeyBytes)
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Governor{opts: opts, handler: opts.Handler, log: opts.Logger}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.opts.Config.Logger == nil {
		g.opts.Config.Logger = g.log
	}
	key := opts.TokenKey
	if len(key) == 0 {
		var err error
		key, err = opts.Secrets.Secret(TokenKeySecret, func() ([]byte, error) {
			k := make([]byte, 32)
			_, err := rand.Read(k)
			return k, err
		})
		if err != nil {
			return nil, fmt.Errorf("%w: token key: %w", ErrBackend, err)
		}
		if len(key) < MinTokenKeyBytes {
			return nil, fmt.Errorf("%w: stored token key shorter than %d bytes", ErrBackend, MinTokenKeyBytes)
		}
	}
	g.signer = newSigner(key)
	if g.handler == nil {
		g.handler = handlers.NewDefault(opts.GoFuncs)
	}
	cleanup, err := g.opts.Config.Prepare()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	g.cleanup = cleanup
	return g, nil
}

// Close removes the materialised scripts directory, if any.
func (g *Governor) Close() error { return g.cleanup() }

// RunResult is the answer of Run. The confirmation_required answer carries status, summary,
// affected_resources, confirmation_token and expires_at.
type RunResult struct {
	// Status is succeeded, confirmation_required, refused or failed.
	Status string `json:"status"`
	// Reason is a Reason* code; empty when succeeded.
	Reason string `json:"reason,omitempty"`
	// Message says in one sentence why.
	Message string `json:"message,omitempty"`
	// Errors lists every schema error as "<json pointer>: <message>", or the token problems.
	Errors []string `json:"errors,omitempty"`
	// ID and Version name the action (Version is the active one, when known).
	ID      string `json:"id"`
	Version int    `json:"version,omitempty"`
	// SchemaDigest is the digest of the definition the run was checked against.
	SchemaDigest string `json:"schema_digest,omitempty"`
	// Output is the handler's output (also kept for handler_failed and invalid_output).
	Output json.RawMessage `json:"output,omitempty"`
	// Summary, AffectedResources, ConfirmationToken and ExpiresAt answer confirmation_required.
	Summary           string    `json:"summary,omitempty"`
	AffectedResources []string  `json:"affected_resources,omitempty"`
	ConfirmationToken string    `json:"confirmation_token,omitempty"`
	ExpiresAt         time.Time `json:"expires_at,omitzero"`
	// Steps are a recipe's steps (not_runnable), when the caller may describe it.
	Steps []registry.RecipeStep `json:"steps,omitempty"`
	// ExitStatus is an exec handler's exit status; HTTPStatus an http handler's status.
	ExitStatus int `json:"exit_status,omitempty"`
	HTTPStatus int `json:"http_status,omitempty"`
	// Stderr is the tail of an exec handler's stderr.
	Stderr string `json:"stderr,omitempty"`
	// Truncated reports that the handler's output was cut at its cap.
	Truncated bool `json:"truncated,omitempty"`
	// Network is how the network policy was enforced: isolated, unenforced, allowlist or any.
	Network string `json:"network,omitempty"`
	// DurationUS is the handler's run time in microseconds.
	DurationUS int64 `json:"duration_us,omitempty"`
	// RunID identifies this attempt in the audit records' detail.
	RunID string `json:"run_id"`
	// AuditSeq is the sequence number of the attempt's last audit record.
	AuditSeq uint64 `json:"audit_seq,omitempty"`
}

// auditDetail is the JSON kept in a run record's Detail.
type auditDetail struct {
	RunID   string   `json:"run"`
	Reason  string   `json:"reason,omitempty"`
	Message string   `json:"message,omitempty"`
	Tenant  string   `json:"tenant,omitempty"`
	Session string   `json:"session,omitempty"`
	Network string   `json:"network,omitempty"`
	Token   string   `json:"token,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// attempt is the state of one Run call.
type attempt struct {
	g       *Governor
	rc      *registry.RuntimeContext
	res     *RunResult
	c       *registry.Capability
	args    map[string]any
	canon   []byte // canonical arguments
	argsErr error
	argsDig string
	tokenID string
}

// Run runs req for the caller rc through the pipeline described in the package doc. A
// refusal or failure is a RunResult with Status refused or failed and a Reason code; the
// error is non-nil only when the audit log or another backend failed (wrapping ErrAudit or
// ErrBackend), in which case the result, when non-nil, says how far the run got.
func (g *Governor) Run(ctx context.Context, rc *registry.RuntimeContext, req RunRequest) (*RunResult, error) {
	if rc == nil {
		rc = &registry.RuntimeContext{}
	}
	a := &attempt{g: g, rc: rc, res: &RunResult{ID: req.ID, RunID: newRunID()}}
	id, version := req.ID, req.Version
	if strings.Contains(id, "@") {
		var pin int
		var err error
		if id, pin, err = registry.SplitVersion(id); err != nil {
			id, pin = req.ID, 0
		}
		if version == 0 {
			version = pin
		}
		a.res.ID = id
	}
	a.args, a.canon, a.argsErr = decodeArguments(req.Arguments)
	if a.argsErr == nil {
		a.argsDig = digestBytes(a.canon)
	}

	// 1. resolve the id and apply the discover and describe gates: what the caller may not
	// see gets describe's answer (policy.Disclose), before anything of the contract (version,
	// digest, schema errors) is looked at.
	if !registry.ValidID(id) {
		return a.refuse(ctx, ReasonNotFound, "no capability "+quoteList([]string{id}))
	}
	c, err := g.opts.Definitions.Get(id, 0)
	if errors.Is(err, registry.ErrNotFound) {
		c, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: definitions: %w", ErrBackend, err)
	}
	switch code, msg := policy.Disclose(id, c, rc); code {
	case policy.DiscloseNotFound:
		return a.refuse(ctx, ReasonNotFound, msg)
	case policy.DiscloseForbidden:
		return a.refuse(ctx, ReasonForbidden, msg)
	}
	a.c = c
	a.res.Version = c.Version
	a.res.SchemaDigest = registry.Digest(c)

	// 2. only actions run; a recipe's steps are returned as describe shows them (a step
	// naming an action the caller may not discover is hidden).
	if c.ResourceType != registry.TypeAction {
		msg := fmt.Sprintf("%s is a %s, not an action: describe it and run one of its actions", id, c.ResourceType)
		if c.ResourceType == registry.TypeRecipe {
			msg = fmt.Sprintf("%s is a recipe, not an action: follow its steps (a step naming an action can be run by that id)", id)
			a.res.Steps = policy.RedactSteps(c.Steps, func(id string) *registry.Capability {
				s, err := g.opts.Definitions.Get(id, 0)
				if err != nil { // absent, or a backend failure: hidden either way
					return nil
				}
				return s
			}, rc)
		}
		return a.refuse(ctx, ReasonNotRunnable, msg)
	}

	// 3. what the caller's context cannot run (policy.Unusable): health down (such as an
	// upstream MCP server that is not connected) or budget is unavailable; an os, executor,
	// region, agent runtime or feature flag the action does not support is incompatible.
	// The handler is never reached.
	if class, reasons := policy.Unusable(c, rc); class != "" {
		code := ReasonUnavailable
		if class == registry.Incompatible {
			code = ReasonIncompatible
		}
		return a.refuse(ctx, code, strings.Join(reasons, "; "), reasons...)
	}

	// 3b. version pin.
	if version != 0 && version != c.Version {
		return a.refuse(ctx, ReasonVersionMismatch, fmt.Sprintf("version %d was pinned but the active version is %d: describe it again", version, c.Version))
	}

	// 4. arguments.
	sc := g.schemas.get(fmt.Sprintf("%s@%d#%s", c.ID, c.Version, a.res.SchemaDigest), c.ArgumentsSchema, c.OutputSchema)
	if sc.err != nil {
		return a.fail(ctx, ReasonHandlerFailed, DecisionDenied, "the definition's schemas do not compile: "+sc.err.Error(), nil)
	}
	if a.argsErr != nil {
		return a.refuse(ctx, ReasonInvalidArguments, a.argsErr.Error(), "(root): "+a.argsErr.Error())
	}
	if errs := validate(sc.args, a.canon); len(errs) > 0 {
		return a.refuse(ctx, ReasonInvalidArguments, fmt.Sprintf("%d argument error(s)", len(errs)), errs...)
	}

	// 5. the execute gate.
	if d := policy.Check(c, rc, registry.GateExecute); !d.Allowed {
		return a.refuse(ctx, ReasonForbidden, d.Reason)
	}

	// 6. risk: never ask for (or spend) a confirmation of a run that cannot start.
	if p, ok := g.handler.(handlers.Preflighter); ok {
		if err := p.Preflight(c); errors.Is(err, handlers.ErrNetworkUnenforceable) {
			return a.refuse(ctx, ReasonNetworkUnenforceable, err.Error())
		}
	}

	// 7. confirmation.
	var claims *Claims
	if policy.NeedsConfirmation(c) {
		if req.ConfirmationToken == "" {
			return a.confirm(ctx)
		}
		cl, problems := a.verify(req.ConfirmationToken)
		if len(problems) > 0 {
			return a.refuse(ctx, ReasonInvalidConfirmation, "the confirmation token is not valid for this run: "+strings.Join(problems, "; "), problems...)
		}
		claims = cl
		a.tokenID = cl.ID
	}

	// 8. execute.
	return a.execute(ctx, sc, claims)
}

// execute writes the start record (spending the token in the same transaction), runs the
// handler under the timeout, validates the output and writes the outcome record.
func (a *attempt) execute(ctx context.Context, sc *compiled, claims *Claims) (*RunResult, error) {
	g, c := a.g, a.c
	start := a.record(DecisionAllowed, auditDetail{})
	wctx := context.WithoutCancel(ctx)
	var (
		rec store.AuditRecord
		err error
	)
	if claims != nil {
		rec, err = g.opts.Tokens.SpendToken(wctx, claims.ID, claims.expiresAt(), start)
		if errors.Is(err, store.ErrTokenSpent) {
			return a.refuse(ctx, ReasonInvalidConfirmation, "the confirmation token was already used (replayed)", "replayed: token already spent")
		}
	} else {
		rec, err = g.opts.Audit.AppendAudit(wctx, start)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: start record: %w", ErrAudit, err)
	}
	a.res.AuditSeq = rec.Seq

	timeout := time.Duration(c.Timeout)
	if timeout <= 0 {
		timeout = g.opts.DefaultTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	t0 := time.Now()
	hres, herr := g.handler.Run(hctx, handlers.Request{Cap: c, Args: a.args, ArgsJSON: a.canon, Config: g.opts.Config})
	cancel()
	res := a.res
	res.DurationUS = time.Since(t0).Microseconds()
	res.Output = hres.Output
	res.ExitStatus = hres.ExitStatus
	res.HTTPStatus = hres.HTTPStatus
	res.Network = hres.Network
	res.Truncated = hres.Truncated
	res.Stderr = tail(hres.Stderr, maxStderr)

	switch {
	case errors.Is(herr, handlers.ErrTimeout):
		return a.fail(ctx, ReasonTimedOut, DecisionTimedOut, fmt.Sprintf("timed out after %s and was killed", timeout), nil)
	case errors.Is(herr, handlers.ErrNetworkUnenforceable):
		return a.finish(ctx, StatusRefused, ReasonNetworkUnenforceable, DecisionDenied, herr.Error(), nil)
	case herr != nil && ctx.Err() != nil:
		return a.fail(ctx, ReasonHandlerFailed, DecisionFailed, "canceled by the caller: "+herr.Error(), nil)
	case herr != nil:
		return a.fail(ctx, ReasonHandlerFailed, DecisionFailed, herr.Error(), nil)
	}
	out := []byte(hres.Output)
	if len(out) == 0 {
		out = []byte("null")
	}
	if errs := validate(sc.out, out); len(errs) > 0 {
		return a.fail(ctx, ReasonInvalidOutput, DecisionFailed, fmt.Sprintf("%d output error(s)", len(errs)), errs)
	}
	result, err := a.finish(ctx, StatusSucceeded, "", DecisionSucceeded, "", nil)
	if g.opts.History != nil {
		if herr := g.opts.History.RecordUse(context.WithoutCancel(ctx), a.rc.User, a.rc.Project, c.ID, g.opts.Now()); herr != nil {
			g.log.Warn("govern: record use", "id", c.ID, "err", herr)
		}
	}
	return result, err
}

// confirm issues a token and answers confirmation_required.
func (a *attempt) confirm(ctx context.Context) (*RunResult, error) {
	g, c, rc := a.g, a.c, a.rc
	exp := g.opts.Now().Add(g.opts.TokenTTL)
	tok, err := g.signer.issue(Claims{Tenant: rc.Tenant, User: rc.User, Session: rc.Session, Action: c.ID,
		Version: c.Version, SchemaDigest: a.res.SchemaDigest, ArgsDigest: a.argsDig, Expires: exp.Unix()})
	if err != nil {
		return nil, fmt.Errorf("%w: issue token: %w", ErrBackend, err)
	}
	a.tokenID = tok.Claims.ID
	a.res.Summary = summarize(c, a.args)
	a.res.AffectedResources = affectedResources(c, a.args)
	a.res.ConfirmationToken = tok.String()
	a.res.ExpiresAt = tok.Claims.expiresAt()
	return a.finish(ctx, StatusConfirmationRequired, ReasonConfirmationRequired, DecisionConfirmationRequired,
		"this action needs confirmation: show the summary to the user and run again with the token", nil)
}

// verify checks a token against this run; problems is empty when it is valid.
func (a *attempt) verify(s string) (*Claims, []string) {
	tok, err := ParseToken(s)
	if err != nil {
		return nil, []string{"malformed: " + strings.TrimPrefix(err.Error(), ErrBadToken.Error()+": ")}
	}
	if !a.g.signer.verify(tok) {
		return nil, []string{"forged: the signature or key id does not match"}
	}
	cl := &tok.Claims
	var problems []string
	if now := a.g.opts.Now(); !now.Before(cl.expiresAt()) {
		problems = append(problems, "expired at "+cl.expiresAt().Format(time.RFC3339))
	}
	rc, c := a.rc, a.c
	bound := []struct {
		name      string
		got, want string
	}{
		{"tenant", cl.Tenant, rc.Tenant},
		{"user", cl.User, rc.User},
		{"session", cl.Session, rc.Session},
		{"action", cl.Action, c.ID},
		{"version", fmt.Sprint(cl.Version), fmt.Sprint(c.Version)},
		{"schema digest (the definition changed)", cl.SchemaDigest, a.res.SchemaDigest},
		{"arguments", cl.ArgsDigest, a.argsDig},
	}
	for _, b := range bound {
		if b.got != b.want {
			problems = append(problems, "bound to another "+b.name)
		}
	}
	return cl, problems
}

// refuse answers a refusal before anything ran, with one "denied" audit record.
func (a *attempt) refuse(ctx context.Context, reason, msg string, errs ...string) (*RunResult, error) {
	return a.finish(ctx, StatusRefused, reason, DecisionDenied, msg, errs)
}

// fail answers a failure with one audit record of decision.
func (a *attempt) fail(ctx context.Context, reason, decision, msg string, errs []string) (*RunResult, error) {
	return a.finish(ctx, StatusFailed, reason, decision, msg, errs)
}

// finish fills the result and appends its audit record.
func (a *attempt) finish(ctx context.Context, status, reason, decision, msg string, errs []string) (*RunResult, error) {
	res := a.res
	res.Status, res.Reason, res.Message, res.Errors = status, reason, msg, errs
	d := auditDetail{Reason: reason, Message: msg, Network: res.Network, Errors: errs}
	if len(d.Errors) > maxAuditErrors {
		d.Errors = append(d.Errors[:maxAuditErrors:maxAuditErrors], fmt.Sprintf("… %d more", len(errs)-maxAuditErrors))
	}
	rec := a.record(decision, d)
	rec.DurationUS = res.DurationUS
	rec.ExitStatus = res.ExitStatus
	out, err := a.g.opts.Audit.AppendAudit(context.WithoutCancel(ctx), rec)
	if err != nil {
		return res, fmt.Errorf("%w: %s record: %w", ErrAudit, decision, err)
	}
	res.AuditSeq = out.Seq
	a.g.log.Debug("govern: run", "id", res.ID, "run", res.RunID, "status", status, "reason", reason, "seq", out.Seq)
	return res, nil
}

// record builds a run audit record.
func (a *attempt) record(decision string, d auditDetail) store.AuditRecord {
	d.RunID, d.Tenant, d.Session, d.Token = a.res.RunID, a.rc.Tenant, a.rc.Session, a.tokenID
	detail, _ := json.Marshal(d) // plain strings: cannot fail
	rec := store.AuditRecord{
		Kind: store.KindRun, Actor: actor(a.rc), Action: a.res.ID, Version: a.res.Version,
		Decision: decision, Digest: a.res.SchemaDigest, ArgsDigest: a.argsDig, Detail: string(detail),
	}
	if a.c != nil && a.c.Handler != nil && a.c.Handler.RecordArguments && a.argsErr == nil {
		rec.Args = json.RawMessage(a.canon)
	}
	return rec
}

func actor(rc *registry.RuntimeContext) string {
	switch {
	case rc.Tenant != "" && rc.User != "":
		return rc.Tenant + "/" + rc.User
	case rc.User != "":
		return rc.User
	case rc.Tenant != "":
		return rc.Tenant + "/"
	}
	return "anonymous"
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return b64.EncodeToString(b[:])
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
