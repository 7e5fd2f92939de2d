package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/capdex/capdex/registry"
)

// watcher reloads the registry directories when they change.
type watcher struct {
	s        *Server
	fw       *fsnotify.Watcher
	dirs     []string
	debounce time.Duration
	stopc    chan struct{}
	done     chan struct{}
}

// newWatcher watches every directory under dirs (fsnotify is not recursive: directories
// created later are added as they appear). A missing directory is an error.
func newWatcher(s *Server, dirs []string, debounce time.Duration) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("server: watching registry directories: %w", err)
	}
	w := &watcher{s: s, fw: fw, dirs: dirs, debounce: debounce, stopc: make(chan struct{}), done: make(chan struct{})}
	for _, d := range dirs {
		if err := w.addTree(d); err != nil {
			fw.Close()
			return nil, fmt.Errorf("%w: registry_dirs: %v", ErrConfig, err)
		}
	}
	return w, nil
}

func (w *watcher) addTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return w.fw.Add(p)
		}
		return nil
	})
}

func (w *watcher) start() { go w.loop() }

func (w *watcher) stop() {
	select {
	case <-w.stopc:
		return
	default:
	}
	close(w.stopc)
	<-w.done
	w.fw.Close()
}

func (w *watcher) loop() {
	defer close(w.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-w.stopc:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := statDir(ev.Name); err == nil && fi {
					if err := w.addTree(ev.Name); err != nil {
						w.s.log.Warn("watching a new registry directory failed", "dir", ev.Name, "err", err)
					}
				}
			}
			timer.Reset(w.debounce)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.s.log.Warn("registry watcher error", "err", err)
		case <-timer.C:
			w.s.reload(ctx, "change")
		}
	}
}

func statDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// reload loads and lints the registry directories and imports the definitions that
// differ from the stored ones (all or none): a new generation, audited by the store. An
// invalid directory is logged, error by error, and the generation being served stays.
// Definitions removed from a directory are not deleted (DELETE them through the API).
func (s *Server) reload(ctx context.Context, why string) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	log := s.log.With("reload", why)
	var all []*registry.Capability
	seen := map[string]string{}
	for _, d := range s.cfg.RegistryDirs {
		caps, err := registry.LoadDirWith(d, registry.LoadOptions{MaxFileBytes: s.cfg.Limits.MaxRegistryFileBytes})
		if err != nil {
			s.m.reloads.WithLabelValues("invalid").Inc()
			logLintErrors(log, "registry directory refused: the current generation keeps serving", d, err)
			return
		}
		for _, c := range caps {
			if prev, dup := seen[c.ID]; dup {
				s.m.reloads.WithLabelValues("invalid").Inc()
				log.Error("registry directory refused: the current generation keeps serving", "dir", d,
					"err", fmt.Sprintf("%s is defined in both %s and %s", c.ID, prev, d))
				return
			}
			seen[c.ID] = d
		}
		all = append(all, caps...)
	}
	var changed []*registry.Capability
	for _, c := range all {
		cur, err := s.eng.Definition(c.ID, 0)
		if err == nil && registry.Equal(cur, c) {
			continue
		}
		changed = append(changed, c)
	}
	if len(changed) == 0 {
		s.m.reloads.WithLabelValues("unchanged").Inc()
		log.Debug("registry directories unchanged")
		return
	}
	if err := s.eng.Import(ctx, changed, "reload"); err != nil {
		result := "failed"
		if errors.Is(err, registry.ErrLint) || isRefusal(err) {
			result = "invalid"
		}
		s.m.reloads.WithLabelValues(result).Inc()
		logLintErrors(log, "registry change refused: the current generation keeps serving", "", err)
		return
	}
	gen := s.newGeneration(ctx)
	s.m.reloads.WithLabelValues("applied").Inc()
	ids := make([]string, 0, len(changed))
	for _, c := range changed {
		ids = append(ids, fmt.Sprintf("%s@%d", c.ID, c.Version))
	}
	slices.Sort(ids)
	log.Info("registry reloaded", "generation", gen, "changed", len(changed), "ids", ids)
}

func isRefusal(err error) bool {
	status, _ := statusOf(err)
	return status == 400 || status == 409
}

// logLintErrors logs err at Error level, one record per lint error when it holds any.
func logLintErrors(log *slog.Logger, msg, dir string, err error) {
	var lerrs registry.LintErrors
	if errors.As(err, &lerrs) && len(lerrs) > 0 {
		for _, le := range lerrs {
			log.Error(msg, "dir", dir, "file", le.File, "line", le.Line, "id", le.ID, "field", le.Field, "err", le.Msg)
		}
		return
	}
	log.Error(msg, "dir", dir, "err", err.Error())
}
