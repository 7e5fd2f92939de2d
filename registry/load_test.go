package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"gopkg.in/yaml.v3"
)

// writeFiles writes name → content into a new temporary directory and returns it.
func writeFiles(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func byID(caps []*Capability) map[string]*Capability {
	m := make(map[string]*Capability, len(caps))
	for _, c := range caps {
		m[c.ID] = c
	}
	return m
}

func TestLoadDirGoodTree(t *testing.T) {
	caps, err := LoadDir("testdata/load/good")
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	var ids []string
	for _, c := range caps {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	want := []string{
		"maintenance", "maintenance.codex", "maintenance.codex.diagnose", "maintenance.codex.path_conflict_guide",
		"myapp", "myapp.schedule", "myapp.schedule.create", "ops", "ops.purge_cache", "ops.restart",
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids = %v, want %v (scripts/, hidden files and README must be skipped)", ids, want)
	}
	m := byID(caps)

	d := m["maintenance.codex.diagnose"]
	if d.Version != 3 || d.ResourceType != TypeAction || d.SideEffect != SideEffectRead || d.RiskLevel != RiskLow {
		t.Errorf("diagnose basics wrong: %+v", d)
	}
	if time.Duration(d.Timeout) != 30*time.Second {
		t.Errorf("timeout = %v, want 30s", time.Duration(d.Timeout))
	}
	if d.Provenance.ReviewedAt != "2026-08-01" || d.Provenance.Provider != "local" {
		t.Errorf("provenance = %+v (a YAML date must stay the string it was)", d.Provenance)
	}
	if d.Provenance.SchemaDigest != Digest(d) {
		t.Errorf("loaded definition is not sealed")
	}
	if d.Compatibility.AgentRuntime != ">=2.4" || !slices.Equal(d.Compatibility.Regions, []string{"cn", "us"}) {
		t.Errorf("compatibility = %+v", d.Compatibility)
	}
	if d.Handler == nil || d.Handler.Kind != "exec" || !slices.Equal(d.Handler.Argv, []string{"scripts/codex_diagnose.sh"}) {
		t.Errorf("handler = %+v", d.Handler)
	}
	// Schemas keep the key order of the file.
	if got, want := string(d.ArgumentsSchema), `{"type":"object","properties":{"include_shell_resolution":{"type":"boolean","default":true}},"additionalProperties":false}`; got != want {
		t.Errorf("arguments_schema = %s, want %s", got, want)
	}
	if len(d.Examples) != 1 || string(d.Examples[0].Arguments) != `{"include_shell_resolution":true}` {
		t.Errorf("examples = %+v", d.Examples)
	}
	if !slices.Equal(d.ACL.Execute, []string{"dev"}) || d.ACL.Deny == nil && len(d.ACL.Deny) != 0 {
		t.Errorf("acl = %+v", d.ACL)
	}

	if g := m["maintenance.codex.path_conflict_guide"]; len(g.Steps) != 2 || g.Steps[1].Action != "maintenance.codex.diagnose" {
		t.Errorf("recipe steps = %+v", g.Steps)
	}
	if p := m["maintenance"]; p.Guidance == "" || !strings.HasPrefix(p.Title, "本机维护") {
		t.Errorf("pack = %+v", p)
	}

	// JSON: surrogate-pair escapes, nested maps, numbers.
	if got := m["myapp.schedule"].Title; got != "Schedules 📅" {
		t.Errorf("title = %q", got)
	}
	cr := m["myapp.schedule.create"]
	if cr.Handler.Headers["Content-Type"] != "application/json" || cr.Requirements.MinBudget != 0.5 || cr.Health.Status != "up" {
		t.Errorf("create = %+v", cr)
	}

	// YAML merge keys: shared defaults, explicit keys win.
	pc := m["ops.purge_cache"]
	if pc.SideEffect != SideEffectImpact || pc.Owner != "sre" || pc.Handler == nil || pc.Handler.Name != "ops.restart" {
		t.Errorf("purge_cache = %+v", pc)
	}
	if m["ops.restart"].SideEffect != SideEffectWriteLocal {
		t.Errorf("restart side effect = %q", m["ops.restart"].SideEffect)
	}

	// Source positions.
	file, line, ok := Source(m["maintenance.codex.path_conflict_guide"])
	if !ok || !strings.HasSuffix(file, filepath.Join("maintenance", "codex.yaml")) || line != 45 {
		t.Errorf("Source = %q, %d, %v; want .../maintenance/codex.yaml, 45", file, line, ok)
	}
	if _, _, ok := Source(d.Clone()); ok {
		t.Error("a clone reports a source position")
	}
}

func TestLoadFSNamesFilesByFSPath(t *testing.T) {
	fsys := fstest.MapFS{
		"reg/a.yaml":         {Data: []byte("pack_id: a\nversion: 1\nresource_type: pack\ntitle: A\nowner: o\nstatus: active\n")},
		"reg/a/b.yml":        {Data: []byte("pack_id: a.b\nversion: 1\nresource_type: pack\ntitle: B\nstatus: active\n")},
		"reg/scripts/x.yaml": {Data: []byte("{{{")},
		"other/c.yaml":       {Data: []byte("{{{")},
	}
	_, err := LoadFS(fsys, "reg")
	var errs LintErrors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("LoadFS error = %v, want one lint error", err)
	}
	if e := errs[0]; e.File != "reg/a/b.yml" || e.Field != "owner" || e.Line != 1 {
		t.Errorf("error = %+v, want reg/a/b.yml:1 owner", e)
	}
	fsys["reg/a/b.yml"] = &fstest.MapFile{Data: []byte("pack_id: a.b\nversion: 1\nresource_type: pack\ntitle: B\nowner: o\nstatus: active\n")}
	caps, err := LoadFS(fsys, "reg")
	if err != nil || len(caps) != 2 {
		t.Fatalf("LoadFS = %d caps, %v", len(caps), err)
	}
	if _, err := LoadDir(filepath.Join(t.TempDir(), "missing")); err == nil || errors.Is(err, ErrLint) {
		t.Errorf("LoadDir of a missing directory: %v, want an I/O error", err)
	}
}

const packA = "pack_id: a\nversion: 1\nresource_type: pack\ntitle: A\nowner: o\nstatus: active\n"

// actionAB is a valid action under pack a; cases replace one of its lines.
const actionAB = `action_id: a.b
version: 1
resource_type: action
title: B
owner: o
status: active
side_effect: R
risk_level: low
when_to_use: [always]
arguments_schema: {type: object}
output_schema: {type: object}
handler: {kind: go, name: b}
`

// TestLoadBadInput: every kind of bad input yields a clear error naming file, line and field.
func TestLoadBadInput(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantFile  string
		wantLine  int
		wantField string
		wantMsg   string
		wantCount int // 0: exactly one error
	}{
		{name: "malformed YAML", files: map[string]string{"a.yaml": packA, "b.yaml": "action_id: a.b\n\ttitle: B\n"},
			wantFile: "b.yaml", wantLine: 2, wantMsg: "malformed YAML: found a tab character that violates indentation"},
		{name: "malformed JSON", files: map[string]string{"a.yaml": packA, "b.json": "{\n  \"action_id\": \"a.b\",\n  \"title\": ,\n}"},
			wantFile: "b.json", wantLine: 3, wantMsg: "malformed JSON: invalid character ','"},
		{name: "JSON with trailing data", files: map[string]string{"a.json": `{"pack_id": "a"} {}`},
			wantFile: "a.json", wantLine: 1, wantMsg: "unexpected data after the JSON value"},
		{name: "unknown field", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "title: B", "titel: B\ntitle: B", 1)},
			wantFile: "b.yaml", wantLine: 4, wantField: "titel", wantMsg: `unknown field "titel" (did you mean "title"?)`},
		{name: "unknown nested field", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "name: b}", "name: b, argz: [x]}", 1)},
			wantFile: "b.yaml", wantLine: 12, wantField: "handler.argz", wantMsg: `unknown field "argz" (did you mean "argv"?)`},
		{name: "wrong type integer", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "version: 1", "version: three", 1)},
			wantFile: "b.yaml", wantLine: 2, wantField: "version", wantMsg: `want an integer, got string "three"`},
		{name: "wrong type list", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "when_to_use: [always]", "when_to_use: always", 1)},
			wantFile: "b.yaml", wantLine: 9, wantField: "when_to_use", wantMsg: `want a list, got string "always"`},
		{name: "wrong type mapping", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "handler: {kind: go, name: b}", "handler: go", 1)},
			wantFile: "b.yaml", wantLine: 12, wantField: "handler", wantMsg: `want a mapping, got string "go"`},
		{name: "wrong type boolean", files: map[string]string{"a.yaml": packA, "b.yaml": actionAB + "requires_confirmation: \"yes\"\n"},
			wantFile: "b.yaml", wantLine: 13, wantField: "requires_confirmation", wantMsg: `want true or false, got string "yes"`},
		{name: "wrong type in a list", files: map[string]string{"a.yaml": packA, "b.yaml": actionAB + "tags: [ok, {a: 1}]\n"},
			wantFile: "b.yaml", wantLine: 13, wantField: "tags[1]", wantMsg: "want a string, got a mapping"},
		{name: "JSON strings must be quoted", files: map[string]string{"a.json": `{"pack_id": "a", "version": 1, "resource_type": "pack", "title": 5, "owner": "o", "status": "active"}`},
			wantFile: "a.json", wantLine: 1, wantField: "title", wantMsg: "want a string, got number 5"},
		{name: "duration not a string", files: map[string]string{"a.yaml": packA, "b.yaml": actionAB + "timeout: 30\n"},
			wantFile: "b.yaml", wantLine: 13, wantField: "timeout", wantMsg: `want a duration such as "30s", got number 30`},
		{name: "duration malformed", files: map[string]string{"a.yaml": packA, "b.yaml": actionAB + "timeout: soon\n"},
			wantFile: "b.yaml", wantLine: 13, wantField: "timeout", wantMsg: `invalid duration "soon"`},
		{name: "duplicate ids across files", files: map[string]string{"a.yaml": packA, "b.yaml": actionAB, "c.yaml": actionAB},
			wantFile: "c.yaml", wantLine: 1, wantField: "action_id", wantMsg: "duplicate id (first defined at "},
		{name: "duplicate key", files: map[string]string{"a.yaml": packA + "title: again\n"},
			wantFile: "a.yaml", wantLine: 7, wantField: "title", wantMsg: `duplicate key "title" (first at line 4)`},
		{name: "two id keys", files: map[string]string{"a.yaml": "id: a\n" + packA},
			wantFile: "a.yaml", wantLine: 2, wantField: "pack_id", wantMsg: "both id and pack_id given"},
		{name: "id key disagrees with resource_type", files: map[string]string{"a.yaml": strings.Replace(packA, "resource_type: pack", "resource_type: action", 1)},
			wantFile: "a.yaml", wantLine: 3, wantField: "resource_type", wantMsg: `pack_id names a pack but resource_type is "action"`},
		{name: "missing id", files: map[string]string{"a.yaml": strings.Replace(packA, "pack_id: a\n", "", 1)},
			wantFile: "a.yaml", wantLine: 1, wantField: "id", wantMsg: "missing id (one of id, action_id, pack_id or recipe_id)"},
		{name: "schema does not compile", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(actionAB, "arguments_schema: {type: object}", "arguments_schema: {type: object, properties: {n: {type: float}}}", 1)},
			wantFile: "b.yaml", wantLine: 10, wantField: "arguments_schema", wantMsg: "arguments_schema does not compile: at '/properties/n/type'"},
		{name: "missing parent pack", files: map[string]string{"b.yaml": actionAB},
			wantFile: "b.yaml", wantLine: 1, wantField: "action_id", wantMsg: `parent pack "a" not found`},
		{name: "typed schema digest", files: map[string]string{"a.yaml": packA + "provenance: {schema_digest: \"sha256:00\"}\n"},
			wantFile: "a.yaml", wantLine: 7, wantField: "provenance.schema_digest", wantMsg: "schema_digest is computed, never typed"},
		{name: "list item not a mapping", files: map[string]string{"a.yaml": "- " + strings.ReplaceAll(strings.TrimSpace(packA), "\n", "\n  ") + "\n- just text\n"},
			wantFile: "a.yaml", wantLine: 7, wantField: "[1]", wantMsg: `want a mapping (one definition), got string "just text"`},
		{name: "scalar document", files: map[string]string{"a.yaml": "hello\n"},
			wantFile: "a.yaml", wantLine: 1, wantMsg: `want a definition (a mapping) or a list of them, got string "hello"`},
		{name: "non-string key", files: map[string]string{"a.yaml": packA + "? [x]\n: y\n"},
			wantFile: "a.yaml", wantLine: 7, wantMsg: "mapping keys must be strings, got a list"},
		{name: "unsupported tag", files: map[string]string{"a.yaml": strings.Replace(packA, "title: A", "title: !secret A", 1)},
			wantFile: "a.yaml", wantLine: 4, wantField: "title", wantMsg: `want a string, got !secret "A"`},
		{name: "alias expansion bomb", files: map[string]string{"a.yaml": packA + aliasBomb},
			wantFile: "a.yaml", wantMsg: "document too large"},
		{name: "alias that contains itself", files: map[string]string{"a.yaml": packA + "examples: [{title: x, arguments: &t [*t]}]\n"},
			wantFile: "a.yaml", wantLine: 7, wantMsg: "an alias that contains itself"},
		{name: "every error reported", files: map[string]string{"a.yaml": packA, "b.yaml": strings.Replace(strings.Replace(actionAB, "version: 1", "version: x", 1), "owner: o", "ownr: o", 1)},
			// version: x, unknown field ownr, and so owner missing (at the definition's line).
			wantFile: "b.yaml", wantLine: 1, wantField: "owner", wantMsg: "owner is required", wantCount: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			caps, err := LoadDir(dir)
			if err == nil {
				t.Fatalf("LoadDir succeeded with %d capabilities, want an error", len(caps))
			}
			if caps != nil {
				t.Errorf("LoadDir returned capabilities with an error")
			}
			if !errors.Is(err, ErrLint) {
				t.Errorf("errors.Is(err, ErrLint) = false for %v", err)
			}
			var errs LintErrors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not LintErrors", err)
			}
			want := max(tt.wantCount, 1)
			if len(errs) != want {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), want, err)
			}
			e := errs[0]
			if e.File != filepath.Join(dir, tt.wantFile) || (tt.wantLine != 0 && e.Line != tt.wantLine) ||
				e.Field != tt.wantField || !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("error = %q\nwant file %s, line %d, field %q, msg containing %q", e.Error(), tt.wantFile, tt.wantLine, tt.wantField, tt.wantMsg)
			}
		})
	}
}

