//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLILintRefusesHostileFiles: capdex lint on a directory with a FIFO and a symlink to
// /dev/zero returns at once with exit 2, naming both files; --max-file-bytes refuses a
// larger file.
func TestCLILintRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "f.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), []byte("# "+strings.Repeat("x", 3000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, errs, code := cli(t, t.TempDir(), "lint", "--max-file-bytes", "2048", dir)
		done <- result{errs, code}
	}()
	select {
	case r := <-done:
		if r.code != exitUsage {
			t.Fatalf("exit %d, want %d: %s", r.code, exitUsage, r.errs)
		}
		for _, want := range []string{"f.yaml", "not a regular file", "z.yaml", "big.yaml", "exceeds the limit of 2048 bytes"} {
			if !strings.Contains(r.errs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.errs)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatal("capdex lint did not return within 20 s")
	}
}
