package embed

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenizer is the subset of a Hugging Face tokenizers pipeline that static embedding
// models need: normalizer, pre-tokenizer and a WordPiece, WordLevel or Unigram model.
// Special tokens and post-processing are not applied (Model2Vec encodes without them).
type tokenizer struct {
	normalize []func(string) string
	pre       []func([]string) []string

	kind     string // "WordPiece", "WordLevel" or "Unigram"
	vocab    map[string]int
	unkID    int // -1: none
	prefix   string
	maxChars int
	// Unigram
	scores      map[string]float64
	unkScore    float64
	maxPieceLen int
}

// tokenizerFile is the JSON layout of tokenizer.json.
type tokenizerFile struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string          `json:"type"`
		UnkToken                *string         `json:"unk_token"`
		UnkID                   *int            `json:"unk_id"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int             `json:"max_input_chars_per_word"`
		Vocab                   json.RawMessage `json:"vocab"`
		ByteFallback            bool            `json:"byte_fallback"`
	} `json:"model"`
}

// parseTokenizer reads a tokenizer.json.
func parseTokenizer(b []byte) (*tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrModel, err)
	}
	t := &tokenizer{unkID: -1, kind: f.Model.Type}
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	m := f.Model
	if m.Type == "" { // older files omit the type of a WordPiece model
		if m.ContinuingSubwordPrefix != nil {
			t.kind = "WordPiece"
		}
	}
	switch t.kind {
	case "WordPiece", "WordLevel":
		if err := json.Unmarshal(m.Vocab, &t.vocab); err != nil {
			return nil, fmt.Errorf("%w: %s vocab: %v", ErrModel, t.kind, err)
		}
		unk := "[UNK]"
		if m.UnkToken != nil {
			unk = *m.UnkToken
		}
		if id, ok := t.vocab[unk]; ok {
			t.unkID = id
		}
		t.prefix = "##"
		if m.ContinuingSubwordPrefix != nil {
			t.prefix = *m.ContinuingSubwordPrefix
		}
		t.maxChars = m.MaxInputCharsPerWord
		if t.maxChars <= 0 {
			t.maxChars = 100
		}
	case "Unigram":
		var pieces [][2]json.RawMessage
		if err := json.Unmarshal(m.Vocab, &pieces); err != nil {
			return nil, fmt.Errorf("%w: Unigram vocab: %v", ErrModel, err)
		}
		t.vocab = make(map[string]int, len(pieces))
		t.scores = make(map[string]float64, len(pieces))
		minScore := math.Inf(1)
		for id, p := range pieces {
			var tok string
			var score float64
			if json.Unmarshal(p[0], &tok) != nil || json.Unmarshal(p[1], &score) != nil {
				return nil, fmt.Errorf("%w: Unigram vocab entry %d", ErrModel, id)
			}
			if _, dup := t.vocab[tok]; !dup {
				t.vocab[tok] = id
				t.scores[tok] = score
			}
			minScore = min(minScore, score)
			t.maxPieceLen = max(t.maxPieceLen, len(tok))
		}
		if m.UnkID != nil && *m.UnkID >= 0 && *m.UnkID < len(pieces) {
			t.unkID = *m.UnkID
		}
		if math.IsInf(minScore, 1) {
			minScore = 0
		}
		t.unkScore = minScore - 10 // the penalty sentencepiece and tokenizers use
	case "BPE":
		return nil, fmt.Errorf("%w: BPE tokenizers (use a WordPiece or Unigram model)", ErrUnsupported)
	default:
		return nil, fmt.Errorf("%w: tokenizer model type %q", ErrUnsupported, m.Type)
	}
	if len(t.vocab) == 0 {
		return nil, fmt.Errorf("%w: empty tokenizer vocabulary", ErrModel)
	}
	return t, nil
}

// encode returns the token ids of s (unknown pieces as unkID, when the model has one).
func (t *tokenizer) encode(s string) []int {
	for _, n := range t.normalize {
		s = n(s)
	}
	words := []string{s}
	for _, p := range t.pre {
		words = p(words)
	}
	var ids []int
	for _, w := range words {
		if w == "" {
			continue
		}
		switch t.kind {
		case "WordPiece":
			ids = t.wordPiece(ids, w)
		case "WordLevel":
			if id, ok := t.vocab[w]; ok {
				ids = append(ids, id)
			} else if t.unkID >= 0 {
				ids = append(ids, t.unkID)
			}
		case "Unigram":
			ids = t.unigram(ids, w)
		}
	}
	return ids
}

// wordPiece is greedy longest-match-first subword tokenization: a word that cannot be
// covered, or is longer than maxChars runes, becomes one unknown token.
func (t *tokenizer) wordPiece(ids []int, w string) []int {
	if utf8.RuneCountInString(w) > t.maxChars {
		if t.unkID >= 0 {
			ids = append(ids, t.unkID)
		}
		return ids
	}
	start := len(ids)
	var sb strings.Builder
	for pos := 0; pos < len(w); {
		end := len(w)
		found := -1
		for end > pos {
			piece := w[pos:end]
			if pos > 0 {
				sb.Reset()
				sb.WriteString(t.prefix)
				sb.WriteString(piece)
				piece = sb.String()
			}
			if id, ok := t.vocab[piece]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(w[pos:end])
			end -= size
		}
		if found < 0 {
			ids = ids[:start]
			if t.unkID >= 0 {
				ids = append(ids, t.unkID)
			}
			return ids
		}
		ids = append(ids, found)
		pos = end
	}
	return ids
}

// unigram picks the segmentation of w with the highest total piece score (Viterbi);
// characters no piece covers become unknown tokens, consecutive ones fused.
func (t *tokenizer) unigram(ids []int, w string) []int {
	n := len(w)
	best := make([]float64, n+1)
	from := make([]int, n+1)
	piece := make([]int, n+1) // id of the piece ending here, -1 for unknown
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		if math.IsInf(best[i], -1) || !utf8.RuneStart(w[i]) {
			continue
		}
		covered := false
		for j := i + 1; j <= n && j-i <= t.maxPieceLen; j++ {
			if j < n && !utf8.RuneStart(w[j]) {
				continue
			}
			if id, ok := t.vocab[w[i:j]]; ok {
				covered = covered || j == i+runeLen(w, i)
				if sc := best[i] + t.scores[w[i:j]]; sc > best[j] {
					best[j], from[j], piece[j] = sc, i, id
				}
			}
		}
		if !covered {
			j := i + runeLen(w, i)
			if sc := best[i] + t.unkScore; sc > best[j] {
				best[j], from[j], piece[j] = sc, i, -1
			}
		}
	}
	var rev []int
	for j := n; j > 0; j = from[j] {
		rev = append(rev, piece[j])
	}
	prevUnk := false
	for k := len(rev) - 1; k >= 0; k-- {
		id := rev[k]
		if id < 0 {
			if t.unkID >= 0 && !prevUnk {
				ids = append(ids, t.unkID)
			}
			prevUnk = true
			continue
		}
		ids = append(ids, id)
		prevUnk = false
	}
	return ids
}

func runeLen(s string, i int) int {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size
}

// ---- normalizers ----

type normalizerSpec struct {
	Type               string            `json:"type"`
	Lowercase          *bool             `json:"lowercase"`
	StripAccents       *bool             `json:"strip_accents"`
	CleanText          *bool             `json:"clean_text"`
	HandleChineseChars *bool             `json:"handle_chinese_chars"`
	Left               *bool             `json:"left"`
	Right              *bool             `json:"right"`
	Prepend            string            `json:"prepend"`
	Content            string            `json:"content"`
	Pattern            map[string]string `json:"pattern"`
	Normalizers        []json.RawMessage `json:"normalizers"`
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func parseNormalizer(raw json.RawMessage) ([]func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var n normalizerSpec
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("%w: normalizer: %v", ErrModel, err)
	}
	switch n.Type {
	case "Sequence":
		var out []func(string) string
		for _, sub := range n.Normalizers {
			fs, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
	case "BertNormalizer":
		lower := boolOr(n.Lowercase, true)
		strip := boolOr(n.StripAccents, lower)
		clean := boolOr(n.CleanText, true)
		chinese := boolOr(n.HandleChineseChars, true)
		return []func(string) string{func(s string) string {
			return bertNormalize(s, clean, chinese, strip, lower)
		}}, nil
	case "Lowercase":
		return []func(string) string{strings.ToLower}, nil
	case "StripAccents":
		return []func(string) string{stripAccents}, nil
	case "NFKC", "NFKD":
		return []func(string) string{widenString}, nil
	case "NFC", "NFD", "Precompiled":
		// Approximation: composed text is common input; the precompiled sentencepiece
		// charsmap is mostly NFKC, approximated by width folding.
		return []func(string) string{widenString}, nil
	case "Strip":
		left, right := boolOr(n.Left, true), boolOr(n.Right, true)
		return []func(string) string{func(s string) string {
			if left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}}, nil
	case "Prepend":
		p := n.Prepend
		return []func(string) string{func(s string) string {
			if s == "" {
				return s
			}
			return p + s
		}}, nil
	case "Replace":
		if lit, ok := n.Pattern["String"]; ok {
			content := n.Content
			return []func(string) string{func(s string) string { return strings.ReplaceAll(s, lit, content) }}, nil
		}
		if expr, ok := n.Pattern["Regex"]; ok {
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, fmt.Errorf("%w: Replace regex %q: %v", ErrUnsupported, expr, err)
			}
			content := n.Content
			return []func(string) string{func(s string) string { return re.ReplaceAllLiteralString(s, content) }}, nil
		}
		return nil, fmt.Errorf("%w: Replace normalizer without a pattern", ErrModel)
	}
	return nil, fmt.Errorf("%w: normalizer %q", ErrUnsupported, n.Type)
}

// bertNormalize is the BertNormalizer: clean control characters, space out CJK
// ideographs, strip accents, lowercase.
func bertNormalize(s string, clean, chinese, strip, lower bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if clean {
			if r == 0 || r == 0xFFFD || (isControl(r) && r != '\t' && r != '\n' && r != '\r') {
				continue
			}
			if unicode.IsSpace(r) {
				r = ' '
			}
		}
		if chinese && isBertChinese(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if strip {
		out = stripAccents(out)
	}
	if lower {
		out = strings.ToLower(out)
	}
	return out
}

func isControl(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// isBertChinese reports the CJK ideograph blocks BERT spaces out.
func isBertChinese(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// latinBase maps U+00C0..U+017F to the letter left after canonical decomposition and
// removal of combining marks; '·' marks letters that do not decompose (Æ, Ø, Đ, Ł, ß…).
const latinBase = "AAAAAA·CEEEEIIII" + "·NOOOOO··UUUUY··" + "aaaaaa·ceeeeiiii" + "·nooooo··uuuuy·y" +
	"AaAaAaCcCcCcCcDd" + "··EeEeEeEeEeGgGg" + "GgGgHh··IiIiIiIi" + "I···JjKk·LlLlLl·" +
	"···NnNnNn···OoOo" + "Oo··RrRrRrSsSsSs" + "SsTtTt··UuUuUuUu" + "UuUuWwYyYZzZzZz·"

var latinBaseRunes = []rune(latinBase)

// stripAccents removes combining marks and maps accented Latin-1 and Latin Extended-A
// letters to their base letters (an approximation of NFD + removing Mn).
func stripAccents(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if r >= 0xC0 && r <= 0x17F {
			if base := latinBaseRunes[r-0xC0]; base != '·' {
				r = base
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// widenString maps full-width ASCII forms and the ideographic space to half width.
func widenString(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0x3000:
			return ' '
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFF01 + 0x21
		}
		return r
	}, s)
}

// ---- pre-tokenizers ----

type preTokenizerSpec struct {
	Type             string            `json:"type"`
	Replacement      string            `json:"replacement"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	PrependScheme    string            `json:"prepend_scheme"`
	Split            *bool             `json:"split"`
	IndividualDigits bool              `json:"individual_digits"`
	Pretokenizers    []json.RawMessage `json:"pretokenizers"`
}

