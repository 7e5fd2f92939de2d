package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Tool formats accepted by RenderTool.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatMCP       = "mcp"
)

// RenderTool renders a described action as a typed leaf tool for the next model request, in
// the OpenAI, Anthropic or MCP tool format, named registry.ToolName(id)
// ("maintenance__codex_diagnose"; see registry.ToolName). Only actions render: packs and recipes are not callable.
func RenderTool(d *Description, format string) (json.RawMessage, error) {
	if d.ResourceType != registry.TypeAction {
		return nil, fmt.Errorf("%w: %s is a %s; only actions render as tools", ErrInvalidRequest, d.ResourceID, d.ResourceType)
	}
	name := registry.ToolName(d.ResourceID)
	desc := toolDescription(d)
	params := d.ArgumentsSchema
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	var v any
	switch format {
	case FormatOpenAI:
		v = map[string]any{"type": "function", "function": map[string]any{
			"name": name, "description": desc, "parameters": params,
		}}
	case FormatAnthropic:
		v = map[string]any{"name": name, "description": desc, "input_schema": params}
	case FormatMCP:
		t := map[string]any{
			"name": name, "title": d.Title, "description": desc, "inputSchema": params,
			"annotations": map[string]any{
				"title":           d.Title,
				"readOnlyHint":    d.SideEffect == registry.SideEffectRead,
				"destructiveHint": d.SideEffect == registry.SideEffectImpact,
				"openWorldHint":   d.NetworkPolicy != "" && d.NetworkPolicy != registry.NetworkNone,
			},
			"_meta": map[string]any{"capdex/resource_id": d.ResourceID, "capdex/version": d.Version, "capdex/schema_digest": d.SchemaDigest},
		}
		if len(d.OutputSchema) > 0 {
			t["outputSchema"] = d.OutputSchema
		}
		v = t
	default:
		return nil, fmt.Errorf("%w: format %q (want openai, anthropic or mcp)", ErrInvalidRequest, format)
	}
	return json.Marshal(v)
}

// toolDescription is the tool's description: summary, when to use and when not to use,
// and the side effect, so the model sees the boundaries of the tool it calls.
func toolDescription(d *Description) string {
	var b strings.Builder
	b.WriteString(d.Title)
	if d.Summary != "" {
		b.WriteString(": ")
		b.WriteString(d.Summary)
	}
	if len(d.WhenToUse) > 0 {
		b.WriteString("\nUse when: ")
		b.WriteString(strings.Join(d.WhenToUse, "; "))
	}
	if len(d.WhenNotToUse) > 0 {
		b.WriteString("\nDo not use when: ")
		b.WriteString(strings.Join(d.WhenNotToUse, "; "))
	}
	fmt.Fprintf(&b, "\nSide effect: %s; risk: %s", d.SideEffect, d.RiskLevel)
	if d.RequiresConfirmation {
		b.WriteString("; requires confirmation")
	}
	return b.String()
}
