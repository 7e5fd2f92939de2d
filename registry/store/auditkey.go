package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// MinAuditKeyBytes is the shortest audit key accepted.
const MinAuditKeyBytes = 32

// ReadAuditKey reads the audit key from the file at path: its content with surrounding
// white space trimmed, at least MinAuditKeyBytes long. The file must be a regular file
// readable by its owner only (on Unix) and must not lie inside dataDir: a key kept with
// the store protects nothing against one who can read the store.
func ReadAuditKey(path, dataDir string) ([]byte, error) {
	fail := func(format string, a ...any) ([]byte, error) {
		return nil, fmt.Errorf("%w: audit key %s: %s", ErrInvalid, path, fmt.Sprintf(format, a...))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: audit key: %w", ErrInvalid, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: audit key: %w", ErrInvalid, err)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file")
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fail("readable by group or others (mode %04o): chmod 600 it", fi.Mode().Perm())
	}
	if dataDir != "" && inside(path, dataDir) {
		return fail("lies inside the data directory %s: keep the audit key apart from the store", dataDir)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%w: audit key: %w", ErrInvalid, err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < MinAuditKeyBytes {
		return fail("%d bytes: want at least %d (e.g. head -c 32 /dev/urandom | base64 > FILE)", len(b), MinAuditKeyBytes)
	}
	return b, nil
}

// inside reports whether path lies in dir, symlinks resolved where they can be.
func inside(path, dir string) bool {
	resolve := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Clean(p)
	}
	p, d := resolve(path), resolve(dir)
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
