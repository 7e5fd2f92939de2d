package text

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
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

// maxStemBytes bounds the words that are stemmed and memoised; longer words are kept as
// they are.
const maxStemBytes = 48

// stemmable reports whether w is an ASCII lower-case word the English stemmer should see.
func stemmable[T string | []byte](w T) bool {
	if len(w) <= 2 || len(w) > maxStemBytes {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
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

// Terms are memoised in a bounded sharded cache: folded word → term.
const (
	termShards   = 32
	termShardCap = 4096
)

type termShard struct {
	mu sync.RWMutex // guards m
	m  map[string]string
}

type termMemo struct {
	shards [termShards]termShard
}

var termCache = func() *termMemo {
	c := &termMemo{}
	for i := range c.shards {
		c.shards[i].m = make(map[string]string)
	}
	return c
}()

func fnv32[T string | []byte](b T) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(b); i++ {
		h ^= uint32(b[i])
		h *= 16777619
	}
	return h
}

// computeTerm returns the term of folded word w: its stem when stemmable, else w.
func computeTerm(w string) string {
	if !stemmable(w) {
		return w
	}
	return english.Stem(w, true)
}

// get returns the term of the folded word w, memoised when short.
func (c *termMemo) get(w string) string {
	if len(w) > maxStemBytes {
		return w
	}
	sh := &c.shards[fnv32(w)%termShards]
	sh.mu.RLock()
	t, ok := sh.m[w]
	sh.mu.RUnlock()
	if ok {
		return t
	}
	return sh.insert(strings.Clone(w))
}

// getBytes is get for a word held in a byte slice; it does not allocate on a hit.
func (c *termMemo) getBytes(b []byte) string {
	if len(b) > maxStemBytes {
		return string(b)
	}
	sh := &c.shards[fnv32(b)%termShards]
	sh.mu.RLock()
	t, ok := sh.m[string(b)]
	sh.mu.RUnlock()
	if ok {
		return t
	}
	return sh.insert(string(b))
}

// insert computes the term of key (a string the shard may keep) and memoises it while
// the shard has room.
func (sh *termShard) insert(key string) string {
	t := computeTerm(key)
	sh.mu.Lock()
	if len(sh.m) < termShardCap {
		sh.m[key] = t
	}
	sh.mu.Unlock()
	return t
}

// Term returns the search term of the current word or joined token: its stem (memoised)
// and false when it is a stop word. For a CJK token it returns Text and true.
func (sc *Scanner) Term() (string, bool) {
	if sc.kind == KindCJK {
		return sc.Text(), true
	}
	if _, stop := stopWords[string(sc.buf)]; stop {
		return "", false
	}
	return termCache.getBytes(sc.buf), true
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
