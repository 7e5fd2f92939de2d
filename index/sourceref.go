package index

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/text"
)

// A request often takes an argument's value from somewhere else: "能把加餐改成邮件里提到的
// 时间吗" (the time mentioned in the email), "去Tom短信里提到的地点" (the place in Tom's
// text). The noun before "里提到" names where the value was mentioned — the source of an
// argument — not the task, yet it is a strong word ("邮件" is the Mail tools' own word) and
// pulls the source's tools above the task's. sourceSpans finds these source nouns, and the
// lexical retriever weighs the terms only they hold sourceWeight and drops the concepts
// only they name. (Leaving them out of the semantic retriever's text as well was measured
// and bought nothing more.)
//
// Only the Chinese form is recognised: "X里/中/上/里面提到(的)". The English "mentioned in
// X" is not: in the English sets it mostly names the object of the task ("the key points
// mentioned in this PDF" asks for the PDF tool).

// sourceMarker is the verb of a source reference ("提到", mentioned).
const sourceMarker = "提到"

// sourceLocatives are what joins a source noun to the marker, longest first: "邮件里提到".
var sourceLocatives = []string{"里面", "里", "中", "上"}

// sourceSpans returns the byte ranges [start, end) of the source nouns of s's source
// references: the word before "里提到" (a CC-CEDICT word of 3 Han characters, else the
// last 2), with a Latin or digit run written against it ("QQ消息", "Tom短信"). Nil when s
// has none; the spans are in order and do not overlap.
func sourceSpans(s string) [][2]int {
	if !strings.Contains(s, sourceMarker) {
		return nil
	}
	var out [][2]int
	for off := 0; ; {
		i := strings.Index(s[off:], sourceMarker)
		if i < 0 {
			break
		}
		at := off + i
		off = at + len(sourceMarker)
		end := -1
		for _, l := range sourceLocatives {
			if strings.HasSuffix(s[:at], l) {
				end = at - len(l)
				break
			}
		}
		if end < 0 {
			continue
		}
		start := hanWordBefore(s, end)
		for start > 0 {
			r, size := utf8.DecodeLastRuneInString(s[:start])
			if r >= utf8.RuneSelf || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
				break
			}
			start -= size
		}
		if start < end && (len(out) == 0 || out[len(out)-1][1] <= start) {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}

// hanWordBefore returns where the Chinese word ending at end starts: 3 Han characters
// when they are a CC-CEDICT word ("记事本"), else 2 ("邮件", "微信"), else as many as
// there are (0 or 1); end itself when none precedes it.
func hanWordBefore(s string, end int) int {
	var at [3]int // at[k]: the start of the last k+1 Han characters
	n, p := 0, end
	for n < 3 && p > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:p])
		if !text.IsCJK(r) || !unicode.Is(unicode.Han, r) {
			break
		}
		p -= size
		at[n] = p
		n++
	}
	switch {
	case n == 3 && embed.IsChineseWord(s[at[2]:end]):
		return at[2]
	case n >= 2:
		return at[1]
	case n == 1:
		return at[0]
	}
	return end
}

// withoutSources returns s with its source spans replaced by a space, and whether it had any.
func withoutSources(s string, spans [][2]int) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteByte(' ')
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// sourceWeight is the weight, relative to a query term's, of a lexical query term found
// only in source nouns: the weight of a concept's terms (conceptWeight), a word the query
// names only indirectly. It was not tuned: 0, 0.3 and 0.5 gave hammerbench_zh the same
// recall@5 (.8802) and nDCG@5 within .0005 (bench/report/q17d.md).
const sourceWeight = conceptWeight

// sourceTerms sets s.src to the terms of txt's source spans that the rest of txt lacks,
// and s.srcConcepts to the concepts only the source spans name.
func (s *scratch) sourceTerms(txt string, spans [][2]int) {
	rest := withoutSources(txt, spans)
	keep := text.Analyze(rest)
	var named []int32
	for _, sp := range spans {
		for _, t := range text.Analyze(txt[sp[0]:sp[1]]) {
			if !slices.Contains(keep, t) && !slices.Contains(s.src, t) {
				s.src = append(s.src, t)
			}
		}
		named = text.AppendConceptIDs(named, txt[sp[0]:sp[1]])
	}
	if len(named) == 0 {
		return
	}
	restConcepts := text.AppendConceptIDs(nil, rest)
	for _, c := range named {
		if !slices.Contains(restConcepts, c) && !slices.Contains(s.srcConcepts, c) {
			s.srcConcepts = append(s.srcConcepts, c)
		}
	}
}
