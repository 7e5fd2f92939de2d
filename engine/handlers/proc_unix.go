//go:build unix

package handlers

import (
	"os/exec"
	"syscall"
)

// newProcAttr puts the child in its own session (and so its own process group, with no
// controlling terminal), isolated per mode ("" for none).
func newProcAttr(mode string) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true}
	if mode != "" {
		applyIsolation(attr, mode)
	}
	return attr
}

// signalGroup sends sig to the process group led by cmd's process.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// exitStatus is the exit code, or 128+signal for a process killed by a signal.
func exitStatus(cmd *exec.Cmd) int {
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
