package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Exact name forms, strongest first. The bit of a form is 1<<form in a candidate's mask.
const (
	exID       = iota // the full id
	exToolName        // registry.ToolName(id), or the id with every dot as "_"
	exAlias           // an alias
	exExternal        // the external id of an imported capability
	exLeaf2           // the last two segments joined by "_" ("codex_diagnose")
	exLeaf            // the last segment, when no other capability has it
	exExtPart         // the tool part of an external id ("get-weread-rank", "queryViolation")
	exPrefix          // a dotted prefix of ids that names no capability itself
	numExact
)

var exactNames = [numExact]string{"id", "tool_name", "alias", "external_id", "leaf", "leaf", "external_id", "id_prefix"}

var exactScores = [numExact]float32{1.0, 0.95, 0.9, 0.9, 0.85, 0.8, 0.8, 0.5}

// maxExactTokens bounds how many tokens of a long query are looked up.
const maxExactTokens = 256

type exactRef struct {
	doc  uint32
	form uint8
}

// exactIndex maps every normalised name form to the documents it names. Keys are 64-bit
// FNV-1a hashes of the normalised names (a collision could at worst add a spurious exact
// hit, still inside the caller's filter; it can never lose one). Most names name one
// document: the value is then doc<<3 | form; with multiRef set it indexes multi.
type exactIndex struct {
	names map[uint64]uint32
	multi [][]exactRef
}

// nameKey hashes a normalised name (FNV-1a, 64 bits).
func nameKey(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

const multiRef = 1 << 31

// refs returns the documents a name value points at, using buf for a single one.
func (x *exactIndex) refs(v uint32, buf *[1]exactRef) []exactRef {
	if v&multiRef != 0 {
		return x.multi[v&^multiRef]
	}
	buf[0] = exactRef{doc: v >> 3, form: uint8(v & 7)}
	return buf[:]
}

// normName folds s (case, full width), trims it, collapses white space and drops trailing
// sentence punctuation, so "  Maintenance.Codex.Diagnose。" becomes "maintenance.codex.diagnose".
func normName(s string) string {
	s = text.Fold(s)
	s = strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(".,;!?。，；！？、\"'`()[]{}<>「」『』“”‘’", r)
	})
	if strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func (g *Generation) buildExact() {
	x := &g.exact
	x.names = make(map[uint64]uint32, g.n*6)
	add := func(name string, d int, form int) {
		name = normName(name)
		if name == "" {
			return
		}
		key := nameKey(name)
		v, ok := x.names[key]
		if !ok {
			x.names[key] = uint32(d)<<3 | uint32(form)
			return
		}
		var buf [1]exactRef
		refs := x.refs(v, &buf)
		for i, r := range refs {
			if r.doc == uint32(d) {
				if int(r.form) > form {
					refs[i].form = uint8(form)
					if v&multiRef == 0 {
						x.names[key] = uint32(d)<<3 | uint32(form)
					}
				}
				return
			}
		}
		if v&multiRef == 0 {
			x.multi = append(x.multi, []exactRef{refs[0]})
			v = uint32(len(x.multi)-1) | multiRef
			x.names[key] = v
		}
		i := v &^ multiRef
		x.multi[i] = append(x.multi[i], exactRef{doc: uint32(d), form: uint8(form)})
	}
	leaves := make(map[string]int, g.n)
	for _, c := range g.snap.Caps {
		leaves[registry.Leaf(c.ID)]++
	}
	for d, c := range g.snap.Caps {
		id := c.ID
		add(id, d, exID)
		add(registry.ToolName(id), d, exToolName)
		add(strings.ReplaceAll(id, ".", "_"), d, exToolName)
		if p := registry.Parent(id); p != "" {
			add(registry.Leaf(p)+"_"+registry.Leaf(id), d, exLeaf2)
		}
		if leaves[registry.Leaf(id)] == 1 {
			add(registry.Leaf(id), d, exLeaf)
		}
		for _, a := range c.Aliases {
			add(a, d, exAlias)
		}
		if e := c.ExternalID; e != "" {
			add(e, d, exExternal)
			if i := strings.LastIndex(e, "::"); i >= 0 {
				add(e[i+2:], d, exExtPart)
				add(strings.ReplaceAll(e, "::", "__"), d, exExtPart)
			}
			if i := strings.LastIndexByte(e, '.'); i >= 0 {
				add(e[i+1:], d, exExtPart)
			}
		}
	}
}

