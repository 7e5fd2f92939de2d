package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSearchAnswerHasContentLength: a search answer larger than net/http's 2 KiB buffer
// goes out with its Content-Length, not chunked, and is one JSON document and a newline.
func TestSearchAnswerHasContentLength(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true})
	req, _ := http.NewRequest("POST", ts.url+"/v1/search", strings.NewReader(`{"query": "Codex 更新后还是旧版本，帮我检查并修好"}`))
	req.Header.Set("Authorization", "Bearer "+devKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if len(body) <= 2048 {
		t.Fatalf("answer of %d bytes: the test needs one over 2 KiB", len(body))
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("Content-Length %d, Transfer-Encoding %v for an answer of %d bytes", resp.ContentLength, resp.TransferEncoding, len(body))
	}
	var v map[string]any
	if !strings.HasSuffix(string(body), "}\n") || json.Unmarshal(body, &v) != nil || v["matches"] == nil {
		t.Errorf("answer is not one JSON object and a newline: %.200q", body)
	}
}
