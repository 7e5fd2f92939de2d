// Command testmcp serves the tools of a JSON file over MCP (stdio, or streamable HTTP with
// -http ADDR) for capdex's gateway tests and demonstrations. See package testmcp.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/engine/internal/testmcp"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	tools := flag.String("tools", os.Getenv("TOOLS_FILE"), "the tools file (default $TOOLS_FILE)")
	page := flag.Int("page", 2, "tools/list page size")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := testmcp.New(*tools, *page)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go watch(ctx, s, *tools, 200*time.Millisecond)
	if *addr == "" {
		err = s.MCP.Run(ctx, &mcp.StdioTransport{})
	} else {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil)
		srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go func() { <-ctx.Done(); srv.Close() }()
		err = srv.ListenAndServe()
		if err == http.ErrServerClosed {
			err = nil
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// watch reloads the file every period until ctx ends (errors are ignored: a half-written
// file is read again next time).
func watch(ctx context.Context, s *testmcp.Server, file string, period time.Duration) {
	var last []byte
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b, err := os.ReadFile(file)
			if err != nil || bytes.Equal(b, last) {
				continue
			}
			last = b
			_ = s.Reload()
		}
	}
}
