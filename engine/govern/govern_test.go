package govern

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

func TestRunReasons(t *testing.T) {
	tests := []struct {
		name     string
		req      RunRequest
		rc       func(rc *registry.RuntimeContext)
		status   string
		reason   string
		errs     []string // each must appear in Errors
		msg      string   // substring of Message
		audit    []string // decisions appended by the attempt
		steps    int
		noSchema bool // the refusal comes before the definition is known
	}{
		{name: "succeeded", req: RunRequest{ID: "t.echo", Arguments: obj(`{"name":"x","count":2}`)},
			status: StatusSucceeded, audit: []string{DecisionAllowed, DecisionSucceeded}},
		{name: "not_found unknown id", req: RunRequest{ID: "t.nope"}, status: StatusRefused, reason: ReasonNotFound,
			audit: []string{DecisionDenied}, noSchema: true},
		{name: "not_found invalid id", req: RunRequest{ID: "T!"}, status: StatusRefused, reason: ReasonNotFound,
			audit: []string{DecisionDenied}, noSchema: true},
		{name: "not_found when not discoverable", req: RunRequest{ID: "t.hidden", Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonNotFound, audit: []string{DecisionDenied}, noSchema: true},
		{name: "not_found for another tenant", req: RunRequest{ID: "t.tenant", Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonNotFound, audit: []string{DecisionDenied}, noSchema: true},
		{name: "not_runnable recipe points to its steps", req: RunRequest{ID: "t.recipe"}, status: StatusRefused,
			reason: ReasonNotRunnable, msg: "recipe", steps: 2, audit: []string{DecisionDenied}},
		{name: "not_runnable pack", req: RunRequest{ID: "t"}, status: StatusRefused, reason: ReasonNotRunnable,
			msg: "pack", audit: []string{DecisionDenied}},
		{name: "offline is not_found, as describe answers", req: RunRequest{ID: "t.off", Arguments: obj(`{"name":"x"}`)}, status: StatusRefused,
			reason: ReasonNotFound, msg: `no capability "t.off"`, audit: []string{DecisionDenied}, noSchema: true},
		{name: "not_found when the pack is disabled", req: RunRequest{ID: "u.inside", Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonNotFound, msg: `no capability "u.inside"`, audit: []string{DecisionDenied}, noSchema: true},
		{name: "version_mismatch", req: RunRequest{ID: "t.echo", Version: 2, Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonVersionMismatch, msg: "active version is 1", audit: []string{DecisionDenied}},
		{name: "version_mismatch via id pin", req: RunRequest{ID: "t.echo@3", Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonVersionMismatch, audit: []string{DecisionDenied}},
		{name: "matching pin runs", req: RunRequest{ID: "t.echo", Version: 1, Arguments: obj(`{"name":"x"}`)},
			status: StatusSucceeded, audit: []string{DecisionAllowed, DecisionSucceeded}},
		{name: "invalid_arguments lists every error", req: RunRequest{ID: "t.echo", Arguments: obj(`{"count":"3","extra":true,"path":7}`)},
			status: StatusRefused, reason: ReasonInvalidArguments,
			errs:  []string{"/count: got string, want integer", "/name: required property missing", "/extra: property not allowed (additionalProperties)", "/path: got number, want string"},
			audit: []string{DecisionDenied}},
		{name: "invalid_arguments minimum", req: RunRequest{ID: "t.echo", Arguments: obj(`{"name":"x","count":-1}`)},
			status: StatusRefused, reason: ReasonInvalidArguments, errs: []string{"/count: "}, audit: []string{DecisionDenied}},
		{name: "invalid_arguments not an object", req: RunRequest{ID: "t.echo", Arguments: obj(`[1]`)},
			status: StatusRefused, reason: ReasonInvalidArguments, errs: []string{"(root): arguments must be a JSON object"}, audit: []string{DecisionDenied}},
		{name: "forbidden execute gate", req: RunRequest{ID: "t.noexec", Arguments: obj(`{"name":"x"}`)},
			status: StatusRefused, reason: ReasonForbidden, msg: "acl.execute", audit: []string{DecisionDenied}},
		{name: "not_found deny overrides allow", req: RunRequest{ID: "t.denied", Arguments: obj(`{}`)},
			status: StatusRefused, reason: ReasonNotFound, msg: `no capability "t.denied"`, audit: []string{DecisionDenied}, noSchema: true},
		{name: "forbidden describe gate before the arguments", req: RunRequest{ID: "t.nodescribe", Version: 9, Arguments: obj(`{"name":7}`)},
			status: StatusRefused, reason: ReasonForbidden, msg: "describe t.nodescribe: no acl.describe entry", audit: []string{DecisionDenied}, noSchema: true},
		{name: "forbidden for a caller without scope", req: RunRequest{ID: "t.echo", Arguments: obj(`{"name":"x"}`)},
			rc: func(rc *registry.RuntimeContext) { rc.Scopes = nil }, status: StatusRefused, reason: ReasonNotFound,
			audit: []string{DecisionDenied}, noSchema: true},
		{name: "confirmation_required", req: RunRequest{ID: "t.danger", Arguments: obj(`{"name":"x"}`)},
			status: StatusConfirmationRequired, reason: ReasonConfirmationRequired, audit: []string{DecisionConfirmationRequired}},
		{name: "confirmation_required for side effect I", req: RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`)},
			status: StatusConfirmationRequired, reason: ReasonConfirmationRequired, audit: []string{DecisionConfirmationRequired}},
		{name: "invalid_confirmation malformed", req: RunRequest{ID: "t.danger", Arguments: obj(`{"name":"x"}`), ConfirmationToken: "nope"},
			status: StatusRefused, reason: ReasonInvalidConfirmation, errs: []string{"malformed"}, audit: []string{DecisionDenied}},
		{name: "timed_out", req: RunRequest{ID: "t.slow"}, status: StatusFailed, reason: ReasonTimedOut,
			audit: []string{DecisionAllowed, DecisionTimedOut}},
		{name: "handler_failed", req: RunRequest{ID: "t.fail", Arguments: obj(`{"name":"x"}`)}, status: StatusFailed,
			reason: ReasonHandlerFailed, msg: "it broke", audit: []string{DecisionAllowed, DecisionFailed}},
		{name: "handler_failed unknown kind", req: RunRequest{ID: "t.nohandler", Arguments: obj(`{"name":"x"}`)}, status: StatusFailed,
			reason: ReasonHandlerFailed, msg: "unknown handler kind", audit: []string{DecisionAllowed, DecisionFailed}},
		{name: "handler_failed schema does not compile", req: RunRequest{ID: "t.badschema", Arguments: obj(`{"name":"x"}`)}, status: StatusFailed,
			reason: ReasonHandlerFailed, msg: "arguments_schema", audit: []string{DecisionDenied}},
		{name: "invalid_output lists every error", req: RunRequest{ID: "t.badout", Arguments: obj(`{"name":"x"}`)}, status: StatusFailed,
			reason: ReasonInvalidOutput, errs: []string{"/n: got string, want integer", "/m: got number, want string", "/k: required property missing"},
			audit: []string{DecisionAllowed, DecisionFailed}},
	}
	for _, real := range []bool{false, true} {
		e := newEnv(t, real)
		name := "fake"
		if real {
			name = "store"
		}
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					rc := ann()
					if tt.rc != nil {
						tt.rc(rc)
					}
					before := len(e.audit())
					start := time.Now()
					res := mustRun(t, e, rc, tt.req)
					if res.Status != tt.status || res.Reason != tt.reason {
						t.Fatalf("status %q reason %q (%s %q), want %q %q", res.Status, res.Reason, res.Message, res.Errors, tt.status, tt.reason)
					}
					for _, want := range tt.errs {
						if !slices.Contains(res.Errors, want) && !slices.ContainsFunc(res.Errors, func(s string) bool { return strings.HasPrefix(s, want) }) {
							t.Errorf("errors %q lack %q", res.Errors, want)
						}
					}
					if !strings.Contains(res.Message, tt.msg) {
						t.Errorf("message %q lacks %q", res.Message, tt.msg)
					}
					if len(res.Steps) != tt.steps {
						t.Errorf("steps %v", res.Steps)
					}
					if tt.reason == ReasonTimedOut && time.Since(start) > 1500*time.Millisecond {
						t.Errorf("timed out run took %v (timeout 500ms)", time.Since(start))
					}
					recs := e.audit()
					got := decisions(recs, before)
					if !slices.Equal(got, tt.audit) {
						t.Fatalf("audit decisions %q, want %q", got, tt.audit)
					}
					last := recs[len(recs)-1]
					if res.AuditSeq != last.Seq {
						t.Errorf("AuditSeq %d, last record %d", res.AuditSeq, last.Seq)
					}
					if last.Kind != store.KindRun || last.Actor != "acme/ann" || last.Action != res.ID {
						t.Errorf("record %+v", last)
					}
					if (last.Digest == "") != tt.noSchema {
						t.Errorf("record digest %q", last.Digest)
					}
					var d auditDetail
					if err := json.Unmarshal([]byte(last.Detail), &d); err != nil || d.RunID != res.RunID || d.Reason != tt.reason || d.Session != "s1" {
						t.Errorf("detail %s (%v)", last.Detail, err)
					}
				})
			}
		})
	}
}

func TestTimeoutKillsTERMIgnoringHandler(t *testing.T) {
	e := newEnv(t, true)
	start := time.Now()
	res := mustRun(t, e, ann(), RunRequest{ID: "t.slow"})
	took := time.Since(start)
	if res.Reason != ReasonTimedOut || took > 1500*time.Millisecond {
		t.Fatalf("reason %q after %v, want timed_out within timeout+1s", res.Reason, took)
	}
	recs := e.audit()
	last := recs[len(recs)-1]
	if last.Decision != DecisionTimedOut || last.ExitStatus != 137 || last.DurationUS < 400_000 {
		t.Fatalf("last record %+v", last)
	}
	if _, err := e.store.VerifyAudit(); err != nil {
		t.Fatal(err)
	}
}

func TestConfirmationLoop(t *testing.T) {
	for _, real := range []bool{false, true} {
		e := newEnv(t, real)
		req := RunRequest{ID: "t.danger", Arguments: obj(`{"name":"thing","path":"/srv/data"}`)}
		res := mustRun(t, e, ann(), req)
		if res.Status != StatusConfirmationRequired || res.ConfirmationToken == "" || res.ExpiresAt.IsZero() {
			t.Fatalf("first run %+v", res)
		}
		if !strings.Contains(res.Summary, "Delete the thing (t.danger v1)") || !strings.Contains(res.Summary, `path="/srv/data"`) ||
			!strings.Contains(res.Summary, "W-shared") {
			t.Fatalf("summary %q", res.Summary)
		}
		if !slices.Equal(res.AffectedResources, []string{"path: /srv/data"}) {
			t.Fatalf("affected %q", res.AffectedResources)
		}
		if want := time.Unix(0, e.now.Load()).Add(DefaultTokenTTL).UTC(); !res.ExpiresAt.Equal(want) {
			t.Fatalf("expires %v, want %v", res.ExpiresAt, want)
		}
		b, _ := json.Marshal(res)
		var wire map[string]any
		_ = json.Unmarshal(b, &wire)
		for _, k := range []string{"status", "summary", "affected_resources", "confirmation_token", "expires_at"} {
			if _, ok := wire[k]; !ok {
				t.Fatalf("answer %s lacks %s", b, k)
			}
		}
		if e.runs.Load() != 0 {
			t.Fatal("ran before confirmation")
		}

		// Key order and spacing of the arguments do not matter.
		req.ConfirmationToken = res.ConfirmationToken
		req.Arguments = obj(`{ "path": "/srv/data", "name": "thing" }`)
		before := len(e.audit())
		ok := mustRun(t, e, ann(), req)
		if ok.Status != StatusSucceeded || string(ok.Output) != `{"runs":1}` {
			t.Fatalf("redeemed run %+v", ok)
		}
		recs := e.audit()
		if got := decisions(recs, before); !slices.Equal(got, []string{DecisionAllowed, DecisionSucceeded}) {
			t.Fatalf("audit %q", got)
		}
		var d auditDetail
		_ = json.Unmarshal([]byte(recs[before].Detail), &d)
		tok, _ := ParseToken(res.ConfirmationToken)
		if d.Token != tok.Claims.ID {
			t.Fatalf("start record does not name the spent token: %s", recs[before].Detail)
		}

		again := mustRun(t, e, ann(), req)
		if again.Reason != ReasonInvalidConfirmation || !slices.Contains(again.Errors, "replayed: token already spent") {
			t.Fatalf("replay %+v", again)
		}
		if e.runs.Load() != 1 {
			t.Fatalf("ran %d times", e.runs.Load())
		}
		if real {
			if n, err := e.store.VerifyAudit(); err != nil || n == 0 {
				t.Fatalf("VerifyAudit = %d, %v", n, err)
			}
		}
	}
}

func TestTokenTampering(t *testing.T) {
	e := newEnv(t, false)
	args := obj(`{"name":"thing","path":"/srv/data"}`)
	issue := func(t *testing.T) string {
		t.Helper()
		res := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args})
		if res.ConfirmationToken == "" {
			t.Fatalf("no token: %+v", res)
		}
		return res.ConfirmationToken
	}
	other := newEnv(t, false) // another installation: another key

	tests := []struct {
		name    string
		rc      func(rc *registry.RuntimeContext)
		req     func(tok string) RunRequest
		advance time.Duration
		problem string
	}{
		{name: "other tenant", rc: func(rc *registry.RuntimeContext) { rc.Tenant = "evil" }, problem: "bound to another tenant"},
		{name: "other user", rc: func(rc *registry.RuntimeContext) { rc.User = "bob" }, problem: "bound to another user"},
		{name: "other session", rc: func(rc *registry.RuntimeContext) { rc.Session = "s2" }, problem: "bound to another session"},
		{name: "other arguments", req: func(tok string) RunRequest {
			return RunRequest{ID: "t.danger", Arguments: obj(`{"name":"thing","path":"/"}`), ConfirmationToken: tok}
		}, problem: "bound to another arguments"},
		{name: "number written differently", req: func(tok string) RunRequest {
			return RunRequest{ID: "t.danger", Arguments: obj(`{"name":"thing","path":"/srv/data","count":1}`), ConfirmationToken: tok}
		}, problem: "bound to another arguments"},
		{name: "other action", req: func(tok string) RunRequest {
			return RunRequest{ID: "t.other", Arguments: args, ConfirmationToken: tok}
		}, problem: "bound to another action"},
		{name: "expired", advance: DefaultTokenTTL, problem: "expired"},
		{name: "forged mac", req: func(tok string) RunRequest {
			i := strings.LastIndexByte(tok, '.')
			mac := []byte(tok[i+1:])
			mac[0] = 'A'
			if tok[i+1] == 'A' {
				mac[0] = 'B'
			}
			return RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok[:i+1] + string(mac)}
		}, problem: "forged"},
		{name: "forged payload", req: func(tok string) RunRequest {
			p, _ := ParseToken(tok)
			c := p.Claims
			c.User = "bob"
			payload, _ := json.Marshal(c)
			parts := strings.Split(tok, ".")
			parts[2] = b64.EncodeToString(payload)
			return RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: strings.Join(parts, ".")}
		}, problem: "forged"},
		{name: "forged with another key", req: func(string) RunRequest {
			res := mustRun(t, other, ann(), RunRequest{ID: "t.danger", Arguments: args})
			return RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: res.ConfirmationToken}
		}, problem: "forged"},
		{name: "token from another key id rewritten", req: func(tok string) RunRequest {
			parts := strings.Split(tok, ".")
			parts[1] = "00000000"
			return RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: strings.Join(parts, ".")}
		}, problem: "forged"},
		{name: "truncated", req: func(tok string) RunRequest {
			return RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok[:len(tok)-2]}
		}, problem: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // refused every time
				tok := issue(t)
				rc := ann()
				if tt.rc != nil {
					tt.rc(rc)
				}
				req := RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok}
				if tt.req != nil {
					req = tt.req(tok)
				}
				saved := e.now.Load()
				e.now.Add(int64(tt.advance))
				res := mustRun(t, e, rc, req)
				e.now.Store(saved)
				if res.Reason != ReasonInvalidConfirmation {
					t.Fatalf("reason %q (%+v)", res.Reason, res)
				}
				if !slices.ContainsFunc(res.Errors, func(s string) bool { return strings.HasPrefix(s, tt.problem) }) {
					t.Fatalf("errors %q lack %q", res.Errors, tt.problem)
				}
				if e.runs.Load() != 0 {
					t.Fatal("a bad token ran the action")
				}
				// The genuine token still works for the genuine caller afterwards (nothing was spent).
				if tt.name == "other user" {
					ok := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok})
					if ok.Status != StatusSucceeded {
						t.Fatalf("genuine redemption after a refused one: %+v", ok)
					}
					e.runs.Store(0)
				}
			}
		})
	}
}

func TestRugPullInvalidatesTokens(t *testing.T) {
	tests := []struct {
		name    string
		change  func(c *registry.Capability)
		problem string
	}{
		{name: "new version", change: func(c *registry.Capability) { c.Version = 2; c.Summary = "now deletes everything" },
			problem: "bound to another version"},
		{name: "same version, new schema digest", change: func(c *registry.Capability) {
			c.Handler = &registry.Handler{Kind: "go", Name: "echo"}
		}, problem: "bound to another schema digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, true)
			args := obj(`{"name":"x"}`)
			res := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args})
			caps := testCaps()
			for _, c := range caps {
				if c.ID == "t.danger" {
					tt.change(c)
				}
			}
			e.defs.set(t, caps)
			got := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: res.ConfirmationToken})
			if got.Reason != ReasonInvalidConfirmation || !slices.ContainsFunc(got.Errors, func(s string) bool { return strings.HasPrefix(s, tt.problem) }) {
				t.Fatalf("%+v", got)
			}
			if got.SchemaDigest == res.SchemaDigest {
				t.Fatal("digest did not change")
			}
			if e.runs.Load() != 0 {
				t.Fatal("ran")
			}
		})
	}
}

func TestConcurrentRedemptionRunsOnce(t *testing.T) {
	for _, real := range []bool{false, true} {
		e := newEnv(t, real)
		args := obj(`{"name":"x"}`)
		tok := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args}).ConfirmationToken
		const n = 64
		var wg sync.WaitGroup
		results := make([]*RunResult, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = e.g.Run(context.Background(), ann(), RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok})
			}()
		}
		close(start)
		wg.Wait()
		succeeded, replayed := 0, 0
		for i, r := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			switch {
			case r.Status == StatusSucceeded:
				succeeded++
			case r.Reason == ReasonInvalidConfirmation && slices.Contains(r.Errors, "replayed: token already spent"):
				replayed++
			default:
				t.Fatalf("unexpected %+v", r)
			}
		}
		if succeeded != 1 || replayed != n-1 || e.runs.Load() != 1 {
			t.Fatalf("real=%v: succeeded %d replayed %d runs %d", real, succeeded, replayed, e.runs.Load())
		}
		if real {
			if _, err := e.store.VerifyAudit(); err != nil {
				t.Fatal(err)
			}
			if spent, err := e.store.TokenSpent(mustParse(t, tok).Claims.ID); err != nil || !spent {
				t.Fatalf("TokenSpent = %v, %v", spent, err)
			}
		}
	}
}

func mustParse(tb testing.TB, s string) *Token {
	tb.Helper()
	tok, err := ParseToken(s)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func TestAuditContents(t *testing.T) {
	e := newEnv(t, true)
	mustRun(t, e, ann(), RunRequest{ID: "t.echo", Arguments: obj(`{"name":"secretish"}`)})
	mustRun(t, e, ann(), RunRequest{ID: "t.record", Arguments: obj(`{"count":2, "name":"kept"}`)})
	recs := e.audit()
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	wantDigest, _ := ArgumentsDigest(obj(`{"name":"secretish"}`))
	for i, r := range recs[:2] {
		if r.ArgsDigest != wantDigest || r.Args != nil || strings.Contains(r.Detail, "secretish") {
			t.Fatalf("record %d keeps raw arguments without record_arguments: %+v", i, r)
		}
	}
	if string(recs[2].Args) != `{"count":2,"name":"kept"}` || string(recs[3].Args) != `{"count":2,"name":"kept"}` {
		t.Fatalf("record_arguments: %s / %s", recs[2].Args, recs[3].Args)
	}
	if recs[1].Decision != DecisionSucceeded || recs[1].DurationUS < 0 || recs[1].Version != 1 || !strings.HasPrefix(recs[1].Digest, "sha256:") {
		t.Fatalf("outcome record %+v", recs[1])
	}
	if !strings.Contains(recs[1].Detail, `"network":"unenforced"`) {
		t.Fatalf("network enforcement not audited: %s", recs[1].Detail)
	}
	if n, err := e.store.VerifyAudit(); err != nil || n != 4 {
		t.Fatalf("VerifyAudit = %d, %v", n, err)
	}
	uses, err := e.store.Uses("ann", "p", time.Now())
	if err != nil || uses["t.echo"] <= 0 || uses["t.record"] <= 0 {
		t.Fatalf("history %v, %v", uses, err)
	}
}

func TestHistoryOnlyOnSuccess(t *testing.T) {
	e := newEnv(t, false)
	mustRun(t, e, ann(), RunRequest{ID: "t.fail", Arguments: obj(`{"name":"x"}`)})
	mustRun(t, e, ann(), RunRequest{ID: "t.echo", Arguments: obj(`{}`)})
	mustRun(t, e, ann(), RunRequest{ID: "t.echo", Arguments: obj(`{"name":"x"}`)})
	if !slices.Equal(e.fake.uses, []string{"ann|p|t.echo"}) {
		t.Fatalf("uses %q", e.fake.uses)
	}
}

func TestAuditFailureStopsTheRun(t *testing.T) {
	e := newEnv(t, false)
	e.fake.failAt = 1
	_, err := e.g.Run(context.Background(), ann(), RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`)})
	if !errors.Is(err, ErrAudit) {
		t.Fatalf("err = %v", err)
	}
	e.fake.failAt = 0
	tok := mustRun(t, e, ann(), RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`)}).ConfirmationToken
	e.fake.failAt = len(e.fake.records()) + 1 // the start record
	_, err = e.g.Run(context.Background(), ann(), RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`), ConfirmationToken: tok})
	if !errors.Is(err, ErrAudit) || e.runs.Load() != 0 {
		t.Fatalf("err = %v, runs %d", err, e.runs.Load())
	}
	e.fake.failAt = 0
	res := mustRun(t, e, ann(), RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`), ConfirmationToken: tok})
	if res.Status != StatusSucceeded {
		t.Fatalf("token must survive a failed start record: %+v", res)
	}
}

// unenforceable is a handler whose preflight refuses every run.
type unenforceable struct{ ran bool }

func (u *unenforceable) Run(context.Context, handlers.Request) (handlers.Result, error) {
	u.ran = true
	return handlers.Result{}, nil
}

func (u *unenforceable) Preflight(*registry.Capability) error {
	return handlers.ErrNetworkUnenforceable
}

func TestNetworkUnenforceableRefusedBeforeConfirmation(t *testing.T) {
	h := &unenforceable{}
	e := newEnv(t, false, func(o *Options) { o.Handler = h })
	res := mustRun(t, e, ann(), RunRequest{ID: "t.impact", Arguments: obj(`{"name":"x"}`)})
	if res.Reason != ReasonNetworkUnenforceable || res.ConfirmationToken != "" || h.ran {
		t.Fatalf("%+v ran=%v", res, h.ran)
	}
}

func TestTokenKeyKeptInStore(t *testing.T) {
	e := newEnv(t, true)
	args := obj(`{"name":"x"}`)
	tok := mustRun(t, e, ann(), RunRequest{ID: "t.danger", Arguments: args}).ConfirmationToken
	g2, err := New(Options{Definitions: FromSnapshot(e.defs.load), Audit: e.store, Tokens: e.store, Secrets: e.store,
		GoFuncs: map[string]handlers.GoFunc{"count": func(context.Context, map[string]any) (any, error) { return map[string]any{}, nil }},
		Now:     e.g.opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g2.Run(context.Background(), ann(), RunRequest{ID: "t.danger", Arguments: args, ConfirmationToken: tok})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("second governor on the same store: %+v, %v", res, err)
	}

	// A configured key is used instead, and it differs.
	g3 := newEnv(t, true, func(o *Options) { o.TokenKey = []byte("0123456789abcdef0123456789abcdef") })
	tok3 := mustRun(t, g3, ann(), RunRequest{ID: "t.danger", Arguments: args}).ConfirmationToken
	if mustParse(t, tok3).KeyID != newSigner([]byte("0123456789abcdef0123456789abcdef")).kid {
		t.Fatal("configured key not used")
	}
}

func TestNewOptions(t *testing.T) {
	f := newFake()
	defs := FromSnapshot(func() *registry.Snapshot { return nil })
	tests := []struct {
		name string
		o    Options
	}{
		{name: "no definitions", o: Options{Audit: f, Tokens: f, Secrets: f}},
		{name: "no audit", o: Options{Definitions: defs, Tokens: f, Secrets: f}},
		{name: "no tokens", o: Options{Definitions: defs, Audit: f, Secrets: f}},
		{name: "no key source", o: Options{Definitions: defs, Audit: f, Tokens: f}},
		{name: "short key", o: Options{Definitions: defs, Audit: f, Tokens: f, TokenKey: []byte("short")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.o); !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	g, err := New(Options{Definitions: defs, Audit: f, Tokens: f, TokenKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Run(context.Background(), nil, RunRequest{ID: "a.b"})
	if err != nil || res.Reason != ReasonNotFound {
		t.Fatalf("nil snapshot: %+v %v", res, err)
	}
}

func TestWithInheritanceOnStore(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, c := range testCaps() {
		if c.ID == "t" || c.ID == "t.echo" || c.ID == "u" || c.ID == "u.inside" {
			if err := st.Put(ctx, c, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	defs := WithInheritance(st)
	c, err := defs.Get("t.echo", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Eff.Enabled || !slices.Equal(c.Eff.Packs, []string{"t"}) || !c.Eff.ACL.Allows(ann(), registry.GateExecute) {
		t.Fatalf("eff %+v", c.Eff)
	}
	if c, _ := defs.Get("u.inside", 0); c.Eff.Enabled {
		t.Fatal("disabled pack not inherited")
	}
	if _, err := defs.Get("t.nope", 0); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	g, err := New(Options{Definitions: defs, Audit: st, Tokens: st, Secrets: st, History: st,
		GoFuncs: map[string]handlers.GoFunc{"echo": func(_ context.Context, a map[string]any) (any, error) { return a, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Run(ctx, ann(), RunRequest{ID: "t.echo", Arguments: obj(`{"name":"n"}`)})
	if err != nil || res.Status != StatusSucceeded || string(res.Output) != `{"name":"n"}` {
		t.Fatalf("%+v %v", res, err)
	}
	res, _ = g.Run(ctx, ann(), RunRequest{ID: "u.inside", Arguments: obj(`{"name":"n"}`)})
	if res.Reason != ReasonNotFound {
		t.Fatalf("%+v", res)
	}
}

func TestCanceledCallerStillAudited(t *testing.T) {
	e := newEnv(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := e.g.Run(ctx, ann(), RunRequest{ID: "t.slow"})
	if err != nil || res.Status != StatusFailed || res.Reason != ReasonHandlerFailed || !strings.Contains(res.Message, "canceled") {
		t.Fatalf("%+v %v", res, err)
	}
	recs := e.audit()
	if recs[len(recs)-1].Decision != DecisionFailed {
		t.Fatalf("%+v", recs[len(recs)-1])
	}
}
