package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/registry"
)

// FuzzSearchBody: the HTTP API's body decoder (strictJSON into searchBody, then the limit
// check) never panics, accepts only a JSON object, and a request it accepts has a limit in
// 1..10 (0 only when absent) and a one-line error otherwise.
func FuzzSearchBody(f *testing.F) {
	for _, s := range []string{
		`{"query":"codex"}`, `{"query":"codex","limit":3}`, `{"query":"x","limit":5.5}`, `{"query":"x","limit":0}`,
		`{"query":"x","limit":"5"}`, `{"query":"x","limit":1e400}`, `{"query":"x","limit":3.0}`, `[{"query":"x"}]`, `[]`, `null`,
		`{"query":"x","types":["action"],"side_effect_max":"R","within":"maintenance"}`, `{"query":"x","top_k":3}`,
		`{"query":"x"} {"query":"y"}`, `{"query": "co`, ` `, `{"query":"x","match":{"domain":"d"},"explain":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var body searchBody
		err := strictJSON(b, &body, "body")
		if err == nil {
			var req registry.SearchRequest
			req, err = body.request()
			if err == nil {
				if tb := bytes.TrimSpace(b); tb[0] != '{' {
					t.Fatalf("accepted a body that is not an object: %q", b)
				}
				if req.Limit < 0 || req.Limit > registry.MaxLimit || (req.Limit == 0) != (len(body.Limit) == 0) {
					t.Fatalf("limit %d from %s", req.Limit, body.Limit)
				}
				return
			}
		}
		if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("error %q", msg)
		}
	})
}

// FuzzToolArguments: decoding an MCP tool call's arguments into each meta-tool's
// arguments never panics and accepts only a JSON object (or none).
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"query":"codex","limit":2}`, `{"query":"x","limit":0.5}`, `{"resource_id":"demo.echo","arguments":{"message":"hi"}}`,
		`{"resource_id":"demo.echo","version":-1}`, `{"pack":"maintenance"}`, `[]`, `"demo.echo"`, `{"resource_id":"x","format":"mcp"}`,
		`{"resource_id":"a","confirmation_token":"cdx1.k.p.m"}`, `{"a":` + strings.Repeat(`[`, 20000),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(raw)}}
		targets := []any{&searchArgs{}, &ListRequest{}, &DescribeRequest{}, &runArgs{}}
		for _, v := range targets {
			err := toolArgs(req, v)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("multi-line error %q", err)
				}
				continue
			}
			tr := bytes.TrimSpace(raw)
			if len(tr) > 0 && string(tr) != "null" && tr[0] != '{' {
				t.Fatalf("accepted arguments that are not an object: %q", raw)
			}
			if a, ok := v.(*searchArgs); ok && len(a.Limit) > 0 {
				if n, err := parseLimit(a.Limit); err == nil && (n < 1 || n > registry.MaxLimit) {
					t.Fatalf("limit %d accepted from %s", n, a.Limit)
				}
			}
		}
	})
}

// FuzzStdioMessage: the stdio transport's line check never panics; a line it passes on is
// one JSON-RPC 2.0 object that encodes again, and a refusal is -32700 or -32600.
func FuzzStdioMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `[]`, `garbage`, `{"jsonrpc":"2.0","id":1,"method":"pi`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":7}`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
		`{"jsonrpc":"2.0","id":null,"method":"x","params":{"s":"\"}]"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, _, code, problem := checkMessage(line)
		if problem != "" {
			if code != jsonrpc.CodeParseError && code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("code %d for %q", code, problem)
			}
			return
		}
		if msg == nil || !json.Valid(line) || bytes.TrimSpace(line)[0] != '{' {
			t.Fatalf("passed on %q as %v", line, msg)
		}
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			t.Fatalf("passed on a message that does not encode: %v", err)
		}
	})
}
