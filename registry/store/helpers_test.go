package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/capdex/capdex/registry"
)

// Helper-process modes: the test binary re-executed with CAPDEX_STORE_HELPER set.
const helperEnv = "CAPDEX_STORE_HELPER"

var benchDirs []string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// runHelper is the child side of the crash and lock tests. It prints "ready" once the store
// is open, then does its job and prints "done".
func runHelper(mode string) int {
	dir := os.Getenv("CAPDEX_STORE_DIR")
	mem, _ := strconv.ParseInt(os.Getenv("CAPDEX_STORE_MEMTABLE"), 10, 64)
	s, err := Open(Options{Dir: dir, MemTableSize: mem})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 3
	}
	switch mode {
	case "hold":
		fmt.Println("ready")
		time.Sleep(time.Minute)
	case "import":
		n, _ := strconv.Atoi(os.Getenv("CAPDEX_STORE_N"))
		round, _ := strconv.Atoi(os.Getenv("CAPDEX_STORE_ROUND"))
		caps := importBatch(n, round)
		fmt.Println("ready")
		if err := s.PutAll(context.Background(), caps, "crash-helper"); err != nil {
			fmt.Fprintln(os.Stderr, "import:", err)
			return 4
		}
		fmt.Printf("done staged=%d\n", s.staged.Load())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 5
	}
	return 0
}

// startHelper starts the test binary in a helper mode and waits for its "ready" line.
func startHelper(tb testing.TB, mode, dir string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "CAPDEX_STORE_DIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tb.Fatalf("helper %s did not get ready: %q %v", mode, sc.Text(), sc.Err())
	}
	return cmd, sc
}

// importBatch is round's import: bulk.p<k>.c<i> for i < n at version round+1, plus n/10
// new ids bulk.r<round>.x<i>.
func importBatch(n, round int) []*registry.Capability {
	caps := make([]*registry.Capability, 0, n+n/10)
	for i := 0; i < n; i++ {
		caps = append(caps, genCap(fmt.Sprintf("bulk.p%d.c%d", i%50, i), round+1, round))
	}
	for i := 0; i < n/10; i++ {
		caps = append(caps, genCap(fmt.Sprintf("bulk.r%d.x%d", round, i), 1, round))
	}
	return caps
}

// genCap returns a realistic action definition of about 1.5 KB.
func genCap(id string, version, tag int) *registry.Capability {
	return &registry.Capability{
		ID:             id,
		Version:        version,
		ResourceType:   registry.TypeAction,
		CapabilityType: "tool",
		Title:          fmt.Sprintf("Generated action %s (round %d)", id, tag),
		Summary: "Checks the state of a generated resource, reports its version, its install " +
			"location and conflicts with other copies found on the PATH of the current shell.",
		Aliases:           []string{"generated " + id, "检查生成的资源 " + id},
		Intents:           []string{"diagnose", "inspect"},
		Entities:          []string{"resource", "path"},
		WhenToUse:         []string{"the resource behaves like an older version after an update"},
		WhenNotToUse:      []string{"the user asked to roll back"},
		Domain:            "bulk",
		SupportedOS:       []string{"linux", "macos"},
		RequiredExecutors: []string{"shell"},
		SideEffect:        registry.SideEffectRead,
		RiskLevel:         registry.RiskLow,
		Timeout:           registry.Duration(30 * time.Second),
		NetworkPolicy:     registry.NetworkNone,
		ACL:               registry.ACL{Discover: []string{"dev"}, Describe: []string{"dev"}, Execute: []string{"dev"}},
		Owner:             "platform-team",
		Status:            registry.StatusActive,
		ArgumentsSchema:   json.RawMessage(`{"type":"object","properties":{"verbose":{"type":"boolean","default":false},"target":{"type":"string","maxLength":200}},"additionalProperties":false}`),
		OutputSchema:      json.RawMessage(`{"type":"object","properties":{"version":{"type":"string"},"paths":{"type":"array","items":{"type":"string"}}}}`),
		Handler:           &registry.Handler{Kind: "exec", Argv: []string{"scripts/diagnose.sh", "{{.target}}"}},
		Produces:          []string{"active_version", "paths"},
		Tags:              []string{"bulk", "generated", strconv.Itoa(tag)},
	}
}

