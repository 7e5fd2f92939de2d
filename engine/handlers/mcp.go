package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/capdex/capdex/registry"
)

// ErrUpstreamUnavailable is returned (wrapped in ErrHandlerFailed) by the mcp handler when
// the action's upstream server is not connected.
var ErrUpstreamUnavailable = errors.New("handlers: upstream MCP server unavailable")

// ToolResult is what an upstream MCP server answered to tools/call.
type ToolResult struct {
	// Content is the result's content list as JSON (text, image, resource, ... blocks).
	Content json.RawMessage `json:"content"`
	// StructuredContent is the result's structuredContent, when the tool gave one.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError is the tool's own error flag.
	IsError bool `json:"isError,omitempty"`
}

// ToolCaller calls a tool on an upstream MCP server (engine/upstream's Manager).
type ToolCaller interface {
	// CallTool calls tool on server with args. The error is for a call that got no
	// answer (server down, transport failure, protocol error); a tool that reports its own
	// failure answers a ToolResult with IsError.
	CallTool(ctx context.Context, server, tool string, args map[string]any) (ToolResult, error)
}

// MCP runs actions of handler kind mcp: tools/call on the upstream server named by
// handler.server, with the tool named by handler.name. Its output is the ToolResult as
// JSON ({"content": [...], "structuredContent": ..., "isError": ...}).
type MCP struct{ caller ToolCaller }

// NewMCP returns the mcp handler over caller.
func NewMCP(caller ToolCaller) *MCP { return &MCP{caller: caller} }

// Run implements Handler. A result with isError fails the run (ErrHandlerFailed) with the
// result kept as output; the network is what the upstream does, which capdex does not
// enforce, so Result.Network is "unenforced" unless the policy is any.
func (h *MCP) Run(ctx context.Context, req Request) (Result, error) {
	hd := req.Cap.Handler
	res := Result{Network: NetworkUnenforced}
	if policyOf(req.Cap) == registry.NetworkAny {
		res.Network = NetworkAnyHost
	}
	if hd.Server == "" || hd.Name == "" {
		return res, fmt.Errorf("%w: an mcp handler needs server and name", ErrBadHandler)
	}
	args, _, err := req.args()
	if err != nil {
		return res, err
	}
	tr, err := h.caller.CallTool(ctx, hd.Server, hd.Name, args)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("%w: upstream %s tool %s: %w", ErrTimeout, hd.Server, hd.Name, err)
		}
		return res, fmt.Errorf("%w: upstream %s tool %s: %w", ErrHandlerFailed, hd.Server, hd.Name, err)
	}
	if len(tr.Content) == 0 {
		tr.Content = json.RawMessage("[]")
	}
	out, err := json.Marshal(tr)
	if err != nil {
		return res, fmt.Errorf("%w: upstream %s tool %s: result: %w", ErrHandlerFailed, hd.Server, hd.Name, err)
	}
	res.Output = out
	if tr.IsError {
		return res, fmt.Errorf("%w: upstream %s tool %s reported an error", ErrHandlerFailed, hd.Server, hd.Name)
	}
	return res, nil
}
