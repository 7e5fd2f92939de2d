package govern

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeRunRequest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want RunRequest
		err  string // substring of the error; empty: valid
	}{
		{name: "minimal", in: `{"id":"a.b"}`, want: RunRequest{ID: "a.b"}},
		{name: "full", in: `{"id":"a.b","version":3,"arguments":{"x":1},"confirmation_token":"t"}`,
			want: RunRequest{ID: "a.b", Version: 3, Arguments: json.RawMessage(`{"x":1}`), ConfirmationToken: "t"}},
		{name: "id pin", in: `{"id":"a.b@2"}`, want: RunRequest{ID: "a.b", Version: 2}},
		{name: "resource_id", in: `{"resource_id":"a.b@2"}`, want: RunRequest{ID: "a.b", Version: 2}},
		{name: "resource_id and id agreeing", in: `{"resource_id":"a.b","id":"a.b"}`, want: RunRequest{ID: "a.b"}},
		{name: "id pin agreeing", in: `{"id":"a.b@2","version":2}`, want: RunRequest{ID: "a.b", Version: 2}},
		{name: "null arguments", in: `{"id":"a","arguments":null}`, want: RunRequest{ID: "a"}},
		{name: "whitespace", in: " {\n\"id\" : \"a\" } \n", want: RunRequest{ID: "a"}},
		{name: "unknown field", in: `{"id":"a","argument":{}}`, err: `unknown field "argument"`},
		{name: "repeated field", in: `{"id":"a","id":"b"}`, err: `repeated field "id"`},
		{name: "missing id", in: `{"version":1}`, err: "resource_id (or id) is required"},
		{name: "resource_id and id differ", in: `{"id":"a.b","resource_id":"a.c"}`, err: "differ"},
		{name: "bad id", in: `{"id":"A B"}`, err: "invalid id"},
		{name: "bad pin", in: `{"id":"a@x"}`, err: "invalid id"},
		{name: "pin conflict", in: `{"id":"a@2","version":3}`, err: "pins version 2"},
		{name: "negative version", in: `{"id":"a","version":-1}`, err: "non-negative integer"},
		{name: "fractional version", in: `{"id":"a","version":1.5}`, err: "non-negative integer"},
		{name: "string version", in: `{"id":"a","version":"1"}`, err: "non-negative integer"},
		{name: "huge version", in: `{"id":"a","version":99999999999}`, err: "non-negative integer"},
		{name: "array arguments", in: `{"id":"a","arguments":[1]}`, err: "arguments must be a JSON object"},
		{name: "string arguments", in: `{"id":"a","arguments":"{}"}`, err: "arguments must be a JSON object"},
		{name: "number id", in: `{"id":1}`, err: "id must be a string"},
		{name: "number token", in: `{"id":"a","confirmation_token":1}`, err: "confirmation_token must be a string"},
		{name: "trailing data", in: `{"id":"a"} {}`, err: "data after the object"},
		{name: "not an object", in: `["a"]`, err: "want a JSON object"},
		{name: "empty", in: ``, err: "want a JSON object"},
		{name: "truncated", in: `{"id":"a"`, err: "invalid run request"},
		{name: "too large", in: `{"id":"a","arguments":{"x":"` + strings.Repeat("x", MaxRunRequestBytes) + `"}}`, err: "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRunRequest([]byte(tt.in))
			if tt.err != "" {
				if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tt.want.ID || got.Version != tt.want.Version || string(got.Arguments) != string(tt.want.Arguments) ||
				got.ConfirmationToken != tt.want.ConfirmationToken {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestArgumentsDigest(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{name: "key order", a: `{"a":1,"b":[1,{"y":2,"x":1}]}`, b: `{ "b" : [1, {"x":1,"y":2}], "a":1 }`, same: true},
		{name: "empty equals null equals {}", a: ``, b: `{}`, same: true},
		{name: "null", a: `null`, b: `{}`, same: true},
		{name: "escapes normalised", a: `{"s":"\u0041<"}`, b: `{"s":"A<"}`, same: true},
		{name: "value change", a: `{"a":1}`, b: `{"a":2}`},
		{name: "number text kept", a: `{"a":1}`, b: `{"a":1.0}`},
		{name: "type change", a: `{"a":1}`, b: `{"a":"1"}`},
		{name: "extra key", a: `{"a":1}`, b: `{"a":1,"b":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			da, err := ArgumentsDigest(json.RawMessage(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			db, err := ArgumentsDigest(json.RawMessage(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			if (da == db) != tt.same {
				t.Fatalf("%s vs %s: same=%v", da, db, da == db)
			}
		})
	}
	if _, err := ArgumentsDigest(json.RawMessage(strings.Repeat("[", 100) + strings.Repeat("]", 100))); err == nil {
		t.Fatal("non-object accepted")
	}
	deep := `{"a":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 101)
	if _, err := ArgumentsDigest(json.RawMessage(deep)); err == nil {
		t.Fatal("too deep accepted")
	}
}

func TestParseToken(t *testing.T) {
	s := newSigner([]byte("0123456789abcdef"))
	tok, err := s.issue(Claims{Tenant: "t", User: "u", Session: "s", Action: "a.b", Version: 1, SchemaDigest: "sha256:x", ArgsDigest: "sha256:y", Expires: 1})
	if err != nil {
		t.Fatal(err)
	}
	good := tok.String()
	parts := strings.Split(good, ".")
	payload := func(p string) string {
		return strings.Join([]string{parts[0], parts[1], b64.EncodeToString([]byte(p)), parts[3]}, ".")
	}
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{name: "good", in: good, ok: true},
		{name: "wrong prefix", in: "cdx2" + good[4:]},
		{name: "three parts", in: strings.Join(parts[:3], ".")},
		{name: "five parts", in: good + ".x"},
		{name: "uppercase kid", in: strings.Join([]string{parts[0], strings.ToUpper(parts[1]) + "", parts[2], parts[3]}, ".")},
		{name: "short kid", in: strings.Join([]string{parts[0], "abc", parts[2], parts[3]}, ".")},
		{name: "padded payload", in: strings.Join([]string{parts[0], parts[1], parts[2] + "=", parts[3]}, ".")},
		{name: "std base64 payload", in: strings.Join([]string{parts[0], parts[1], strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+", parts[3]}, ".")},
		{name: "short mac", in: strings.Join([]string{parts[0], parts[1], parts[2], parts[3][:10]}, ".")},
		{name: "unknown field", in: payload(`{"tn":"t","us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `","zz":1}`)},
		{name: "reordered fields", in: payload(`{"us":"u","tn":"t","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `"}`)},
		{name: "spaces", in: payload(`{"tn":"t", "us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `"}`)},
		{name: "duplicate field", in: payload(`{"tn":"t","tn":"t","us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `"}`)},
		{name: "missing field", in: payload(`{"tn":"t","us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1}`)},
		{name: "zero version", in: payload(`{"tn":"t","us":"u","se":"s","ac":"a.b","vr":0,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `"}`)},
		{name: "bad nonce", in: payload(`{"tn":"t","us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"short"}`)},
		{name: "trailing payload", in: payload(`{"tn":"t","us":"u","se":"s","ac":"a.b","vr":1,"sd":"x","ad":"y","ex":1,"id":"` + tok.Claims.ID + `"} `)},
		{name: "too long", in: good + strings.Repeat("A", MaxTokenBytes)},
		{name: "empty", in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseToken(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrBadToken) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.in || got.Claims != tok.Claims || !s.verify(got) {
				t.Fatalf("round trip %+v", got)
			}
		})
	}
}

// FuzzParseToken: no panic; whatever parses re-encodes to exactly the input and never
// verifies under a key it was not signed with.
func FuzzParseToken(f *testing.F) {
	s := newSigner([]byte("fuzz-key-0123456789"))
	tok, _ := s.issue(Claims{Tenant: "t", User: "u", Session: "s", Action: "a.b", Version: 1, SchemaDigest: "sha256:x", ArgsDigest: "sha256:y", Expires: 1893456000})
	f.Add(tok.String())
	f.Add("cdx1.00000000.e30.AAAA")
	f.Add("")
	other := newSigner([]byte("another-key-0123456789"))
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseToken(in)
		if err != nil {
			if !errors.Is(err, ErrBadToken) {
				t.Fatalf("error %v does not wrap ErrBadToken", err)
			}
			return
		}
		if got.String() != in {
			t.Fatalf("re-encoding %q != input %q", got.String(), in)
		}
		if other.verify(got) {
			t.Fatalf("token verifies under a foreign key: %q", in)
		}
		if !utf8.ValidString(got.Claims.Action) {
			t.Fatalf("invalid UTF-8 survived canonical check")
		}
	})
}

// FuzzDecodeRunRequest: no panic; a decoded request re-encodes to one that decodes equal.
func FuzzDecodeRunRequest(f *testing.F) {
	f.Add([]byte(`{"id":"maintenance.codex.diagnose","arguments":{"include_shell_resolution":true}}`))
	f.Add([]byte(`{"id":"a.b@2","version":2,"confirmation_token":"cdx1.x"}`))
	f.Add([]byte(`{"id":"a","arguments":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := DecodeRunRequest(in)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v does not wrap ErrBadRequest", err)
			}
			return
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRunRequest(b)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		if again.ID != req.ID || again.Version != req.Version || again.ConfirmationToken != req.ConfirmationToken {
			t.Fatalf("round trip %+v != %+v", again, req)
		}
		if _, err := ArgumentsDigest(req.Arguments); err == nil {
			if d1, _ := ArgumentsDigest(again.Arguments); d1 == "" {
				t.Fatal("digest lost")
			}
		}
	})
}

// fuzzSchema is the arguments schema FuzzValidateArguments checks against.
const fuzzSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"pattern":"^[a-z]+$"},` +
	`"count":{"type":"integer","minimum":0,"maximum":10},"tags":{"type":"array","items":{"type":"string"},"maxItems":3},` +
	`"mode":{"enum":["a","b"]},"nested":{"type":"object","properties":{"x":{"type":"boolean"}},"additionalProperties":false}},` +
	`"required":["name"],"additionalProperties":false}`

// FuzzValidateArguments: no panic; every error names a JSON pointer; arguments that pass
// validation digest, and canonical re-validation agrees.
func FuzzValidateArguments(f *testing.F) {
	f.Add([]byte(`{"name":"abc","count":3}`))
	f.Add([]byte(`{"count":"3","extra":1,"nested":{"x":1,"y":2}}`))
	f.Add([]byte(`{"name":"x","tags":["a","b","c","d"],"mode":"c"}`))
	sch, err := compile([]byte(fuzzSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		args, canon, err := decodeArguments(in)
		if err != nil {
			return
		}
		errs := validate(sch, canon)
		for _, e := range errs {
			if !strings.HasPrefix(e, "/") && !strings.HasPrefix(e, "(root)") || !strings.Contains(e, ": ") {
				t.Fatalf("error %q lacks a pointer", e)
			}
		}
		_, canon2, err := decodeArguments(canon)
		if err != nil || string(canon2) != string(canon) {
			t.Fatalf("canonical form not stable: %s vs %s (%v)", canon, canon2, err)
		}
		if len(errs) == 0 {
			if _, ok := args["name"].(string); !ok {
				t.Fatalf("valid arguments without the required name: %s", canon)
			}
		}
	})
}
