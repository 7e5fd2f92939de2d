//go:build linux

package shepherd

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Package shepherd runs an exec handler's command so that nothing it starts outlives it.
//
// An exec handler's process group is not the whole of what it starts: a descendant that
// calls setsid (setsid(1), a daemon's double fork) leaves the group and the session, and a
// kill of the group misses it. On Linux every run therefore goes through a shepherd: capdex
// starts its own executable (/proc/self/exe) with envVar set, this package's init turns
// that process into the shepherd before main runs (the package imports only the standard
// library, so its init runs early), and the shepherd
//
//   - makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every orphaned
//     descendant of the command, setsid or not, is reparented to it rather than to init;
//   - starts the command (its argv is the shepherd's), passing on its stdin, stdout,
//     stderr, working directory and environment (without envVar);
//   - on SIGTERM (capdex's deadline) sends SIGTERM to every descendant, and SIGKILL once
//     the grace period given in envVar has passed;
//   - when the command exits, SIGKILLs every descendant left, reaps them all, and exits
//     with the command's status (128+N for a command killed by signal N).
//
// Descendants are found by walking parent links in /proc. What escapes: a process that is
// not a descendant at all (one started for the command by another daemon: systemd-run,
// at, a container runtime), and one in another PID namespace that /proc does not show.
const envVar = "CAPDEX_EXEC_SHEPHERD"

// Slack is how long after the grace period capdex waits for the shepherd before it
// SIGKILLs the shepherd's group itself.
const Slack = 500 * time.Millisecond

func init() {
	if v, ok := os.LookupEnv(envVar); ok {
		os.Exit(run(v, os.Args[1:]))
	}
}

// Command returns the command that runs argv under a shepherd with grace, and the
// environment entry that makes the started process one; ok is false when this process has
// no executable to start (then the run goes without, its process group killed only).
func Command(argv []string, grace time.Duration) (path string, args []string, env string, ok bool) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return "", nil, "", false
	}
	return "/proc/self/exe", append([]string{"capdex-exec"}, argv...), envVar + "=" + strconv.FormatInt(int64(grace), 10), true
}

// run runs argv as described above and returns the exit status to exit with.
func run(graceNS string, argv []string) int {
	os.Unsetenv(envVar)
	grace, err := strconv.ParseInt(graceNS, 10, 64)
	if err != nil || grace <= 0 || len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "capdex: %s=%q: not a shepherd invocation\n", envVar, graceNS)
		return 127
	}
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "capdex: prctl(PR_SET_CHILD_SUBREAPER): %v\n", errno)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "capdex: start %s: %v\n", argv[0], err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	var kill <-chan time.Time
	for {
		select {
		case <-term:
			signalDescendants(syscall.SIGTERM)
			if kill == nil {
				kill = time.After(time.Duration(grace))
			}
		case <-kill:
			signalDescendants(syscall.SIGKILL)
		case <-done:
			reapDescendants()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return cmd.ProcessState.ExitCode()
		}
	}
}

// reapDescendants SIGKILLs every descendant until none is left and reaps them (they are
// this subreaper's children once their parents die), for at most two seconds.
func reapDescendants() {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		left := signalDescendants(syscall.SIGKILL)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD && left == 0 {
				return
			}
			if pid <= 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signalDescendants sends sig to every live (not zombie) descendant of this process, found
// through the parent links in /proc, and returns how many it signalled.
func signalDescendants(sig syscall.Signal) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, zombie, ok := procParent(pid)
		if ok && !zombie {
			children[ppid] = append(children[ppid], pid)
		}
	}
	n := 0
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if syscall.Kill(c, sig) == nil {
				n++
			}
			queue = append(queue, c)
		}
	}
	return n
}

// procParent reads the parent pid and state of pid from /proc/<pid>/stat.
func procParent(pid int) (ppid int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0] == "Z", err == nil
}
