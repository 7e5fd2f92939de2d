package testcat

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/capdex/capdex/registry"
)

// Mutation is a copy of a capability with one field changed.
type Mutation struct {
	Field string
	Cap   *registry.Capability
}

// Mutations returns, for every field of c but its id and the computed Eff, a clone of c
// with that field changed (a string extended, a list grown, a flag flipped, a number
// raised, a schema given a property; every leaf of a nested value changed at once). Tests
// use it to check that a structure derived from capabilities reads no field its reuse
// rules ignore: whatever the field, a structure that changes must be rebuilt.
func Mutations(c *registry.Capability) []Mutation {
	var out []Mutation
	t := reflect.TypeFor[registry.Capability]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "ID" || f.Name == "Eff" || !f.IsExported() {
			continue
		}
		x := c.Clone()
		mutate(reflect.ValueOf(x).Elem().Field(i))
		out = append(out, Mutation{Field: f.Name, Cap: x})
	}
	return out
}

var rawType = reflect.TypeFor[json.RawMessage]()

// mutate changes every leaf of v (settable).
func mutate(v reflect.Value) {
	switch {
	case v.Type() == rawType:
		v.SetBytes([]byte(`{"type":"object","properties":{"zqmutated":{"type":"string","description":"a mutated parameter"}}}`))
		return
	case v.Type() == reflect.TypeFor[time.Duration]():
		v.SetInt(v.Int() + int64(time.Second))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + " zqmutated words")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Pointer:
		n := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			n.Elem().Set(v.Elem())
		}
		mutate(n.Elem())
		v.Set(n)
	case reflect.Slice:
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len()+1)
		reflect.Copy(n, v)
		e := reflect.New(v.Type().Elem()).Elem()
		mutate(e)
		v.Set(reflect.Append(n, e))
	case reflect.Map:
		n := reflect.MakeMap(v.Type())
		for _, k := range v.MapKeys() {
			n.SetMapIndex(k, v.MapIndex(k))
		}
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		mutate(k)
		mutate(e)
		n.SetMapIndex(k, e)
		v.Set(n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				mutate(v.Field(i))
			}
		}
	}
}
