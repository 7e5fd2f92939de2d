package embed

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// synonymsGz holds the synonym groups derived from WordNet 3.0 by go run ./index/embed/gen
// (its licence is in the file's header): lines "stem<TAB>group".
//
//go:embed synonyms.txt.gz
var synonymsGz []byte

// synonymGroups maps a stem (text.Stem of a folded word) to its WordNet groups, read once.
var synonymGroups = sync.OnceValue(func() map[string][]int32 {
	out := map[string][]int32{}
	zr, err := gzip.NewReader(bytes.NewReader(synonymsGz))
	if err != nil {
		panic("embed: synonyms.txt.gz: " + err.Error()) // embedded at build: a broken file is a build error
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		stem, g, ok := strings.Cut(line, "\t")
		n, err := strconv.Atoi(g)
		if !ok || err != nil {
			panic("embed: synonyms.txt.gz: bad line " + strconv.Quote(line))
		}
		out[stem] = append(out[stem], int32(n))
	}
	if err := sc.Err(); err != nil {
		panic("embed: synonyms.txt.gz: " + err.Error())
	}
	return out
})

// numSynonymGroups is one more than the largest group number.
func numSynonymGroups() int {
	n := int32(-1)
	for _, gs := range synonymGroups() {
		for _, g := range gs {
			n = max(n, g)
		}
	}
	return int(n + 1)
}
