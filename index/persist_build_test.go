package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDevBuild(t *testing.T) {
	info := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/capdex/capdex", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		dev  bool
	}{
		{"no build info", nil, false, true},
		{"go test / go run", info("(devel)"), true, true},
		{"empty version", info(""), true, true},
		{"module release", info("v1.4.0"), true, false},
		{"clean revision", info("(devel)", "vcs.revision", "abc123", "vcs.modified", "false"), true, false},
		{"clean pseudo-version", info("v0.0.0-20261207-abc123", "vcs.revision", "abc123", "vcs.modified", "false"), true, false},
		{"modified tree", info("(devel)", "vcs.revision", "abc123", "vcs.modified", "true"), true, true},
		{"dirty version", info("v0.0.0-20261207-abc123+dirty", "vcs.revision", "abc123", "vcs.modified", "true"), true, true},
	} {
		if got := devBuild(c.bi, c.ok); got != c.dev {
			t.Errorf("%s: devBuild = %v, want %v", c.name, got, c.dev)
		}
	}
}

// Two development builds of one revision that differ only in their executable get
// different fingerprints; a release build never looks at its executable.
func TestBuildIdentityOfDevBuilds(t *testing.T) {
	dev := &debug.BuildInfo{Main: debug.Module{Path: "github.com/capdex/capdex", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	a := appendBuildIdentity(nil, dev, true, func() string { return "buildid:one" })
	b := appendBuildIdentity(nil, dev, true, func() string { return "buildid:two" })
	if bytes.Equal(a, b) {
		t.Error("two development builds with different executables have one identity")
	}
	if c := appendBuildIdentity(nil, nil, false, func() string { return "buildid:one" }); bytes.Equal(c, appendBuildIdentity(nil, nil, false, func() string { return "buildid:two" })) {
		t.Error("two builds without build information and different executables have one identity")
	}
	rel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/capdex/capdex", Version: "v1.4.0"}}
	called := false
	appendBuildIdentity(nil, rel, true, func() string { called = true; return "" })
	if called {
		t.Error("a release build read its executable")
	}
}

// The build ID read from the running test binary is the one `go tool buildid` prints.
func TestELFBuildIDMatchesGoTool(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	id, err := elfBuildID(exe)
	if err != nil {
		t.Skipf("not an ELF executable with a build ID: %v", err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); id != want {
		t.Errorf("elfBuildID = %q, go tool buildid = %q", id, want)
	}
	if got := exeIdentity(); got != "buildid:"+id {
		t.Errorf("exeIdentity = %q, want the build ID %q", got, id)
	}
}

func TestELFBuildIDRejectsOtherFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(p, []byte("not an executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := elfBuildID(p); err == nil {
		t.Errorf("elfBuildID of a text file = %q, nil", id)
	}
	sum, err := fileSHA256(p)
	want := sha256.Sum256([]byte("not an executable"))
	if err != nil || sum != hex.EncodeToString(want[:]) {
		t.Errorf("fileSHA256 = %q, %v", sum, err)
	}
}

// BenchmarkExeIdentity measures the two ways of identifying an executable, on the test
// binary or on the file named by CAPDEX_BENCH_EXE (e.g. a built capdex).
func BenchmarkExeIdentity(b *testing.B) {
	exe := os.Getenv("CAPDEX_BENCH_EXE")
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			b.Skip(err)
		}
	}
	st, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("buildid", func(b *testing.B) {
		for b.Loop() {
			if _, err := elfBuildID(exe); err != nil {
				b.Skip(err)
			}
		}
	})
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := fileSHA256(exe); err != nil {
				b.Fatal(err)
			}
		}
	})
}
