package server

import (
	"encoding/json"
	"testing"
)

// TestDescribeNextStepRunsAsGiven: describe's next_step must be callable as it stands; its
// version used to be the string "1", which capability_run refuses ("version must be a
// non-negative integer").
func TestDescribeNextStepRunsAsGiven(t *testing.T) {
	ts := sharedServer(t)
	r := ts.call(t, "POST", "/v1/describe", devKey, map[string]any{"resource_id": "demo.echo"})
	if r.status != 200 {
		t.Fatalf("describe: %d %s", r.status, r.body)
	}
	var d struct {
		Version  int `json:"version"`
		NextStep struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"next_step"`
	}
	r.json(t, &d)
	if d.NextStep.Tool != "capability_run" {
		t.Fatalf("next_step: %+v", d.NextStep)
	}
	body := map[string]any{"arguments": map[string]any{"message": "hi"}}
	for k, v := range d.NextStep.Arguments {
		body[k] = v
	}
	r = ts.call(t, "POST", "/v1/run", devKey, body)
	if r.status != 200 {
		b, _ := json.Marshal(body)
		t.Fatalf("run with describe's next_step %s: %d %s", b, r.status, r.body)
	}
	var res struct{ Status string }
	r.json(t, &res)
	if res.Status != "succeeded" {
		t.Fatalf("run: %s", r.body)
	}
}
