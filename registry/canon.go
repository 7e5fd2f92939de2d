package registry

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// appendCanonical appends the canonical form of the JSON text raw to w: no insignificant
// whitespace, object keys sorted (by their decoded value; of duplicate keys the last wins,
// as when decoding into a map), strings re-encoded by writeJSONString and numbers kept as
// written. Two texts that decode to the same value get the same form. It reports false,
// leaving w unspecified, when raw is not one valid JSON value.
func appendCanonical(w *bytes.Buffer, raw []byte) bool {
	p := canonParser{s: raw}
	p.space()
	if !p.value(w, 0) {
		return false
	}
	p.space()
	return p.i == len(p.s)
}

type canonParser struct {
	s []byte
	i int
}

func (p *canonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *canonParser) value(w *bytes.Buffer, depth int) bool {
	if p.i >= len(p.s) || depth > maxDepth {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(w, depth)
	case c == '[':
		p.i++
		w.WriteByte('[')
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			w.WriteByte(']')
			return true
		}
		for {
			p.space()
			if !p.value(w, depth+1) {
				return false
			}
			p.space()
			if p.i >= len(p.s) {
				return false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				w.WriteByte(',')
			case ']':
				p.i++
				w.WriteByte(']')
				return true
			default:
				return false
			}
		}
	case c == '"':
		s, ok := p.str()
		if ok {
			writeJSONString(w, s)
		}
		return ok
	case c == 't':
		return p.literal(w, "true")
	case c == 'f':
		return p.literal(w, "false")
	case c == 'n':
		return p.literal(w, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[p.i]) >= 0 {
			p.i++
		}
		num := p.s[start:p.i]
		if !jsonNumberRE.Match(num) {
			return false
		}
		w.Write(num)
		return true
	}
	return false
}

func (p *canonParser) literal(w *bytes.Buffer, lit string) bool {
	if !bytes.HasPrefix(p.s[p.i:], []byte(lit)) {
		return false
	}
	p.i += len(lit)
	w.WriteString(lit)
	return true
}

// str reads a string token and returns its decoded value.
func (p *canonParser) str() (string, bool) {
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			if !escaped {
				return string(p.s[start+1 : p.i-1]), true
			}
			var s string
			if json.Unmarshal(p.s[start:p.i], &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

type canonMember struct {
	key string
	val []byte // canonical form of the value
}

func (p *canonParser) object(w *bytes.Buffer, depth int) bool {
	p.i++ // '{'
	var members []canonMember
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		w.WriteString("{}")
		return true
	}
	var sub bytes.Buffer
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return false
		}
		k, ok := p.str()
		if !ok {
			return false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		sub.Reset()
		if !p.value(&sub, depth+1) {
			return false
		}
		members = append(members, canonMember{key: k, val: bytes.Clone(sub.Bytes())})
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == '}' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return false
		}
		p.i++
	}
	slices.SortStableFunc(members, func(a, b canonMember) int { return strings.Compare(a.key, b.key) })
	w.WriteByte('{')
	n := 0
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue // a later duplicate wins
		}
		if n > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, m.key)
		w.WriteByte(':')
		w.Write(m.val)
		n++
	}
	w.WriteByte('}')
	return true
}

// canonicalRaw returns the canonical form of a JSON document (see appendCanonical); empty
// input is nil, and invalid JSON becomes a JSON string of its bytes so that different
// invalid inputs still compare and digest differently.
func canonicalRaw(raw []byte) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var w bytes.Buffer
	if appendCanonical(&w, raw) {
		return w.Bytes()
	}
	w.Reset()
	writeJSONString(&w, "invalid JSON: "+string(raw))
	return w.Bytes()
}
