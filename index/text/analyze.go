package text

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// stopWords is the small English stop list removed by Analyze: articles, pronouns,
// auxiliaries, common prepositions, question words and request filler ("please", "want").
// Negations ("not", "no", "without") and particles that change a verb ("up", "off", "out",
// "back") are kept.
var stopWords = func() map[string]struct{} {
	m := make(map[string]struct{})
	for _, w := range strings.Fields(`
		a an the and or but nor of to in on at by for with from into onto as than then
		is are was were be been being am do does did doing done has have had having
		i me my mine we us our ours you your yours he him his she her hers it its they them
		their theirs this that these those there here which who whom whose what when where
		why how if so such very too just also can could would should will shall may might
		must please pls want wanna need let lets ive youre dont
		some any all each every about via per s t`) {
		m[w] = struct{}{}
	}
	return m
}()

// IsStopWord reports whether the folded word w is on the English stop list.
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// cjkStopUnigrams are Chinese particles that are dropped as unigrams (bigrams holding them
// are kept).
var cjkStopUnigrams = map[string]struct{}{
	"的": {}, "了": {}, "吗": {}, "呢": {}, "吧": {}, "啊": {}, "呀": {}, "哦": {}, "么": {},
}

// IsParticle reports whether the CJK character ch is one of the particles Analyze drops as
// unigrams (的, 了, 吗 …; bigrams holding them are kept).
func IsParticle(ch string) bool {
	_, ok := cjkStopUnigrams[ch]
	return ok
}

// Stem returns the English snowball stem of a folded word ("deleting" → "delet"). Words
// that are not plain ASCII lower-case letters (non-ASCII, digits, upper case) and words of
// one or two letters are returned unchanged.
func Stem(w string) string {
	if !stemmable(w) {
		return w
	}
	return termCache.get(w)
}

// Term returns the search term of the current word or joined token: its stem (memoised)
// and false when it is a stop word. For a CJK token it returns Text and true.
func (sc *Scanner) Term() (string, bool) {
	key, stop := sc.Key()
	if stop {
		return "", false
	}
	return key, true
}

// Key returns the matching key of the current token and whether it is a stop word: for a
// word or joined token its term (see Term), given for stop words too, which take part in
// phrases; for a CJK token Text and false. Key is what Lexicon.AppendTokenConceptIDs
// matches, so a caller can analyse a text and find its concepts in one scan.
func (sc *Scanner) Key() (key string, stop bool) {
	if sc.kind == KindCJK {
		return sc.Text(), false
	}
	if len(sc.buf) > maxStemBytes {
		return string(sc.buf), false // no stop word is that long
	}
	e := termCache.lookupBytes(sc.buf)
	return e.term, e.stop
}

var scannerPool = sync.Pool{New: func() any { return new(Scanner) }}

// Analyze returns the search terms of s in text order: Latin words folded, split, stemmed
// and stop-listed; joined forms of words split by case; CJK runs as unigrams and bigrams.
//
//	Analyze("Codex 更新后") → [codex 更 更新 新 新后 后]
func Analyze(s string) []string {
	return AppendTerms(nil, s)
}

// AppendTerms appends the search terms of s (see Analyze) to dst and returns the extended
// slice. Once the stem cache is warm it allocates only to grow dst.
func AppendTerms(dst []string, s string) []string {
	sc := scannerPool.Get().(*Scanner)
	sc.Reset(s)
	for sc.Next() {
		if sc.kind == KindCJK {
			dst = appendCJKTerms(dst, sc.Text())
			continue
		}
		if t, ok := sc.Term(); ok {
			dst = append(dst, t)
		}
	}
	sc.Reset("")
	scannerPool.Put(sc)
	return dst
}

// appendCJKTerms appends the unigrams and bigrams of a CJK run, interleaved in text order.
func appendCJKTerms(dst []string, run string) []string {
	for i := 0; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		j := i + n
		if _, stop := cjkStopUnigrams[run[i:j]]; !stop {
			dst = append(dst, run[i:j])
		}
		if j < len(run) {
			_, m := utf8.DecodeRuneInString(run[j:])
			dst = append(dst, run[i:j+m])
		}
		i = j
	}
	return dst
}
