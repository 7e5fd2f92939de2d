//go:build unix

package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadRefusesHostileFiles: a FIFO or a symlink to /dev/zero in a watched registry
// directory neither hangs the start nor a hot reload; each is refused naming the file, and
// the daemon keeps serving. A file over limits.max_registry_file_bytes is refused too.
func TestReloadRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hot.yaml"), hotPack)
	writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(1, "Greet the world", "test-team"))
	if err := syscall.Mkfifo(filepath.Join(dir, "f.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	started := make(chan *testServer, 1)
	go func() {
		started <- startServer(t, serverSetup{cfg: func(c *Config) {
			c.RegistryDirs = []string{dir}
			c.Limits.MaxRegistryFileBytes = 4096
		}})
	}()
	var ts *testServer
	select {
	case ts = <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not start with a FIFO in its registry directory")
	}
	waitFor(t, "the FIFO refused in the logs", func() bool {
		return strings.Contains(ts.logs.String(), "f.yaml") && strings.Contains(ts.logs.String(), "not a regular file")
	})
	if err := os.Remove(filepath.Join(dir, "f.yaml")); err != nil {
		t.Fatal(err)
	}
	eng := ts.Engine()
	waitFor(t, "the directory applied once the FIFO is gone", func() bool {
		_, err := eng.Describe(context.Background(), "hot.greet", devRC)
		return err == nil
	})
	for _, tc := range []struct {
		name, file, log string
		make            func(p string) error
	}{
		{"symlink to /dev/zero", "z.yaml", "symlink", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO added later", "g.yaml", "not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"file over the limit", "big.yaml", "exceeds the limit of 4096 bytes", func(p string) error {
			return os.WriteFile(p, []byte(hotPack+"# "+strings.Repeat("x", 5000)+"\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := eng.Generation()
			mark := len(ts.logs.String())
			p := filepath.Join(dir, tc.file)
			if err := tc.make(p); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(p)
			waitFor(t, "the refusal in the logs", func() bool {
				l := ts.logs.String()[mark:]
				return strings.Contains(l, tc.file) && strings.Contains(l, tc.log)
			})
			if g := eng.Generation(); g != gen {
				t.Fatalf("a refused directory moved the generation %d → %d", gen, g)
			}
			if r := ts.call(t, "GET", "/readyz", "", nil); r.status != 200 {
				t.Fatalf("not ready: %d", r.status)
			}
		})
	}
}
