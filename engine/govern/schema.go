package govern

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders validation messages in English.
var printer = message.NewPrinter(language.English)

const schemaLoc = "mem:///schema.json"

// errExternalRef is what the loader answers for any $ref outside the schema.
var errExternalRef = errors.New("references outside the schema are not allowed")

// noLoader refuses every external reference: compiling never reads files or the network.
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errExternalRef }

// compile compiles one schema document (draft 2020-12 unless it says otherwise); an empty
// schema is nil, meaning anything is valid.
func compile(raw []byte) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaLoc, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaLoc)
}

// compiled are the two schemas of one definition.
type compiled struct {
	args, out *jsonschema.Schema
	err       error // compiling failed (a definition lint should have refused)
}

// schemaCache compiles the schemas of each (id, version, digest) once.
type schemaCache struct {
	mu sync.Mutex // guards m
	m  map[string]*compiled
}

const schemaCacheMax = 4096

func (sc *schemaCache) get(key string, argsRaw, outRaw []byte) *compiled {
	sc.mu.Lock()
	c, ok := sc.m[key]
	sc.mu.Unlock()
	if ok {
		return c
	}
	c = &compiled{}
	var err error
	if c.args, err = compile(argsRaw); err != nil {
		c.err = fmt.Errorf("arguments_schema: %w", err)
	} else if c.out, err = compile(outRaw); err != nil {
		c.err = fmt.Errorf("output_schema: %w", err)
	}
	sc.mu.Lock()
	if sc.m == nil || len(sc.m) >= schemaCacheMax {
		sc.m = make(map[string]*compiled)
	}
	sc.m[key] = c
	sc.mu.Unlock()
	return c
}

// validate checks a JSON instance against sch and returns every error as
// "<json pointer>: <message>", the pointer being the instance location ("(root)" for the
// whole document). A nil schema accepts anything.
func validate(sch *jsonschema.Schema, instance []byte) []string {
	if sch == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return []string{"(root): not valid JSON"}
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"(root): " + err.Error()}
	}
	var out []string
	leaves(ve, &out)
	if len(out) == 0 {
		out = append(out, "(root): "+oneLine(ve.Error()))
	}
	return dedupe(out)
}

// leaves collects the leaf causes of a validation error tree.
func leaves(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			leaves(c, out)
		}
		return
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		// Name each missing property at its own location: "/count: required property missing".
		for _, p := range k.Missing {
			*out = append(*out, pointer(append(ve.InstanceLocation[:len(ve.InstanceLocation):len(ve.InstanceLocation)], p))+": required property missing")
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, pointer(append(ve.InstanceLocation[:len(ve.InstanceLocation):len(ve.InstanceLocation)], p))+": property not allowed (additionalProperties)")
		}
		return
	}
	*out = append(*out, pointer(ve.InstanceLocation)+": "+oneLine(ve.ErrorKind.LocalizedString(printer)))
}

// pointer renders an instance location as a JSON pointer, "(root)" for the whole document.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// quoteList renders values for a human summary.
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
