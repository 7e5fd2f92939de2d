package capdex_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/capdex/capdex"

// layers says which of the module's packages each package may import directly: imports go one
// way, from the daemon and the engine down to the indexes and the registry
// (docs/ARCHITECTURE.md, "Packages"). A package missing here fails the test until its
// place is decided; "*" allows every package of the module.
var layers = map[string][]string{
	"":                      {},
	"registry":              {},
	"registry/store":        {"registry"},
	"index/text":            {},
	"index/embed":           {"index/text"},
	"index":                 {"index/text", "index/embed", "registry"},
	"index/testcat":         {"registry"},
	"index/embed/embedtest": {"index/embed"},
	"actors":                {"index", "registry"},
	"engine/policy":         {"registry"},
	"engine/handlers":       {"engine/handlers/shepherd", "registry"},
	// The exec shepherd's init runs before main in a re-executed capdex: standard library only.
	"engine/handlers/shepherd": {},
	"engine/query":             {"index", "index/text", "registry"},
	"engine/rank":              {"index", "index/text", "registry"},
	"engine/govern":            {"engine/handlers", "engine/policy", "registry", "registry/store"},
	"engine/feedback":          {"index", "index/text", "registry/store"},
	// The gateway's MCP client side; the engine wires it to the registry and the run pipeline.
	"engine/upstream": {"engine/handlers", "registry"},
	// A test MCP server (the gateway's tests and bench/report/i19's transcript).
	"engine/internal/testmcp": {},
	"engine": {"actors", "engine/feedback", "engine/govern", "engine/handlers", "engine/policy", "engine/query",
		"engine/rank", "engine/upstream", "index", "index/embed", "index/text", "registry", "registry/store"},
	// The daemon speaks to the engine's public API only: what it needs of the retrievers,
	// the ranking or the query parser, package engine re-exports.
	"engine/server": {"engine", "engine/govern", "registry"},
	// Only test files: the console's browser tests (their imports are not counted here).
	"engine/server/consoletest": {},
	"bench/cputime":             {},
	"bench": {"engine", "engine/policy", "engine/rank", "index", "index/testcat", "index/text",
		"registry"},
	"cmd/capdex": {"*"},
	// Writes index/embed/bridge_zh_en.txt from CC-CEDICT: standard library only.
	"cmd/genbridge": {},
}

// TestLayering fails when a package imports one of the module's packages it should not,
// or when a package has no rule yet.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := rel(f[0])
		allowed, ok := layers[pkg]
		if !ok {
			t.Errorf("package %q has no layering rule: add it to layers in lint_test.go and to docs/ARCHITECTURE.md", pkg)
			continue
		}
		var bad []string
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") && imp != module {
				continue
			}
			if r := rel(imp); !slices.Contains(allowed, "*") && !slices.Contains(allowed, r) {
				bad = append(bad, r)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %s; it may import only %v", pkg, strings.Join(bad, ", "), allowed)
		}
	}
}

func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}