// aliasBomb expands to 10^9 strings inside a free-form field.
const aliasBomb = `examples:
  - title: bomb
    arguments:
      a0: &a0 [x, x, x, x, x, x, x, x, x, x]
      a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]
      a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]
      a3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]
      a4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]
      a5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]
      a6: &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]
      a7: &a7 [*a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6]
      a8: [*a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7]
`

// TestLoadNoCascade: a field that failed to decode is reported once, and a definition with
// a bad field still counts as present for its children.
func TestLoadNoCascade(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": strings.Replace(packA, "status: active", "status: active\ncolour: red", 1),
		"b.yaml": strings.Replace(actionAB, "handler: {kind: go, name: b}", "handler: {kind: [go], name: b}", 1),
	})
	_, err := LoadDir(dir)
	var errs LintErrors
	if !errors.As(err, &errs) {
		t.Fatalf("err = %v", err)
	}
	if len(errs) != 2 || errs[0].Field != "colour" || errs[1].Field != "handler.kind" {
		t.Fatalf("errors:\n%v\nwant exactly: unknown field colour, handler.kind wrong type", err)
	}
}

func TestParseFileNullIsAbsent(t *testing.T) {
	caps, err := ParseFile("a.yaml", []byte("pack_id: a\nversion: 1\nresource_type: pack\ntitle: A\nowner: o\nstatus: active\nreviewer:\ntags: ~\narguments_schema: null\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := caps[0]; c.Reviewer != "" || c.Tags != nil || c.ArgumentsSchema != nil {
		t.Errorf("null values not treated as absent: %+v", c)
	}
	caps, err = ParseFile("empty.yaml", []byte("# nothing here\n"))
	if err != nil || len(caps) != 0 {
		t.Errorf("empty file: %v, %v", caps, err)
	}
}

// fillAll sets every settable field reachable from v to a non-zero value; n numbers the
// values so two fills are equal and different fields differ.
func fillAll(tb testing.TB, v reflect.Value, n *int) {
	tb.Helper()
	*n++
	switch v.Type() {
	case rawMessageType:
		v.SetBytes([]byte(`{"k":` + strings.Repeat("1", *n%5+1) + `,"a":[true,null,"s"]}`))
		return
	case durationType:
		v.SetInt(int64(time.Duration(*n) * time.Second))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v" + strings.Repeat("x", *n%7) + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(tb, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(tb, v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			fillAll(tb, k, n)
			e := reflect.New(v.Type().Elem()).Elem()
			fillAll(tb, e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(tb, v.Field(i), n)
			}
		}
	default:
		tb.Fatalf("fillAll: unhandled kind %s", v.Kind())
	}
}

