package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/capdex/capdex/engine/handlers/shepherd"
	"github.com/capdex/capdex/registry"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when an exec handler's deadline passes.
const DefaultGrace = 200 * time.Millisecond

// baseEnv are the variables every exec handler inherits from capdex's environment, when set.
var baseEnv = []string{"PATH", "HOME", "LANG"}

// Exec runs a local command: handler.argv, never through a shell unless handler.shell.
//
// Every argv element is a text/template over the arguments ({{.name}}; a missing key is
// ErrBadHandler; functions json, join and shquote). With handler.shell, argv[0] is the
// script given to /bin/sh -c verbatim (no templating, so arguments cannot inject shell
// syntax) and the rendered argv[1:] become its positional parameters $1, $2, ...
// The arguments are also written to stdin as JSON. A relative argv[0] containing a slash
// resolves against Config.ScriptsDir; a bare name is looked up in PATH.
//
// The environment holds only PATH, HOME and LANG from capdex's environment plus
// handler.env entries ("NAME" copies capdex's value, "NAME=value" sets one), and
// CAPDEX_RUN_DIR set to Config.RunDir when that is configured. The working
// directory is handler.dir (relative to ScriptsDir), else Config.RunDir, else ScriptsDir.
type Exec struct {
	// Grace is the time between SIGTERM and SIGKILL to the process group at the deadline
	// (0 means DefaultGrace).
	Grace time.Duration
	// isolation reports the network isolation mode (NetworkIsolation; replaced in tests).
	isolation func() (string, error)
}

// NewExec returns an exec handler with the default grace and this machine's network isolation.
func NewExec() *Exec { return &Exec{isolation: NetworkIsolation} }

