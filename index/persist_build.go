package index

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// The identity of a development build. The build fingerprint (buildFingerprint) names a
// release build by its module version or clean VCS revision; a development build — `go run`,
// `go test`, a `go build` with local changes (no vcs.revision, or vcs.modified=true) —
// carries neither, so two of them that index text differently in a way the probe texts do
// not show would read each other's persisted state. For such a build only, the fingerprint
// also holds the identity of the running executable (exeIdentity): its Go build ID, which the
// go command derives from the content of every input of the link (so a change of any source
// file gives another), read from the ELF note in 0.1-0.2 ms; where there is none (another
// object format, `-ldflags=-buildid=`) a SHA-256 of the executable's bytes (75-170
// ms for the 35 MB capdex binary, once per process); where the executable cannot be
// read, a random value, so that such a build never loads state another process wrote.

// devBuild reports whether bi (ok: the binary carries build information) names a build that
// is not identified by its module version or a clean VCS revision.
func devBuild(bi *debug.BuildInfo, ok bool) bool {
	if !ok {
		return true
	}
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case modified || strings.HasSuffix(bi.Main.Version, "+dirty"):
		return true
	case rev != "":
		return false
	default:
		return bi.Main.Version == "" || bi.Main.Version == "(devel)"
	}
}

// exeIdentity identifies the content of the running executable (see above).
func exeIdentity() string {
	exe, err := os.Executable()
	if err == nil {
		if id, err := elfBuildID(exe); err == nil && id != "" {
			return "buildid:" + id
		}
		if sum, err := fileSHA256(exe); err == nil {
			return "sha256:" + sum
		}
	}
	return "random:" + rand.Text()
}

// elfBuildID returns the Go build ID of the ELF executable at path (the note "Go", type 4,
// in section .note.go.buildid, as `go tool buildid` reads it), or an error when it is not
// an ELF file or has no such note.
func elfBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", errors.New("no Go build ID note")
	}
	b, err := s.Data()
	if err != nil {
		return "", err
	}
	if len(b) < 16 {
		return "", errors.New("short Go build ID note")
	}
	bo := f.ByteOrder
	nameSize, descSize, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
	const goBuildIDNote = 4
	if nameSize != 4 || typ != goBuildIDNote || !bytes.Equal(b[12:16], []byte("Go\x00\x00")) || uint64(descSize) > uint64(len(b)-16) {
		return "", errors.New("malformed Go build ID note")
	}
	return string(b[16 : 16+descSize]), nil
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// appendBuildIdentity appends to buf what identifies the build bi: the module version and
// VCS revision, and for a development build (devBuild) the executable's identity (exe,
// called only then).
func appendBuildIdentity(buf []byte, bi *debug.BuildInfo, ok bool, exe func() string) []byte {
	if ok {
		buf = appendString(buf, bi.Main.Path+"@"+bi.Main.Version)
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				buf = appendString(buf, s.Key+"="+s.Value)
			}
		}
	}
	if devBuild(bi, ok) {
		buf = binary.AppendUvarint(buf, 1)
		buf = appendString(buf, exe())
	}
	return buf
}