// fullCap returns a capability with every field set to a non-zero value.
func fullCap() *registry.Capability {
	f := false
	c := &registry.Capability{
		ID:                   "maintenance.codex.diagnose",
		Version:              3,
		ResourceType:         registry.TypeAction,
		CapabilityType:       "tool",
		Title:                "诊断 Codex 安装与路径冲突",
		Summary:              "检查实际启动的 Codex 可执行文件、版本、npm 全局安装目录与 Shell PATH 优先级。",
		Aliases:              []string{"codex 更新后还是旧版本", "codex still runs old version after update"},
		Intents:              []string{"diagnose", "inspect", "verify"},
		Entities:             []string{"codex", "npm", "path"},
		Symptoms:             []string{"active_version_mismatch", "multiple_executables"},
		WhenToUse:            []string{"更新后实际运行版本仍然较旧"},
		WhenNotToUse:         []string{"用户已经明确要求回滚"},
		Domain:               "maintenance",
		Scenarios:            []string{"cli_upgrade"},
		SupportedOS:          []string{"linux", "macos"},
		RequiredExecutors:    []string{"shell", "npm"},
		SideEffect:           registry.SideEffectWriteLocal,
		RiskLevel:            registry.RiskHigh,
		RequiresConfirmation: true,
		Timeout:              registry.Duration(90 * time.Second),
		NetworkPolicy:        registry.NetworkAllowlist,
		NetworkAllow:         []string{"registry.npmjs.org"},
		ACL: registry.ACL{Discover: []string{"dev", "*"}, Describe: []string{"dev"},
			Execute: []string{"user:alice"}, Deny: []string{"tenant:acme"}},
		Owner:    "platform-team",
		Reviewer: "security-team",
		Status:   registry.StatusDeprecated,
		ArgumentsSchema: json.RawMessage(`{ "type": "object",
			"properties": {"include_shell_resolution": {"type": "boolean", "default": true}},
			"additionalProperties": false }`),
		OutputSchema: json.RawMessage(`{"type": "object", "required": ["active_version"]}`),
		Handler: &registry.Handler{
			Kind: "http", Name: "diag", Server: "ops", Argv: []string{"scripts/codex_diagnose.sh", "{{.x}}"}, Shell: true,
			Env: []string{"PATH", "HOME"}, Dir: "/tmp", MaxOutput: 4096, Method: "POST",
			URL: "{{.base_url.ops}}/diagnose", Headers: map[string]string{"X-Trace": "1"},
			Body: `{"x": {{.x}}}`, Secrets: map[string]string{"token": "OPS_TOKEN"}, RecordArguments: true,
		},
		Produces: []string{"active_binary", "active_version"},
		Tags:     []string{"maintenance", "codex"},
		Provenance: registry.Provenance{Provider: "local", Source: "registry/maintenance/codex.yaml",
			Imported: true, Format: "mcp", ReviewedAt: "2026-08-01"},
		Compatibility: registry.Compatibility{AgentRuntime: ">=2.4", Regions: []string{"cn", "us"}},
		Behavior:      &registry.Behavior{LatencyClass: "interactive", CostClass: "low", SupportsDryRun: true},
		Requirements: registry.Requirements{Credentials: []string{"npm_token"},
			FeatureFlags: []string{"codex_repair"}, MinBudget: 0.25},
		Health:     registry.Health{Status: "degraded", CheckedAt: "2026-08-02T10:00:00Z", Message: "slow"},
		Examples:   []registry.Example{{Title: "default", Arguments: json.RawMessage(`{ "include_shell_resolution": false }`)}},
		ExternalID: "Maintenance::codex-diagnose",
		Guidance:   "Diagnose before repairing.",
		Enabled:    &f,
		Tenants:    []string{"acme", "globex"},
		Steps:      []registry.RecipeStep{{Title: "Look", Command: "type -a codex", Action: "maintenance.codex.status", Note: "read only"}},
	}
	registry.Seal(c)
	return c
}

func openT(tb testing.TB, dir string) *Store {
	tb.Helper()
	o := Options{Dir: dir}
	if dir == "" {
		o = Options{InMemory: true}
	}
	s, err := Open(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func titled(id string, version int, title string) *registry.Capability {
	return &registry.Capability{ID: id, Version: version, ResourceType: registry.TypeAction,
		Title: title, Owner: "o", Status: registry.StatusActive,
		ArgumentsSchema: json.RawMessage(`{"type":"object"}`)}
}

// checkNoResidue asserts that no staged import is left: no meta/stage, one pointer per id,
// none above the generation, no audit record above the head.
func checkNoResidue(tb testing.TB, s *Store) {
	tb.Helper()
	err := s.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(keyStage); err == nil {
			tb.Error("meta/stage left behind")
		}
		gen, head, err := readMeta(txn)
		if err != nil {
			return err
		}
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		it := txn.NewIterator(o)
		defer it.Close()
		seen := map[string]bool{}
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			switch {
			case strings.HasPrefix(string(k), pfxActive):
				id, g, ok := parseActiveKey(k)
				if !ok || g > gen || seen[id] {
					tb.Errorf("stray pointer %q (gen %d, committed %d, dup %v)", k, g, gen, seen[id])
				}
				seen[id] = true
			case strings.HasPrefix(string(k), pfxAudit):
				if seq := beUint(k[len(pfxAudit):]); seq > head.Seq {
					tb.Errorf("audit record %d above head %d", seq, head.Seq)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
