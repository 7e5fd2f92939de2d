package text

import (
	"bufio"
	"bytes"
	_ "embed" // concepts.txt
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed concepts.txt
var conceptsData []byte

// Lexicon is a bilingual concept lexicon: named groups of English and Chinese members
// ("delete": delete remove erase 删除 移除 …). It is immutable once parsed and safe for
// concurrent use.
type Lexicon struct {
	names   []string            // by concept id
	symptom []bool              // by concept id: the group is a symptom (a "!" line)
	ids     map[string]int32    // name → concept id
	members map[string][]string // name → members as written
	blocks  []string            // blockers as written (the "-" lines)
	byKey   map[string][]int32  // stemmed English phrase ("sign in") or CJK word → concept ids
	// maxWords is the longest English member in words; maxRunes the longest CJK member.
	maxWords int
	maxRunes int

	// The matcher's view of byKey, built once parsed (see index).
	words map[string]wordInfo // one-word key or first word of a phrase → what it starts
	cjk   map[string]cjkInfo  // CJK key or prefix of one → its concepts
}

// wordInfo is what one word (its stem) starts: a one-word key naming ids (none for a
// blocker), and phrases of the lengths set in phraseLens (bit n for n words).
type wordInfo struct {
	ids        []int32
	phraseLens uint64
}

// cjkInfo is a CJK key (key set, naming ids; none for a blocker) or a proper prefix of one.
type cjkInfo struct {
	ids []int32
	key bool
}

// blockName names the lines of blockers: words that longest match consumes without naming
// a concept, so a short member does not fire inside them (包含 "contain" is not 包).
const blockName = "-"

// ParseLexicon reads a lexicon in the concepts.txt format: one group per line,
// "name: member member ...", blank lines and lines starting with "#" ignored. Names are
// lowercase [a-z0-9_] and unique. A name written with a leading "!" ("!unreachable: …")
// makes the group a symptom (see IsSymptom). Lines named "-" list blockers: words matched
// (and so skipped) like members, naming no concept. An English member is folded, split into words (so
// "sign_in" and "e-mail" are phrases) and stemmed; a Chinese member must be all CJK.
// Errors wrap ErrLexicon and name the line.
func ParseLexicon(data []byte) (*Lexicon, error) {
	l := &Lexicon{ids: map[string]int32{}, members: map[string][]string{}, byKey: map[string][]int32{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if ok && name == blockName {
			for _, m := range strings.Fields(rest) {
				key, words, runes, err := memberKey(m)
				if err != nil {
					return nil, fmt.Errorf("%w: line %d: blocker %q: %s", ErrLexicon, line, m, err)
				}
				if _, taken := l.byKey[key]; !taken {
					l.byKey[key] = nil
				}
				l.maxWords = max(l.maxWords, words)
				l.maxRunes = max(l.maxRunes, runes)
				l.blocks = append(l.blocks, m)
			}
			continue
		}
		symptom := strings.HasPrefix(name, "!")
		if symptom {
			name = name[1:]
		}
		if !ok || !validName(name) {
			return nil, fmt.Errorf("%w: line %d: want \"name: members\" with a lowercase [a-z0-9_] name", ErrLexicon, line)
		}
		if _, dup := l.members[name]; dup {
			return nil, fmt.Errorf("%w: line %d: group %q defined twice", ErrLexicon, line, name)
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%w: line %d: group %q has no members", ErrLexicon, line, name)
		}
		id := int32(len(l.names))
		l.names = append(l.names, name)
		l.symptom = append(l.symptom, symptom)
		l.ids[name] = id
		l.members[name] = fields
		for _, m := range fields {
			key, words, runes, err := memberKey(m)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: member %q: %s", ErrLexicon, line, m, err)
			}
			if !slices.Contains(l.byKey[key], id) {
				l.byKey[key] = append(l.byKey[key], id)
			}
			l.maxWords = max(l.maxWords, words)
			l.maxRunes = max(l.maxRunes, runes)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLexicon, err)
	}
	l.index()
	return l, nil
}

// index builds the matcher's maps from byKey: every English key under its first word
// (one-word keys with their ids, longer ones as a phrase length), and every CJK key with
// each of its proper prefixes, so longest match can stop at the first miss.
func (l *Lexicon) index() {
	l.words, l.cjk = map[string]wordInfo{}, map[string]cjkInfo{}
	for key, ids := range l.byKey {
		if r, _ := utf8.DecodeRuneInString(key); IsCJK(r) {
			l.cjk[key] = cjkInfo{ids: ids, key: true}
			continue
		}
		first, _, phrase := strings.Cut(key, " ")
		w := l.words[first]
		if phrase {
			w.phraseLens |= 1 << min(strings.Count(key, " ")+1, 63)
		} else {
			w.ids = ids
		}
		l.words[first] = w
	}
	for key := range l.byKey {
		if r, _ := utf8.DecodeRuneInString(key); !IsCJK(r) {
			continue
		}
		for i := range key {
			if _, ok := l.cjk[key[:i]]; i > 0 && !ok {
				l.cjk[key[:i]] = cjkInfo{}
			}
		}
	}
}

func validName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// memberKey returns the lookup key of a member: the CJK word itself, or the stems of an
// English member's words joined by spaces, with its length in words or runes.
func memberKey(m string) (key string, words, runes int, err error) {
	f := Fold(m)
	cjk, other := 0, 0
	for _, r := range f {
		if IsCJK(r) {
			cjk++
		} else {
			other++
		}
	}
	if cjk > 0 {
		if other > 0 {
			return "", 0, 0, fmt.Errorf("mixes CJK and other characters")
		}
		return f, 0, cjk, nil
	}
	ws := Words(f)
	if len(ws) == 0 {
		return "", 0, 0, fmt.Errorf("has no words")
	}
	if len(ws) == 1 && IsStopWord(ws[0]) {
		return "", 0, 0, fmt.Errorf("is a stop word")
	}
	for i, w := range ws {
		ws[i] = Stem(w)
	}
	return strings.Join(ws, " "), len(ws), 0, nil
}

var defaultLexicon = sync.OnceValues(func() (*Lexicon, error) {
	return ParseLexicon(conceptsData)
})

// DefaultLexicon returns the embedded lexicon (concepts.txt). The package tests parse it,
// so it never fails in a tested build; if it did, DefaultLexiconErr says why and the
// lexicon returned here is empty.
func DefaultLexicon() *Lexicon {
	l, err := defaultLexicon()
	if err != nil {
		return &Lexicon{ids: map[string]int32{}, members: map[string][]string{}, byKey: map[string][]int32{}}
	}
	return l
}

// DefaultLexiconErr is the error of parsing the embedded lexicon, nil when it parsed.
func DefaultLexiconErr() error {
	_, err := defaultLexicon()
	return err
}

// Concepts returns the concept names of the default lexicon for one word or phrase (see
// Lexicon.Concepts).
func Concepts(term string) []string { return DefaultLexicon().Concepts(term) }

// ConceptsIn returns every concept of the default lexicon named anywhere in s (see
// Lexicon.ConceptsIn).
func ConceptsIn(s string) []string { return DefaultLexicon().ConceptsIn(s) }

// AppendConcepts appends every occurrence of a default-lexicon concept in s to dst (see
// Lexicon.AppendConcepts).
func AppendConcepts(dst []string, s string) []string {
	return DefaultLexicon().AppendConcepts(dst, s)
}

// AppendConceptIDs appends the id of every occurrence of a default-lexicon concept in s to
// dst (see Lexicon.AppendConceptIDs).
func AppendConceptIDs(dst []int32, s string) []int32 {
	return DefaultLexicon().AppendConceptIDs(dst, s)
}

// ConceptID returns the id of a default-lexicon concept (see Lexicon.ID).
func ConceptID(name string) (int32, bool) { return DefaultLexicon().ID(name) }

// ConceptName returns the name of a default-lexicon concept id (see Lexicon.ID).
func ConceptName(id int32) string { return DefaultLexicon().Name(id) }

// ConceptMembers returns the members of a default-lexicon concept as written in
// concepts.txt, nil for an unknown name.
func ConceptMembers(name string) []string { return DefaultLexicon().Members(name) }

// namesOf returns the names of concept ids (nil for none).
func (l *Lexicon) namesOf(ids []int32) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = l.names[id]
	}
	return out
}

