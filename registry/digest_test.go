package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func TestDigestFormatAndGolden(t *testing.T) {
	_, a, _ := validRegistry(t)
	d := Digest(a)
	if !digestRE.MatchString(d) {
		t.Fatalf("Digest = %q, want sha256:<64 hex>", d)
	}
	// The digest is persisted and pins confirmations: its canonical form must not drift.
	// The value was cross-checked with Python: sha256 of json.dumps(doc, sort_keys=True,
	// separators=(",", ":"), ensure_ascii=False). Change it only on purpose.
	const golden = "sha256:b0ef57e4a704d7ec6a3c42493941476cd4b8f99efcda022a72c3f94821675e1c"
	if d != golden {
		t.Errorf("Digest = %s, want %s", d, golden)
	}
	if got := Digest(a.Clone()); got != d {
		t.Errorf("Digest of a clone = %s, want %s", got, d)
	}
	Seal(a)
	if a.Provenance.SchemaDigest != d {
		t.Errorf("Seal set %q, want %q", a.Provenance.SchemaDigest, d)
	}
	if Digest(a) != d {
		t.Error("the digest depends on the stored digest")
	}
}

// TestDigestCoversItsFields changes each field the digest covers, and each it must ignore.
func TestDigestCoversItsFields(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Capability)
		changes bool
	}{
		{name: "id", mutate: func(c *Capability) { c.ID = "shop.refund2" }, changes: true},
		{name: "version", mutate: func(c *Capability) { c.Version++ }, changes: true},
		{name: "title", mutate: func(c *Capability) { c.Title += "!" }, changes: true},
		{name: "summary", mutate: func(c *Capability) { c.Summary = "refunds" }, changes: true},
		{name: "when_to_use", mutate: func(c *Capability) { c.WhenToUse = append(c.WhenToUse, "x") }, changes: true},
		{name: "when_not_to_use", mutate: func(c *Capability) { c.WhenNotToUse = []string{"x"} }, changes: true},
		{name: "arguments_schema", mutate: func(c *Capability) { c.ArgumentsSchema = json.RawMessage(`{"type":"object"}`) }, changes: true},
		{name: "output_schema", mutate: func(c *Capability) { c.OutputSchema = json.RawMessage(`{"type":"array"}`) }, changes: true},
		{name: "handler url", mutate: func(c *Capability) { c.Handler.URL += "/v2" }, changes: true},
		{name: "handler header", mutate: func(c *Capability) { c.Handler.Headers = map[string]string{"X-A": "1"} }, changes: true},
		{name: "handler removed", mutate: func(c *Capability) { c.Handler = nil }, changes: true},
		{name: "side_effect", mutate: func(c *Capability) { c.SideEffect = SideEffectImpact }, changes: true},
		{name: "schema key order", mutate: func(c *Capability) {
			c.ArgumentsSchema = json.RawMessage(`{"required":["order"],"properties":{"order":{"type":"string"}},"type":"object"}`)
		}},
		{name: "schema whitespace", mutate: func(c *Capability) {
			c.ArgumentsSchema = json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"order\": {\"type\": \"string\"}},\n  \"required\": [\"order\"]\n}\n")
		}},
		{name: "schema string escapes", mutate: func(c *Capability) {
			c.ArgumentsSchema = json.RawMessage(`{"type":"object","properties":{"\u006frder":{"type":"string"}},"required":["order"]}`)
		}},
		{name: "empty when_not_to_use", mutate: func(c *Capability) { c.WhenNotToUse = []string{} }},
		{name: "tags", mutate: func(c *Capability) { c.Tags = []string{"money"} }},
		{name: "owner", mutate: func(c *Capability) { c.Owner = "someone" }},
		{name: "risk level", mutate: func(c *Capability) { c.RiskLevel = RiskHigh }},
		{name: "effective view", mutate: func(c *Capability) { c.Eff = &Effective{Packs: []string{"shop"}} }},
		{name: "stored digest", mutate: func(c *Capability) { c.Provenance.SchemaDigest = "sha256:00" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, a, _ := validRegistry(t)
			before := Digest(a)
			tt.mutate(a)
			if changed := Digest(a) != before; changed != tt.changes {
				t.Errorf("digest changed = %v, want %v", changed, tt.changes)
			}
		})
	}
}

// TestCanonicalJSON checks the canonical form against encoding/json: the canonical text is
// valid JSON decoding to the same value, and reformatting the input (key order, spacing,
// escapes) does not change it.
func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "object keys sorted", in: `{"b": 1, "a": {"d": [1, 2], "c": null}}`, want: `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{name: "numbers kept as written", in: `[1.50, -0, 1e3, 12345678901234567890123]`, want: `[1.50,-0,1e3,12345678901234567890123]`},
		{name: "escapes normalised", in: `{"\u0061": "\u00e9\ud83d\ude00\/<>&"}`, want: `{"a":"é😀/<>&"}`},
		{name: "duplicate key: last wins", in: `{"a": 1, "a": 2}`, want: `{"a":2}`},
		{name: "empty containers", in: ` { "a" : [ ] , "b" : { } } `, want: `{"a":[],"b":{}}`},
		{name: "control characters escaped", in: `"a\tb\u0001"`, want: `"a\tb\u0001"`},
		{name: "invalid JSON kept distinct", in: `{a: 1}`, want: `"invalid JSON: {a: 1}"`},
		{name: "trailing garbage is invalid", in: `{} x`, want: `"invalid JSON: {} x"`},
		{name: "leading zero is invalid", in: `01`, want: `"invalid JSON: 01"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(canonicalRaw([]byte(tt.in)))
			if got != tt.want {
				t.Fatalf("canonicalRaw(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if !json.Valid([]byte(tt.in)) {
				return
			}
			checkCanonical(t, []byte(tt.in))
		})
	}
	if canonicalRaw(nil) != nil || canonicalRaw([]byte("  ")) != nil {
		t.Error("empty input must canonicalise to nil")
	}
}

// checkCanonical asserts the properties of the canonical form of valid JSON in.
func checkCanonical(tb testing.TB, in []byte) {
	tb.Helper()
	c := canonicalRaw(in)
	if !json.Valid(c) {
		tb.Fatalf("canonical form %s is not valid JSON", c)
	}
	if !reflect.DeepEqual(decodeNumber(tb, in), decodeNumber(tb, c)) {
		tb.Fatalf("canonical form %s decodes differently from %s", c, in)
	}
	if again := canonicalRaw(c); !bytes.Equal(again, c) {
		tb.Fatalf("canonical form is not a fixed point: %s → %s", c, again)
	}
	// Reformat through encoding/json (sorted keys, HTML escapes, indentation).
	re, err := json.MarshalIndent(decodeNumber(tb, in), "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if got := canonicalRaw(re); !bytes.Equal(got, c) {
		tb.Fatalf("reformatted input canonicalises to %s, want %s", got, c)
	}
}

func decodeNumber(tb testing.TB, b []byte) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return v
}
