//go:build linux

package handlers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

// detachedPID runs script (a shell script whose $1 is a file to write the detached
// grandchild's pid to) under ctx and returns the run's error and that pid.
func detachedPID(t *testing.T, ctx context.Context, script string) (Result, int, error) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := execCap(registry.Handler{Shell: true, Argv: []string{script, pidFile}}, nil)
	res, err := NewExec().Run(ctx, Request{Cap: c})
	var b []byte
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ = os.ReadFile(pidFile)
		if strings.HasSuffix(string(b), "\n") || time.Now().After(deadline) {
			break
		}
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if perr != nil {
		t.Fatalf("no pid written by the detached child (%q): run %v, stderr %q", b, err, res.Stderr)
	}
	return res, pid, err
}

// waitGone fails the test unless pid stops running within 2 s.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = killPID(pid)
			t.Fatalf("%s: the setsid-detached grandchild %d survived the run", what, pid)
		}
	}
}

// A grandchild that leaves the run's session and process group (setsid) is killed at the
// timeout all the same.
func TestExecTimeoutKillsSetsidGrandchild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, pid, err := detachedPID(t, ctx, `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$1" & sleep 300`)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	waitGone(t, pid, "after the timeout")
}

// A run whose command exits at once leaves no setsid-detached grandchild behind either.
func TestExecExitKillsSetsidGrandchild(t *testing.T) {
	res, pid, err := detachedPID(t, context.Background(),
		`setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$1" & while [ ! -s "$1" ]; do sleep 0.01; done; echo '{"ok": true}'`)
	if err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, res.Stderr)
	}
	if string(res.Output) != `{"ok": true}` || res.ExitStatus != 0 {
		t.Fatalf("output %s, exit %d", res.Output, res.ExitStatus)
	}
	waitGone(t, pid, "after the exit")
}

// A double fork with setsid in the middle (a classic daemon) is caught too, and the exit
// status of the command is the run's.
func TestExecDaemonizedGrandchildAndExitStatus(t *testing.T) {
	res, pid, err := detachedPID(t, context.Background(),
		`(setsid sh -c '( exec sh -c "echo \$\$ > \"\$0\"; exec sleep 300" "$0" ) &' "$1" &); while [ ! -s "$1" ]; do sleep 0.01; done; exit 7`)
	if !errors.Is(err, ErrHandlerFailed) || res.ExitStatus != 7 {
		t.Fatalf("err = %v, exit %d; want ErrHandlerFailed, 7", err, res.ExitStatus)
	}
	waitGone(t, pid, "daemonized")
}

func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
