package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"github.com/capdex/capdex/registry"
)

// TestMain lets the test binary double as an exec handler child (CAPDEX_HELPER=dial tries
// a TCP connection to CAPDEX_ADDR and prints the outcome as JSON), and checks for leaked
// goroutines after the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("CAPDEX_HELPER") {
	case "dial":
		conn, err := net.DialTimeout("tcp", os.Getenv("CAPDEX_ADDR"), 2*time.Second)
		out := map[string]string{"dial": "ok"}
		if err != nil {
			out["dial"] = "error: " + err.Error()
		} else {
			conn.Close()
		}
		_ = json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(0)
	}
	// No goroutine of a run (its output copiers, kill timers, the http client's) may
	// outlive the tests.
	goleak.VerifyTestMain(m)
}

func execCap(h registry.Handler, mut func(c *registry.Capability)) *registry.Capability {
	h.Kind = "exec"
	c := &registry.Capability{ID: "t.exec", Version: 1, ResourceType: registry.TypeAction,
		SideEffect: registry.SideEffectRead, NetworkPolicy: registry.NetworkAny, Handler: &h}
	if mut != nil {
		mut(c)
	}
	return c
}

func TestExec(t *testing.T) {
	scripts := t.TempDir()
	if err := os.MkdirAll(filepath.Join(scripts, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scripts, "scripts", "hello.sh"), []byte("#!/bin/sh\necho \"{\\\"hello\\\": \\\"$1\\\", \\\"pwd\\\": \\\"$(pwd)\\\"}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(scripts, "work")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAPDEX_TEST_SECRET", "s3cr3t")
	t.Setenv("CAPDEX_TEST_ALLOWED", "visible")

	tests := []struct {
		name    string
		h       registry.Handler
		mut     func(c *registry.Capability)
		args    string
		err     error
		exit    int
		output  string // exact Output JSON when set
		stdout  string // substring of Stdout
		stderr  string // substring of Stderr
		trunc   bool
		errText string
	}{
		{name: "argv template and json output", h: registry.Handler{Argv: []string{"echo", `{"n": {{.n}}, "s": "{{.s}}"}`}},
			args: `{"n": 12345678901234567890, "s": "x y"}`, output: `{"n": 12345678901234567890, "s": "x y"}`},
		{name: "non-json stdout wrapped", h: registry.Handler{Argv: []string{"echo", "plain {{.s}}"}},
			args: `{"s": "text"}`, output: `{"stdout":"plain text\n"}`},
		{name: "missing template key", h: registry.Handler{Argv: []string{"echo", "{{.nope}}"}}, args: `{}`,
			err: ErrBadHandler, errText: "nope", exit: -1},
		{name: "null renders empty", h: registry.Handler{Argv: []string{"echo", "<{{.s}}>"}}, args: `{"s": null}`,
			output: `{"stdout":"<>\n"}`},
		{name: "no shell: metacharacters are data", h: registry.Handler{Argv: []string{"echo", "{{.s}}"}},
			args: `{"s": "a; echo pwned $(id)"}`, output: `{"stdout":"a; echo pwned $(id)\n"}`},
		{name: "shell script gets positional parameters", h: registry.Handler{Shell: true,
			Argv: []string{`printf '%s|%s' "$1" "$2"`, "{{.a}}", "{{.b}}"}},
			args: `{"a": "x; rm -rf /", "b": "$(id)"}`, output: `{"stdout":"x; rm -rf /|$(id)"}`},
		{name: "shell script is not templated", h: registry.Handler{Shell: true, Argv: []string{`echo '{{.a}}'`}},
			args: `{"a": "z"}`, output: `{"stdout":"{{.a}}\n"}`},
		{name: "arguments on stdin", h: registry.Handler{Argv: []string{"cat"}}, args: `{"k": [1, 2]}`,
			output: `{"k": [1, 2]}`},
		{name: "env allow-list", h: registry.Handler{Argv: []string{"env"}, Env: []string{"CAPDEX_TEST_ALLOWED", "LIT=1"}},
			stdout: "CAPDEX_TEST_ALLOWED=visible\nLIT=1\nPATH="},
		{name: "exit status and stderr", h: registry.Handler{Argv: []string{"sh", "-c", "echo oops >&2; exit 3"}},
			err: ErrHandlerFailed, exit: 3, stderr: "oops", errText: "exit status 3: oops"},
		{name: "output capped", h: registry.Handler{Argv: []string{"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' a"}, MaxOutput: 100},
			trunc: true, stdout: strings.Repeat("a", 100)},
		{name: "relative argv0 from scripts dir", h: registry.Handler{Argv: []string{"scripts/hello.sh", "{{.who}}"}, Dir: "work"},
			args: `{"who": "w"}`, output: fmt.Sprintf(`{"hello": "w", "pwd": %q}`, sub)},
		{name: "missing binary", h: registry.Handler{Argv: []string{"/nonexistent/capdex-nope"}}, err: ErrHandlerFailed, exit: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args == "" {
				args = "{}"
			}
			res, err := NewExec().Run(context.Background(), Request{Cap: execCap(tt.h, tt.mut), ArgsJSON: []byte(args),
				Config: Config{ScriptsDir: scripts}})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err %q lacks %q", err, tt.errText)
				}
			} else if err != nil {
				t.Fatalf("Run: %v (stderr %q)", err, res.Stderr)
			}
			if res.ExitStatus != tt.exit {
				t.Fatalf("exit = %d, want %d", res.ExitStatus, tt.exit)
			}
			if tt.output != "" && string(res.Output) != tt.output {
				t.Fatalf("output = %s, want %s", res.Output, tt.output)
			}
			if !strings.Contains(res.Stdout, tt.stdout) || !strings.Contains(res.Stderr, tt.stderr) {
				t.Fatalf("stdout %q / stderr %q lack %q / %q", res.Stdout, res.Stderr, tt.stdout, tt.stderr)
			}
			if res.Truncated != tt.trunc {
				t.Fatalf("truncated = %v", res.Truncated)
			}
			if tt.trunc && len(res.Stdout) != 100 {
				t.Fatalf("stdout len %d, want 100", len(res.Stdout))
			}
			if strings.Contains(res.Stdout, "s3cr3t") {
				t.Fatal("environment leaked")
			}
		})
	}
}

