package rank

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/registry"
)

// TermCache holds the analysed when_to_use and when_not_to_use entries of every capability of
// one index generation, so Rerank compares sorted term lists instead of analysing text on
// every call. It is immutable after NewTermCache and safe for concurrent use.
type TermCache struct {
	caps   []*registry.Capability
	use    [][][]string // [doc][entry] sorted unique terms
	notUse [][][]string
}

// NewTermCache analyses the entries of caps, whose positions are their docIDs (as in
// registry.Snapshot.Caps). analyze should return the same kind of terms as the query's
// Signals.Terms (for example text.Analyze plus "~"-prefixed concept names). Equal terms are
// stored once.
func NewTermCache(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	t := &TermCache{caps: caps, use: make([][][]string, len(caps)), notUse: make([][][]string, len(caps))}
	intern := make(map[string]string)
	prep := func(entries []string) [][]string {
		if len(entries) == 0 {
			return nil
		}
		out := make([][]string, 0, len(entries))
		for _, e := range entries {
			ts := analyze(e)
			slices.Sort(ts)
			ts = slices.Compact(ts)
			for i, x := range ts {
				if y, ok := intern[x]; ok {
					ts[i] = y
				} else {
					intern[x] = x
				}
			}
			out = append(out, slices.Clip(ts))
		}
		return out
	}
	for i, c := range caps {
		t.use[i] = prep(c.WhenToUse)
		t.notUse[i] = prep(c.WhenNotToUse)
	}
	return t
}

// coverage returns the best share, over c's when_to_use (or when_not_to_use) entries, of an
// entry's terms found in the sorted query terms. A nil cache, or one built for another
// generation, falls back to substring tests on the raw entries.
func (t *TermCache) coverage(c *Candidate, terms []string, not bool) float64 {
	raw := c.Cap.WhenToUse
	if not {
		raw = c.Cap.WhenNotToUse
	}
	if t != nil && int(c.Doc) < len(t.caps) && t.caps[c.Doc] == c.Cap {
		entries := t.use[c.Doc]
		if not {
			entries = t.notUse[c.Doc]
		}
		best := 0.0
		for _, e := range entries {
			if len(e) == 0 {
				continue
			}
			if v := float64(intersect(e, terms)) / float64(len(e)); v > best {
				best = v
			}
		}
		return best
	}
	best := 0.0
	for _, e := range raw {
		size := approxTerms(e)
		if size == 0 {
			continue
		}
		n := 0
		for _, q := range terms {
			if q != "" && q[0] != '~' && containsFoldASCII(e, q) {
				n++
			}
		}
		if v := min(float64(n)/float64(size), 1); v > best {
			best = v
		}
	}
	return best
}

// intersect counts the common elements of two sorted unique lists.
func intersect(a, b []string) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// approxTerms estimates how many analysed terms a text yields: one per Latin word, a unigram
// and a bigram per CJK character.
func approxTerms(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case r > unicode.MaxLatin1 && unicode.Is(unicode.Han, r):
			n += 2
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	return n
}

// containsFoldASCII reports whether s contains sub, ignoring ASCII case (sub is lowercase).
func containsFoldASCII(s, sub string) bool {
	if len(sub) == 0 || len(sub) > len(s) {
		return len(sub) == 0
	}
	if !utf8.ValidString(sub) {
		return false
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