func parsePreTokenizer(raw json.RawMessage) ([]func([]string) []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p preTokenizerSpec
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: pre_tokenizer: %v", ErrModel, err)
	}
	switch p.Type {
	case "Sequence":
		var out []func([]string) []string
		for _, sub := range p.Pretokenizers {
			fs, err := parsePreTokenizer(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
	case "BertPreTokenizer":
		return []func([]string) []string{eachWord(bertSplit)}, nil
	case "Whitespace":
		return []func([]string) []string{eachWord(whitespaceSplit)}, nil
	case "WhitespaceSplit":
		return []func([]string) []string{eachWord(strings.Fields)}, nil
	case "Punctuation":
		return []func([]string) []string{eachWord(punctuationSplit)}, nil
	case "Digits":
		individual := p.IndividualDigits
		return []func([]string) []string{eachWord(func(s string) []string { return digitSplit(s, individual) })}, nil
	case "Metaspace":
		repl := p.Replacement
		if repl == "" {
			repl = "▁"
		}
		scheme := p.PrependScheme
		if scheme == "" {
			scheme = "always"
			if p.AddPrefixSpace != nil && !*p.AddPrefixSpace {
				scheme = "never"
			}
		}
		split := boolOr(p.Split, true)
		return []func([]string) []string{metaspace(repl, scheme, split)}, nil
	}
	return nil, fmt.Errorf("%w: pre_tokenizer %q", ErrUnsupported, p.Type)
}

func eachWord(f func(string) []string) func([]string) []string {
	return func(in []string) []string {
		var out []string
		for _, w := range in {
			out = append(out, f(w)...)
		}
		return out
	}
}

// isBertPunct is BERT's punctuation: ASCII symbols and Unicode P* categories.
func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// bertSplit splits on whitespace and isolates each punctuation character.
func bertSplit(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// whitespaceSplit is the Whitespace pre-tokenizer: runs of \w and runs of [^\w\s].
func whitespaceSplit(s string) []string {
	var out []string
	start, kind := -1, 0 // kind 1: word run, 2: symbol run
	for i, r := range s {
		k := 2
		if unicode.IsSpace(r) {
			k = 0
		} else if isWordRune(r) {
			k = 1
		}
		if k != kind && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
		if k != 0 && start < 0 {
			start = i
		}
		kind = k
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// punctuationSplit isolates punctuation characters.
func punctuationSplit(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if isBertPunct(r) {
			if i > start {
				out = append(out, s[start:i])
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// digitSplit separates digits from other characters, one token per digit if individual.
func digitSplit(s string, individual bool) []string {
	var out []string
	start, prevDigit := 0, false
	for i, r := range s {
		d := unicode.IsDigit(r)
		if i > start && (d != prevDigit || (d && individual)) {
			out = append(out, s[start:i])
			start = i
		}
		prevDigit = d
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// metaspace replaces spaces by the replacement, prepends it, and splits before it.
func metaspace(repl, scheme string, split bool) func([]string) []string {
	return func(in []string) []string {
		var out []string
		for k, w := range in {
			w = strings.ReplaceAll(w, " ", repl)
			if (scheme == "always" || (scheme == "first" && k == 0)) && !strings.HasPrefix(w, repl) {
				w = repl + w
			}
			if !split {
				out = append(out, w)
				continue
			}
			start := 0
			for off := 0; ; {
				i := strings.Index(w[off:], repl)
				if i < 0 {
					break
				}
				at := off + i
				if at > start {
					out = append(out, w[start:at])
				}
				start = at
				off = at + len(repl)
			}
			if start < len(w) {
				out = append(out, w[start:])
			}
		}
		return out
	}
}
