package server

import (
	"strings"
	"testing"
)

// TestHTTPInputIsStrict: a body that is not an object, a limit that is not an integer in
// 1..10, and a body that is not declared application/json are refused with a message that
// says what was wrong and where.
func TestHTTPInputIsStrict(t *testing.T) {
	ts := sharedServer(t)
	tests := []struct {
		name       string
		path, body string
		headers    []string
		want       int
		code       string
		msg        string
	}{
		{name: "array body", path: "/v1/search", body: `[{"query":"codex"}]`, want: 400, code: "malformed_json", msg: "body must be a JSON object, got an array"},
		{name: "empty array body", path: "/v1/run", body: `[]`, want: 400, code: "malformed_json", msg: "body must be a JSON object, got an array"},
		{name: "string body", path: "/v1/describe", body: `"demo.echo"`, want: 400, code: "malformed_json", msg: "body must be a JSON object, got a string"},
		{name: "null body", path: "/v1/list", body: `null`, want: 400, code: "malformed_json", msg: "body must be a JSON object, got null"},
		{name: "limit fraction", path: "/v1/search", body: `{"query":"codex","limit":5.5}`, want: 400, code: "invalid_request", msg: "limit must be an integer between 1 and 10, got 5.5"},
		{name: "limit zero", path: "/v1/search", body: `{"query":"codex","limit":0}`, want: 400, code: "invalid_request", msg: "limit must be an integer between 1 and 10, got 0"},
		{name: "limit too big", path: "/v1/search", body: `{"query":"codex","limit":11}`, want: 400, code: "invalid_request", msg: "limit must be an integer between 1 and 10, got 11"},
		{name: "limit string", path: "/v1/search/stream", body: `{"query":"codex","limit":"5"}`, want: 400, code: "invalid_request", msg: `limit must be an integer between 1 and 10, got "5"`},
		{name: "limit exponent", path: "/v1/search", body: `{"query":"codex","limit":1e400}`, want: 400, code: "invalid_request", msg: "limit must be an integer between 1 and 10, got 1e400"},
		{name: "limit integral float", path: "/v1/search", body: `{"query":"codex","limit":3.0}`, want: 200},
		{name: "text/plain", path: "/v1/search", body: `{"query":"codex"}`, headers: []string{"Content-Type: text/plain"}, want: 415, code: "unsupported_media_type", msg: "Content-Type must be application/json, got text/plain"},
		{name: "form", path: "/v1/run", body: `{"id":"demo.echo"}`, headers: []string{"Content-Type: application/x-www-form-urlencoded"}, want: 415, code: "unsupported_media_type", msg: "got application/x-www-form-urlencoded"},
		{name: "no content type", path: "/v1/describe", body: `{"resource_id":"demo.echo"}`, headers: []string{"Content-Type: "}, want: 415, code: "unsupported_media_type", msg: "Content-Type must be application/json, got none"},
		{name: "json with charset", path: "/v1/search", body: `{"query":"codex"}`, headers: []string{"Content-Type: application/json; charset=utf-8"}, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.call(t, "POST", tt.path, devKey, tt.body, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
			}
			if tt.want == 200 {
				return
			}
			var e ErrorBody
			r.json(t, &e)
			if e.Error.Code != tt.code || !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("error %+v, want code %q and a message with %q", e.Error, tt.code, tt.msg)
			}
		})
	}
}

// TestMCPSearchLimitIsStrict: capability_search refuses the limits its input schema
// refuses, with the HTTP API's message.
func TestMCPSearchLimitIsStrict(t *testing.T) {
	c := connectInProcess(t, sharedServer(t), nil)
	for _, limit := range []any{0, 5.5, "5", 11} {
		res, isErr := c.callTool(t, ToolSearch, map[string]any{"query": "codex", "limit": limit})
		e, _ := res["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !isErr || e["code"] != "invalid_request" || !strings.Contains(msg, "limit must be an integer between 1 and 10, got ") {
			t.Errorf("limit %v: isError=%v %v", limit, isErr, res)
		}
	}
	if res, isErr := c.callTool(t, ToolSearch, map[string]any{"query": "codex", "limit": 2}); isErr || len(res["matches"].([]any)) != 2 {
		t.Errorf("limit 2: %v", res)
	}
	res, isErr := c.callTool(t, ToolDescribe, []any{"demo.echo"})
	e, _ := res["error"].(map[string]any)
	if msg, _ := e["message"].(string); !isErr || !strings.Contains(msg, "arguments must be a JSON object, got an array") {
		t.Errorf("array arguments: %v", res)
	}
}
