package registry

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
)

// simpleSchemaCompiles reports whether raw is certain to compile (compileSchema succeeds)
// without compiling it: a draft 2020-12 schema built only of the plain keywords tool
// catalogues use (type, properties, required, items, additionalProperties, enum, const,
// description, title, default, examples and numeric bounds), each with a value the
// draft 2020-12 metaschema accepts. It answers false for anything else (a $schema, a
// reference, a pattern, a format, an unknown keyword, a value of the wrong type, ...), and
// the schema is then compiled. Compiling one schema validates it against the metaschema
// and costs about ten times this check, which made the schemas most of an import's lint.
func simpleSchemaCompiles(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return simpleSchema(v, 0)
}

// simpleSimpleTypes are the draft 2020-12 metaschema's simpleTypes.
var simpleSimpleTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// simpleSchema checks one schema position (see simpleSchemaCompiles).
func simpleSchema(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch s := v.(type) {
	case bool:
		return true
	case map[string]any:
		for k, x := range s {
			if !simpleKeyword(k, x, depth) {
				return false
			}
		}
		return true
	}
	return false
}

func simpleKeyword(k string, x any, depth int) bool {
	switch k {
	case "type":
		switch t := x.(type) {
		case string:
			return slices.Contains(simpleSimpleTypes, t)
		case []any:
			if len(t) == 0 {
				return false
			}
			seen := make([]string, 0, len(t))
			for _, e := range t {
				s, ok := e.(string)
				if !ok || !slices.Contains(simpleSimpleTypes, s) || slices.Contains(seen, s) {
					return false
				}
				seen = append(seen, s)
			}
			return true
		}
		return false
	case "properties":
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for _, p := range m {
			if !simpleSchema(p, depth+1) {
				return false
			}
		}
		return true
	case "items", "additionalProperties":
		return simpleSchema(x, depth+1)
	case "required":
		l, ok := x.([]any)
		if !ok {
			return false
		}
		seen := make(map[string]bool, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	case "description", "title":
		_, ok := x.(string)
		return ok
	case "enum", "examples":
		_, ok := x.([]any)
		return ok
	case "default", "const":
		return true
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		_, ok := x.(json.Number)
		return ok
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		n, ok := x.(json.Number)
		return ok && len(n) > 0 && len(n) <= 15 && !bytes.ContainsFunc([]byte(n), func(r rune) bool { return r < '0' || r > '9' })
	}
	return false
}
