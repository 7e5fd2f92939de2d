package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeAndMCPBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("adress: 127.0.0.1:1\n"), 0o600)
	t.Setenv("CAPDEX_CONFIG", "")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{name: "serve takes no arguments", args: []string{"serve", "extra"}, msg: "no arguments"},
		{name: "unknown flag", args: []string{"serve", "--port", "1"}, msg: "flag provided but not defined"},
		{name: "missing config file", args: []string{"serve", "--config", filepath.Join(dir, "nope.yaml")}, msg: "no such file"},
		{name: "unknown config field", args: []string{"serve", "--config", bad}, msg: "field adress not found"},
		{name: "bad log level", args: []string{"serve", "--log-level", "loud"}, msg: "log_level"},
		{name: "mcp takes no arguments", args: []string{"mcp", "extra"}, msg: "no arguments"},
		{name: "mcp with a bad config", args: []string{"mcp", "--config", bad}, msg: "field adress not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := cli(t, t.TempDir(), tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.msg) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", code, exitUsage, tt.msg, stderr)
			}
		})
	}
}

func TestServeCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CAPDEX_CONFIG", "")
	t.Setenv("CAPDEX_ADDR", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--home", home, "--addr", "127.0.0.1:0", "--log-level", "warn"}, strings.NewReader(""), &stdout, &stderr)
	}()
	re := regexp.MustCompile(`serving (http://\S+)`)
	var url string
	deadline := time.Now().Add(30 * time.Second)
	for url == "" {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	keyFile := filepath.Join(home, "admin.key")
	if !strings.Contains(stderr.String(), keyFile) {
		t.Errorf("serve did not say where the admin key is:\n%s", stderr.String())
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", url+"/v1/search", strings.NewReader(`{"query": "codex"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("search with the admin key: %d", resp.StatusCode)
	}
	cancel() // what SIGTERM does through main's signal context
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("serve exited %d after the shutdown:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestMCPCommandEndsWithStdin(t *testing.T) {
	t.Setenv("CAPDEX_CONFIG", "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"mcp", "--home", t.TempDir(), "--log-level", "warn"}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("mcp with an empty stdin exited %d: %s", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("mcp wrote %q to stdout without a request", out.String())
	}
}
