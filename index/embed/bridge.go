package embed

import (
	_ "embed" // bridge_zh_en.txt
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// bridgeData is the cross-language bridge: one Chinese word a line, then the English words
// of its short CC-CEDICT glosses ("删除 delete cancel"). It is derived data, CC BY-SA 4.0
// like CC-CEDICT; cmd/genbridge writes it from a CC-CEDICT file (docs/semantic.md gives the
// steps and the input used).
//
//go:embed bridge_zh_en.txt
var bridgeData string

// weightBridge is the total weight of the English word features one bridged Chinese word
// gives (each of its n words weighs weightBridge/sqrt(n)): below a written word's, since a
// gloss is a translation of one sense, not the text itself.
const weightBridge = 0.8

// Bridged Chinese words are 2 to bridgeMaxRunes runes (cmd/genbridge's selection).
const (
	bridgeMinRunes = 2
	bridgeMaxRunes = 4
)

// bridge maps a Chinese word to the word keys (text.Scanner keys: folded and stemmed, as
// Hashed hashes English words) of its glosses: span[word] = offset<<32 | count into keys.
// Keys are interned, so the many words sharing a gloss share its key.
type bridge struct {
	span map[string]uint64
	keys []string
}

// wordKeys returns a Chinese word's English word keys.
func (b *bridge) wordKeys(zh string) ([]string, bool) {
	sp, ok := b.span[zh]
	if !ok {
		return nil, false
	}
	off, cnt := uint32(sp>>32), uint32(sp)
	return b.keys[off : off+cnt], true
}

// defaultBridge parses bridgeData once.
var defaultBridge = sync.OnceValue(func() *bridge { return parseBridge(bridgeData) })

// parseBridge reads the bridge format; lines that are blank, comments, or have no English
// word left after scanning are skipped (the file is generated, so nothing is an error).
func parseBridge(data string) *bridge {
	n := strings.Count(data, "\n")
	b := &bridge{span: make(map[string]uint64, n), keys: make([]string, 0, 2*n)}
	var sc text.Scanner
	seen := map[string][]string{} // an English word → its keys, scanned once
	for line := range strings.Lines(data) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		zh, en, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(zh); n < bridgeMinRunes || n > bridgeMaxRunes {
			continue
		}
		off := len(b.keys)
		for _, w := range strings.Fields(en) {
			keys, ok := seen[w]
			if !ok {
				sc.Reset(w)
				for sc.Next() {
					if key, stop := sc.Key(); sc.Kind() == text.KindWord && !stop {
						keys = append(keys, strings.Clone(key))
					}
				}
				seen[w] = keys
			}
			for _, k := range keys {
				if !slices.Contains(b.keys[off:], k) {
					b.keys = append(b.keys, k)
				}
			}
		}
		if cnt := len(b.keys) - off; cnt > 0 {
			b.span[zh] = uint64(off)<<32 | uint64(cnt)
		}
	}
	sc.Reset("")
	b.keys = slices.Clip(b.keys)
	return b
}

// bridgeBuckets is a bridge hashed for one Hashed: buckets[i] is the bucket of keys[i], and
// weight[n] the weight of each word feature of a Chinese word with n (weightBridge/sqrt(n)).
type bridgeBuckets struct {
	b       *bridge
	buckets []uint32
	weight  []float32
}

func newBridgeBuckets(h *Hashed, b *bridge) *bridgeBuckets {
	bb := &bridgeBuckets{b: b, buckets: make([]uint32, len(b.keys))}
	for i, k := range b.keys {
		bb.buckets[i] = h.bucket(nsWord, k)
	}
	most := 0
	for _, sp := range b.span {
		most = max(most, int(uint32(sp)))
	}
	bb.weight = make([]float32, most+1)
	for n := 1; n <= most; n++ {
		bb.weight[n] = float32(weightBridge / math.Sqrt(float64(n)))
	}
	return bb
}

// features appends the bridge features of a CJK run: the run is segmented by forward
// maximum matching against the bridge (longest word first, 4 runes down to 2; a rune
// no word starts at is skipped), and each word found adds its English word features.
func (bb *bridgeBuckets) features(feats []feat, run string) []feat {
	var offs [bridgeMaxRunes + 1]int
	for i := 0; i < len(run); {
		// offs[k] is the byte offset of the k-th rune after i
		n := 0
		offs[0] = i
		for j := i; n < bridgeMaxRunes && j < len(run); n++ {
			_, size := utf8.DecodeRuneInString(run[j:])
			j += size
			offs[n+1] = j
		}
		step := offs[1] - i
		for k := n; k >= bridgeMinRunes; k-- {
			sp, ok := bb.b.span[run[i:offs[k]]]
			if !ok {
				continue
			}
			off, cnt := uint32(sp>>32), uint32(sp)
			w := bb.weight[cnt]
			for _, b := range bb.buckets[off : off+cnt] {
				feats = append(feats, mkFeat(b, w))
			}
			step = offs[k] - i
			break
		}
		i += step
	}
	return feats
}

// IsChineseWord reports whether zh is a word of the CC-CEDICT bridge (2 to 4 Han
// characters). The first call parses the bridge.
func IsChineseWord(zh string) bool {
	_, ok := defaultBridge().span[zh]
	return ok
}
