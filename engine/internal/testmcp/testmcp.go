// Package testmcp is a small MCP server built with the official Go SDK, for the gateway's
// tests and demonstrations: its tools are read from a JSON file (re-read every poll, so that
// editing the file changes, adds or removes tools and sends notifications/tools/list_changed).
// A tool named add sums its numeric arguments a and b, fail answers isError, crash ends
// the process; every other tool echoes its arguments. Both answer a text content block and structuredContent.
package testmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool of the file: the MCP tool fields the gateway watches.
type Tool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  map[string]any       `json:"inputSchema,omitempty"`
	OutputSchema map[string]any       `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Server serves the tools of one file.
type Server struct {
	MCP  *mcp.Server
	file string

	mu    sync.Mutex
	tools map[string]Tool
}

// New returns a server over the tools file (a JSON array of Tool), loaded once now. A
// PageSize > 0 makes tools/list paginate.
func New(file string, pageSize int) (*Server, error) {
	s := &Server{file: file, tools: map[string]Tool{}}
	s.MCP = mcp.NewServer(&mcp.Implementation{Name: "testmcp", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload reads the file and applies what changed.
func (s *Server) Reload() error {
	b, err := os.ReadFile(s.file)
	if err != nil {
		return fmt.Errorf("testmcp: %w", err)
	}
	var list []Tool
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("testmcp: %s: %w", s.file, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range list {
		seen[t.Name] = true
		if old, ok := s.tools[t.Name]; ok && reflect.DeepEqual(old, t) {
			continue
		}
		s.tools[t.Name] = t
		s.MCP.AddTool(toMCP(t), s.handle(t.Name))
	}
	var gone []string
	for n := range s.tools {
		if !seen[n] {
			gone = append(gone, n)
			delete(s.tools, n)
		}
	}
	if len(gone) > 0 {
		s.MCP.RemoveTools(gone...)
	}
	return nil
}

func toMCP(t Tool) *mcp.Tool {
	in := t.InputSchema
	if in == nil {
		in = map[string]any{"type": "object"}
	}
	out := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, Annotations: t.Annotations}
	if t.OutputSchema != nil {
		out.OutputSchema = t.OutputSchema
	}
	return out
}

func (s *Server) handle(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
		}
		if name == "crash" {
			os.Exit(3) // a server process dying in the middle of a call
		}
		if name == "fail" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "fail always fails"}}}, nil
		}
		var structured map[string]any
		if name == "add" {
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			structured = map[string]any{"sum": a + b}
		} else {
			structured = map[string]any{"tool": name, "arguments": args}
		}
		text, _ := json.Marshal(structured)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: structured}, nil
	}
}
