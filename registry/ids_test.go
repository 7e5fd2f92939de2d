package registry

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// randomID returns a valid id of 1 to 6 segments drawn from a small alphabet heavy in "_"
// and short segments, so that ids differing only in "." versus "_" are frequent.
func randomID(r *rand.Rand) string {
	const alpha = "ab_0_"
	n := 1 + r.IntN(6)
	segs := make([]string, n)
	for i := range segs {
		b := make([]byte, 1+r.IntN(3))
		for j := range b {
			b[j] = alpha[r.IntN(len(alpha))]
		}
		segs[i] = string(b)
	}
	if r.IntN(8) == 0 { // some long ids, hashed
		segs = append(segs, strings.Repeat("x_y", 20+r.IntN(20)))
	}
	return strings.Join(segs, ".")
}

// TestToolNameInjective: distinct ids get distinct tool names, every name matches the tool
// name rules, and ToolID reverses every name that is not hashed.
func TestToolNameInjective(t *testing.T) {
	for _, pair := range [][2]string{{"x.y_z", "x.y.z"}, {"a_b", "a.b"}, {"a.b_c.d", "a.b.c_d"}, {"a__b.c", "a.b.c"}} {
		if ToolName(pair[0]) == ToolName(pair[1]) {
			t.Errorf("ToolName(%q) = ToolName(%q) = %q", pair[0], pair[1], ToolName(pair[0]))
		}
	}
	if got := ToolName("maintenance.codex.diagnose"); got != "maintenance__codex_diagnose" {
		t.Errorf("ToolName(maintenance.codex.diagnose) = %q, want the seed's maintenance__codex_diagnose", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	byName := map[string]string{}
	for range 200000 {
		id := randomID(r)
		if !ValidID(id) {
			t.Fatalf("randomID made an invalid id %q", id)
		}
		name := ToolName(id)
		if !toolNameRE.MatchString(name) {
			t.Fatalf("ToolName(%q) = %q breaks ^[a-zA-Z0-9_-]{1,64}$", id, name)
		}
		if prev, ok := byName[name]; ok && prev != id {
			t.Fatalf("ToolName(%q) = ToolName(%q) = %q", id, prev, name)
		}
		byName[name] = id
		back, ok := ToolID(name)
		encoded := len(id) // every byte stays one byte, but the first dot becomes two
		if strings.Contains(id, ".") {
			encoded++
		}
		hashed := encoded > maxToolName
		switch {
		case hashed && ok:
			t.Fatalf("ToolID(%q) of a hashed name = %q, want false", name, back)
		case !hashed && (!ok || back != id):
			t.Fatalf("ToolID(ToolName(%q)) = %q, %v", id, back, ok)
		}
	}
}

// TestToolIDRefusesForeignNames: names no id maps to are refused, not mangled.
func TestToolIDRefusesForeignNames(t *testing.T) {
	for _, name := range []string{"", "a_b", "a___b", "a__b__c", "_a", "a__", "A", "a.b", "a__b_", strings.Repeat("a", 65), "capability_search"} {
		if id, ok := ToolID(name); ok {
			t.Errorf("ToolID(%q) = %q, true; want false", name, id)
		}
	}
}

// TestLintToolNameCollision: two ids with one tool name are refused. Only a hash collision
// can do that with ToolName, so the test narrows the hash to 4 hex digits and finds one.
func TestLintToolNameCollision(t *testing.T) {
	narrow := func(id string) string { return toolName(id, 4) }
	long := strings.Repeat("p", 70)
	seen := map[string]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		id := fmt.Sprintf("shop.%s%d", long, i)
		if prev, ok := seen[narrow(id)]; ok {
			a, b = prev, id
		}
		seen[narrow(id)] = id
	}
	p, _, _ := validRegistry(t)
	mk := func(id string) *Capability {
		return &Capability{ID: id, Version: 1, ResourceType: TypePack, Title: "T", Owner: "o", Status: StatusActive}
	}
	errs := lint([]*Capability{p, mk(a), mk(b)}, narrow)
	if len(errs) != 1 || errs[0].ID != b || errs[0].Field != "id" || !strings.Contains(errs[0].Msg, "is also the tool name of "+fmt.Sprintf("%q", a)) {
		t.Fatalf("lint = %v, want one tool name collision of %s with %s", errs, b, a)
	}
	if errs := Lint([]*Capability{p, mk(a), mk(b)}); errs != nil {
		t.Fatalf("Lint with the full hash = %v", errs)
	}
}

// TestLintAffectedToolNameCollision: the incremental lint reports a tool-name collision
// between a changed capability and an unchanged one whichever comes first, on the later
// one, as the full lint does.
func TestLintAffectedToolNameCollision(t *testing.T) {
	narrow := func(id string) string { return toolName(id, 4) }
	long := strings.Repeat("p", 70)
	seen := map[string]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		id := fmt.Sprintf("shop.%s%d", long, i)
		if prev, ok := seen[narrow(id)]; ok {
			a, b = prev, id
		}
		seen[narrow(id)] = id
	}
	p, _, _ := validRegistry(t)
	mk := func(id string) *Capability {
		return &Capability{ID: id, Version: 1, ResourceType: TypePack, Title: "T", Owner: "o", Status: StatusActive}
	}
	caps := []*Capability{p, mk(a), mk(b)}
	want := lint(caps, narrow)
	for _, changed := range []string{a, b} {
		got := lintWith(caps, narrow, func(c *Capability) bool { return c.ID == changed })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s changed: incremental lint %v, full lint %v", changed, got, want)
		}
	}
}
