package registry

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLintRefusesControlCharacters: NUL, ESC and the other control characters (and bidi
// overrides) are refused in the prose of a definition, with the field and the offset; a
// title is one line.
func TestLintRefusesControlCharacters(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p, a, r *Capability)
		field  string
		msg    string
	}{
		{"NUL in a title", func(p, a, r *Capability) { a.Title = "Refund\x00 an order" }, "title", "control character U+0000 at byte 6"},
		{"ESC in a title", func(p, a, r *Capability) { a.Title = "\x1b[31mRefund" }, "title", "control character U+001B at byte 0"},
		{"newline in a title", func(p, a, r *Capability) { p.Title = "Shop\nthings" }, "title", "control character U+000A at byte 4"},
		{"ESC in a summary", func(p, a, r *Capability) { a.Summary = "ok\x1b]0;pwned\x07" }, "summary", "control character U+001B at byte 2"},
		{"C1 in guidance", func(p, a, r *Capability) { p.Guidance = "see \u009b here" }, "guidance", "control character U+009B at byte 4"},
		{"bidi override in when_to_use", func(p, a, r *Capability) { a.WhenToUse = []string{"fine", "a \u202e b"} }, "when_to_use[1]", "control character U+202E at byte 2"},
		{"DEL in a step note", func(p, a, r *Capability) { r.Steps[0].Note = "x\x7f" }, "steps[0].note", "control character U+007F at byte 1"},
		{"invalid UTF-8 in an example title", func(p, a, r *Capability) { a.Examples[0].Title = "one \xff order" }, "examples[0].title", "invalid UTF-8 at byte 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, a, r := validRegistry(t)
			tt.mutate(p, a, r)
			errs := Lint([]*Capability{p, a, r})
			if len(errs) != 1 || errs[0].Field != tt.field || !strings.Contains(errs[0].Msg, tt.msg) {
				t.Fatalf("Lint = %v, want one error at %s with %q", errs, tt.field, tt.msg)
			}
		})
	}
	p, a, r := validRegistry(t)
	a.Summary = "Two lines\nand a\ttab are fine in prose.\r\n"
	if errs := Lint([]*Capability{p, a, r}); errs != nil {
		t.Fatalf("Lint of prose with newlines and tabs: %v", errs)
	}
	// The loader's position reaches the error.
	yaml := "- id: shop\n  version: 1\n  resource_type: pack\n  title: \"Shop\\e[0m\"\n  owner: o\n  status: active\n"
	_, err := LoadFS(fstest.MapFS{"reg/shop.yaml": {Data: []byte(yaml)}}, "reg")
	if err == nil || !strings.Contains(err.Error(), "reg/shop.yaml:4: shop: title: control character U+001B") {
		t.Fatalf("LoadFS: %v", err)
	}
}
