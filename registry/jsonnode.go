package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// jsonSyntaxError is a JSON syntax error with the line it was found on.
type jsonSyntaxError struct {
	line int
	msg  string
}

func (e *jsonSyntaxError) Error() string { return e.msg }

// lineIndex turns byte offsets into 1-based line numbers.
type lineIndex []int // offsets of '\n'

func newLineIndex(data []byte) lineIndex {
	var li lineIndex
	for i, c := range data {
		if c == '\n' {
			li = append(li, i)
		}
	}
	return li
}

// at returns the line holding offset off.
func (li lineIndex) at(off int64) int {
	return sort.Search(len(li), func(i int) bool { return int64(li[i]) >= off }) + 1
}

// parseJSONNode parses one JSON value into a yaml.Node tree carrying line numbers, so JSON
// files are checked by the same code as YAML files. Unlike the YAML parser it accepts every
// valid JSON text (surrogate-pair escapes included) and rejects anything after the value.
func parseJSONNode(data []byte) (*yaml.Node, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	p := &jsonParser{dec: json.NewDecoder(bytes.NewReader(data)), lines: newLineIndex(data)}
	p.dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: 1}, nil
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &jsonSyntaxError{line: p.lines.at(p.dec.InputOffset()), msg: "unexpected data after the JSON value"}
	}
	return n, nil
}

type jsonParser struct {
	dec   *json.Decoder
	lines lineIndex
}

func (p *jsonParser) fail(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &jsonSyntaxError{line: p.lines.at(se.Offset), msg: se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &jsonSyntaxError{line: p.lines.at(p.dec.InputOffset()), msg: "unexpected end of JSON input"}
	}
	return &jsonSyntaxError{line: p.lines.at(p.dec.InputOffset()), msg: err.Error()}
}

// token reads the next token and the line it ends on.
func (p *jsonParser) token() (json.Token, int, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, 0, p.fail(err)
	}
	return tok, p.lines.at(p.dec.InputOffset() - 1), nil
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	tok, line, err := p.token()
	if err != nil {
		return nil, err
	}
	return p.node(tok, line, depth)
}

func (p *jsonParser) node(tok json.Token, line, depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, &jsonSyntaxError{line: line, msg: fmt.Sprintf("nesting deeper than %d levels", maxDepth)}
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Line: line}
		if t == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		} else {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		for p.dec.More() {
			if n.Kind == yaml.MappingNode {
				k, kline, err := p.token()
				if err != nil {
					return nil, err
				}
				ks, _ := k.(string)
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ks, Line: kline, Style: yaml.DoubleQuotedStyle})
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		if _, _, err := p.token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Line: line, Style: yaml.DoubleQuotedStyle}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t), Line: line}, nil
	case bool:
		v := "false"
		if t {
			v = "true"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v, Line: line}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}, nil
	}
	return nil, &jsonSyntaxError{line: line, msg: fmt.Sprintf("unexpected token %v", tok)}
}
