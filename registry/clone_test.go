package registry

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCloneIsDeep fills every field, clones, checks equality, then changes every element of
// the clone reachable through a slice, map or pointer and checks the original is untouched.
func TestCloneIsDeep(t *testing.T) {
	orig := fullCapability(t)
	pristine := fullCapability(t)
	cl := orig.Clone()
	if !reflect.DeepEqual(cl, orig) {
		t.Fatal("clone differs from the original")
	}
	scribble(reflect.ValueOf(cl).Elem())
	if !reflect.DeepEqual(orig, pristine) {
		t.Fatal("changing the clone changed the original: memory is shared")
	}
	if (*Capability)(nil).Clone() != nil {
		t.Error("nil.Clone() != nil")
	}
}

// scribble changes every string, number, bool and byte reachable from v in place, going
// through pointers, slices and maps (map values are replaced).
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Capability)
		equal  bool
	}{
		{name: "identical", mutate: func(c *Capability) {}, equal: true},
		{name: "schema key order", mutate: func(c *Capability) {
			c.ArgumentsSchema = json.RawMessage(`{"required":["order"],"type":"object","properties":{"order":{"type":"string"}}}`)
		}, equal: true},
		{name: "schema whitespace", mutate: func(c *Capability) { c.OutputSchema = json.RawMessage(" { \"type\" : \"object\" } ") }, equal: true},
		{name: "example arguments key order", mutate: func(c *Capability) { c.Examples[0].Arguments = json.RawMessage(` {"order": "A1"}`) }, equal: true},
		{name: "empty list equals absent", mutate: func(c *Capability) { c.Aliases = []string{}; c.Tags = []string{} }, equal: true},
		{name: "empty headers equal absent", mutate: func(c *Capability) { c.Handler.Headers = map[string]string{} }, equal: true},
		{name: "effective view ignored", mutate: func(c *Capability) { c.Eff = &Effective{Enabled: true, Packs: []string{"shop"}} }, equal: true},
		{name: "schema digest ignored", mutate: func(c *Capability) { c.Provenance.SchemaDigest = "sha256:1" }, equal: true},
		{name: "title", mutate: func(c *Capability) { c.Title = "Refund" }},
		{name: "version", mutate: func(c *Capability) { c.Version = 3 }},
		{name: "tags", mutate: func(c *Capability) { c.Tags = []string{"money"} }},
		{name: "acl", mutate: func(c *Capability) { c.ACL.Deny = []string{"guest"} }},
		{name: "schema value", mutate: func(c *Capability) { c.OutputSchema = json.RawMessage(`{"type":"array"}`) }},
		{name: "handler header", mutate: func(c *Capability) { c.Handler.Headers = map[string]string{"X": "1"} }},
		{name: "example arguments", mutate: func(c *Capability) { c.Examples[0].Arguments = json.RawMessage(`{"order":"B2"}`) }},
		{name: "enabled set to false", mutate: func(c *Capability) { f := false; c.Enabled = &f }},
		{name: "provenance reviewed_at", mutate: func(c *Capability) { c.Provenance.ReviewedAt = "2026-01-01" }},
		{name: "invalid schema text", mutate: func(c *Capability) { c.OutputSchema = json.RawMessage(`{type: object}`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, a, _ := validRegistry(t)
			b := a.Clone()
			tt.mutate(b)
			if got := Equal(a, b); got != tt.equal {
				t.Errorf("Equal = %v, want %v", got, tt.equal)
			}
			if got := Equal(b, a); got != tt.equal {
				t.Errorf("Equal is not symmetric")
			}
		})
	}
	_, a, _ := validRegistry(t)
	if !Equal(nil, nil) || Equal(a, nil) || Equal(nil, a) {
		t.Error("Equal with nil")
	}
	full := fullCapability(t)
	if !Equal(full, full.Clone()) {
		t.Error("a fully populated capability is not Equal to its clone")
	}
}
