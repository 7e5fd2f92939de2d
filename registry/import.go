package registry

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Import formats.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatMCP       = "mcp"
	FormatJSONL     = "jsonl"
	FormatAuto      = "auto"
)

// DefaultImportPack is the pack flat tool names are imported under unless
// ImportOptions.Pack says otherwise.
const DefaultImportPack = "imported"

// Values the importer writes into every imported definition.
const (
	ImportOwner    = "import"
	ImportReviewer = "import-review"
)

// ImportOptions configures ImportWith. The zero value imports with format detection under
// the pack "imported".
type ImportOptions struct {
	// Format is openai, anthropic, mcp, jsonl or auto; "" means auto.
	Format string
	// Pack is the pack id that tools with flat names go under (default "imported"). Tools
	// named "A.B.tool" or "server::tool" get packs derived from their names instead.
	Pack string
	// Provider goes into provenance.provider (default: the tool's server when known, else
	// the format name).
	Provider string
	// Source goes into provenance.source (a file name or URL) unless a tool names its own
	// source (the jsonl "source" key). Errors name it as their file.
	Source string
	// ACL is given to every root pack the import creates; their subtrees inherit it. The
	// zero ACL lets nobody discover the imported capabilities until one is set.
	ACL ACL
	// Strict refuses a tool whose schema does not compile. By default such a schema is
	// repaired (type names like "float", draft-04 booleans, a non-list "examples") and,
	// when repair fails, replaced by {"type":"object"}; each case is logged as a warning.
	Strict bool
	// Logger receives those warnings; nil discards them.
	Logger *slog.Logger
}

// Import reads a foreign tool catalogue with default options (see ImportWith).
func Import(r io.Reader, format string) ([]*Capability, error) {
	return ImportWith(r, ImportOptions{Format: format})
}

