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
	// most bounds the size of every name; see mayName.
	most nameSize
	// roots holds the first segment of every id; see mayRoot.
	roots map[string]struct{}
}

// nameSize measures a name: its words, its letters and digits, and those of them that are
// CJK (unicode.IsLetter, unicode.IsDigit, text.IsCJK).
type nameSize struct{ words, letters, cjk int }

// grow raises z to cover the normalised name s.
func (z *nameSize) grow(s string) {
	letters, cjk := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
			if text.IsCJK(r) {
				cjk++
			}
		}
	}
	z.words = max(z.words, strings.Count(s, " ")+1)
	z.letters = max(z.letters, letters)
	z.cjk = max(z.cjk, cjk)
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
		x.most.grow(name)
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
	x.roots = map[string]struct{}{}
	for _, c := range g.snap.Caps {
		leaves[registry.Leaf(c.ID)]++
		x.roots[firstSegment(c.ID)] = struct{}{}
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

// Classes of the ASCII characters in name tokens (nameClass).
const (
	cName  = 1 << iota // belongs to name tokens: a letter, a digit or . _ : - / @
	cSep               // a separator of identLike: . _ : - /
	cUpper             // an upper-case letter
)

var nameClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch b := byte(c); {
		case b >= 'A' && b <= 'Z':
			t[c] = cName | cUpper
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9', b == '@':
			t[c] = cName
		case strings.IndexByte("._:-/", b) >= 0:
			t[c] = cName | cSep
		}
	}
	return t
}()

// nameRune reports whether a non-ASCII rune belongs to name tokens: a letter or digit that
// is not CJK (CJK is tested first: it is most of the non-ASCII text of queries).
func nameRune(r rune) bool {
	return !text.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// skipText returns the index of the first rune of a name token at or after i (len(s) when
// there is none).
func skipText(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if nameClass[c]&cName != 0 {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if nameRune(r) {
			return i
		}
		i += size
	}
	return i
}

// tokenStart returns the start of the name token that holds the byte s[i].
func tokenStart(s string, i int) int {
	for i > 0 {
		if c := s[i-1]; c < utf8.RuneSelf {
			if nameClass[c]&cName == 0 {
				break
			}
			i--
			continue
		}
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !nameRune(r) {
			break
		}
		i -= size
	}
	return i
}

// tokenEnd returns the end of the name token that holds the byte s[i] and, when i is its
// start, whether the token might be identLike: whether it holds a separator, or an
// upper-case letter past its first byte. Trimming only shortens a token, so a token with
// neither is no name whatever is trimmed.
func tokenEnd(s string, i int) (int, bool) {
	var seen uint8
	j := i
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			k := nameClass[c]
			if k&cName == 0 {
				break
			}
			if j == i {
				k &^= cUpper
			}
			seen |= k
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if !nameRune(r) {
			break
		}
		j += size
	}
	return j, seen&(cSep|cUpper) != 0
}

// nameTokens calls fn, in text order, with every token of free text that looks like a name
// (identLike). Tokens are runs of non-CJK letters, digits and . _ : - / @, trimmed of the
// separators . : - / @ at either end; only the first maxExactTokens tokens count.
//
// When no token can be left out (fewTokens), only the tokens around a separator or an
// upper-case letter can be names: it finds those bytes and reads each one's token, skipping
// the words of a sentence at the cost of a table lookup per byte. Otherwise it reads every
// token, counting (allTokens).
func nameTokens(s string, fn func(tok string)) {
	if !fewTokens(s) {
		allTokens(s, fn)
		return
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || nameClass[c]&(cSep|cUpper) == 0 {
			continue
		}
		end, _ := tokenEnd(s, i)
		if tok := trimSeparators(s[tokenStart(s, i):end]); identLike(tok) {
			fn(tok)
		}
		i = end
	}
}

// fewTokens reports whether s surely has at most maxExactTokens tokens. A token but the first
// follows a rune outside tokens, and such a rune holds an ASCII byte outside tokens or a byte
// past ASCII; k tokens also take at least 2k-1 bytes.
func fewTokens(s string) bool {
	if len(s) <= 2*maxExactTokens {
		return true
	}
	n := 1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || nameClass[c]&cName == 0 {
			n++
		}
	}
	return n <= maxExactTokens
}

// allTokens is nameTokens reading every token, so that it stops after maxExactTokens.
func allTokens(s string, fn func(tok string)) {
	n := 0
	for i := skipText(s, 0); i < len(s); {
		j, shaped := tokenEnd(s, i)
		if tok := trimSeparators(s[i:j]); tok != "" {
			if n++; n > maxExactTokens {
				return
			}
			if shaped && identLike(tok) {
				fn(tok)
			}
		}
		i = skipText(s, j)
	}
}

// trimSeparators trims the ASCII separators . : - / @ from both ends of a token.
func trimSeparators(tok string) string {
	sep := func(c byte) bool { return c == '.' || c == ':' || c == '-' || c == '/' || c == '@' }
	for len(tok) > 0 && sep(tok[0]) {
		tok = tok[1:]
	}
	for len(tok) > 0 && sep(tok[len(tok)-1]) {
		tok = tok[:len(tok)-1]
	}
	return tok
}

// mayName reports whether normName(s) could name something: an indexed name, or (for
// exactPrefix) a dotted prefix of ids. It is false only when that is impossible, so that a
// long sentence is never folded and split just to miss. Folding maps letters, digits, CJK
// and spaces to their own kind, and normName trims only other characters, so normName(s)
// has the letters, digits and CJK of s and at least its words that hold one of them: when
// s has more than any name, nothing can match. Counting stops at the first "@" (or its
// full-width form), since the subtree lookup of exactPrefix drops what follows it.
func (x *exactIndex) mayName(s string) bool {
	var z nameSize
	inWord := false
	for _, r := range s {
		switch {
		case r == '@' || r == '＠':
			return true
		case unicode.IsSpace(r):
			inWord = false
			continue
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			continue
		}
		z.letters++
		if text.IsCJK(r) {
			z.cjk++
		}
		if !inWord {
			inWord = true
			z.words++
		}
		if z.words > x.most.words || z.letters > x.most.letters || z.cjk > x.most.cjk {
			return false
		}
	}
	return true
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
	if g.exact.mayName(q.Text) {
		if whole := normName(q.Text); len(whole) <= 512 {
			look(whole)
		}
	}
	nameTokens(q.Text, func(tok string) { look(normName(tok)) })
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
	if !g.exact.mayRoot(prefix) {
		return
	}
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

// mayRoot reports whether the subtree lookup of exactPrefix can find ids under prefix, so
// that a dotted word of a query ("e.g.", "50.2", "report.pdf") costs a map lookup rather than
// two binary searches over the ids: that lookup reads prefix up to its first "@", and the
// ids under it start with its first segment.
func (x *exactIndex) mayRoot(prefix string) bool {
	if i := strings.IndexByte(prefix, '@'); i >= 0 {
		prefix = prefix[:i]
	}
	_, ok := x.roots[firstSegment(prefix)]
	return ok
}

// firstSegment returns s up to its first dot.
func firstSegment(s string) string {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return s
}

var exactNamesOf = newNameTable(func(b int) string {
	if b < numExact {
		return exactNames[b]
	}
	return ""
}).of