// Run implements Handler.
//
// network_policy none (or empty) runs the command in a new network namespace when
// NetworkIsolation allows it (Result.Network "isolated"). When it does not, and for policy
// allowlist (which exec cannot enforce), an action of side effect I is refused with
// ErrNetworkUnenforceable before anything starts and others run with Network "unenforced".
// At the deadline the process group gets SIGTERM and, Grace later, SIGKILL; Run returns
// ErrTimeout with what was captured. A non-zero exit status is ErrHandlerFailed.
func (e *Exec) Run(ctx context.Context, req Request) (Result, error) {
	res := Result{ExitStatus: -1}
	c := req.Cap
	if c == nil || c.Handler == nil || len(c.Handler.Argv) == 0 {
		return res, fmt.Errorf("%w: exec needs handler.argv", ErrBadHandler)
	}
	h := c.Handler
	args, stdin, err := req.args()
	if err != nil {
		return res, err
	}

	// Network policy first: a refusal must come before anything runs.
	mode, network, err := e.network(c)
	res.Network = network
	if err != nil {
		return res, err
	}

	argv, err := e.argv(h, args, req.Config.ScriptsDir)
	if err != nil {
		return res, err
	}
	dir := workDir(h.Dir, &req.Config)
	grace := e.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	log := req.Config.logger()
	start := time.Now()
	// The program is looked up here, as exec.Command would (PATH of capdex for a bare name,
	// relative to the working directory otherwise), so a missing one fails to start
	// whether or not a shepherd runs it.
	if argv[0], err = lookProgram(argv[0], dir); err != nil {
		return res, fmt.Errorf("%w: start %s: %w", ErrHandlerFailed, argv[0], err)
	}
	env := execEnv(h.Env, &req.Config)
	// A shepherd (Linux) kills and reaps every descendant, even one that left the group
	// with setsid; the group kill below stays as the fallback should it fail to.
	path, cmdArgs, shepherdVar, shepherded := shepherd.Command(argv, grace)
	if !shepherded {
		path, cmdArgs = argv[0], argv
	} else {
		env = append(env, shepherdVar)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = cmdArgs
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	max := maxOutput(h)
	stdout, stderr := &capBuffer{max: max}, &capBuffer{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = newProcAttr(mode)

	var (
		mu     sync.Mutex // guards killer
		killer *time.Timer
	)
	killAfter := grace
	if shepherded {
		killAfter += shepherd.Slack // the shepherd kills the command's tree at grace itself
	}
	cmd.Cancel = func() error {
		var err error
		if shepherded {
			err = cmd.Process.Signal(syscall.SIGTERM) // the shepherd passes it on, once
		} else {
			err = signalGroup(cmd, syscall.SIGTERM)
		}
		mu.Lock()
		killer = time.AfterFunc(killAfter, func() { _ = signalGroup(cmd, syscall.SIGKILL) }) // ESRCH when already gone
		mu.Unlock()
		return err
	}
	// After the cancel (or after the leader exits with its pipes still held by a
	// descendant), Wait gives up on the pipes this much later.
	cmd.WaitDelay = killAfter + 300*time.Millisecond

	err = cmd.Start()
	if err != nil {
		if ctx.Err() != nil {
			return res, ctxErr(ctx)
		}
		return res, fmt.Errorf("%w: start %s: %v", ErrHandlerFailed, argv[0], err)
	}
	err = cmd.Wait()
	mu.Lock()
	if killer != nil {
		killer.Stop()
	}
	mu.Unlock()
	// Nothing of the run may outlive it: kill whatever is left of the group.
	_ = signalGroup(cmd, syscall.SIGKILL) // ESRCH when the group is already gone
	log.Debug("exec finished", "id", c.ID, "argv0", argv[0], "took", time.Since(start), "err", err)

	res.ExitStatus = exitStatus(cmd)
	res.Stdout, res.Stderr = stdout.buf.String(), stderr.buf.String()
	res.Truncated = stdout.truncated || stderr.truncated
	res.Output = jsonOrWrapped(stdout.buf.Bytes(), "stdout")

	if ctx.Err() != nil {
		return res, ctxErr(ctx)
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("%w: exit status %d%s", ErrHandlerFailed, res.ExitStatus, stderrTail(res.Stderr))
	}
	return res, nil
}

// Preflight implements Preflighter: ErrNetworkUnenforceable for an action of side effect I
// whose network policy this machine cannot enforce for a command.
func (e *Exec) Preflight(c *registry.Capability) error {
	_, _, err := e.network(c)
	return err
}

// network decides the isolation mode and the Result.Network value for c.
func (e *Exec) network(c *registry.Capability) (mode, network string, err error) {
	switch policyOf(c) {
	case registry.NetworkAny:
		return "", NetworkAnyHost, nil
	case registry.NetworkNone:
		iso := e.isolation
		if iso == nil {
			iso = NetworkIsolation
		}
		if m, err := iso(); err == nil && m != "" {
			return m, NetworkIsolated, nil
		}
	}
	// No isolation available, or allowlist (exec cannot hold a process to a host list).
	if c.SideEffect == registry.SideEffectImpact {
		return "", NetworkUnenforced, fmt.Errorf("%w: network_policy %s for side effect I", ErrNetworkUnenforceable, policyOf(c))
	}
	return "", NetworkUnenforced, nil
}

// lookProgram resolves the program as exec.Command and the kernel would: a bare name in
// capdex's PATH, a path with a slash as it is (a relative one against dir), and checks it
// is an executable file.
func lookProgram(name, dir string) (string, error) {
	if !strings.ContainsRune(name, '/') {
		return exec.LookPath(name)
	}
	p := name
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	if _, err := exec.LookPath(p); err != nil {
		return "", err
	}
	return name, nil
}

// argv renders the command line.
func (e *Exec) argv(h *registry.Handler, args map[string]any, scriptsDir string) ([]string, error) {
	data := templateData(args)
	out := make([]string, 0, len(h.Argv)+3)
	first := 0
	if h.Shell {
		out = append(out, "/bin/sh", "-c", h.Argv[0], "capdex")
		first = 1
	} else if strings.Contains(h.Argv[0], "{{") {
		// The program is the definition's choice, never the caller's arguments'.
		return nil, fmt.Errorf("%w: argv[0] may not be a template", ErrBadHandler)
	}
	for i := first; i < len(h.Argv); i++ {
		s, err := render(fmt.Sprintf("argv[%d]", i), h.Argv[i], data)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if !h.Shell {
		if out[0] == "" {
			return nil, fmt.Errorf("%w: empty argv[0]", ErrBadHandler)
		}
		if !filepath.IsAbs(out[0]) && strings.ContainsRune(out[0], '/') && scriptsDir != "" {
			out[0] = filepath.Join(scriptsDir, out[0])
		}
	}
	return out, nil
}

// execEnv builds the allow-listed environment.
func execEnv(allow []string, cfg *Config) []string {
	env := make([]string, 0, len(baseEnv)+len(allow))
	seen := map[string]bool{}
	if cfg.RunDir != "" {
		seen["CAPDEX_RUN_DIR"] = true
		env = append(env, "CAPDEX_RUN_DIR="+cfg.RunDir)
	}
	add := func(name string) {
		if seen[name] {
			return
		}
		if v, ok := cfg.lookupEnv(name); ok {
			seen[name] = true
			env = append(env, name+"="+v)
		}
	}
	for _, e := range allow {
		if name, val, ok := strings.Cut(e, "="); ok {
			if !seen[name] {
				seen[name] = true
				env = append(env, name+"="+val)
			}
			continue
		}
		add(e)
	}
	for _, name := range baseEnv {
		add(name)
	}
	return env
}

func workDir(dir string, cfg *Config) string {
	switch {
	case dir != "" && !filepath.IsAbs(dir) && cfg.ScriptsDir != "":
		return filepath.Join(cfg.ScriptsDir, dir)
	case dir != "":
		return dir
	case cfg.RunDir != "":
		return cfg.RunDir
	}
	return cfg.ScriptsDir
}

// stderrTail is the last line or so of stderr, for error messages.
func stderrTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return ": " + s
}
