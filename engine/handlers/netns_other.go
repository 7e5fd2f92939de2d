//go:build !linux

package handlers

import (
	"fmt"
	"runtime"
	"syscall"
)

// Isolation modes reported by NetworkIsolation (never on this OS).
const (
	IsolationUserNetNS = "userns+netns"
	IsolationNetNS     = "netns"
)

// NetworkIsolation reports how this machine enforces network_policy none: never outside Linux.
func NetworkIsolation() (string, error) {
	return "", fmt.Errorf("%w: no network namespaces on %s", ErrNetworkUnenforceable, runtime.GOOS)
}

func applyIsolation(attr *syscall.SysProcAttr, mode string) {}

func probeMode(mode string) error { return ErrNetworkUnenforceable }
