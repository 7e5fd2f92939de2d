//go:build !linux

// Package shepherd runs an exec handler's command so that nothing it starts outlives it,
// on Linux (see shepherd_linux.go). Elsewhere Command declines.
package shepherd

import "time"

// Slack is unused without a shepherd.
const Slack = 0

// Command declines: no shepherd outside Linux. A run is killed as its process group (its own
// session on Unix), so a descendant that calls setsid(1) or double-forks into another
// session survives the run there; see docs/exec.md.
func Command(argv []string, grace time.Duration) (path string, args []string, env string, ok bool) {
	return "", nil, "", false
}
