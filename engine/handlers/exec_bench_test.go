package handlers

import (
	"context"
	"os/exec"
	"testing"

	"github.com/capdex/capdex/registry"
)

// BenchmarkExecRun is one exec handler run of true(1), shepherd included (Linux);
// BenchmarkExecBare is the same program started bare with os/exec, for the ratio.
func BenchmarkExecRun(b *testing.B) {
	c := execCap(registry.Handler{Argv: []string{"true"}}, nil)
	e := NewExec()
	for b.Loop() {
		if _, err := e.Run(context.Background(), Request{Cap: c}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecBare(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
