package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/registry"
)

// Owner is the owner of every definition the gateway writes.
const Owner = "gateway"

// View is what the rug-pull defence watches of a tool: a change of any field quarantines it.
type View struct {
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations"`
}

// ViewOf returns the watched fields of t, each in canonical JSON (sorted keys), so that
// two listings of an unchanged tool give equal views.
func ViewOf(t *mcp.Tool) View {
	v := View{Title: t.Title, Description: t.Description}
	v.InputSchema = canonical(t.InputSchema)
	if t.OutputSchema != nil {
		v.OutputSchema = canonical(t.OutputSchema)
	}
	v.Annotations = json.RawMessage("null")
	if t.Annotations != nil {
		v.Annotations = canonical(t.Annotations)
	}
	return v
}

// Fingerprint is the view as one canonical string.
func (v View) Fingerprint() string {
	b, _ := json.Marshal(v) // raw messages of valid JSON and strings: cannot fail
	return string(b)
}

// canonical re-encodes a value through map[string]any so that keys are sorted.
func canonical(x any) json.RawMessage {
	b, err := json.Marshal(x)
	if err != nil {
		return json.RawMessage("null")
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return json.RawMessage("null")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return out
}

// ToolSchema wraps the output of an mcp handler: content, structuredContent (the tool's
// outputSchema when it declares one) and isError.
func toolOutputSchema(out json.RawMessage) json.RawMessage {
	sc := `{}`
	if len(out) > 0 && string(out) != "null" {
		sc = string(out)
	}
	return json.RawMessage(`{"type":"object","required":["content"],"properties":{"content":{"type":"array"},` +
		`"structuredContent":` + sc + `,"isError":{"type":"boolean"}}}`)
}

// Capabilities turns a server's tools into definitions through the registry's MCP
// importer: the packs down to cfg.PackID() (the server's pack holding cfg's ACL, the
// packs above it none) and, by tool name, one action per tool with an mcp handler. Each
// definition is version 1 and sealed; the caller sets versions.
func Capabilities(cfg Config, tools []*mcp.Tool) (packs []*registry.Capability, actions map[string]*registry.Capability, err error) {
	type wire struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  any                  `json:"inputSchema,omitempty"`
		OutputSchema any                  `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	}
	list := make([]wire, len(tools))
	for i, t := range tools {
		// the importer reads "a.b" and "s::t" as pack paths; a server's tools are flat
		name := strings.NewReplacer(".", "_", "::", "_").Replace(t.Name)
		list[i] = wire{Name: name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations}
	}
	b, err := json.Marshal(map[string]any{"tools": list})
	if err != nil {
		return nil, nil, fmt.Errorf("upstream %s: encoding the tools: %w", cfg.Name, err)
	}
	pack := cfg.PackID()
	caps, err := registry.ImportWith(bytes.NewReader(b), registry.ImportOptions{
		Format: registry.FormatMCP, Pack: pack, Provider: cfg.Name, Source: "upstream " + cfg.Name,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("upstream %s: %w", cfg.Name, err)
	}
	actions = make(map[string]*registry.Capability, len(tools))
	i := 0
	for _, c := range caps {
		c.Owner = Owner
		c.Provenance.SchemaDigest = ""
		if c.ResourceType == registry.TypePack {
			c.Provenance = registry.Provenance{Provider: Owner, Imported: true, Format: registry.FormatMCP}
			c.CapabilityType = "mcp"
			c.ACL = registry.ACL{}
			if c.ID == pack {
				c.ACL = cfg.EffectiveACL()
				c.Title = cfg.Name + " (MCP server)"
				c.Summary = "Tools of the upstream MCP server " + cfg.Name + "."
				c.Provenance = registry.Provenance{Provider: cfg.Name, Source: "upstream " + cfg.Name, Imported: true, Format: registry.FormatMCP}
			} else {
				// open, so that each server's pack may set any ACL (a child only narrows
				// its pack's); it holds nothing but the servers' packs
				c.ACL = registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"*"}}
				c.Title = "MCP servers"
				c.Summary = "Tools of upstream MCP servers, by server."
			}
			registry.Seal(c)
			packs = append(packs, c)
			continue
		}
		t := tools[i]
		i++
		c.ExternalID = t.Name
		c.Aliases = append([]string{t.Name}, c.Aliases[1:]...)
		c.Handler = &registry.Handler{Kind: "mcp", Server: cfg.Name, Name: t.Name}
		c.NetworkPolicy = cfg.NetworkPolicy
		if c.NetworkPolicy == "" {
			c.NetworkPolicy = registry.NetworkAny
		}
		c.Timeout = registry.Duration(cfg.Timeout)
		var out json.RawMessage
		if t.OutputSchema != nil {
			out = canonical(t.OutputSchema)
		}
		c.OutputSchema = toolOutputSchema(out)
		registry.Seal(c)
		actions[t.Name] = c
	}
	return packs, actions, nil
}
