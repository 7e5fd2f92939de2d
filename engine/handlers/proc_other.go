//go:build !unix

package handlers

import (
	"os/exec"
	"syscall"
)

func newProcAttr(mode string) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// signalGroup kills the process itself: no process groups here.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func exitStatus(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}
