//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// removeEmptyLogs deletes 0-byte Badger WAL (.mem) and value log (.vlog) files from dir.
// A process killed between creating such a file and writing its header leaves one behind,
// and Badger v4.9.6 then refuses to open the directory with "Create a new file" (z.NewFile;
// dgraph-io/badger#2207). An empty log holds no data, so removing it loses nothing. The
// directory is flock'ed (as Badger does) while this runs, so a directory held by another
// process is reported as ErrLocked and never touched.
func removeEmptyLogs(dir string) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("%w: %s (%v)", ErrLocked, dir, err)
	}
	// Closing d (deferred above) releases the lock before Badger takes it.
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("store: read %s: %w", dir, err)
	}
	for _, n := range names {
		if !strings.HasSuffix(n, ".mem") && !strings.HasSuffix(n, ".vlog") {
			continue
		}
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("store: remove empty log %s: %w", p, err)
			}
		}
	}
	return nil
}
