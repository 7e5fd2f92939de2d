package registry

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestImportSkipsServerTools: provider-run tools (OpenAI web_search_preview, Anthropic
// web_search_20250305) are left out with a warning naming each, not imported as empty
// actions or dropped silently.
func TestImportSkipsServerTools(t *testing.T) {
	for _, tc := range []struct {
		format, in, want string
	}{
		{FormatOpenAI, `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"web_search_preview"}]}`, "web_search_preview"},
		{FormatAnthropic, `[{"name":"get_weather","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":5}]`, `web_search_20250305 \"web_search\"`},
	} {
		var logs bytes.Buffer
		caps, err := ImportWith(strings.NewReader(tc.in), ImportOptions{Format: tc.format, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		var actions []string
		for _, c := range caps {
			if c.ResourceType == TypeAction {
				actions = append(actions, c.ID)
			}
		}
		if len(actions) != 1 || actions[0] != "imported.get_weather" {
			t.Errorf("%s: actions %v", tc.format, actions)
		}
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), tc.want) {
			t.Errorf("%s: no warning naming %s: %s", tc.format, tc.want, logs.String())
		}
	}
}

// TestImportWrongFormat: an explicit format that the tools plainly are not is refused,
// naming the format they are in, instead of dropping every schema.
func TestImportWrongFormat(t *testing.T) {
	anthropic := `[{"name":"a","description":"A.","input_schema":{"type":"object","properties":{"x":{"type":"string"}}}}]`
	_, err := ImportWith(strings.NewReader(anthropic), ImportOptions{Format: FormatOpenAI})
	if err == nil || !strings.Contains(err.Error(), "looks like the anthropic format") || !strings.Contains(err.Error(), "--format anthropic") {
		t.Fatalf("openai on an anthropic file: %v", err)
	}
	openai := `[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]`
	if _, err := ImportWith(strings.NewReader(openai), ImportOptions{Format: FormatMCP}); err == nil || !strings.Contains(err.Error(), "looks like the openai format") {
		t.Fatalf("mcp on an openai file: %v", err)
	}
	if _, err := ImportWith(strings.NewReader(anthropic), ImportOptions{Format: FormatAnthropic}); err != nil {
		t.Fatal(err)
	}
}