// ImportWith reads a foreign tool catalogue and returns it as sealed capabilities that pass
// Lint: the packs it needs (sorted by id) followed by one action per tool, in input order.
// Formats:
//
//   - openai: a tools array, or an object with "tools", of {type: function, function:
//     {name, description, parameters}} (the flat {type, name, description, parameters}
//     form is accepted too); tools of other types are skipped;
//   - anthropic: [{name, description, input_schema}], or an object with "tools";
//   - mcp: a tools/list result {tools: [{name, title, description, inputSchema,
//     outputSchema, annotations: {title, readOnlyHint, destructiveHint}}]}, possibly
//     wrapped in a JSON-RPC response's "result";
//   - jsonl: one {id, name, description, params, server, server_description, category,
//     source} object a line (the shared evaluation format);
//   - auto: detected from the shape of the input.
//
// Ids: "Navigation.TrafficViolations.queryViolation" becomes the action
// navigation.traffic_violations.query_violation under the packs navigation and
// navigation.traffic_violations; "Trends Hub::get-weread-rank" becomes
// trends_hub.get_weread_rank under the pack trends_hub; flat names go under opts.Pack.
// Segments are mapped by IDSegment; an id already taken gets a numeric suffix ("_2") in
// input order. The original name is kept as ExternalID and as the first alias.
//
// Side effect: an MCP readOnlyHint gives R (risk low); destructiveHint gives I (risk high,
// requires_confirmation, reviewer "import-review"); other annotations give W-shared (risk
// medium). Without annotations the name decides: a leading read verb (get, list, search,
// ...) gives R, a destructive verb (delete, remove, pay, ...) gives I, anything else the
// conservative W-shared.
//
// Problems (malformed input, wrong types, a tool without a name, an uncompilable schema
// with Strict) are returned as LintErrors naming the line and the tool; nothing is
// returned then. An unknown format is ErrUnknownFormat.
func ImportWith(r io.Reader, opts ImportOptions) ([]*Capability, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("registry: import: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	im := &importer{opts: opts, lines: newLineIndex(data)}
	if im.opts.Logger == nil {
		im.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if im.opts.Pack == "" {
		im.opts.Pack = DefaultImportPack
	}
	if !ValidID(im.opts.Pack) {
		return nil, fmt.Errorf("registry: import: invalid pack id %q", im.opts.Pack)
	}
	im.format = strings.ToLower(opts.Format)
	if im.format == "" || im.format == FormatAuto {
		im.format, err = detectFormat(data)
		if err != nil {
			return nil, LintErrors{{File: opts.Source, Line: 1, Msg: err.Error()}}
		}
	}
	var tools []foreignTool
	switch im.format {
	case FormatOpenAI, FormatAnthropic, FormatMCP:
		tools = im.parseList(data)
	case FormatJSONL:
		tools = im.parseJSONL(data)
	default:
		return nil, fmt.Errorf("%w: %q (want openai, anthropic, mcp, jsonl or auto)", ErrUnknownFormat, opts.Format)
	}
	if len(im.errs) > 0 {
		return nil, im.errs
	}
	caps := im.build(tools)
	if len(im.errs) > 0 {
		return nil, im.errs
	}
	if errs := Lint(caps); errs != nil {
		return nil, im.locate(errs)
	}
	return caps, nil
}

// foreignTool is one tool of a foreign catalogue, format independent.
type foreignTool struct {
	ext        string // original name or id: the external id
	name       string // the tool's own name (differs from ext for "server::tool" ids)
	title      string
	desc       string
	params     json.RawMessage
	output     json.RawMessage
	server     string
	serverDesc string
	category   string
	source     string
	readOnly   *bool
	destruct   *bool
	mcp        bool // an MCP tool: handler URL /tools/<name> on the server's base URL
	line       int
	path       string // "tools[3]" in JSON documents; "" for JSON Lines (the line says it)
}

type importer struct {
	opts   ImportOptions
	format string
	lines  lineIndex
	errs   LintErrors

	used   map[string]bool   // ids taken
	packs  map[string]string // original prefix key → pack id
	out    []*Capability     // packs, then actions
	origin map[*Capability]*foreignTool
}

// fail records a problem; with a tool, at the tool's line and under its path.
func (im *importer) fail(t *foreignTool, line int, field, format string, args ...any) {
	id := ""
	if t != nil {
		id, line, field = t.ext, t.line, joinPath(t.path, field)
	}
	im.errs = append(im.errs, LintError{File: im.opts.Source, Line: line, ID: id, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// --- format detection and parsing ---

// detectFormat guesses the format of a catalogue from its shape.
func detectFormat(data []byte) (string, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return "", errors.New("empty input")
	}
	// Several JSON values, one a line: JSON Lines.
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		if line, _, ok := bytes.Cut(trimmed, []byte("\n")); ok && json.Valid(line) {
			return FormatJSONL, nil
		}
		return "", fmt.Errorf("cannot detect the format: %v", err)
	}
	if dec.More() {
		return FormatJSONL, nil
	}
	var v any
	if err := json.Unmarshal(first, &v); err != nil {
		return "", fmt.Errorf("cannot detect the format: %v", err)
	}
	var sample map[string]any
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return FormatOpenAI, nil // nothing to import either way
		}
		sample, _ = t[0].(map[string]any)
	case map[string]any:
		if _, ok := t["result"]; ok {
			return FormatMCP, nil
		}
		if tools, ok := t["tools"].([]any); ok {
			if len(tools) == 0 {
				return FormatMCP, nil
			}
			sample, _ = tools[0].(map[string]any)
			if f := toolShape(sample); f != "" {
				return f, nil
			}
			return FormatMCP, nil
		}
		sample = t // a single flat record
	}
	if f := toolShape(sample); f != "" {
		return f, nil
	}
	return "", errors.New("cannot detect the format: want an OpenAI, Anthropic or MCP tools list or JSON Lines (use an explicit format)")
}

// toolShape names the format whose tool objects look like m.
func toolShape(m map[string]any) string {
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case m == nil:
		return ""
	case has("function") || (m["type"] == "function" && has("parameters")):
		return FormatOpenAI
	case has("input_schema"):
		return FormatAnthropic
	case has("inputSchema") || has("annotations") || has("outputSchema"):
		return FormatMCP
	case has("params") || (has("id") && has("name")):
		return FormatJSONL
	case has("parameters"):
		return FormatOpenAI
	case has("name"):
		return FormatAnthropic
	}
	return ""
}