func TestExecEnvNothingElseInherited(t *testing.T) {
	t.Setenv("CAPDEX_TEST_SECRET", "s3cr3t")
	res, err := NewExec().Run(context.Background(), Request{Cap: execCap(registry.Handler{Argv: []string{"env"}}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(res.Stdout), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PATH", "HOME", "LANG", "PWD", "SHLVL", "_": // the last three may be added by the child itself
		default:
			t.Errorf("unexpected variable %q in child environment", line)
		}
	}
}

func TestExecTimeoutKillsGroupIgnoringTERM(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := execCap(registry.Handler{Shell: true, Argv: []string{`trap "" TERM; echo started; sleep 30 & echo $! > "$1"; wait; sleep 30`, pidFile}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := NewExec().Run(ctx, Request{Cap: c})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("took %v, want < timeout+1s", took)
	}
	if res.ExitStatus != 128+9 {
		t.Fatalf("exit status %d, want SIGKILL (137)", res.ExitStatus)
	}
	if !strings.Contains(res.Stdout, "started") {
		t.Fatalf("captured stdout %q", res.Stdout)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived the group kill", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func TestExecCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewExec().Run(ctx, Request{Cap: execCap(registry.Handler{Argv: []string{"true"}}, nil)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestExecScriptsFS(t *testing.T) {
	cfg := Config{ScriptsFS: fstest.MapFS{"scripts/hi.sh": {Data: []byte("#!/bin/sh\necho '{\"hi\": true}'\n"), Mode: 0o444}},
		RunDir: t.TempDir()}
	cleanup, err := cfg.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ScriptsDir == "" {
		t.Fatal("ScriptsDir not set")
	}
	res, err := NewExec().Run(context.Background(), Request{Cap: execCap(registry.Handler{Argv: []string{"scripts/hi.sh"}}, nil), Config: cfg})
	if err != nil || string(res.Output) != `{"hi": true}` {
		t.Fatalf("Run = %s, %v", res.Output, err)
	}
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.ScriptsDir); !os.IsNotExist(err) {
		t.Fatalf("scripts dir not removed: %v", err)
	}
}

// dialCap is an exec action that runs this test binary as a child dialing addr.
func dialCap(tb testing.TB, addr string, policy registry.NetworkPolicy, se registry.SideEffect) *registry.Capability {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return execCap(registry.Handler{Argv: []string{self}, Env: []string{"CAPDEX_HELPER=dial", "CAPDEX_ADDR=" + addr, "GORACE=atexit_sleep_ms=0"}},
		func(c *registry.Capability) { c.NetworkPolicy = policy; c.SideEffect = se })
}

func listen(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func dialOutcome(tb testing.TB, res Result) string {
	tb.Helper()
	var out map[string]string
	if err := json.Unmarshal(res.Output, &out); err != nil {
		tb.Fatalf("output %s: %v", res.Output, err)
	}
	return out["dial"]
}

func TestExecNetworkIsolation(t *testing.T) {
	addr := listen(t)
	mode, isoErr := NetworkIsolation()
	t.Logf("network isolation on this machine: mode=%q err=%v", mode, isoErr)

	res, err := NewExec().Run(context.Background(), Request{Cap: dialCap(t, addr, registry.NetworkAny, registry.SideEffectRead)})
	if err != nil || dialOutcome(t, res) != "ok" || res.Network != NetworkAnyHost {
		t.Fatalf("policy any: %s %s, %v", res.Output, res.Network, err)
	}

	res, err = NewExec().Run(context.Background(), Request{Cap: dialCap(t, addr, registry.NetworkNone, registry.SideEffectRead)})
	if err != nil {
		t.Fatalf("policy none: %v (stderr %q)", err, res.Stderr)
	}
	if isoErr == nil {
		if res.Network != NetworkIsolated {
			t.Fatalf("network = %q, want isolated", res.Network)
		}
		if got := dialOutcome(t, res); !strings.HasPrefix(got, "error:") {
			t.Fatalf("isolated child reached the parent's listener: %q", got)
		}
	} else if res.Network != NetworkUnenforced {
		t.Fatalf("network = %q, want unenforced", res.Network)
	}
}

// TestExecIsolationModes checks each namespace mode this machine supports on its own: the
// child must not reach a listener of the parent on loopback.
func TestExecIsolationModes(t *testing.T) {
	addr := listen(t)
	supported := 0
	for _, mode := range []string{IsolationNetNS, IsolationUserNetNS} {
		t.Run(mode, func(t *testing.T) {
			if err := probeMode(mode); err != nil {
				t.Logf("mode %s not available here: %v", mode, err)
				return
			}
			supported++
			e := &Exec{isolation: func() (string, error) { return mode, nil }}
			res, err := e.Run(context.Background(), Request{Cap: dialCap(t, addr, registry.NetworkNone, registry.SideEffectImpact)})
			if err != nil || res.Network != NetworkIsolated {
				t.Fatalf("run: %v network %q (stderr %q)", err, res.Network, res.Stderr)
			}
			if got := dialOutcome(t, res); !strings.HasPrefix(got, "error:") {
				t.Fatalf("isolated child reached the parent's listener: %q", got)
			}
			t.Logf("mode %s: child dial %s", mode, dialOutcome(t, res))
		})
	}
	if _, err := NetworkIsolation(); (err == nil) != (supported > 0) {
		t.Fatalf("NetworkIsolation err %v but %d modes work", err, supported)
	}
}

func TestExecNetworkUnenforceable(t *testing.T) {
	addr := listen(t)
	noIso := &Exec{isolation: func() (string, error) { return "", ErrNetworkUnenforceable }}
	tests := []struct {
		name    string
		policy  registry.NetworkPolicy
		se      registry.SideEffect
		err     error
		network string
	}{
		{name: "none, side effect I refused", policy: registry.NetworkNone, se: registry.SideEffectImpact, err: ErrNetworkUnenforceable, network: NetworkUnenforced},
		{name: "empty policy counts as none", policy: "", se: registry.SideEffectImpact, err: ErrNetworkUnenforceable, network: NetworkUnenforced},
		{name: "none, read runs unenforced", policy: registry.NetworkNone, se: registry.SideEffectRead, network: NetworkUnenforced},
		{name: "allowlist, shared write runs unenforced", policy: registry.NetworkAllowlist, se: registry.SideEffectWriteShared, network: NetworkUnenforced},
		{name: "allowlist, side effect I refused", policy: registry.NetworkAllowlist, se: registry.SideEffectImpact, err: ErrNetworkUnenforceable, network: NetworkUnenforced},
		{name: "any, side effect I runs", policy: registry.NetworkAny, se: registry.SideEffectImpact, network: NetworkAnyHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialCap(t, addr, tt.policy, tt.se)
			if perr := noIso.Preflight(c); !errors.Is(perr, tt.err) && !(tt.err == nil && perr == nil) {
				t.Fatalf("Preflight = %v, want %v", perr, tt.err)
			}
			d := NewDispatcher(map[string]Handler{"exec": noIso})
			if perr := d.Preflight(c); !errors.Is(perr, tt.err) && !(tt.err == nil && perr == nil) {
				t.Fatalf("Dispatcher.Preflight = %v, want %v", perr, tt.err)
			}
			res, err := noIso.Run(context.Background(), Request{Cap: c})
			if !errors.Is(err, tt.err) && !(tt.err == nil && err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if res.Network != tt.network {
				t.Fatalf("network = %q, want %q", res.Network, tt.network)
			}
			if tt.err != nil && (res.Output != nil || res.ExitStatus != -1) {
				t.Fatalf("refused run produced output %s exit %d", res.Output, res.ExitStatus)
			}
			if tt.err == nil && dialOutcome(t, res) != "ok" {
				t.Fatalf("unenforced run should reach the network: %s", res.Output)
			}
		})
	}
}

func TestExecProgramNeverFromArguments(t *testing.T) {
	c := execCap(registry.Handler{Argv: []string{"{{.cmd}}", "-x"}}, nil)
	_, err := NewExec().Run(context.Background(), Request{Cap: c, Args: map[string]any{"cmd": "/bin/rm"}, ArgsJSON: []byte(`{"cmd":"/bin/rm"}`)})
	if !errors.Is(err, ErrBadHandler) {
		t.Fatalf("templated argv[0]: want ErrBadHandler, got %v", err)
	}
}
