package registry

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// appendCanonical appends the canonical form of the JSON text raw to w: no insignificant
// whitespace, object keys sorted (by their decoded value; of duplicate keys the last wins,
// as when decoding into a map), strings re-encoded by writeJSONString and numbers kept as
// written. Two texts that decode to the same value get the same form. It reports false,
// leaving w unchanged, when raw is not one valid JSON value.
func appendCanonical(w *bytes.Buffer, raw []byte) bool {
	p := canonParser{s: raw}
	p.space()
	if !p.value(0) {
		return false
	}
	p.space()
	if p.i != len(p.s) {
		return false
	}
	w.Write(p.out.Bytes())
	return true
}

// canonParser is a small recursive-descent JSON parser writing the canonical form to out.
// Object members are written to out as parsed, then rewritten in key order through tmp.
type canonParser struct {
	s   []byte
	i   int
	out bytes.Buffer
	tmp []byte
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

func (p *canonParser) value(depth int) bool {
	if p.i >= len(p.s) || depth > maxDepth {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		p.i++
		p.out.WriteByte('[')
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			p.out.WriteByte(']')
			return true
		}
		for {
			p.space()
			if !p.value(depth + 1) {
				return false
			}
			p.space()
			if p.i >= len(p.s) {
				return false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				p.out.WriteByte(',')
			case ']':
				p.i++
				p.out.WriteByte(']')
				return true
			default:
				return false
			}
		}
	case c == '"':
		lo, hi, esc, ok := p.str()
		return ok && p.writeString(lo, hi, esc)
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[p.i]) >= 0 {
			p.i++
		}
		num := p.s[start:p.i]
		if !isJSONNumber(num) {
			return false
		}
		p.out.Write(num)
		return true
	}
	return false
}

func (p *canonParser) literal(lit string) bool {
	if !bytes.HasPrefix(p.s[p.i:], []byte(lit)) {
		return false
	}
	p.i += len(lit)
	p.out.WriteString(lit)
	return true
}

// str reads a string token: its content is s[lo:hi]; esc says it holds escapes.
func (p *canonParser) str() (lo, hi int, esc, ok bool) {
	lo = p.i + 1
	for p.i++; p.i < len(p.s); {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return lo, p.i - 1, esc, true
		case c == '\\':
			esc = true
			p.i += 2
		case c < 0x20:
			return 0, 0, false, false
		default:
			p.i++
		}
	}
	return 0, 0, false, false
}

// decoded returns the value of the string token s[lo:hi].
func (p *canonParser) decoded(lo, hi int, esc bool) (string, bool) {
	if !esc {
		return string(p.s[lo:hi]), true
	}
	var v string
	if json.Unmarshal(p.s[lo-1:hi+1], &v) != nil {
		return "", false
	}
	return v, true
}

// writeString writes the string token s[lo:hi] canonically. Plain ASCII without escapes is
// copied as it is, the common case; anything else goes through writeJSONString.
func (p *canonParser) writeString(lo, hi int, esc bool) bool {
	if !esc {
		plain := true
		for _, c := range p.s[lo:hi] {
			if c >= utf8.RuneSelf || c == 0x7f {
				plain = false
				break
			}
		}
		if plain {
			p.out.WriteByte('"')
			p.out.Write(p.s[lo:hi])
			p.out.WriteByte('"')
			return true
		}
	}
	v, ok := p.decoded(lo, hi, esc)
	if ok {
		writeJSONString(&p.out, v)
	}
	return ok
}

// canonMember is one object member: its decoded key and where its canonical text (key and
// value) lies in out, relative to the object's start.
type canonMember struct {
	key    string
	lo, hi int
}

func (p *canonParser) object(depth int) bool {
	p.i++ // '{'
	start := p.out.Len()
	var stack [8]canonMember
	members := stack[:0]
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.out.WriteString("{}")
		return true
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return false
		}
		klo, khi, esc, ok := p.str()
		if !ok {
			return false
		}
		key, ok := p.decoded(klo, khi, esc)
		if !ok {
			return false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		lo := p.out.Len()
		p.writeString(klo, khi, esc)
		p.out.WriteByte(':')
		if !p.value(depth + 1) {
			return false
		}
		members = append(members, canonMember{key: key, lo: lo - start, hi: p.out.Len() - start})
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
	p.tmp = append(p.tmp[:0], p.out.Bytes()[start:]...)
	p.out.Truncate(start)
	p.out.WriteByte('{')
	n := 0
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue // a later duplicate wins
		}
		if n > 0 {
			p.out.WriteByte(',')
		}
		p.out.Write(p.tmp[m.lo:m.hi])
		n++
	}
	p.out.WriteByte('}')
	return true
}

// canonicalRaw returns the canonical form of a JSON document (see appendCanonical); empty
// input is nil, and invalid JSON becomes a JSON string of its bytes so that different
// invalid inputs still compare and digest differently.
func canonicalRaw(raw []byte) json.RawMessage {
	raw = trimJSONSpace(raw)
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

// isJSONNumber reports whether b is a JSON number literal.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// trimJSONSpace trims the whitespace JSON allows around a value (not \f or \v, which
// bytes.TrimSpace would also remove).
func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}
