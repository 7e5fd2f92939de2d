package engine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

func ExampleOpen() {
	e, err := engine.Open(context.Background(), engine.Options{}) // in memory, built-in registry
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	d, _ := e.Describe(context.Background(), "maintenance.codex", registry.RuntimeContext{Tenant: "default", Scopes: []string{"dev"}})
	fmt.Println(d.ResourceType, len(d.Children) > 0)
	// Output: pack true
}

func ExampleEngine_Search() {
	ctx := context.Background()
	e, _ := engine.Open(ctx, engine.Options{})
	defer e.Close()
	rc := registry.RuntimeContext{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"}
	resp, _ := e.Search(ctx, registry.SearchRequest{Query: "maintenance.codex.diagnose"}, rc)
	fmt.Println(resp.Matches[0].ResourceID, resp.Matches[0].NextStep.Tool)
	// Output: maintenance.codex.diagnose capability_describe
}

func ExampleEngine_Describe() {
	ctx := context.Background()
	e, _ := engine.Open(ctx, engine.Options{})
	defer e.Close()
	rc := registry.RuntimeContext{Tenant: "default", User: "alice", Scopes: []string{"dev"}}
	d, _ := e.Describe(ctx, "maintenance.codex.path_repair", rc)
	fmt.Println(d.SideEffect, d.RequiresConfirmation)
	tool, _ := engine.RenderTool(d, engine.FormatAnthropic)
	var t struct{ Name string }
	json.Unmarshal(tool, &t)
	fmt.Println(t.Name)
	// Output:
	// W-local true
	// maintenance__codex_path-repair
}

func ExampleEngine_Run() {
	ctx := context.Background()
	e, _ := engine.Open(ctx, engine.Options{})
	defer e.Close()
	rc := registry.RuntimeContext{Tenant: "default", User: "alice", Session: "s1", Scopes: []string{"dev"}}
	res, _ := e.Run(ctx, engine.RunRequest{ID: "demo.echo", Arguments: json.RawMessage(`{"message": "hi"}`)}, rc)
	fmt.Println(res.Status)
	res, _ = e.Run(ctx, engine.RunRequest{ID: "demo.echo", Arguments: json.RawMessage(`{"message": 7}`)}, rc)
	fmt.Println(res.Status, res.Reason)
	// Output:
	// succeeded
	// refused invalid_arguments
}