// ID returns the id of a concept: its position in Names, stable for the lexicon's life.
func (l *Lexicon) ID(name string) (int32, bool) {
	id, ok := l.ids[name]
	return id, ok
}

// Name returns the name of concept id (see ID).
func (l *Lexicon) Name(id int32) string { return l.names[id] }

// IsSymptom reports whether the named concept is a symptom: a problem as a user reports it
// ("连不上", "cannot connect"; "闪退", "crashed"), rather than a task or a thing. A
// capability documented for a symptom meets a query reporting it in any of its spellings.
func (l *Lexicon) IsSymptom(name string) bool {
	id, ok := l.ids[name]
	return ok && l.symptom[id]
}

// IsSymptom reports whether the named default-lexicon concept is a symptom (see
// Lexicon.IsSymptom).
func IsSymptom(name string) bool { return DefaultLexicon().IsSymptom(name) }

// Names returns every concept name in file order.
func (l *Lexicon) Names() []string { return slices.Clone(l.names) }

// Len is the number of concept groups.
func (l *Lexicon) Len() int { return len(l.names) }

// Blockers returns the blockers as written: words longest match consumes without naming a
// concept.
func (l *Lexicon) Blockers() []string { return slices.Clone(l.blocks) }

// Members returns the members of the named concept as written, nil for an unknown name.
func (l *Lexicon) Members(name string) []string { return slices.Clone(l.members[name]) }

