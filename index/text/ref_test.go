package text

// The scanner and concept matcher as they were before the ASCII fast path, the lock-free
// term memo and the token-based concept matcher, kept verbatim as the oracle the optimised
// code must match token for token and concept for concept (equiv_test.go).

import (
	"strings"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

type refScanner struct {
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
func (sc *refScanner) Reset(s string) {
	buf := sc.buf[:0]
	*sc = refScanner{s: s, buf: buf}
}

// Kind is the kind of the current token.
func (sc *refScanner) Kind() Kind { return sc.kind }

// Bytes is the folded text of the current token: lowercase, half-width, apostrophes
// removed. It is valid until the next call of Next or Reset.
func (sc *refScanner) Bytes() []byte { return sc.buf }

// Text is the current token as it appears in the input (for KindJoined, the whole run).
func (sc *refScanner) Text() string { return sc.s[sc.start:sc.end] }

// Offset is the byte offset of the current token in the input.
func (sc *refScanner) Offset() int { return sc.start }

// Folded returns the folded token as a string, without allocating when the input already
// held it in folded form.
func (sc *refScanner) Folded() string {
	if sc.same {
		return sc.s[sc.start:sc.end]
	}
	return string(sc.buf)
}

// Next advances to the next token and reports whether there is one.
func (sc *refScanner) Next() bool {
	if sc.pendingJoined {
		sc.pendingJoined = false
		sc.joined()
		return true
	}
	if sc.inRun {
		return sc.word()
	}
	for sc.pos < len(sc.s) {
		r, size := utf8.DecodeRuneInString(sc.s[sc.pos:])
		switch classify(widen(r)) {
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
func (sc *refScanner) peek(i int) (runeClass, int) {
	if i >= len(sc.s) {
		return clsSep, 0
	}
	r, size := utf8.DecodeRuneInString(sc.s[i:])
	return classify(widen(r)), size
}

// word scans one word token starting at sc.pos, which holds a letter or digit.
func (sc *refScanner) word() bool {
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
		r, size := utf8.DecodeRuneInString(s[sc.pos:])
		w := widen(r)
		c := classify(w)
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
					sc.pos += size
					sc.same = false
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
			sc.same = false
		}
		if lw < utf8.RuneSelf {
			sc.buf = append(sc.buf, byte(lw))
		} else {
			sc.buf = utf8.AppendRune(sc.buf, lw)
		}
		if isLetter(c) {
			hasLetter = true
		}
		prev = c
		sc.pos += size
	}
	sc.end = sc.pos
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

// upperStartsWord reports whether the upper-case letter before offset i starts a new
// word: it is followed by a lower-case letter, as the S in "HTTPServer". A lone plural
// "s" ("IDs", "URLs") does not start a word.
func (sc *refScanner) upperStartsWord(i int) bool {
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
func (sc *refScanner) cjk() {
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
func (sc *refScanner) joined() {
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

// refTerm is the term of a folded word as the old Scanner.Term computed it, uncached.
func refTerm(b []byte) (string, bool) {
	w := string(b)
	if _, stop := stopWords[w]; stop {
		return "", false
	}
	return refStem(w), true
}

func refStem(w string) string {
	if len(w) > maxStemBytes || !stemmable(w) {
		return w
	}
	return english.Stem(w, true)
}

// refAppendConceptIDs is the old Lexicon.AppendConceptIDs: it rescans s and matches its
// stems against byKey and phraseStarts.
func (l *Lexicon) refAppendConceptIDs(dst []int32, s string) []int32 {
	if len(l.byKey) == 0 {
		return dst
	}
	var items []lexItem
	var sc refScanner
	sc.Reset(s)
	for sc.Next() {
		if sc.kind == KindCJK {
			items = append(items, lexItem{key: sc.Text(), kind: KindCJK})
			continue
		}
		items = append(items, lexItem{key: refStem(string(sc.buf)), kind: sc.kind})
	}
	phraseStarts := map[string]struct{}{} // the first stem of every multi-word member
	for key := range l.byKey {
		if first, _, ok := strings.Cut(key, " "); ok {
			phraseStarts[first] = struct{}{}
		}
	}
	var keyBuf [128]byte
	for i := 0; i < len(items); {
		it := items[i]
		switch it.kind {
		case KindCJK:
			dst = l.refAppendCJK(dst, it.key)
			i++
		case KindJoined:
			dst = append(dst, l.byKey[it.key]...)
			i++
		default:
			n := 1
			if _, ok := phraseStarts[it.key]; !ok {
				dst = append(dst, l.byKey[it.key]...)
				i++
				continue
			}
			for n < l.maxWords && i+n < len(items) && items[i+n].kind == KindWord {
				n++
			}
			matched := 1
			for ; n >= 1; n-- {
				key := keyBuf[:0]
				for j := i; j < i+n; j++ {
					if j > i {
						key = append(key, ' ')
					}
					key = append(key, items[j].key...)
				}
				if ids, ok := l.byKey[string(key)]; ok {
					dst = append(dst, ids...)
					matched = n
					break
				}
			}
			i += matched
		}
	}
	return dst
}

// lexItem is one scanned token for concept matching.
type lexItem struct {
	key  string // stem of a word, or a CJK run
	kind Kind
}

// refAppendCJK is the old appendCJK: longest member first at each position.
func (l *Lexicon) refAppendCJK(dst []int32, run string) []int32 {
	var ends [16]int
	maxRunes := max(1, min(l.maxRunes, len(ends)))
	for i := 0; i < len(run); {
		n := 0
		for j := i; j < len(run) && n < maxRunes; n++ {
			_, size := utf8.DecodeRuneInString(run[j:])
			j += size
			ends[n] = j
		}
		step := ends[0] - i
		for k := n - 1; k >= 0; k-- {
			if ids, ok := l.byKey[run[i:ends[k]]]; ok {
				dst = append(dst, ids...)
				step = ends[k] - i
				break
			}
		}
		i += step
	}
	return dst
}