// identLike reports whether a token of free text looks like a name rather than a word: it
// holds a separator (. _ : - /) or is camelCase. Only such tokens are looked up on their
// own, so the word "rollback" in a sentence is not an exact hit, while "codex_diagnose" is.
func identLike(tok string) bool {
	prevLower := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '.' || c == '_' || c == ':' || c == '-' || c == '/':
			return true
		case c >= 'A' && c <= 'Z':
			if prevLower {
				return true
			}
			prevLower = false
		default:
			prevLower = c >= 'a' && c <= 'z'
		}
	}
	return false
}

// nameTokens splits free text into candidate name tokens: runs of non-CJK letters, digits
// and the id characters . _ : - / @, trimmed of sentence punctuation.
func nameTokens(s string, fn func(tok string) bool) {
	isTok := func(r rune) bool {
		if r < utf8.RuneSelf {
			return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
				strings.IndexByte("._:-/@", byte(r)) >= 0
		}
		return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !text.IsCJK(r)
	}
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isTok(r) {
				break
			}
			i += size
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isTok(r) {
				break
			}
			j += size
		}
		if j > i {
			tok := strings.Trim(s[i:j], ".:-/@")
			if tok != "" {
				if n++; n > maxExactTokens || !fn(tok) {
					return
				}
			}
		}
		i = j
	}
}

// stripVersion drops a trailing "@N" version pin ("a.b@3" → "a.b"); other uses of "@" stay.
func stripVersion(s string) string {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 || i == len(s)-1 {
		return s
	}
	for j := i + 1; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			return s
		}
	}
	return s[:i]
}

// retrieveExact finds capabilities named exactly: by q.IDs, by the whole text, and by each
// name-like token of the text. Every form is case-insensitive and width-folded.
func (g *Generation) retrieveExact(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	s := getScratch()
	defer putScratch(s)
	acc, seen := s.dense(g.n)
	look := func(name string) {
		name = stripVersion(name)
		if name == "" {
			return
		}
		v, ok := g.exact.names[nameKey(name)]
		if !ok {
			if strings.IndexByte(name, '.') > 0 {
				g.exactPrefix(s, name, allow)
			}
			return
		}
		var buf [1]exactRef
		for _, r := range g.exact.refs(v, &buf) {
			if allow != nil && !allow.Contains(r.doc) {
				continue
			}
			if seen[r.doc] == 0 {
				s.docs = append(s.docs, r.doc)
			}
			seen[r.doc] |= 1 << r.form
			acc[r.doc] = max(acc[r.doc], exactScores[r.form])
		}
	}
	for _, id := range q.IDs {
		look(normName(id))
	}
	if whole := normName(q.Text); len(whole) <= 512 {
		look(whole)
	}
	nameTokens(q.Text, func(tok string) bool {
		if identLike(tok) {
			look(normName(tok))
		}
		return true
	})
	s.top.reset(limit)
	for _, d := range s.docs {
		s.top.push(cand{doc: d, score: acc[d], mask: seen[d]})
	}
	s.clearTouched()
	return hitsOf(s.top.best(), exactNamesOf)
}

// exactPrefix adds the documents under a dotted prefix that names no capability itself, closer
// ones scoring higher.
func (g *Generation) exactPrefix(s *scratch, prefix string, allow *roaring.Bitmap) {
	self, lo, hi := g.subtree(prefix)
	if self >= 0 || lo >= hi {
		return
	}
	acc, seen := s.acc, s.seen
	base := strings.Count(prefix, ".") + 1
	for d := lo; d < hi; d++ {
		if allow != nil && !allow.Contains(uint32(d)) {
			continue
		}
		rel := strings.Count(g.snap.Caps[d].ID, ".") + 1 - base
		sc := exactScores[exPrefix] / float32(rel)
		if seen[d] == 0 {
			s.docs = append(s.docs, uint32(d))
		}
		seen[d] |= 1 << exPrefix
		acc[d] = max(acc[d], sc)
	}
}

var exactNamesOf = newNameTable(func(b int) string {
	if b < numExact {
		return exactNames[b]
	}
	return ""
}).of
