package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// LLMOptions configure the LLM normaliser.
type LLMOptions struct {
	// BaseURL of an OpenAI-compatible API ("https://api.openai.com",
	// "http://localhost:11434"); a trailing "/v1" is accepted. Empty disables the LLM: every
	// call falls back.
	BaseURL string
	// Model is the chat model name.
	Model string
	// APIKey is sent as a bearer token when not empty. It is never logged or recorded.
	APIKey string
	// Timeout bounds one call, on top of the caller's context. Default 2 s.
	Timeout time.Duration
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
}

// maxLLMResponse bounds the bytes read from the endpoint.
const maxLLMResponse = 1 << 20

// LLM normalises with an OpenAI-compatible chat endpoint (POST {base}/v1/chat/completions,
// response_format json_object) and falls back to another normaliser on any error, timeout
// or invalid answer, recording why in Parsed.Notes ("llm fallback: …"). The fallback always
// runs first: it cleans the text and supplies the terms, and its forbidden intents and
// constraints are kept whatever the model says. Safe for concurrent use.
type LLM struct {
	opts     LLMOptions
	fallback Normalizer
}

// NewLLM returns an LLM normaliser; a nil fallback means Rules{}.
func NewLLM(opts LLMOptions, fallback Normalizer) *LLM {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if fallback == nil {
		fallback = Rules{}
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	return &LLM{opts: opts, fallback: fallback}
}

const llmSystemPrompt = `You normalise search requests for a capability registry (tools, scripts, APIs) of an AI agent.
The user text may be Chinese or English. Answer with ONE JSON object and nothing else, with these keys:
"lang": "zh" | "en" | "mixed";
"intents": verbs the user wants done, as short lowercase English words (diagnose, update, reinstall, delete, create, list, ...);
"forbidden_intents": verbs the user forbids or wants avoided ("不要直接重装" -> ["reinstall","update"], "don't update it yet" -> ["update"]);
"entities": the things involved, lowercase (codex, npm, docker, schedule, ...);
"symptoms": observed problems as snake_case (active_version_mismatch, ...);
"constraints": any of read_first, dry_run, read_only, confirm_first, no_network, or no_<verb>;
"ids": capability ids or tool names written literally in the text;
"browse": true when the user asks which capabilities exist rather than for one action;
"scope": a dotted pack id when the text names one, else "";
"outcome": the desired result in the user's words, else "";
"explicit_write": true only when the user explicitly asks to change, create, delete, send, pay or book something.
Use [] for empty lists. Do not invent ids.`

// llmFields is the model's answer. Pointers and nil slices tell "absent" from "empty".
type llmFields struct {
	Lang          string   `json:"lang"`
	Intents       []string `json:"intents"`
	Forbidden     []string `json:"forbidden_intents"`
	ForbiddenAlt  []string `json:"forbidden"`
	Entities      []string `json:"entities"`
	Symptoms      []string `json:"symptoms"`
	Constraints   []string `json:"constraints"`
	IDs           []string `json:"ids"`
	Browse        *bool    `json:"browse"`
	Scope         string   `json:"scope"`
	Outcome       string   `json:"outcome"`
	ExplicitWrite *bool    `json:"explicit_write"`
}

// Normalize runs the fallback, asks the model and merges its answer (see LLM). The error
// is the fallback's (ErrEmptyQuery); a model failure is never an error.
func (l *LLM) Normalize(ctx context.Context, s string, lex *Lexicon) (*Parsed, error) {
	base, err := l.fallback.Normalize(ctx, s, lex)
	if err != nil {
		return nil, err
	}
	if lex == nil {
		lex = defaultLexicon()
	}
	if l.opts.BaseURL == "" {
		base.Notes = append(base.Notes, "llm fallback: no base url")
		return base, nil
	}
	f, err := l.ask(ctx, base.Text)
	if err != nil {
		base.Notes = append(base.Notes, "llm fallback: "+err.Error())
		return base, nil
	}
	return merge(base, f, lex), nil
}

// ask calls the endpoint under the timeout and decodes the model's JSON object.
func (l *LLM) ask(ctx context.Context, userText string) (*llmFields, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{
		"model": l.opts.Model,
		"messages": []map[string]string{
			{"role": "system", "content": llmSystemPrompt},
			{"role": "user", "content": userText},
		},
		"response_format": map[string]string{"type": "json_object"},
		"temperature":     0,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %v", ErrLLM, err)
	}
	url := l.opts.BaseURL + "/v1/chat/completions"
	if strings.HasSuffix(l.opts.BaseURL, "/v1") {
		url = l.opts.BaseURL + "/chat/completions"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLLM, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if l.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.opts.APIKey)
	}
	resp, err := l.opts.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: timeout", ErrLLM)
		}
		return nil, fmt.Errorf("%w: request failed", ErrLLM)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxLLMResponse))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: timeout", ErrLLM)
		}
		return nil, fmt.Errorf("%w: reading response: %v", ErrLLM, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: status %d", ErrLLM, resp.StatusCode)
	}
	var chat struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &chat); err != nil || len(chat.Choices) == 0 {
		return nil, fmt.Errorf("%w: invalid response", ErrLLM)
	}
	content := strings.TrimSpace(chat.Choices[0].Message.Content)
	content = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(content, "```json"), "```"), "```")
	var f llmFields
	dec := json.NewDecoder(strings.NewReader(content))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: invalid json content", ErrLLM)
	}
	return &f, nil
}

