package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the location every schema is compiled at; it never leaves this file.
const schemaURL = "mem:///schema.json"

// errNoRemoteRefs is what the loader answers for any reference outside the schema.
var errNoRemoteRefs = errors.New("references outside the schema are not allowed")

// refuseLoader refuses every external reference, so compiling a schema never touches the
// file system or the network. The metaschemas of the known drafts are built in.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errNoRemoteRefs }

// compileSchema compiles one JSON Schema document. Schemas without $schema are read as
// draft 2020-12.
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("invalid JSON")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// schemaCache remembers the verdict of schemaError per schema text: importing a catalogue and
// linting it afterwards compiles each schema once. It is cleared when full.
var schemaCache = struct {
	sync.Mutex
	m map[[32]byte]string
}{m: make(map[[32]byte]string)}

const schemaCacheMax = 1 << 16

// schemaError compiles raw and returns "" when it compiles, else a one-line message.
func schemaError(raw []byte) string {
	key := sha256.Sum256(raw)
	schemaCache.Lock()
	msg, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return msg
	}
	if !simpleSchemaCompiles(raw) {
		if _, err := compileSchema(raw); err != nil {
			msg = flattenSchemaError(err)
		}
	}
	schemaCache.Lock()
	if len(schemaCache.m) >= schemaCacheMax {
		clear(schemaCache.m)
	}
	schemaCache.m[key] = msg
	schemaCache.Unlock()
	return msg
}

// validateInstance validates a JSON instance against a schema that compiles and returns ""
// when it is valid, else a one-line message.
func validateInstance(schema, instance []byte) string {
	sch, err := compileSchema(schema)
	if err != nil {
		return flattenSchemaError(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return "invalid JSON"
	}
	if err := sch.Validate(v); err != nil {
		return flattenSchemaError(err)
	}
	return ""
}

// flattenSchemaError turns the compiler's and validator's indented error trees into one line
// listing the leaf causes ("at '/properties/n/type': got string, want array; ...").
func flattenSchemaError(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		err = sve.Err
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		var leaves []string
		collectLeaves(ve, &leaves)
		const max = 3
		if len(leaves) > max {
			leaves = append(leaves[:max], "...")
		}
		return strings.Join(leaves, "; ")
	}
	msg := strings.ReplaceAll(err.Error(), schemaURL, "schema")
	return strings.Join(strings.Fields(msg), " ")
}

func collectLeaves(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) == 0 {
		leaf := &jsonschema.ValidationError{SchemaURL: ve.SchemaURL, InstanceLocation: ve.InstanceLocation, ErrorKind: ve.ErrorKind}
		*out = append(*out, strings.Join(strings.Fields(leaf.Error()), " "))
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out)
	}
}

// forEachParallel calls fn(0..n-1) on up to GOMAXPROCS goroutines and returns when all
// calls have returned. fn is called concurrently.
func forEachParallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+31)/32)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// schemaTypeNames maps type names foreign catalogues use to JSON Schema types.
var schemaTypeNames = map[string]string{
	"array": "array", "boolean": "boolean", "integer": "integer", "null": "null",
	"number": "number", "object": "object", "string": "string",
	"float": "number", "double": "number", "decimal": "number", "int": "integer",
	"long": "integer", "str": "string", "text": "string", "bool": "boolean",
	"dict": "object", "map": "object", "list": "array", "tuple": "array",
}

// schemaKeywordsWithSchema lists keywords whose value is one schema; schemaKeywordsWithMap
// those whose value maps names to schemas; schemaKeywordsWithList those holding a list.
var (
	schemaKeywordsWithSchema = []string{"items", "additionalProperties", "additionalItems", "not",
		"if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	schemaKeywordsWithMap  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaKeywordsWithList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// repairSchema fixes the mistakes foreign tool catalogues commonly make so that a schema
// compiles: type names such as "float" or "int", a non-list "examples", draft-04 boolean
// exclusiveMinimum/exclusiveMaximum, an unknown $schema and a non-list "required". It
// returns the repaired schema and whether anything changed.
func repairSchema(raw []byte) ([]byte, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return raw, false
	}
	if !repairNode(v, 0) {
		return raw, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw, false
	}
	return out, true
}

func repairNode(v any, depth int) bool {
	m, ok := v.(map[string]any)
	if !ok || depth > maxDepth {
		return false
	}
	changed := false
	switch t := m["type"].(type) {
	case string:
		if n, ok := schemaTypeNames[strings.ToLower(t)]; ok {
			if n != t {
				m["type"], changed = n, true
			}
		} else {
			delete(m, "type")
			changed = true
		}
	case []any:
		var keep []any
		for _, x := range t {
			if s, ok := x.(string); ok {
				if n, ok := schemaTypeNames[strings.ToLower(s)]; ok && !containsAny(keep, n) {
					keep = append(keep, n)
				}
			}
		}
		if len(keep) != len(t) || !equalAny(keep, t) {
			changed = true
			if len(keep) == 0 {
				delete(m, "type")
			} else {
				m["type"] = keep
			}
		}
	case nil:
	default:
		delete(m, "type")
		changed = true
	}
	if ex, ok := m["examples"]; ok {
		if _, isList := ex.([]any); !isList {
			m["examples"], changed = []any{ex}, true
		}
	}
	for _, kw := range [...]struct{ excl, bound string }{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		b, ok := m[kw.excl].(bool)
		if !ok {
			continue
		}
		changed = true
		delete(m, kw.excl)
		if bound, has := m[kw.bound]; b && has {
			m[kw.excl] = bound
			delete(m, kw.bound)
		}
	}
	if s, ok := m["$schema"]; ok {
		if str, isStr := s.(string); !isStr || !knownMetaschema(str) {
			delete(m, "$schema")
			changed = true
		}
	}
	if r, ok := m["required"]; ok {
		if _, isList := r.([]any); !isList {
			delete(m, "required")
			changed = true
		}
	}
	for _, kw := range schemaKeywordsWithSchema {
		if repairNode(m[kw], depth+1) {
			changed = true
		}
	}
	for _, kw := range schemaKeywordsWithMap {
		if sub, ok := m[kw].(map[string]any); ok {
			for _, s := range sub {
				if repairNode(s, depth+1) {
					changed = true
				}
			}
		}
	}
	for _, kw := range schemaKeywordsWithList {
		if list, ok := m[kw].([]any); ok {
			for _, s := range list {
				if repairNode(s, depth+1) {
					changed = true
				}
			}
		}
	}
	return changed
}

func knownMetaschema(u string) bool {
	u = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://"), "#")
	switch u {
	case "json-schema.org/schema", "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema",
		"json-schema.org/draft-07/schema", "json-schema.org/draft/2019-09/schema",
		"json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func equalAny(a, b []any) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// resetSchemaCache forgets every cached verdict (for benchmarks that measure cold imports).
func resetSchemaCache() {
	schemaCache.Lock()
	clear(schemaCache.m)
	schemaCache.Unlock()
}
