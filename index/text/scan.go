package text

import (
	"unicode"
	"unicode/utf8"
)

// Kind says what a Scanner token is.
type Kind uint8

// Token kinds.
const (
	// KindWord is a folded word: letters (of any alphabetic script) and digits.
	KindWord Kind = iota + 1
	// KindCJK is a whole run of CJK characters (see IsCJK).
	KindCJK
	// KindJoined is the joined form of a run split by case alone ("YouTube" → "youtube",
	// "HTTPServer" → "httpserver"). It follows the last part of the run.
	KindJoined
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindWord:
		return "word"
	case KindCJK:
		return "cjk"
	case KindJoined:
		return "joined"
	}
	return "invalid"
}

// runeClass is what a (widened) rune contributes to a token.
type runeClass uint8

const (
	clsSep runeClass = iota
	clsUpper
	clsLower // lowercase, titlecase or caseless letter outside CJK
	clsDigit
	clsMark // combining mark: continues the current word
	clsCJK
	clsApos // apostrophe: joins two letters ("don't"), else a separator
)

// asciiClass is classify of every ASCII rune, for the scanner's byte-wise fast path.
var asciiClass = func() (t [utf8.RuneSelf]runeClass) {
	for b := range t {
		t[b] = classifyASCII(rune(b))
	}
	return t
}()

// plainByte marks the bytes of a word that need neither folding nor a boundary check:
// plainLetter for a-z, plainDigit for 0-9, 0 for any other byte.
var plainByte = func() (t [256]uint8) {
	for b := 'a'; b <= 'z'; b++ {
		t[b] = plainLetter
	}
	for b := '0'; b <= '9'; b++ {
		t[b] = plainDigit
	}
	return t
}()

const (
	plainLetter = 1 << iota
	plainDigit
)

func classifyASCII(r rune) runeClass {
	switch {
	case 'a' <= r && r <= 'z':
		return clsLower
	case 'A' <= r && r <= 'Z':
		return clsUpper
	case '0' <= r && r <= '9':
		return clsDigit
	case r == '\'':
		return clsApos
	}
	return clsSep
}

func classify(r rune) runeClass {
	if r < utf8.RuneSelf {
		return classifyASCII(r)
	}
	switch {
	case r == utf8.RuneError:
		return clsSep
	case r == '\u2019' || r == '\u2018':
		return clsApos
	case IsCJK(r):
		return clsCJK
	case unicode.IsUpper(r):
		return clsUpper
	case unicode.IsLetter(r):
		return clsLower
	case unicode.IsDigit(r):
		return clsDigit
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
		return clsMark
	}
	return clsSep
}

// classAt returns the class of the (widened) rune at s[i:], i < len(s), with the rune as
// it appears, its widened form and its size; ASCII takes a table lookup.
func classAt(s string, i int) (c runeClass, r, w rune, size int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], rune(b), rune(b), 1
	}
	r, size = utf8.DecodeRuneInString(s[i:])
	w = widen(r)
	return classify(w), r, w, size
}

