package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/handlers"
)

// TestSlowBodyIsClosed: a request that declares 100 bytes of body and sends one is answered
// 408 and its connection closed once limits.read_timeout passes, instead of being held open.
func TestSlowBodyIsClosed(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true, cfg: func(c *Config) {
		c.Limits.ReadTimeout = Duration(300 * time.Millisecond)
	}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + devKey +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	// The bound is the test's patience, not the behaviour: without a read timeout the
	// server waits for the other 99 bytes for ever.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "request_timeout") {
		t.Errorf("stalled body: %d %s", resp.StatusCode, body)
	}
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection still open after the answer: %v", err)
	}
}

// TestIdleConnectionIsClosed: a keep-alive connection with no request closes after
// limits.idle_timeout, and a stream answering for longer than read_timeout is not cut.
func TestIdleConnectionIsClosed(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true, cfg: func(c *Config) {
		c.Limits.IdleTimeout = Duration(300 * time.Millisecond)
		c.Limits.ReadTimeout = Duration(200 * time.Millisecond)
	}, engine: func(o *engine.Options) {
		o.GoFuncs = map[string]handlers.GoFunc{"echo": func(ctx context.Context, args map[string]any) (any, error) {
			select {
			case <-time.After(600 * time.Millisecond): // longer than read_timeout
				return args, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	io.ReadAll(resp.Body)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection not closed: %v", err)
	}
	// A complete body read within read_timeout, then a run that takes longer than it.
	r := ts.call(t, "POST", "/v1/run", devKey, `{"id":"demo.echo","arguments":{"message":"hi"}}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"status":"succeeded"`) {
		t.Fatalf("a run longer than read_timeout: %d %s", r.status, r.body)
	}
}