// element is one raw tool object of a JSON catalogue.
type element struct {
	raw  json.RawMessage
	line int
	path string
}

// elements finds the tool objects: a top-level array, an object's "tools" array, or the
// "tools" of a JSON-RPC "result".
func (im *importer) elements(data []byte) []element {
	dec := json.NewDecoder(bytes.NewReader(data))
	out, err := im.elementsOf(dec, data, "", 0)
	if err != nil {
		line := im.lines.at(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = im.lines.at(se.Offset)
		}
		im.fail(nil, line, "", "malformed JSON: %v", err)
		return nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		im.fail(nil, im.lines.at(dec.InputOffset()), "", "malformed JSON: unexpected data after the JSON value")
		return nil
	}
	return out
}

func (im *importer) elementsOf(dec *json.Decoder, data []byte, path string, depth int) ([]element, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('['):
		if path == "" {
			path = "tools"
		}
		var out []element
		for dec.More() {
			start := skipSeparators(data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			out = append(out, element{raw: raw, line: im.lines.at(start), path: fmt.Sprintf("%s[%d]", path, len(out))})
		}
		_, err := dec.Token()
		return out, err
	case json.Delim('{'):
		if depth > 1 {
			return nil, errors.New("no tools list found")
		}
		var out []element
		found := false
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			switch k {
			case "tools":
				if found {
					return nil, errors.New("more than one tools list")
				}
				found = true
				if out, err = im.elementsOf(dec, data, joinPath(path, "tools"), depth+1); err != nil {
					return nil, err
				}
			case "result":
				if found {
					return nil, errors.New("more than one tools list")
				}
				found = true
				if out, err = im.elementsOf(dec, data, joinPath(path, "result"), depth+1); err != nil {
					return nil, err
				}
			default:
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return nil, err
				}
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		if !found {
			return nil, errors.New(`no tools list found (want an array or an object with "tools")`)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a tools list, got %v", tok)
}

func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
			continue
		}
		break
	}
	return off
}

type (
	openAITool struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	anthropicTool struct {
		// Type is empty or "custom" for a client tool; anything else ("web_search_20250305",
		// "bash_20250124", ...) is a server tool Anthropic runs itself.
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	mcpTool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  *struct {
			Title           string `json:"title"`
			ReadOnlyHint    *bool  `json:"readOnlyHint"`
			DestructiveHint *bool  `json:"destructiveHint"`
		} `json:"annotations"`
	}
	jsonlTool struct {
		ID                string          `json:"id"`
		Name              string          `json:"name"`
		Title             string          `json:"title"`
		Description       string          `json:"description"`
		Params            json.RawMessage `json:"params"`
		OutputSchema      json.RawMessage `json:"output_schema"`
		Server            string          `json:"server"`
		ServerDescription string          `json:"server_description"`
		Category          string          `json:"category"`
		Source            string          `json:"source"`
	}
)

// decodeTool decodes one tool object, reporting type errors at the tool's path.
func (im *importer) decodeTool(e element, v any) bool {
	if err := json.Unmarshal(e.raw, v); err != nil {
		var (
			te *json.UnmarshalTypeError
			se *json.SyntaxError
		)
		switch {
		case errors.As(err, &te):
			im.fail(nil, e.line, joinPath(e.path, te.Field), "want %s, got %s", te.Type, te.Value)
		case errors.As(err, &se):
			im.fail(nil, e.line, "", "malformed JSON line: %v", err)
		default:
			im.fail(nil, e.line, e.path, "%v", err)
		}
		return false
	}
	return true
}

