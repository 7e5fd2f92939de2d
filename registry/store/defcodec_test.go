package store

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/capdex/capdex/registry"
)

// randomCap fills every stored field of a Capability (found by reflection, so a field
// added to the type and not to the codec fails TestDefCodecSameAsJSON) with values that
// exercise what a JSON round trip changes: empty and nil lists and maps, invalid UTF-8,
// HTML characters, embedded JSON with spaces.
func randomCap(r *rand.Rand) *registry.Capability {
	c := new(registry.Capability)
	fill(r, reflect.ValueOf(c).Elem(), 0)
	c.Eff = nil
	return c
}

var (
	codecStrings = []string{"", "a", "deploy the app", "a<b>&c", "\xff\xfebad", "汉字 工具", "line\u2028sep", `quote " and \ back`, "x\x00y"}
	codecRaws    = []string{"", `{"type":"object"}`, `{ "type" : "object", "properties": {"q": {"type":"string", "description": "<b>&</b>"}} }`, "[1, 2,\n 3]", "null", `"s"`, "true"}
)

func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[json.RawMessage]():
		if s := codecRaws[r.IntN(len(codecRaws))]; s != "" || r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(json.RawMessage(s)))
		}
		return
	case reflect.TypeFor[registry.Duration]():
		v.SetInt(r.Int64N(1 << 40)) // JSON refuses negative durations
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(codecStrings[r.IntN(len(codecStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(1<<20) - 1<<10)
	case reflect.Float64:
		v.SetFloat([]float64{0, 1.5, -2, 1e-300, 12345.678}[r.IntN(5)])
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			return // nil
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := r.IntN(4); {
		case n == 0: // nil
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.IntN(4); {
		case n == 0:
		case n == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range n {
				k, x := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(r, k, depth+1)
				fill(r, x, depth+1)
				m.SetMapIndex(k, x)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	default:
		panic("randomCap: no filler for " + v.Type().String())
	}
}

// jsonRoundTrip is what a store that kept JSON read back for c.
func jsonRoundTrip(t testing.TB, c *registry.Capability) *registry.Capability {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out := new(registry.Capability)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out
}

// TestDefCodecSameAsJSON: the binary encoding reads back what a JSON round trip gives,
// for random definitions that fill every field, and encodes deterministically.
func TestDefCodecSameAsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 4))
	for i := range 3000 {
		c := randomCap(r)
		want := jsonRoundTrip(t, c)
		b := encodeDefBinary(c)
		got, err := decodeDefBinary(b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("case %d: binary round trip differs from JSON's:\n got %s\nwant %s", i, gj, wj)
		}
		if again := encodeDefBinary(got); !bytes.Equal(again, b) {
			t.Fatalf("case %d: re-encoding the decoded definition gives other bytes", i)
		}
	}
}

// TestDefCodecDamaged: every truncation of an encoding, and trailing bytes, fail to decode
// (no panic).
func TestDefCodecDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 50 {
		b := encodeDefBinary(randomCap(r))
		for n := range len(b) {
			if _, err := decodeDefBinary(b[:n]); err == nil {
				t.Fatalf("a truncation to %d of %d bytes decoded", n, len(b))
			}
		}
		if _, err := decodeDefBinary(append(b[:len(b):len(b)], 0)); err == nil {
			t.Fatal("trailing bytes decoded")
		}
	}
}

// TestStoreReadsJSONDefinitions: a definition stored as JSON (by an earlier build) is read
// as before by Get, Active and GetActive, and an identical Put of it is a no-op.
func TestStoreReadsJSONDefinitions(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	c := genCap("old.json", 1, 3)
	if err := s.Put(ctx, c, "t"); err != nil {
		t.Fatal(err)
	}
	want, err := s.Get("old.json", 1)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RawSet(defKey("old.json", 1), j); err != nil {
		t.Fatal(err)
	}
	raw, err := s.RawGet(defKey("old.json", 1))
	if err != nil || raw[0] != '{' {
		t.Fatalf("the definition is not stored as JSON now: %v %.20q", err, raw)
	}
	got, err := s.Get("old.json", 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Get of a JSON definition: %+v, %v; want %+v", got, err, want)
	}
	all, _, err := s.Active()
	if err != nil || len(all) != 1 || !reflect.DeepEqual(all[0], want) {
		t.Fatalf("Active of a JSON definition: %v, %v", all, err)
	}
	gen := s.Generation()
	if err := s.Put(ctx, c, "t"); err != nil || s.Generation() != gen {
		t.Fatalf("identical Put over a JSON definition: %v, generation %d → %d", err, gen, s.Generation())
	}
}

// FuzzDefCodec: decoding arbitrary bytes never panics, and what decodes is stable under
// the encoding after one round (the first re-encoding normalises what no encoder writes:
// invalid UTF-8, embedded JSON that is not compact).
func FuzzDefCodec(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		f.Add(encodeDefBinary(randomCap(r)))
	}
	f.Add([]byte{defBinaryV1})
	f.Add([]byte{defBinaryV1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeDefBinary(b)
		if err != nil {
			return
		}
		c2, err := decodeDefBinary(encodeDefBinary(c))
		if err != nil {
			t.Fatalf("re-encoded definition does not decode: %v", err)
		}
		c3, err := decodeDefBinary(encodeDefBinary(c2))
		if err != nil || !reflect.DeepEqual(c3, c2) {
			t.Fatalf("encoding not stable: %v\n%+v\n%+v", err, c2, c3)
		}
	})
}
