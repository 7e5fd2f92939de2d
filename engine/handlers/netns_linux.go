//go:build linux

package handlers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Isolation modes reported by NetworkIsolation.
const (
	// IsolationUserNetNS: a new user namespace (mapping the current uid and gid) plus a new
	// network namespace; works without privileges where user namespaces are allowed.
	IsolationUserNetNS = "userns+netns"
	// IsolationNetNS: a new network namespace alone (needs CAP_SYS_ADMIN).
	IsolationNetNS = "netns"
)

var isolation struct {
	once sync.Once
	mode string
	err  error
}

// NetworkIsolation reports how this machine enforces network_policy none for exec handlers:
// IsolationNetNS (preferred: the child keeps capdex's exact credentials; needs
// CAP_SYS_ADMIN, e.g. root) or IsolationUserNetNS (unprivileged, where user namespaces are
// allowed), or "" and the reason when neither works. The probe starts one short process
// ("true", else /bin/sh) per mode tried, once per process; the result is cached.
func NetworkIsolation() (string, error) {
	isolation.once.Do(func() {
		isolation.mode, isolation.err = probeIsolation()
	})
	return isolation.mode, isolation.err
}

func probeIsolation() (string, error) {
	var errs []error
	for _, mode := range []string{IsolationNetNS, IsolationUserNetNS} {
		if err := probeMode(mode); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", mode, err))
			continue
		}
		return mode, nil
	}
	return "", fmt.Errorf("%w: %w", ErrNetworkUnenforceable, errors.Join(errs...))
}

// probeMode starts one trivial process isolated by mode.
func probeMode(mode string) error {
	bin, err := exec.LookPath("true")
	args := []string{}
	if err != nil {
		bin, args = "/bin/sh", []string{"-c", "exit 0"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	applyIsolation(cmd.SysProcAttr, mode)
	return cmd.Run()
}

// applyIsolation sets the clone flags of mode on attr.
func applyIsolation(attr *syscall.SysProcAttr, mode string) {
	switch mode {
	case IsolationUserNetNS:
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	case IsolationNetNS:
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
}
