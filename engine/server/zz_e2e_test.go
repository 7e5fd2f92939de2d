package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeConfig writes a capdex.yaml for the end-to-end tests and returns its path.
func writeConfig(tb testing.TB, dir string, withKeys bool) string {
	tb.Helper()
	cfg := "log_level: info\nlog_format: json\nlimits: {shutdown_timeout: 5s}\n"
	if withKeys {
		cfg += fmt.Sprintf("keys:\n  - {key: %q, user: dev-user, scopes: [dev]}\n  - {key: %q, user: root, scopes: [admin]}\n", devKey, adminKey)
	}
	path := filepath.Join(dir, "capdex.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// daemon is a `capdex serve` process.
type daemon struct {
	cmd    *exec.Cmd
	url    string
	stdout string // the first line
	stderr *logBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // its exit error, once done
}

var servingRE = regexp.MustCompile(`serving (http://\S+)`)

// startDaemon starts `capdex serve --addr 127.0.0.1:0 args...` and waits until it is ready.
func startDaemon(tb testing.TB, args ...string) *daemon {
	tb.Helper()
	bin := needBinary(tb)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "CAPDEX_CONFIG=", "CAPDEX_HOME=", "CAPDEX_ADDR=")
	d := &daemon{cmd: cmd, stderr: &logBuffer{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if !sent {
				first <- sc.Text()
				sent = true
			}
		}
		if !sent {
			close(first)
		}
	}()
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	tb.Cleanup(func() { d.kill() })
	select {
	case line, ok := <-first:
		m := servingRE.FindStringSubmatch(line)
		if !ok || m == nil {
			d.kill()
			tb.Fatalf("capdex serve did not start: %q\nstderr:\n%s", line, d.stderr.String())
		}
		d.stdout, d.url = line, m[1]
	case <-time.After(30 * time.Second):
		d.kill()
		tb.Fatalf("capdex serve did not start within 30s\nstderr:\n%s", d.stderr.String())
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(d.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return d
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("capdex serve never ready\nstderr:\n%s", d.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL (unless the process has exited) and waits for the exit.
func (d *daemon) kill() {
	select {
	case <-d.done:
	default:
		d.cmd.Process.Kill()
		<-d.done
	}
}

// stop sends SIGTERM and returns the exit error (nil for a clean exit) within 20 s.
func (d *daemon) stop(tb testing.TB) error {
	tb.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return d.err
	case <-time.After(20 * time.Second):
		d.kill()
		tb.Fatalf("capdex serve ignored SIGTERM\nstderr:\n%s", d.stderr.String())
		return nil
	}
}

// ts returns a testServer-shaped client of the daemon (for call).
func (d *daemon) ts() *testServer { return &testServer{url: d.url} }

// auditVerify runs `capdex audit verify` on home and fails the test unless it passes.
func auditVerify(tb testing.TB, home string) string {
	tb.Helper()
	cmd := exec.Command(needBinary(tb), "audit", "verify", "--home", home)
	cmd.Env = append(os.Environ(), "CAPDEX_HOME=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok: audit chain of ") {
		tb.Fatalf("capdex audit verify: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestEndToEndStdioMCP(t *testing.T) {
	bin := needBinary(t)
	home := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), false)
	cmd := exec.Command(bin, "mcp", "--home", home, "--config", cfg)
	cmd.Env = append(os.Environ(), "CAPDEX_CONFIG=", "CAPDEX_HOME=")
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	client, changed := newMCPClient(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to capdex mcp: %v\nstderr:\n%s", err, stderr.String())
	}
	c := &mcpClient{cs: cs, changed: changed, log: &strings.Builder{}}
	c.logf("# capdex mcp over stdio (protocol %s, server %s)", cs.InitializeResult().ProtocolVersion, cs.InitializeResult().ServerInfo.Name)
	transcript := mcpScenario(t, c)
	t.Logf("MCP session transcript (stdio):\n%s", transcript)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("capdex mcp did not exit cleanly when stdin closed: %v\nstderr:\n%s", cmd.ProcessState, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(home, AdminKeyFile)); err == nil {
		t.Error("capdex mcp generated an admin key; stdio needs none")
	}
	t.Log(auditVerify(t, home))
}

func TestEndToEndHTTPMCP(t *testing.T) {
	home := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), true)
	d := startDaemon(t, "--home", home, "--config", cfg)
	c := connectHTTP(t, d.url, devKey, nil)
	c.logf("# capdex serve, MCP over streamable HTTP at %s/mcp (protocol %s)", d.url, c.cs.InitializeResult().ProtocolVersion)
	transcript := mcpScenario(t, c)
	t.Logf("MCP session transcript (streamable HTTP):\n%s", transcript)

	ts := d.ts()
	if r := ts.call(t, "POST", "/v1/search", "wrong-key-0123456789abcdef", `{"query": "codex"}`); r.status != 401 {
		t.Errorf("wrong key: %d", r.status)
	}
	m := string(ts.call(t, "GET", "/metrics", "", nil).body)
	for _, want := range []string{"capdex_search_duration_seconds_count 1", `capdex_runs_total{reason="",status="succeeded"} 2`, "capdex_mcp_leaf_tools_registered_total 1"} {
		if !strings.Contains(m, want) {
			t.Errorf("daemon metrics lack %q", want)
		}
	}
	c.cs.Close()
	if err := d.stop(t); err != nil {
		t.Errorf("capdex serve after SIGTERM: %v\nstderr:\n%s", err, d.stderr.String())
	}
	if l := d.stderr.String(); !strings.Contains(l, `"msg":"shut down"`) || !strings.Contains(l, `"request_id"`) {
		t.Errorf("no graceful shutdown or request logs:\n%s", l)
	}
	auditVerify(t, home)
}

func TestEndToEndGeneratedAdminKey(t *testing.T) {
	home := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), false)
	d := startDaemon(t, "--home", home, "--config", cfg)
	keyFile := filepath.Join(home, AdminKeyFile)
	if !strings.Contains(d.stderr.String(), "the admin key is in "+keyFile) {
		t.Errorf("capdex serve did not say where the admin key is:\n%s", d.stderr.String())
	}
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("admin.key mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(keyFile)
	key := strings.TrimSpace(string(b))
	if len(key) != 43 { // 32 bytes, base64url without padding
		t.Errorf("admin key %q is not 32 random bytes in base64url", key)
	}
	ts := d.ts()
	if r := ts.call(t, "POST", "/v1/search", "", `{"query": "codex"}`); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}
	if r := ts.call(t, "PUT", "/v1/capabilities/demo.gen_key", key, testAction("demo.gen_key", 1, "Via the generated key")); r.status != 200 {
		t.Errorf("admin write with the generated key: %d %s", r.status, r.body)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, "--home", home, "--config", cfg)
	b2, _ := os.ReadFile(keyFile)
	if string(b2) != string(b) {
		t.Error("the admin key changed on restart")
	}
	if r := d.ts().call(t, "GET", "/v1/capabilities/demo.gen_key", key, nil); r.status != 200 {
		t.Errorf("the key after a restart: %d %s", r.status, r.body)
	}
}