// Overlaps returns the member keys that belong to more than one group, with the groups.
func (l *Lexicon) Overlaps() map[string][]string {
	out := map[string][]string{}
	for k, ids := range l.byKey {
		if len(ids) > 1 { // blockers have none
			out[k] = l.namesOf(ids)
		}
	}
	return out
}

// Concepts returns the concept names of one folded or unfolded word or phrase:
// Concepts("删除") and Concepts("Deleting") give ["delete"]; Concepts("sign in") gives
// ["login"]. It matches whole members only; use ConceptsIn for running text.
func (l *Lexicon) Concepts(term string) []string {
	f := Fold(strings.TrimSpace(term))
	if f == "" {
		return nil
	}
	if ids, ok := l.byKey[f]; ok {
		return l.namesOf(ids)
	}
	ws := Words(f)
	for i, w := range ws {
		ws[i] = Stem(w)
	}
	return l.namesOf(l.byKey[strings.Join(ws, " ")])
}

// ConceptsIn returns every concept named anywhere in s, each once, in order of first
// appearance. English words are matched after stemming, longest phrase first; the joined
// form of a case-split word ("YouTube") is tried too; CJK runs are matched by longest
// member from left to right ("删除日程" → delete, schedule).
func (l *Lexicon) ConceptsIn(s string) []string {
	all := l.AppendConcepts(nil, s)
	out := all[:0]
	for i, n := range all {
		if !slices.Contains(all[:i], n) {
			out = append(out, n)
		}
	}
	return slices.Clip(out)
}

// Token is one scanned token as the concept matcher sees it: Key is the Scanner's Key (the
// term of a word or joined token, stop words included, or a whole CJK run).
//
// NoEntry, for a KindWord token, tells the matcher that the lexicon has no entry under Key
// (HasWord(Key) is false), and bit k of NoStart, for a KindCJK token, that the k-th rune of
// Key (of the first 64) starts no entry (HasCJK of the rune is false), so that the matcher
// skips those lookups; a caller that memoises HasWord and HasCJK sets them. Their zero
// values mean the matcher looks everything up.
type Token struct {
	Key     string
	Kind    Kind
	NoEntry bool
	NoStart uint64
}

// HasCJK reports whether the matcher has an entry under a CJK key or prefix of one: for
// one rune, whether a member (or blocker) starts with it.
func (l *Lexicon) HasCJK(prefix string) bool {
	_, ok := l.cjk[prefix]
	return ok
}

// HasWord reports whether the matcher has an entry under the key of one word (a Scanner
// Key of a KindWord token): a one-word member or blocker, or the first word of a longer
// one. A word it does not have names no concept and starts no phrase.
func (l *Lexicon) HasWord(key string) bool {
	_, ok := l.words[key]
	return ok
}

var tokensPool = sync.Pool{New: func() any { s := make([]Token, 0, 64); return &s }}

// AppendConcepts appends the name of every concept occurrence in s to dst, in text order
// and with repeats (see ConceptsIn), and returns the extended slice. The names are shared
// strings; it allocates only to grow dst once its internal buffers are warm.
func (l *Lexicon) AppendConcepts(dst []string, s string) []string {
	idsp := conceptIDsPool.Get().(*[]int32)
	ids := l.AppendConceptIDs((*idsp)[:0], s)
	for _, id := range ids {
		dst = append(dst, l.names[id])
	}
	*idsp = ids[:0]
	conceptIDsPool.Put(idsp)
	return dst
}

var conceptIDsPool = sync.Pool{New: func() any { s := make([]int32, 0, 64); return &s }}