// parseList reads the openai, anthropic and mcp formats.
func (im *importer) parseList(data []byte) []foreignTool {
	var tools []foreignTool
	for _, e := range im.elements(data) {
		t := foreignTool{line: e.line, path: e.path}
		var shape map[string]any
		if json.Unmarshal(e.raw, &shape) == nil {
			if f, key := strongShape(shape); f != "" && f != im.format {
				im.fail(nil, e.line, e.path, "this tool looks like the %s format (it has %q), not %s: use --format %s or auto", f, key, im.format, f)
				continue
			}
		}
		switch im.format {
		case FormatOpenAI:
			var o openAITool
			if !im.decodeTool(e, &o) {
				continue
			}
			switch {
			case o.Function != nil:
				t.name, t.desc, t.params = o.Function.Name, o.Function.Description, o.Function.Parameters
			case o.Type == "function" || o.Type == "":
				t.name, t.desc, t.params = o.Name, o.Description, o.Parameters
			default:
				im.skipped(e, o.Type, "OpenAI")
				continue
			}
		case FormatAnthropic:
			var a anthropicTool
			if !im.decodeTool(e, &a) {
				continue
			}
			if a.Type != "" && a.Type != "custom" {
				im.skipped(e, a.Type+" "+strconv.Quote(a.Name), "Anthropic")
				continue
			}
			t.name, t.desc, t.params = a.Name, a.Description, a.InputSchema
		case FormatMCP:
			var m mcpTool
			if !im.decodeTool(e, &m) {
				continue
			}
			t.name, t.title, t.desc, t.params, t.output = m.Name, m.Title, m.Description, m.InputSchema, m.OutputSchema
			t.mcp = true
			if a := m.Annotations; a != nil {
				t.readOnly, t.destruct = a.ReadOnlyHint, a.DestructiveHint
				if t.title == "" {
					t.title = a.Title
				}
			}
		}
		t.ext = t.name
		tools = append(tools, t)
	}
	return tools
}

// skipped reports a server-side tool (one the model provider runs itself, such as OpenAI's
// web_search_preview or Anthropic's web_search_20250305): capdex has nothing to run, so it
// is left out, with a warning naming it.
func (im *importer) skipped(e element, what, provider string) {
	im.opts.Logger.Warn("import: skipped a server-side tool: "+provider+" runs it itself, capdex has nothing to run",
		"tool", what, "at", e.path, "line", e.line)
}

// strongShape names the format a tool object's keys leave no doubt about, and the key.
func strongShape(m map[string]any) (format, key string) {
	for _, k := range []struct{ key, format string }{
		{"function", FormatOpenAI}, {"parameters", FormatOpenAI},
		{"input_schema", FormatAnthropic},
		{"inputSchema", FormatMCP}, {"outputSchema", FormatMCP}, {"annotations", FormatMCP},
	} {
		if _, ok := m[k.key]; ok {
			return k.format, k.key
		}
	}
	return "", ""
}

// parseJSONL reads JSON Lines (or a JSON array of the same records).
func (im *importer) parseJSONL(data []byte) []foreignTool {
	var elems []element
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		elems = im.elements(data)
	} else {
		for i, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			elems = append(elems, element{raw: line, line: i + 1})
		}
	}
	var tools []foreignTool
	for _, e := range elems {
		var j jsonlTool
		if !im.decodeTool(e, &j) {
			continue
		}
		t := foreignTool{
			ext: j.ID, name: j.Name, title: j.Title, desc: j.Description, params: j.Params,
			output: j.OutputSchema, server: j.Server, serverDesc: j.ServerDescription,
			category: j.Category, source: j.Source, line: e.line, path: e.path,
		}
		if t.ext == "" {
			t.ext = t.name
		}
		if server, _, ok := strings.Cut(t.ext, "::"); ok && t.server == "" {
			t.server = server
		}
		t.mcp = t.server != ""
		tools = append(tools, t)
	}
	return tools
}

// --- building capabilities ---

