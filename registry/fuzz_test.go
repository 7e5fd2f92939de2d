package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad decodes one file's bytes as YAML and as JSON. It must never panic; a failure is
// a LintErrors; a success is sealed, survives Clone and a JSON round trip, and lints
// without panicking.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{
		"testdata/load/good/maintenance/codex.yaml", "testdata/load/good/myapp.json", "testdata/load/good/multi.yml",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"fuzz.yaml", "fuzz.json"} {
			caps, err := ParseFile(name, data)
			if err != nil {
				var errs LintErrors
				if !errors.As(err, &errs) || len(errs) == 0 || caps != nil {
					t.Fatalf("%s: error %T %v with %d capabilities", name, err, err, len(caps))
				}
				for _, e := range errs {
					if e.File != name || e.Msg == "" {
						t.Fatalf("%s: error without file or message: %+v", name, e)
					}
				}
				continue
			}
			for _, c := range caps {
				if c.Provenance.SchemaDigest != Digest(c) {
					t.Fatalf("%s: %q is not sealed", name, c.ID)
				}
				if !Equal(c, c.Clone()) {
					t.Fatalf("%s: %q differs from its clone", name, c.ID)
				}
				js, err := json.Marshal(c)
				if err != nil {
					t.Fatalf("%s: marshal %q: %v", name, c.ID, err)
				}
				again, err := ParseFile("again.json", js)
				if err != nil || len(again) != 1 || !Equal(c, again[0]) {
					t.Fatalf("%s: JSON round trip of %q failed: %v\n%s", name, c.ID, err, js)
				}
			}
			_ = Lint(caps)
		}
	})
}

var fuzzFormats = []string{FormatAuto, FormatOpenAI, FormatAnthropic, FormatMCP, FormatJSONL}

// FuzzImport imports arbitrary bytes in each format. It must never panic; a failure is a
// LintErrors; a success passes Lint with unique ids and an external id on every action.
func FuzzImport(f *testing.F) {
	files, err := filepath.Glob("testdata/import/*")
	if err != nil {
		f.Fatal(err)
	}
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		caps, err := ImportWith(bytes.NewReader(data), ImportOptions{Format: fuzzFormats[int(format)%len(fuzzFormats)]})
		if err != nil {
			if !errors.Is(err, ErrLint) || caps != nil {
				t.Fatalf("error %T %v with %d capabilities", err, err, len(caps))
			}
			return
		}
		if errs := Lint(caps); errs != nil {
			t.Fatalf("imported capabilities fail lint:\n%v", errs)
		}
		seen := make(map[string]bool)
		for _, c := range caps {
			if seen[c.ID] {
				t.Fatalf("duplicate id %q", c.ID)
			}
			seen[c.ID] = true
			if c.ResourceType == TypeAction && (c.ExternalID == "" || len(c.Aliases) == 0 || c.Aliases[0] != c.ExternalID) {
				t.Fatalf("%q: external id %q, aliases %v", c.ID, c.ExternalID, c.Aliases)
			}
		}
	})
}

// FuzzCanonical checks the canonical JSON form on arbitrary input (see checkCanonical).
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,{"d":null,"c":"\u00e9"}]}`, `"x\ud83d\ude00"`, `[1.0, -0, 2e10]`, `{"a":1,"a":2}`, `{x}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := canonicalRaw(data)
		if len(trimJSONSpace(data)) == 0 {
			if c != nil {
				t.Fatalf("empty input gave %s", c)
			}
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form %q is not valid JSON", c)
		}
		var w bytes.Buffer
		if !appendCanonical(&w, trimJSONSpace(data)) {
			if json.Valid(data) && bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= maxDepth {
				t.Fatalf("valid JSON %q rejected", data)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("invalid JSON %q accepted as %s", data, w.Bytes())
		}
		checkCanonical(t, data)
	})
}