func fullCapability(tb testing.TB) *Capability {
	tb.Helper()
	c := new(Capability)
	n := 0
	fillAll(tb, reflect.ValueOf(c).Elem(), &n)
	return c
}

// TestEveryFieldRoundTrips writes a capability with every field set as JSON, as flow YAML
// and as block YAML, and reads each back unchanged.
func TestEveryFieldRoundTrips(t *testing.T) {
	orig := fullCapability(t)
	orig.Eff = nil
	orig.Provenance.SchemaDigest = ""
	js, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		t.Fatal(err)
	}
	block, err := yaml.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file string
		data       []byte
	}{
		{name: "json", file: "c.json", data: js},
		{name: "flow yaml", file: "c.yaml", data: js},
		{name: "block yaml", file: "c.yaml", data: block},
	} {
		t.Run(tt.name, func(t *testing.T) {
			caps, err := ParseFile(tt.file, tt.data)
			if err != nil {
				t.Fatalf("ParseFile: %v\n%s", err, tt.data)
			}
			got := caps[0]
			if !Equal(got, orig) {
				t.Errorf("not Equal after the round trip")
			}
			// Block YAML from a Go map sorts keys; compare free-form JSON canonically.
			got.Provenance.SchemaDigest = ""
			want := orig.Clone()
			for _, c := range []*Capability{got, want} {
				c.ArgumentsSchema, c.OutputSchema = canonicalRaw(c.ArgumentsSchema), canonicalRaw(c.OutputSchema)
				for i := range c.Examples {
					c.Examples[i].Arguments = canonicalRaw(c.Examples[i].Arguments)
				}
			}
			if !reflect.DeepEqual(got, want) {
				a, _ := json.Marshal(got)
				t.Errorf("round trip changed the capability:\n got %s\nwant %s", a, js)
			}
		})
	}
}