// lowerFolded lowercases a rune that widen has already mapped.
func lowerFolded(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// Scanner splits a text into tokens in one pass over its runes, without allocating once
// its buffer has grown. The zero value is ready after Reset. A Scanner is not safe for
// concurrent use.
//
//	var sc text.Scanner
//	sc.Reset("Codex 更新后仍然启动旧版本")
//	for sc.Next() { fmt.Println(sc.Kind(), string(sc.Bytes())) }
type Scanner struct {
	s   string
	pos int

	kind       Kind
	start, end int
	buf        []byte
	same       bool // buf equals s[start:end]

	// inRun is set when the last word token ended at a case boundary: the next token
	// continues the same alphanumeric run.
	inRun    bool
	runStart int
	runParts int

	pendingJoined bool
	joinStart     int
	joinEnd       int
}

// Reset starts scanning s.
func (sc *Scanner) Reset(s string) {
	buf := sc.buf[:0]
	*sc = Scanner{s: s, buf: buf}
}

// Kind is the kind of the current token.
func (sc *Scanner) Kind() Kind { return sc.kind }

// Bytes is the folded text of the current token: lowercase, half-width, apostrophes
// removed. It is valid until the next call of Next or Reset.
func (sc *Scanner) Bytes() []byte { return sc.buf }

// Text is the current token as it appears in the input (for KindJoined, the whole run).
func (sc *Scanner) Text() string { return sc.s[sc.start:sc.end] }

// Offset is the byte offset of the current token in the input.
func (sc *Scanner) Offset() int { return sc.start }

// Folded returns the folded token as a string, without allocating when the input already
// held it in folded form.
func (sc *Scanner) Folded() string {
	if sc.same {
		return sc.s[sc.start:sc.end]
	}
	return string(sc.buf)
}

// Next advances to the next token and reports whether there is one.
func (sc *Scanner) Next() bool {
	if sc.pendingJoined {
		sc.pendingJoined = false
		sc.joined()
		return true
	}
	if sc.inRun {
		return sc.word()
	}
	for sc.pos < len(sc.s) {
		c, _, _, size := classAt(sc.s, sc.pos)
		switch c {
		case clsCJK:
			sc.cjk()
			return true
		case clsUpper, clsLower, clsDigit:
			return sc.word()
		}
		sc.pos += size
	}
	sc.kind = 0
	return false
}

// peek returns the class of the rune at byte offset i and its size (clsSep, 0 at the end).
func (sc *Scanner) peek(i int) (runeClass, int) {
	if i >= len(sc.s) {
		return clsSep, 0
	}
	c, _, _, size := classAt(sc.s, i)
	return c, size
}

func isLetter(c runeClass) bool { return c == clsUpper || c == clsLower }

// word scans one word token starting at sc.pos, which holds a letter or digit.
//
// The folded bytes are written lazily: while the word reads as it is folded (sc.same, as
// for plain lower-case ASCII) nothing is copied until its end, and a lower-case ASCII
// letter or digit costs a table lookup.
func (sc *Scanner) word() bool {
	s := sc.s
	if !sc.inRun {
		sc.runStart = sc.pos
		sc.runParts = 0
	}
	sc.inRun = false
	sc.kind = KindWord
	sc.start = sc.pos
	sc.buf = sc.buf[:0]
	sc.same = true
	prev := clsSep
	hasLetter := false
	runEnds := true
loop:
	for sc.pos < len(s) {
		// a run of lower-case ASCII letters and digits: no boundary, no folding
		if pos := sc.pos; plainByte[s[pos]] != 0 {
			var seen uint8
			for pos < len(s) && plainByte[s[pos]] != 0 {
				seen |= plainByte[s[pos]]
				pos++
			}
			if !sc.same {
				sc.buf = append(sc.buf, s[sc.pos:pos]...)
			}
			hasLetter = hasLetter || seen&plainLetter != 0
			prev = asciiClass[s[pos-1]]
			sc.pos = pos
			continue
		}
		c, r, w, size := classAt(s, sc.pos)
		switch c {
		case clsLower, clsDigit:
		case clsMark:
			c = prev
		case clsUpper:
			if (prev == clsLower) || (prev == clsDigit && hasLetter) {
				runEnds = false
				break loop
			}
			if prev == clsUpper && sc.upperStartsWord(sc.pos+size) {
				runEnds = false
				break loop
			}
		case clsApos:
			if isLetter(prev) {
				if nc, _ := sc.peek(sc.pos + size); isLetter(nc) {
					sc.unfold()
					sc.pos += size
					continue
				}
			}
			break loop
		default:
			break loop
		}
		if r == utf8.RuneError && size == 1 {
			break
		}
		lw := lowerFolded(w)
		if lw != r {
			sc.unfold()
		}
		if !sc.same {
			if lw < utf8.RuneSelf {
				sc.buf = append(sc.buf, byte(lw))
			} else {
				sc.buf = utf8.AppendRune(sc.buf, lw)
			}
		}
		if isLetter(c) {
			hasLetter = true
		}
		prev = c
		sc.pos += size
	}
	sc.end = sc.pos
	if sc.same {
		sc.buf = append(sc.buf, s[sc.start:sc.end]...)
	}
	sc.runParts++
	if runEnds {
		if sc.runParts > 1 {
			sc.pendingJoined = true
			sc.joinStart, sc.joinEnd = sc.runStart, sc.end
		}
	} else {
		sc.inRun = true
	}
	return true
}

// unfold notes that the current word's folded form differs from its input: the part read so
// far (identical in both) is copied to the buffer, which word extends from then on.
func (sc *Scanner) unfold() {
	if sc.same {
		sc.same = false
		sc.buf = append(sc.buf[:0], sc.s[sc.start:sc.pos]...)
	}
}

// upperStartsWord reports whether the upper-case letter before offset i starts a new
// word: it is followed by a lower-case letter, as the S in "HTTPServer". A lone plural
// "s" ("IDs", "URLs") does not start a word.
func (sc *Scanner) upperStartsWord(i int) bool {
	c, size := sc.peek(i)
	if c != clsLower {
		return false
	}
	if sc.s[i] == 's' {
		if c2, _ := sc.peek(i + size); c2 != clsLower {
			return false
		}
	}
	return true
}

// cjk scans a run of CJK characters starting at sc.pos.
func (sc *Scanner) cjk() {
	s := sc.s
	sc.kind = KindCJK
	sc.start = sc.pos
	for sc.pos < len(s) {
		r, size := utf8.DecodeRuneInString(s[sc.pos:])
		if !IsCJK(r) {
			break
		}
		sc.pos += size
	}
	sc.end = sc.pos
	sc.buf = append(sc.buf[:0], s[sc.start:sc.end]...)
	sc.same = true
}

// joined fills the token with the joined form of the run that just ended.
func (sc *Scanner) joined() {
	sc.kind = KindJoined
	sc.start, sc.end = sc.joinStart, sc.joinEnd
	sc.buf = sc.buf[:0]
	sc.same = true
	for _, r := range sc.s[sc.start:sc.end] {
		w := widen(r)
		if classify(w) == clsApos {
			sc.same = false
			continue
		}
		lw := lowerFolded(w)
		if lw != r {
			sc.same = false
		}
		sc.buf = utf8.AppendRune(sc.buf, lw)
	}
}

// Words splits s into folded words: Latin (and other alphabetic) words split inside
// identifiers, and whole CJK runs. Stop words are kept and nothing is stemmed.
//
//	Words("queryPassengerTrainOrder")   → [query passenger train order]
//	Words("maintenance.codex.diagnose") → [maintenance codex diagnose]
//	Words("HTTPServer v2")              → [http server v2]
func Words(s string) []string {
	var sc Scanner
	sc.Reset(s)
	var out []string
	for sc.Next() {
		if sc.kind != KindJoined {
			out = append(out, sc.Folded())
		}
	}
	return out
}