// split returns the original pack path and leaf of a tool: "server::tool" → [server],
// tool; "A.B.c" → [A, B], c (only when every segment starts with a letter, so that
// "getPM2.5Level" stays one name); anything else has no prefix.
func (t *foreignTool) split() (prefix []string, leaf string) {
	if server, tool, ok := strings.Cut(t.ext, "::"); ok && strings.TrimSpace(server) != "" && tool != "" {
		return []string{strings.TrimSpace(server)}, tool
	}
	if t.server != "" {
		leaf = t.name
		if leaf == "" {
			leaf = t.ext
		}
		return []string{t.server}, leaf
	}
	if segs := strings.Split(t.ext, "."); len(segs) > 1 && allIdentifiers(segs) {
		return segs[:len(segs)-1], segs[len(segs)-1]
	}
	return nil, t.ext
}

func allIdentifiers(segs []string) bool {
	for _, s := range segs {
		if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '_') {
			return false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return false
			}
		}
	}
	return true
}

// claim takes the first free id of base, base_2, base_3, ...
func (im *importer) claim(base string) string {
	id := base
	for n := 2; im.used[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	im.used[id] = true
	return id
}

// pack returns the id of the pack for an original prefix, creating it and its ancestors.
// The default pack's segments are taken as they are; derived segments go through
// IDSegment and a suffix when two different originals map to one id.
func (im *importer) pack(prefix []string, t *foreignTool, isDefault bool) string {
	parent := ""
	for i := range prefix {
		key := strings.Join(prefix[:i+1], "\x00")
		if isDefault {
			key = "\x01" + key
		}
		if id, ok := im.packs[key]; ok {
			parent = id
			continue
		}
		seg := prefix[i]
		if !isDefault {
			seg = IDSegment(seg)
		}
		id := im.claim(joinID(parent, seg))
		im.packs[key] = id
		ext := strings.Join(prefix[:i+1], ".")
		p := &Capability{
			ID:           id,
			Version:      1,
			ResourceType: TypePack,
			Title:        titleFromName(prefix[i]),
			Owner:        ImportOwner,
			Status:       StatusActive,
			Provenance:   im.provenance(t),
		}
		if !isDefault {
			p.ExternalID = ext
			p.Aliases = []string{ext}
		}
		if parent == "" {
			p.ACL = im.opts.ACL.clone()
		}
		switch {
		case isDefault:
			p.Summary = "Tools imported from " + cmp.Or(im.opts.Source, im.format+" catalogue") + "."
		case t != nil && t.server != "" && i == 0:
			p.Summary = strings.TrimSpace(t.serverDesc)
			p.CapabilityType = "mcp"
		}
		im.out = append(im.out, p)
		parent = id
	}
	return parent
}

func joinID(parent, seg string) string {
	if parent == "" {
		return seg
	}
	return parent + "." + seg
}

func (im *importer) provenance(t *foreignTool) Provenance {
	p := Provenance{Provider: im.opts.Provider, Imported: true, Format: im.format, Source: im.opts.Source}
	if t != nil {
		if p.Provider == "" {
			p.Provider = t.server
		}
		if t.source != "" {
			p.Source = t.source
		}
	}
	if p.Provider == "" {
		p.Provider = im.format
	}
	return p
}

// build turns the parsed tools into packs and actions.
func (im *importer) build(tools []foreignTool) []*Capability {
	im.used = make(map[string]bool)
	im.packs = make(map[string]string)
	im.origin = make(map[*Capability]*foreignTool)
	first := map[string]*foreignTool{}
	for i := range tools {
		t := &tools[i]
		if strings.TrimSpace(t.ext) == "" {
			im.fail(t, 0, "name", "tool has no name")
			continue
		}
		// one tool list (OpenAI, Anthropic, MCP) names each tool once: a second tool of the
		// same name would be a second action answering to the same upstream name
		if im.format == FormatJSONL {
			continue
		}
		if f := first[t.ext]; f != nil {
			im.fail(t, 0, "name", "duplicate tool name %q (first at %s, line %d)", t.ext, f.path, f.line)
		} else {
			first[t.ext] = t
		}
	}
	if len(im.errs) > 0 {
		return nil
	}

	// Packs first, so no action takes an id a pack needs; the default pack before derived
	// ones, so that it keeps the id asked for.
	prefixes := make([][]string, len(tools))
	leaves := make([]string, len(tools))
	for i := range tools {
		prefixes[i], leaves[i] = tools[i].split()
	}
	defaultPack := strings.Split(im.opts.Pack, ".")
	if i := slices.IndexFunc(prefixes, func(p []string) bool { return p == nil }); i >= 0 {
		im.pack(defaultPack, &tools[i], true)
	}
	leafPack := make([]string, len(tools))
	for i := range tools {
		if prefixes[i] == nil {
			leafPack[i] = im.pack(defaultPack, &tools[i], true)
		} else {
			leafPack[i] = im.pack(prefixes[i], &tools[i], false)
		}
	}
	sort.Slice(im.out, func(i, j int) bool { return im.out[i].ID < im.out[j].ID })

	// Schemas are compiled in parallel; the verdicts are cached for the final Lint.
	args := make([]json.RawMessage, len(tools))
	outs := make([]json.RawMessage, len(tools))
	argsErr := make([]string, len(tools))
	outsErr := make([]string, len(tools))
	forEachParallel(len(tools), func(i int) {
		args[i], argsErr[i] = im.schema(&tools[i], tools[i].params, "arguments_schema")
		outs[i], outsErr[i] = im.schema(&tools[i], tools[i].output, "output_schema")
	})
	for i := range tools {
		if argsErr[i] != "" {
			im.fail(&tools[i], 0, schemaKey(im.format, false), "schema does not compile: %s", argsErr[i])
		}
		if outsErr[i] != "" {
			im.fail(&tools[i], 0, schemaKey(im.format, true), "schema does not compile: %s", outsErr[i])
		}
	}
	if len(im.errs) > 0 {
		return nil
	}

	for i := range tools {
		t := &tools[i]
		leaf := leaves[i]
		id := im.claim(joinID(leafPack[i], IDSegment(leaf)))
		c := &Capability{
			ID:              id,
			Version:         1,
			ResourceType:    TypeAction,
			CapabilityType:  "tool",
			Title:           strings.TrimSpace(t.title),
			Summary:         strings.TrimSpace(t.desc),
			Aliases:         aliasesOf(t, leaf),
			Owner:           ImportOwner,
			Status:          StatusActive,
			ArgumentsSchema: args[i],
			OutputSchema:    outs[i],
			Provenance:      im.provenance(t),
			ExternalID:      t.ext,
		}
		if t.mcp {
			c.CapabilityType = "mcp"
		}
		if c.Title == "" {
			c.Title = titleFromName(leaf)
		}
		c.WhenToUse = []string{cmp.Or(firstSentence(t.desc), c.Title)}
		c.SideEffect, c.RiskLevel = classify(IDSegment(leaf), t.readOnly, t.destruct)
		if c.SideEffect == SideEffectImpact {
			c.RequiresConfirmation = true
		}
		if c.RiskLevel.Level() >= RiskHigh.Level() {
			c.Reviewer = ImportReviewer
		}
		if t.category != "" {
			c.Tags = []string{t.category}
		}
		name := cmp.Or(t.name, leaf)
		root, _, _ := strings.Cut(id, ".")
		c.Handler = &Handler{Kind: "http", Method: "POST", URL: "{{.base_url." + root + "}}/tools/" + url.PathEscape(name)}
		im.out = append(im.out, c)
		im.origin[c] = t
	}
	forEachParallel(len(im.out), func(i int) { Seal(im.out[i]) })
	return im.out
}

// schemaKey names a tool's input or output schema key in the format, for errors.
func schemaKey(format string, output bool) string {
	switch {
	case output && format == FormatMCP:
		return "outputSchema"
	case output:
		return "output_schema"
	case format == FormatOpenAI:
		return "parameters"
	case format == FormatAnthropic:
		return "input_schema"
	case format == FormatMCP:
		return "inputSchema"
	}
	return "params"
}

func aliasesOf(t *foreignTool, leaf string) []string {
	aliases := []string{t.ext}
	for _, a := range []string{t.name, leaf} {
		if a != "" && !slices.Contains(aliases, a) {
			aliases = append(aliases, a)
		}
	}
	return aliases
}

// objectSchema is the schema of a tool that declares no parameters or output.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// schema returns a compiling schema for a tool's parameters or output: {"type":"object"}
// when absent or null, the schema itself (compacted) when it compiles, else a repaired or
// permissive one. With Strict, a schema that does not compile is refused: the result is nil
// with the compiler's message. It is called concurrently.
func (im *importer) schema(t *foreignTool, raw json.RawMessage, field string) (json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return objectSchema, ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err == nil {
		raw = buf.Bytes()
	}
	msg := schemaError(raw)
	if msg == "" {
		return raw, ""
	}
	if im.opts.Strict {
		return nil, msg
	}
	if fixed, changed := repairSchema(raw); changed && schemaError(fixed) == "" {
		im.opts.Logger.Warn("import: repaired a schema that did not compile", "tool", t.ext, "field", field, "error", msg)
		return fixed, ""
	}
	im.opts.Logger.Warn("import: replaced a schema that did not compile by {\"type\":\"object\"}", "tool", t.ext, "field", field, "error", msg)
	return objectSchema, ""
}

// Verbs that start the name of a tool that only reads or computes, and of one whose effect
// is destructive or irreversible.
var (
	readVerbs = map[string]bool{
		"get": true, "list": true, "query": true, "search": true, "find": true, "fetch": true,
		"read": true, "check": true, "show": true, "view": true, "lookup": true, "look": true,
		"describe": true, "retrieve": true, "inspect": true, "browse": true, "display": true,
		"count": true, "explore": true, "preview": true, "calculate": true, "compute": true,
		"estimate": true, "predict": true, "analyze": true, "analyse": true, "compare": true,
		"convert": true, "translate": true, "summarize": true, "validate": true, "verify": true,
		"detect": true, "identify": true, "measure": true, "recommend": true, "suggest": true,
		"evaluate": true, "forecast": true,
	}
	destructiveVerbs = map[string]bool{
		"delete": true, "remove": true, "destroy": true, "drop": true, "purge": true,
		"erase": true, "wipe": true, "terminate": true, "revoke": true, "pay": true,
		"transfer": true, "withdraw": true, "refund": true, "uninstall": true, "kill": true,
		"shutdown": true,
	}
)

// classify derives side effect and risk from MCP annotations, or from the leading verb of
// the snake_case leaf name when there are none.
func classify(leaf string, readOnly, destructive *bool) (SideEffect, RiskLevel) {
	switch {
	case readOnly != nil && *readOnly:
		return SideEffectRead, RiskLow
	case destructive != nil && *destructive:
		return SideEffectImpact, RiskHigh
	case readOnly != nil || destructive != nil:
		return SideEffectWriteShared, RiskMedium
	}
	verb, _, _ := strings.Cut(leaf, "_")
	switch {
	case readVerbs[verb]:
		return SideEffectRead, RiskLow
	case destructiveVerbs[verb]:
		return SideEffectImpact, RiskHigh
	}
	return SideEffectWriteShared, RiskMedium
}

// locate gives lint errors of imported capabilities the line of their tool.
func (im *importer) locate(errs LintErrors) LintErrors {
	byID := make(map[string]*foreignTool, len(im.origin))
	for c, t := range im.origin {
		byID[c.ID] = t
	}
	for i := range errs {
		errs[i].File = im.opts.Source
		if t := byID[errs[i].ID]; t != nil {
			errs[i].Line = t.line
		}
	}
	return errs
}