// AppendConceptIDs is AppendConcepts giving concept ids (see ID) instead of names.
func (l *Lexicon) AppendConceptIDs(dst []int32, s string) []int32 {
	if len(l.byKey) == 0 {
		return dst
	}
	toksp := tokensPool.Get().(*[]Token)
	toks := (*toksp)[:0]
	sc := scannerPool.Get().(*Scanner)
	sc.Reset(s)
	for sc.Next() {
		key, _ := sc.Key()
		toks = append(toks, Token{Key: key, Kind: sc.kind})
	}
	sc.Reset("")
	scannerPool.Put(sc)
	dst = l.AppendTokenConceptIDs(dst, toks)
	clear(toks)
	*toksp = toks[:0]
	tokensPool.Put(toksp)
	return dst
}

// AppendTermsConceptIDs appends the search terms of s (see AppendTerms) to terms and the
// id of every default-lexicon concept occurrence in s (see AppendConceptIDs) to ids, in
// one scan, and returns the extended slices.
func AppendTermsConceptIDs(terms []string, ids []int32, s string) ([]string, []int32) {
	toksp := tokensPool.Get().(*[]Token)
	toks := (*toksp)[:0]
	sc := scannerPool.Get().(*Scanner)
	sc.Reset(s)
	for sc.Next() {
		key, stop := sc.Key()
		toks = append(toks, Token{Key: key, Kind: sc.kind})
		switch {
		case sc.kind == KindCJK:
			terms = appendCJKTerms(terms, key)
		case !stop:
			terms = append(terms, key)
		}
	}
	sc.Reset("")
	scannerPool.Put(sc)
	ids = DefaultLexicon().AppendTokenConceptIDs(ids, toks)
	clear(toks)
	*toksp = toks[:0]
	tokensPool.Put(toksp)
	return terms, ids
}

// AppendTokenConceptIDs is AppendConceptIDs over a text already scanned into toks, one
// Token per Scanner token in order: a caller that scans a text anyway finds its concepts
// without scanning and stemming it again.
func (l *Lexicon) AppendTokenConceptIDs(dst []int32, toks []Token) []int32 {
	if len(l.byKey) == 0 {
		return dst
	}
	var keyBuf [128]byte
	for i := 0; i < len(toks); {
		t := &toks[i]
		switch t.Kind {
		case KindCJK:
			dst = l.appendCJK(dst, t.Key, t.NoStart)
			i++
		case KindJoined:
			dst = append(dst, l.byKey[t.Key]...)
			i++
		default:
			i++
			if t.NoEntry {
				continue
			}
			w, ok := l.words[t.Key]
			if !ok || w.phraseLens == 0 {
				dst = append(dst, w.ids...)
				continue
			}
			// a phrase start: the longest phrase of the words that follow, else the word
			n := 1
			for n < l.maxWords && i-1+n < len(toks) && toks[i-1+n].Kind == KindWord {
				n++
			}
			for ; n >= 2; n-- {
				if w.phraseLens&(1<<n) == 0 {
					continue
				}
				key := append(keyBuf[:0], t.Key...)
				for _, u := range toks[i : i-1+n] {
					key = append(append(key, ' '), u.Key...)
				}
				if ids, ok := l.byKey[string(key)]; ok {
					dst = append(dst, ids...)
					break
				}
			}
			if n >= 2 {
				i += n - 1
			} else {
				dst = append(dst, w.ids...)
			}
		}
	}
	return dst
}

// appendCJK matches the members inside one CJK run, longest first, left to right. At each
// position it extends the match a rune at a time while the text is a key or a prefix of
// one, and takes the longest key seen. Bit k of noStart says the k-th rune starts no key
// (see Token).
func (l *Lexicon) appendCJK(dst []int32, run string, noStart uint64) []int32 {
	maxRunes := max(1, min(l.maxRunes, 16))
	for i, k := 0, 0; i < len(run); { // k: the number of the rune at i
		_, size := utf8.DecodeRuneInString(run[i:])
		if k < 64 && noStart&(1<<k) != 0 {
			i, k = i+size, k+1
			continue
		}
		step, runes := size, 1
		var ids []int32
		for j, n := i+size, 1; ; n++ {
			c, ok := l.cjk[run[i:j]]
			if !ok {
				break
			}
			if c.key {
				ids, step, runes = c.ids, j-i, n
			}
			if n == maxRunes || j == len(run) {
				break
			}
			_, size := utf8.DecodeRuneInString(run[j:])
			j += size
		}
		dst = append(dst, ids...)
		i, k = i+step, k+runes
	}
	return dst
}
