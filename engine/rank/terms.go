package rank

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/registry"
)

// TermCache holds the analysed when_to_use and when_not_to_use entries of every capability of
// one index generation, so Rerank compares sorted lists of term numbers instead of analysing
// text on every call. It is immutable after NewTermCache and safe for concurrent use.
type TermCache struct {
	caps   []*registry.Capability
	ids    map[string]uint32 // term → number
	use    [][][]uint32      // [doc][entry] sorted unique term numbers
	notUse [][][]uint32
}

// NewTermCache analyses the entries of caps, whose positions are their docIDs (as in
// registry.Snapshot.Caps). analyze should return the same kind of terms as the query's
// Signals.Terms (for example text.Analyze plus "~"-prefixed concept names).
func NewTermCache(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	t := &TermCache{caps: caps, ids: make(map[string]uint32), use: make([][][]uint32, len(caps)), notUse: make([][][]uint32, len(caps))}
	prep := func(entries []string) [][]uint32 {
		if len(entries) == 0 {
			return nil
		}
		out := make([][]uint32, 0, len(entries))
		for _, e := range entries {
			ts := analyze(e)
			nums := make([]uint32, 0, len(ts))
			for _, x := range ts {
				id, ok := t.ids[x]
				if !ok {
					id = uint32(len(t.ids))
					t.ids[strings.Clone(x)] = id
				}
				nums = append(nums, id)
			}
			slices.Sort(nums)
			out = append(out, slices.Clip(slices.Compact(nums)))
		}
		return out
	}
	for i, c := range caps {
		t.use[i] = prep(c.WhenToUse)
		t.notUse[i] = prep(c.WhenNotToUse)
	}
	return t
}

// numbers returns the sorted numbers of the query terms the cache knows, appended to dst.
func (t *TermCache) numbers(dst []uint32, terms []string) []uint32 {
	if t == nil {
		return dst
	}
	for _, x := range terms {
		if id, ok := t.ids[x]; ok {
			dst = append(dst, id)
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// coverage returns the best share, over c's when_to_use (or when_not_to_use) entries, of an
// entry's terms found in the query (nums: the query's term numbers, terms: its terms). A
// nil cache, or one built for another generation, falls back to substring tests on the
// raw entries.
func (t *TermCache) coverage(c *Candidate, nums []uint32, terms []string, not bool) float64 {
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
			if v := float64(intersect(e, nums)) / float64(len(e)); v > best {
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
func intersect(a, b []uint32) int {
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