// cleanList folds, trims and bounds a model-provided list: at most 16 values of at most 64
// bytes, no control characters.
func cleanList(in []string) []string {
	var out []string
	for _, v := range in {
		_, v, _ = sanitize(v)
		v = text.Fold(v)
		if v == "" || len(v) > 64 {
			continue
		}
		out = addUnique(out, v)
		if len(out) == 16 {
			break
		}
	}
	return out
}

// expandIntents maps model words to concept names and registry values.
func expandIntents(vals []string, lex *Lexicon) []string {
	var out []string
	for _, v := range vals {
		out = addUnique(out, v)
		cs := text.Concepts(v)
		out = addUnique(out, cs...)
		out = addUnique(out, lex.intentVals[v]...)
		for _, c := range cs {
			out = addUnique(out, lex.intentVals[c]...)
		}
	}
	return out
}

// merge overlays the model's fields on the rules' parse. Forbidden intents and
// constraints are united (the model never lifts a prohibition the rules found); ids and
// scope must be known to the lexicon.
func merge(base *Parsed, f *llmFields, lex *Lexicon) *Parsed {
	p := *base
	p.Normalizer = "llm"
	p.Notes = slices.Clone(base.Notes)
	if f.Lang == "zh" || f.Lang == "en" || f.Lang == "mixed" {
		p.Lang = f.Lang
	}
	forb := cleanList(append(f.Forbidden, f.ForbiddenAlt...))
	p.Forbidden = slices.Clone(base.Forbidden)
	for _, v := range expandIntents(forb, lex) {
		p.Forbidden = addUnique(p.Forbidden, v)
		p.Forbidden = addUnique(p.Forbidden, relatives[v]...)
	}
	p.Constraints = slices.Clone(base.Constraints)
	for _, c := range cleanList(f.Constraints) {
		if validConstraint(c) {
			p.Constraints = addUnique(p.Constraints, c)
		}
	}
	if f.Intents != nil {
		p.Intents = nil
		for _, v := range expandIntents(cleanList(f.Intents), lex) {
			if !slices.Contains(p.Forbidden, v) {
				p.Intents = addUnique(p.Intents, v)
			}
		}
	} else {
		p.Intents = slices.DeleteFunc(slices.Clone(base.Intents), func(v string) bool { return slices.Contains(p.Forbidden, v) })
	}
	if f.Entities != nil {
		p.Entities = cleanList(f.Entities)
	}
	if f.Symptoms != nil {
		p.Symptoms = cleanList(f.Symptoms)
	}
	p.IDs = slices.Clone(base.IDs)
	for _, id := range cleanList(f.IDs) {
		ref, pin := id, ""
		if k := strings.IndexByte(id, '@'); k > 0 {
			ref, pin = id[:k], id[k:]
		}
		for _, known := range lex.ids[ref] {
			p.IDs = addUnique(p.IDs, known+pin)
		}
	}
	if f.Browse != nil {
		p.Browse = *f.Browse
	}
	if sc := text.Fold(strings.TrimSpace(f.Scope)); sc != "" && registry.ValidID(sc) && (lex.ncaps == 0 || lex.isPack(sc)) {
		p.Scope = sc
	}
	if _, o, _ := sanitize(f.Outcome); o != "" && len(o) <= 512 {
		p.Outcome = o
	}
	if f.ExplicitWrite != nil {
		p.ExplicitWrite = *f.ExplicitWrite
	}
	if slices.Contains(p.Constraints, cueDryRun) || slices.Contains(p.Constraints, cueReadOnly) {
		p.ExplicitWrite = false
	}
	return &p
}

// validConstraint accepts lowercase [a-z0-9_] names up to 32 bytes.
func validConstraint(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '_' {
			return false
		}
	}
	return true
}
