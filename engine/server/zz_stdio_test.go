package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stdioPeer is a raw JSON-RPC peer of a `capdex mcp` process: lines in, lines out.
type stdioPeer struct {
	in    io.WriteCloser
	lines chan string
}

// answer reads lines until the one answering id (a JSON value, "null" for none); it fails
// the test on anything on stdout that is not a JSON-RPC message.
func (p *stdioPeer) answer(tb testing.TB, id string) map[string]any {
	tb.Helper()
	timeout := time.After(60 * time.Second) // the test's patience, not the behaviour
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				tb.Fatalf("capdex mcp closed stdout before answering id %s", id)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
				tb.Fatalf("stdout line is not a JSON-RPC message: %.200q", line)
			}
			got, _ := json.Marshal(m["id"])
			if _, isCall := m["method"]; !isCall && string(got) == id {
				return m
			}
		case <-timeout:
			tb.Fatalf("no answer to id %s", id)
		}
	}
}

func (p *stdioPeer) send(tb testing.TB, line string) {
	tb.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		tb.Fatalf("writing to capdex mcp: %v", err)
	}
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestStdioMCPSurvivesMalformedLines drives `capdex mcp` over pipes: each malformed line
// gets a JSON-RPC error (-32700 parse error, -32600 invalid request) and the next good
// request is still answered; tools/call before initialize is refused; the process exits
// cleanly when stdin closes.
func TestStdioMCPSurvivesMalformedLines(t *testing.T) {
	bin := needBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "capdex.yaml")
	if err := os.WriteFile(cfg, []byte("log_level: warn\nlimits: {max_mcp_line_bytes: 1048576}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--home", t.TempDir(), "--config", cfg)
	cmd.Env = append(os.Environ(), "CAPDEX_CONFIG=", "CAPDEX_HOME=")
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	p := &stdioPeer{in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		in.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	}()

	search := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"capability_search","arguments":{"query":"codex"}}}`
	p.send(t, fmt.Sprintf(search, 1))
	if m := p.answer(t, "1"); errorCode(m) != -32600 || m["result"] != nil {
		t.Fatalf("tools/call before initialize: %v", m)
	}

	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepParams := `{"jsonrpc":"2.0","id":77,"method":"ping","params":{"a":` + strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100001) + "}"
	huge := `{"jsonrpc":"2.0","id":78,"method":"ping","params":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}`
	bad := []struct {
		name, line, id string
		code           float64
	}{
		{"garbage", "this is not json", "null", -32700},
		{"truncated JSON", `{"jsonrpc":"2.0","id":70,"method":"pi`, "null", -32700},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":71,"method":"ping"}`, "71", -32600},
		{"no jsonrpc member", `{"id":72,"method":"ping"}`, "72", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, "null", -32600},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":73,"method":"ping"}]`, "null", -32600},
		{"empty batch", `[]`, "null", -32600},
		{"a number", `42`, "null", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":74,"method":7}`, "74", -32600},
		{"100k-deep array", deep, "null", -32600},
		{"100k-deep params", deepParams, "null", -32600},
		{"20 MB line", huge, "null", -32600},
	}
	next := 100
	for _, b := range bad {
		p.send(t, b.line)
		if m := p.answer(t, b.id); errorCode(m) != b.code {
			t.Errorf("%s: answer %.300v, want error %v", b.name, m, b.code)
		}
		next++
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, next))
		if m := p.answer(t, fmt.Sprint(next)); m["error"] != nil {
			t.Fatalf("ping after %s: %v", b.name, m)
		}
	}

	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := p.answer(t, "2"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, "garbage after initialize")
	if m := p.answer(t, "null"); errorCode(m) != -32700 {
		t.Errorf("garbage after initialize: %v", m)
	}
	p.send(t, fmt.Sprintf(search, 3))
	m := p.answer(t, "3")
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("tools/call after initialize: %.500v", m)
	}
	in.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("capdex mcp exit: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("capdex mcp still running 30s after stdin closed")
	}
}