// TestPositionsAreReleased: the side table of source positions must not keep capabilities
// (or itself) growing in a daemon that reloads its registry.
func TestPositionsAreReleased(t *testing.T) {
	// Count only this test's entries: other tests load and drop capabilities concurrently.
	const file = "positions-released.yaml"
	count := func() int {
		n := 0
		positions.Range(func(_, v any) bool {
			if v.(*sourcePos).file == file {
				n++
			}
			return true
		})
		return n
	}
	var src strings.Builder
	for i := range 500 {
		src.WriteString("- pack_id: p" + strconv.Itoa(i) + "\n  version: 1\n")
	}
	caps, err := ParseFile(file, []byte(src.String()))
	if err != nil || len(caps) != 500 {
		t.Fatalf("ParseFile: %d, %v", len(caps), err)
	}
	if got := count(); got != 500 {
		t.Fatalf("positions holds %d entries of %s, want 500", got, file)
	}
	runtime.KeepAlive(caps)
	caps = nil
	deadline := time.Now().Add(5 * time.Second)
	for count() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(); got > 0 {
		t.Errorf("positions still holds %d entries after the capabilities were dropped", got)
	}
}

// TestLoadTypeFromIDKey: pack_id, action_id and recipe_id name the resource type, so a
// definition that leaves resource_type out is what its id key says (it was refused as
// "resource_type is required", then "handler is only valid on an action" on an action_id).
func TestLoadTypeFromIDKey(t *testing.T) {
	drop := func(s string) string {
		return strings.Replace(s, "resource_type: "+strings.SplitN(s, "_id", 2)[0]+"\n", "", 1)
	}
	fsys := fstest.MapFS{
		"reg/a.yaml": &fstest.MapFile{Data: []byte(drop(packA))},
		"reg/b.yaml": &fstest.MapFile{Data: []byte(drop(actionAB))},
	}
	if strings.Contains(string(fsys["reg/b.yaml"].Data), "resource_type") || strings.Contains(string(fsys["reg/a.yaml"].Data), "resource_type") {
		t.Fatal("fixture still names resource_type")
	}
	caps, err := LoadFS(fsys, "reg")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ResourceType{}
	for _, c := range caps {
		got[c.ID] = c.ResourceType
	}
	if got["a"] != TypePack || got["a.b"] != TypeAction {
		t.Fatalf("types: %v", got)
	}
}
