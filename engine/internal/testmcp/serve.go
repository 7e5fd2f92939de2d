package testmcp

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP serves a tools file over streamable HTTP on a fixed local address that survives
// Kill and Start, as a server process killed and restarted would.
type HTTP struct {
	tb   testing.TB
	file string
	Addr string
	URL  string
	Srv  *Server

	mu sync.Mutex
	hs *http.Server
	wg sync.WaitGroup
}

// StartHTTP serves file (page size 2) and stops it at the end of the test.
func StartHTTP(tb testing.TB, file string) *HTTP {
	tb.Helper()
	h := &HTTP{tb: tb, file: file}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h.Addr = ln.Addr().String()
	h.URL = "http://" + h.Addr + "/mcp"
	h.serve(ln)
	tb.Cleanup(h.Kill)
	return h
}

func (h *HTTP) serve(ln net.Listener) {
	s, err := New(h.file, 2)
	if err != nil {
		h.tb.Fatal(err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	h.mu.Lock()
	h.hs, h.Srv = hs, s
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		_ = hs.Serve(ln)
	}()
}

// Kill closes the listener and every connection at once.
func (h *HTTP) Kill() {
	h.mu.Lock()
	hs, srv := h.hs, h.Srv
	h.hs = nil
	h.mu.Unlock()
	if hs != nil {
		_ = hs.Close()
		for ss := range srv.MCP.Sessions() {
			_ = ss.Close()
		}
	}
	h.wg.Wait()
}

// Restart serves again on the same address, as a new process (new sessions).
func (h *HTTP) Restart() {
	var ln net.Listener
	var err error
	for range 50 { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", h.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		h.tb.Fatal(err)
	}
	h.serve(ln)
}

// Reload re-reads the tools file now (sending list_changed when tools changed).
func (h *HTTP) Reload() {
	h.mu.Lock()
	s := h.Srv
	h.mu.Unlock()
	if err := s.Reload(); err != nil {
		h.tb.Fatal(err)
	}
}
