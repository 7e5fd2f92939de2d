//go:build unix

package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const packYAML = "pack_id: p\nversion: 1\nresource_type: pack\ntitle: P\nowner: o\nstatus: active\n"

// loadWithin runs LoadDirWith on dir and fails the test when it does not return within
// limit (30 s when 0): a loader that opens a FIFO or reads /dev/zero would never return.
func loadWithin(t *testing.T, dir string, o LoadOptions, limit ...time.Duration) ([]*Capability, error) {
	t.Helper()
	d := 30 * time.Second
	if len(limit) > 0 {
		d = limit[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	type result struct {
		caps []*Capability
		err  error
	}
	done := make(chan result, 1)
	go func() {
		caps, err := LoadDirWith(dir, o)
		done <- result{caps, err}
	}()
	select {
	case r := <-done:
		return r.caps, r.err
	case <-ctx.Done():
		t.Fatalf("LoadDirWith(%s) did not return within %v", dir, d)
		return nil, nil
	}
}

// wantFileError checks that err is a LintErrors with an error about file whose message
// holds want.
func wantFileError(t *testing.T, err error, file, want string) {
	t.Helper()
	var lerrs LintErrors
	if !errors.As(err, &lerrs) {
		t.Fatalf("want LintErrors naming %s, got %v", file, err)
	}
	for _, e := range lerrs {
		if filepath.Base(e.File) == file && strings.Contains(e.Msg, want) {
			return
		}
	}
	t.Fatalf("no error about %s holding %q in:\n%v", file, want, err)
}

func TestLoadDirRefusesFIFO(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": packYAML})
	if err := syscall.Mkfifo(filepath.Join(dir, "f.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := loadWithin(t, dir, LoadOptions{})
	wantFileError(t, err, "f.yaml", "not a regular file")
}

func TestLoadDirRefusesSymlinkToDevZero(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": packYAML})
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err := loadWithin(t, dir, LoadOptions{})
	wantFileError(t, err, "z.yaml", "symlink")
}

func TestLoadDirRefusesSymlinkToFIFOInside(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p.yaml": packYAML})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("pipe", filepath.Join(dir, "s.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err := loadWithin(t, dir, LoadOptions{})
	wantFileError(t, err, "s.yaml", "not a regular file")
}

// A symlink to a regular file inside the directory is read (a Kubernetes ConfigMap mounts
// its files as symlinks into ..data); one that leaves the directory is refused.
func TestLoadDirSymlinks(t *testing.T) {
	dir := writeFiles(t, map[string]string{"..data/p.yaml": packYAML})
	if err := os.Symlink("..data/p.yaml", filepath.Join(dir, "p.yaml")); err != nil {
		t.Fatal(err)
	}
	caps, err := loadWithin(t, dir, LoadOptions{})
	if err != nil || len(caps) != 1 || caps[0].ID != "p" {
		t.Fatalf("symlink inside: %v %v", caps, err)
	}
	outside := writeFiles(t, map[string]string{"q.yaml": strings.Replace(packYAML, "pack_id: p", "pack_id: q", 1)})
	if err := os.Symlink(filepath.Join(outside, "q.yaml"), filepath.Join(dir, "q.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = loadWithin(t, dir, LoadOptions{})
	wantFileError(t, err, "q.yaml", "outside the registry directory")
}

func TestLoadDirFileSizeLimit(t *testing.T) {
	big := packYAML + "summary: " + strings.Repeat("x", 2000) + "\n"
	dir := writeFiles(t, map[string]string{"big.yaml": big})
	_, err := loadWithin(t, dir, LoadOptions{MaxFileBytes: 1024})
	wantFileError(t, err, "big.yaml", "exceeds the limit of 1024 bytes")
	if _, err := loadWithin(t, dir, LoadOptions{MaxFileBytes: 4096}); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
	// The default is DefaultMaxFileBytes.
	huge := packYAML + "summary: " + strings.Repeat("x", DefaultMaxFileBytes) + "\n"
	dir = writeFiles(t, map[string]string{"huge.yaml": huge})
	_, err = loadWithin(t, dir, LoadOptions{})
	wantFileError(t, err, "huge.yaml", "exceeds the limit")
}

// A 20 MB title is refused naming the file and the field, however large the file limit.
func TestLoadDirRefusesHugeTitle(t *testing.T) {
	src := strings.Replace(packYAML, "title: P", "title: "+strings.Repeat("t", 20<<20), 1)
	dir := writeFiles(t, map[string]string{"t.yaml": src})
	// Parsing 20 MB of YAML takes seconds (minutes under -race on a busy machine): the
	// deadline only guards against a hang.
	_, err := loadWithin(t, dir, LoadOptions{MaxFileBytes: 64 << 20}, 5*time.Minute)
	var lerrs LintErrors
	if !errors.As(err, &lerrs) || len(lerrs) != 1 || lerrs[0].Field != "title" || filepath.Base(lerrs[0].File) != "t.yaml" ||
		!strings.Contains(lerrs[0].Msg, "exceeds the limit") {
		t.Fatalf("want one error on t.yaml title, got %v", err)
	}
	if len(lerrs[0].Error()) > 1000 {
		t.Fatalf("the error quotes the title: %d bytes", len(lerrs[0].Error()))
	}
}
