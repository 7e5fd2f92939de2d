package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// simpleSchemaCases are schemas the fast check must accept (they compile) and schemas it
// must leave to the compiler, each with whether it compiles.
var simpleSchemaCases = []struct {
	raw      string
	fast     bool // simpleSchemaCompiles must answer this
	compiles bool
}{
	{`{"type":"object"}`, true, true},
	{`true`, true, true},
	{`{}`, true, true},
	{`{"type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":["integer","null"],"minimum":0,"default":5}},"required":["q"],"additionalProperties":false}`, true, true},
	{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":3}}}`, true, true},
	{`{"type":"object","properties":{"x":{"const":1,"examples":[1],"title":"X"}}}`, true, true},
	// compile errors the fast check must not hide
	{`{"type":"float"}`, false, false},
	{`{"type":[]}`, false, false},
	{`{"type":["string","string"]}`, false, false},
	{`{"required":"q"}`, false, false},
	{`{"required":["q","q"]}`, false, false},
	{`{"properties":[]}`, false, false},
	{`{"properties":{"a":5}}`, false, false},
	{`{"minLength":-1}`, false, false},
	{`{"minLength":1.5}`, false, false},
	{`{"maxItems":"3"}`, false, false},
	{`{"minimum":"0"}`, false, false},
	{`{"description":3}`, false, false},
	{`{"enum":{}}`, false, false},
	{`{"items":[{"type":"string"}]}`, false, false},
	{`{"$ref":"#/$defs/missing"}`, false, false},
	{`{"$ref":"http://example.com/s.json"}`, false, false},
	{`{"pattern":"("}`, false, false},
	{`"object"`, false, false},
	{`{"type":"object"} {}`, false, false},
	{`{"type":"object"`, false, false},
	// valid, but outside the plain subset: compiled
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false, true},
	{`{"type":"string","pattern":"^a+$","format":"email"}`, false, true},
	{`{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false, true},
	{`{"type":"object","x-extension":{"type":5}}`, false, true},
}

// TestSimpleSchemaCompiles checks the fast check against the compiler on fixed cases: it
// accepts the plain schemas, and never accepts one that does not compile.
func TestSimpleSchemaCompiles(t *testing.T) {
	for _, tc := range simpleSchemaCases {
		_, err := compileSchema([]byte(tc.raw))
		if (err == nil) != tc.compiles {
			t.Fatalf("%s: compile error %v, want compiles=%v (the case table is wrong)", tc.raw, err, tc.compiles)
		}
		if got := simpleSchemaCompiles([]byte(tc.raw)); got != tc.fast {
			t.Errorf("simpleSchemaCompiles(%s) = %v, want %v", tc.raw, got, tc.fast)
		}
	}
}

// TestSimpleSchemaEvalSets runs every schema of the evaluation catalogues, and variants of
// each with one keyword's value broken, through the fast check and the compiler: whatever
// the fast check accepts compiles, and it accepts most of the catalogues' schemas (it is
// what makes an import's lint cheap).
func TestSimpleSchemaEvalSets(t *testing.T) {
	var schemas [][]byte
	for _, set := range []string{"metatool", "seal_tools", "hammerbench_zh", "livemcpbench"} {
		b, err := os.ReadFile(filepath.Join(evalDir, set, "tools.jsonl"))
		if err != nil {
			t.Skipf("evaluation set %s not available (%v): skipping", set, err)
		}
		caps, err := Import(bytes.NewReader(b), FormatJSONL)
		if err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		for _, c := range caps {
			for _, s := range []json.RawMessage{c.ArgumentsSchema, c.OutputSchema} {
				if len(s) > 0 {
					schemas = append(schemas, s)
				}
			}
		}
	}
	fast, checked := 0, 0
	check := func(raw []byte) {
		checked++
		if !simpleSchemaCompiles(raw) {
			return
		}
		fast++
		if _, err := compileSchema(raw); err != nil {
			t.Fatalf("simpleSchemaCompiles accepted a schema that does not compile (%v): %s", err, raw)
		}
	}
	broken := []any{"float", -1, 1.5, "x", []any{}, []any{"a", "a"}, map[string]any{}, 5, nil}
	originals := 0
	for _, s := range schemas {
		check(s)
		originals++
		if originals%7 != 0 { // variants of every 7th schema keep the test short
			continue
		}
		var m map[string]any
		if json.Unmarshal(s, &m) != nil {
			continue
		}
		for k := range m {
			for _, bad := range broken {
				v := map[string]any{}
				for k2, x := range m {
					v[k2] = x
				}
				v[k] = bad
				b, _ := json.Marshal(v) // decoded JSON always marshals
				check(b)
			}
		}
	}
	origFast := 0
	for _, s := range schemas {
		if simpleSchemaCompiles(s) {
			origFast++
		}
	}
	t.Logf("%d catalogue schemas, %d of them on the fast path; %d checked with variants, %d accepted", len(schemas), origFast, checked, fast)
	if origFast*2 < len(schemas) {
		t.Errorf("the fast check accepts %d of %d catalogue schemas, want most", origFast, len(schemas))
	}
}

// FuzzSimpleSchemaCompiles: whatever the fast check accepts, the compiler compiles.
func FuzzSimpleSchemaCompiles(f *testing.F) {
	for _, tc := range simpleSchemaCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if simpleSchemaCompiles(raw) {
			if _, err := compileSchema(raw); err != nil {
				t.Fatalf("simpleSchemaCompiles accepted a schema that does not compile (%v): %q", err, raw)
			}
		}
	})
}
