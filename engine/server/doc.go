// Package server is capdex's daemon: it serves one engine over an HTTP JSON API (with
// Server-Sent Events for streamed searches), over MCP (streamable HTTP at /mcp and stdio),
// with API-key identities, Prometheus metrics, load shedding and hot reload of registry
// directories.
//
// # Basics
//
// LoadConfig reads capdex.yaml (strictly: unknown fields are errors) and the environment
// overrides; Open opens the engine the configuration describes, imports and watches the
// registry directories and loads (or generates) the API keys; Serve serves HTTP on a
// listener until its context ends and then shuts down gracefully; ServeStdio serves one MCP
// session on stdin/stdout as the configured local identity; Close releases everything.
//
//	cfg, err := server.LoadConfig("capdex.yaml")
//	srv, err := server.Open(ctx, cfg, server.Options{Logger: cfg.NewLogger(os.Stderr)})
//	defer srv.Close()
//	ln, err := net.Listen("tcp", cfg.Addr)
//	err = srv.Serve(ctx, ln) // returns after a graceful shutdown once ctx is done
//
// The caller's identity (tenant, user, scopes) always comes from its API key, or from the
// local identity on stdio, never from a request body. Searches and runs are bounded by
// limits.max_inflight_searches and limits.max_inflight_runs: past them a request is refused
// at once (HTTP 429 with Retry-After, an "overloaded" tool error over MCP), never queued.
//
// Each MCP session has its own mcp.Server, so that the leaf tools a describe registers (the
// action as a typed tool, named by registry.ToolName) stay in that session; a session keeps
// at most limits.max_leaf_tools of them, least recently used dropped.
//
// # Caveats
//
//   - The engine's store holds its data directory exclusively: `capdex serve` and `capdex
//     mcp` cannot share one; use /mcp of a running daemon instead.
//   - Hot reload imports new and changed definitions only; a capability whose file is
//     removed stays until it is deleted through the API.
//   - Leaf tools are pinned to the version that was described: after a new version is
//     loaded, calling the old leaf is refused (version_mismatch) until it is described again.
//   - A confirmation token is bound to the session: over HTTP, send the same
//     X-Capdex-Session header when running and redeeming.
package server
