package registry

import (
	"embed"
	"io"
	"io/fs"
	"strings"
)

// builtinFS holds the built-in example registry: YAML definitions under builtin/ and the
// POSIX sh scripts of its exec handlers under builtin/scripts/.
//
//go:embed builtin
var builtinFS embed.FS

// Builtin loads the built-in example registry embedded in the binary: packs, actions and
// recipes for local developer-environment maintenance (Codex CLI, npm, Python, Docker),
// schedules, travel, reimbursement, payments, GitHub review, notifications, data, reports,
// a tenant-private pack, a disabled pack and a demo pack. It returns a fresh set of
// definitions on every call, so callers may keep or change them.
//
// The definitions use every capability_type and exercise the gates: most packs let everyone
// discover and describe and a scope execute; maintenance.docker.prune, payments.payouts and
// reimbursement.claims.approve are visible to one scope only; acme is visible to the acme
// tenant only; legacy is disabled; travel.cars.search and notifications.sms.send are offline.
// HTTP handlers take their base URLs from configuration ({{.base_url.NAME}}).
func Builtin() ([]*Capability, error) {
	return LoadFS(builtinFS, "builtin")
}

// BuiltinScripts returns the scripts of the built-in registry's exec handlers as a file
// system holding one directory, "scripts": an exec argv[0] such as "scripts/codex_diagnose.sh"
// names a file of it, so a copy of it is the scripts directory handlers resolve against.
// An embedded file system keeps no mode bits: copies must be made executable (or the scripts
// run with sh). The definitions themselves are left out.
func BuiltinScripts() fs.FS {
	root, err := fs.Sub(builtinFS, "builtin")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "builtin" is a valid constant.
		panic("registry: builtin scripts: " + err.Error())
	}
	return scriptsOnly{root}
}

// scriptsOnly shows only the "scripts" directory of a registry file system.
type scriptsOnly struct{ fsys fs.FS }

func (s scriptsOnly) allowed(name string) bool {
	return name == "." || name == "scripts" || strings.HasPrefix(name, "scripts/")
}

// Open implements fs.FS.
func (s scriptsOnly) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) || !s.allowed(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := s.fsys.Open(name)
	if err != nil || name != "." {
		return f, err
	}
	return &scriptsRoot{File: f, s: s}, nil
}

// ReadDir implements fs.ReadDirFS.
func (s scriptsOnly) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) || !s.allowed(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	es, err := fs.ReadDir(s.fsys, name)
	if err != nil || name != "." {
		return es, err
	}
	return filterScripts(es), nil
}

// scriptsRoot is the root directory of scriptsOnly: it lists only "scripts".
type scriptsRoot struct {
	fs.File
	s    scriptsOnly
	done bool
}

// ReadDir implements fs.ReadDirFile.
func (r *scriptsRoot) ReadDir(n int) ([]fs.DirEntry, error) {
	if r.done {
		if n > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	r.done = true
	es, err := r.s.ReadDir(".")
	if err != nil {
		return nil, err
	}
	if n > 0 && len(es) == 0 {
		return nil, io.EOF
	}
	return es, nil
}

func filterScripts(es []fs.DirEntry) []fs.DirEntry {
	out := es[:0:0]
	for _, e := range es {
		if e.Name() == "scripts" && e.IsDir() {
			out = append(out, e)
		}
	}
	return out
}
