package query

import (
	"hash/maphash"
	"sync/atomic"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// token is one unit of matching: a Latin word (matched by its stem) or one CJK character.
type token struct {
	key        string // stem of a word, or the CJK character
	word       string // folded word, or the CJK character
	start, end int    // byte offsets in the tokenised text
	cjk        bool
	stop       bool    // a word on text's English stop list (text.IsStopWord(word))
	first      []int32 // the entries of the lexicon key starts (set only by analysis scans)
}

// tokenize appends the tokens of s to dst. Joined forms of case-split words are skipped:
// phrases are matched on their parts.
func tokenize(dst []token, s string) []token {
	var sc text.Scanner
	dst, _ = scanTokens(&sc, dst, nil, s, nil)
	return dst
}

// scanTokens appends the tokens of s to toks (see tokenize). With a lexicon, it also
// gives each token the entries its key starts (token.first) and appends the search terms
// of s to terms: what text.AppendTerms appends, from the same scan. sc is the scanner to
// use; it is left reset.
func scanTokens(sc *text.Scanner, toks []token, terms []string, s string, lex *Lexicon) ([]token, []string) {
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			start := sc.Offset()
			t := token{start: start, end: start + len(sc.Text())}
			if lex != nil {
				in := lex.wordInfo(sc)
				t.word, t.key, t.stop, t.first = in.word, in.key, in.stop, in.first
				if !t.stop {
					terms = append(terms, t.key)
				}
			} else {
				t.word = sc.Folded()
				t.key, t.stop = sc.Key()
			}
			toks = append(toks, t)
		case text.KindJoined:
			if lex != nil {
				if t, ok := sc.Term(); ok {
					terms = append(terms, t)
				}
			}
		case text.KindCJK:
			run, off := sc.Text(), sc.Offset()
			for i := 0; i < len(run); {
				_, n := utf8.DecodeRuneInString(run[i:])
				ch := run[i : i+n]
				t := token{key: ch, word: ch, start: off + i, end: off + i + n, cjk: true}
				if lex != nil {
					t.first = lex.first[ch]
					// text.AppendTerms: the unigram unless a particle, then the bigram
					if !text.IsParticle(ch) {
						terms = append(terms, ch)
					}
					if i+n < len(run) {
						_, m := utf8.DecodeRuneInString(run[i+n:])
						terms = append(terms, run[i:i+n+m])
					}
				}
				toks = append(toks, t)
				i += n
			}
		}
	}
	sc.Reset("")
	return toks, terms
}

// wordInfo is what a scan of the lexicon needs of a folded word: its key and stop flag
// (see text.Scanner.Key) and the entries the key starts.
type wordInfo struct {
	word, key string
	stop      bool
	first     []int32
}

// wordCache memoises wordInfo per lexicon. A query's words then cost one probe of a small
// table instead of a probe of text's stem memo (large, shared with indexing and mostly
// out of cache by the time a query comes) and one of the lexicon's map. It is
// direct-mapped: a word takes the slot its hash names, replacing whatever was there.
// Slots hold immutable values and are read and written atomically, so concurrent scans
// need no lock; what a slot holds never changes a result, only its cost.
type wordCache struct {
	seed  maphash.Seed
	slots [wordCacheSlots]atomic.Pointer[wordInfo]
}

// wordCacheSlots is the size of a wordCache (64 KiB of pointers).
const wordCacheSlots = 1 << 13

func newWordCache() *wordCache { return &wordCache{seed: maphash.MakeSeed()} }

// wordInfo returns the wordInfo of the scanner's current word (of kind text.KindWord).
func (l *Lexicon) wordInfo(sc *text.Scanner) *wordInfo {
	b := sc.Bytes()
	var slot *atomic.Pointer[wordInfo]
	if l.words != nil {
		slot = &l.words.slots[maphash.Bytes(l.words.seed, b)&(wordCacheSlots-1)]
		if in := slot.Load(); in != nil && in.word == string(b) {
			return in
		}
	}
	// The word is copied, not taken from the query: the cache would keep the query alive.
	w := string(b)
	in := &wordInfo{word: w}
	in.key, in.stop = sc.Key() // from text's memo, or a copy of a long word
	in.first = l.first[in.key]
	if slot != nil {
		slot.Store(in)
	}
	return in
}

// keys returns the match keys of a phrase ("sign_in" → [sign in], "删除日程" → 删 除 日 程).
func keys(s string) []string {
	toks := tokenize(nil, s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.key
	}
	return out
}

// joinable reports whether tokens a and b (a before b) are adjacent parts of one phrase:
// CJK characters of one run, or words separated only by spaces, "_", "-", "." or "/".
func joinable(s string, a, b *token) bool {
	if a.end > b.start {
		return false
	}
	gap := s[a.end:b.start]
	if a.cjk && b.cjk {
		return gap == ""
	}
	if len(gap) > 3 {
		return false
	}
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', '_', '-', '.', '/':
		default:
			return false
		}
	}
	return true
}
