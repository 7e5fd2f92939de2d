package server

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/registry"
)

// documentedTypes are the Go types behind the document's schemas, by the names in
// schemaTypes.
var documentedTypes = map[string]reflect.Type{
	"registry.SearchRequest":   reflect.TypeFor[registry.SearchRequest](),
	"registry.StructuredMatch": reflect.TypeFor[registry.StructuredMatch](),
	"registry.SearchResponse":  reflect.TypeFor[registry.SearchResponse](),
	"registry.Match":           reflect.TypeFor[registry.Match](),
	"registry.NextStep":        reflect.TypeFor[registry.NextStep](),
	"registry.Explanation":     reflect.TypeFor[registry.Explanation](),
	"registry.EvidenceItem":    reflect.TypeFor[registry.EvidenceItem](),
	"registry.ScoreComponent":  reflect.TypeFor[registry.ScoreComponent](),
	"registry.SearchMeta":      reflect.TypeFor[registry.SearchMeta](),
	"server.ListRequest":       reflect.TypeFor[ListRequest](),
	"engine.ListResponse":      reflect.TypeFor[engine.ListResponse](),
	"engine.ListItem":          reflect.TypeFor[engine.ListItem](),
	"server.DescribeRequest":   reflect.TypeFor[DescribeRequest](),
	"server.DescribeResult":    reflect.TypeFor[DescribeResult](),
	"registry.Example":         reflect.TypeFor[registry.Example](),
	"registry.RecipeStep":      reflect.TypeFor[registry.RecipeStep](),
	"govern.RunRequest":        reflect.TypeFor[govern.RunRequest](),
	"govern.RunResult":         reflect.TypeFor[govern.RunResult](),
	"registry.Capability":      reflect.TypeFor[registry.Capability](),
	"registry.ACL":             reflect.TypeFor[registry.ACL](),
	"registry.Handler":         reflect.TypeFor[registry.Handler](),
	"engine.Funnel":            reflect.TypeFor[engine.Funnel](),
	"engine.CapabilityFunnel":  reflect.TypeFor[engine.CapabilityFunnel](),
	"server.PutResult":         reflect.TypeFor[PutResult](),
	"server.DeleteResult":      reflect.TypeFor[DeleteResult](),
	"server.ErrorBody":         reflect.TypeFor[ErrorBody](),
	"server.ErrorDetail":       reflect.TypeFor[ErrorDetail](),
}

// jsonFields returns the JSON field names of a struct type as encoding/json sees them
// (embedded structs flattened, "-" skipped).
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		} `json:"schemas"`
	} `json:"components"`
}

func TestOpenAPI(t *testing.T) {
	ts := sharedServer(t)
	r := ts.call(t, "GET", "/openapi.json", devKey, nil)
	if r.status != 200 {
		t.Fatalf("GET /openapi.json: %d", r.status)
	}
	var doc openAPIDoc
	r.json(t, &doc)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true}

	t.Run("every route is documented", func(t *testing.T) {
		for _, rt := range ts.routes() {
			ops, ok := doc.Paths[rt.path]
			if !ok {
				t.Errorf("%s %s: path not documented", rt.method, rt.path)
				continue
			}
			if _, ok := ops[strings.ToLower(rt.method)]; !ok {
				t.Errorf("%s %s: method not documented", rt.method, rt.path)
			}
		}
	})

	t.Run("every documented operation is routed", func(t *testing.T) {
		mux := ts.mux
		for path, ops := range doc.Paths {
			for m := range ops {
				if !methods[m] {
					continue
				}
				concrete := strings.ReplaceAll(path, "{id}", "demo.echo")
				req := httptest.NewRequest(strings.ToUpper(m), concrete, nil)
				_, pattern := mux.Handler(req)
				if want := strings.ToUpper(m) + " " + path; pattern != want {
					t.Errorf("%s %s is routed to %q, want %q", strings.ToUpper(m), path, pattern, want)
				}
			}
		}
	})

	t.Run("schemas name the Go types' JSON fields", func(t *testing.T) {
		for name, goName := range schemaTypes {
			typ, ok := documentedTypes[goName]
			if !ok {
				t.Errorf("schema %s: no Go type %s in the test's table", name, goName)
				continue
			}
			s, ok := doc.Components.Schemas[name]
			if !ok {
				t.Errorf("schema %s missing from the document", name)
				continue
			}
			var props []string
			for p := range s.Properties {
				props = append(props, p)
			}
			sort.Strings(props)
			if want := jsonFields(typ); !slices.Equal(props, want) {
				t.Errorf("schema %s (%s):\n documented %v\n Go fields  %v", name, goName, props, want)
			}
			for _, req := range s.Required {
				if _, ok := s.Properties[req]; !ok {
					t.Errorf("schema %s requires %q, which it does not define", name, req)
				}
			}
		}
		// Request bodies refuse unknown fields, and say so.
		for _, name := range []string{"SearchRequest", "ListRequest", "DescribeRequest", "RunRequest"} {
			if ap := doc.Components.Schemas[name].AdditionalProperties; ap == nil || *ap {
				t.Errorf("request schema %s does not set additionalProperties: false", name)
			}
		}
	})

	t.Run("every referenced schema exists", func(t *testing.T) {
		for _, ref := range refsIn(r.body) {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if _, ok := doc.Components.Schemas[name]; !ok {
				t.Errorf("dangling $ref %s", ref)
			}
		}
	})
}

// refsIn returns every "$ref" value in a JSON document.
func refsIn(b []byte) []string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "$ref" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
