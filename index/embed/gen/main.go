// Command gen writes index/embed/synonyms.txt.gz, the synonym groups of the offline
// embedder (embed.Hashed), from Princeton WordNet 3.0 as Debian's wordnet-base package
// installs it (apt-get install wordnet-base):
//
//	go run ./index/embed/gen -wordnet /usr/share/wordnet -out index/embed/synonyms.txt.gz
//
// A group is a WordNet synset (noun, verb or adjective). A one-word lemma joins the groups
// of its three most frequent senses (WordNet's index orders senses by their frequency in the
// tagged SemCor corpus), and only senses attested in SemCor (rare words and senses are left
// out). Lemmas are stemmed (text.Stem); only groups that join at least two different
// stems are written: "paper" ~ "document", "retrieve" ~ "recover". The output, one
// "stem<TAB>group" line per membership, sorted, is deterministic for one WordNet.
//
// WordNet 3.0 licence (Princeton University): permission to use, copy, modify and
// distribute this software and database and its documentation for any purpose and without
// fee or royalty is granted, provided that the copyright notice and these statements
// appear on all copies (see the header written into the output and
// /usr/share/doc/wordnet-base/copyright).
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/capdex/capdex/index/text"
)

// header is written at the top of the output: where it comes from and its licence.
const header = `# Synonym groups of capdex's offline embedder, derived from WordNet 3.0 by
# go run ./index/embed/gen (see its doc comment). Lines: stem<TAB>group.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
# Permission to use, copy, modify and distribute this software and database and its
# documentation for any purpose and without fee or royalty is hereby granted, provided that
# you agree to comply with the following copyright notice and statements, including the
# disclaimer, and that the same appear on ALL copies of the software, database and
# documentation, including modifications that you make for internal use or for
# distribution. THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY
# MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. The name of Princeton
# University or Princeton may not be used in advertising or publicity pertaining to
# distribution of the software and/or database.
`

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict directory (index.* and data.* files)")
	out := flag.String("out", "index/embed/synonyms.txt.gz", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// oneWord reports whether a WordNet lemma is a plain lower-case word of 3+ letters.
func oneWord(l string) bool {
	if len(l) < 3 {
		return false
	}
	for _, c := range l {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func run(dir, out string) error {
	members := map[string]map[string]bool{} // "pos offset" → stems
	for _, pos := range []string{"noun", "verb", "adj"} {
		first, err := firstSenses(filepath.Join(dir, "index."+pos))
		if err != nil {
			return err
		}
		for lemma, offs := range first {
			if text.IsStopWord(lemma) {
				continue
			}
			for _, off := range offs {
				key := pos + " " + off
				if members[key] == nil {
					members[key] = map[string]bool{}
				}
				members[key][text.Stem(lemma)] = true
			}
		}
	}
	type line struct {
		stem  string
		group int
	}
	keys := make([]string, 0, len(members))
	for k, m := range members {
		if len(m) >= 2 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var lines []line
	for g, k := range keys {
		for s := range members[k] {
			lines = append(lines, line{s, g})
		}
	}
	slices.SortFunc(lines, func(a, b line) int {
		if c := strings.Compare(a.stem, b.stem); c != 0 {
			return c
		}
		return a.group - b.group
	})
	lines = slices.Compact(lines)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	w.WriteString(header)
	for _, l := range lines {
		w.WriteString(l.stem + "\t" + strconv.Itoa(l.group) + "\n")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %d groups, %d memberships → %s\n", len(keys), len(lines), out)
	return nil
}

// senses is how many of a word's most frequent senses join their groups.
const senses = 3

// maxUntagged is the longest word kept whose senses SemCor never tagged: such short words
// are everyday words SemCor happened to miss ("delete"); longer ones are mostly rare.
const maxUntagged = 8

// firstSenses reads an index file: each one-word lemma's first synset offsets (at most
// senses of them), for lemmas SemCor tagged (tagsense_cnt > 0) or of at most maxUntagged
// letters.
func firstSenses(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // licence header
		}
		fs := strings.Fields(line)
		// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
		if len(fs) < 6 {
			return nil, fmt.Errorf("%s: short line %q", path, line)
		}
		p, err := strconv.Atoi(fs[3])
		if err != nil || len(fs) < 4+p+3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		tagged, err := strconv.Atoi(fs[4+p+1])
		if err != nil {
			return nil, fmt.Errorf("%s: bad tagsense_cnt in %q", path, line)
		}
		if !oneWord(fs[0]) || tagged == 0 && len(fs[0]) > maxUntagged {
			continue
		}
		offs := fs[4+p+2:]
		out[fs[0]] = offs[:min(len(offs), senses)]
	}
	return out, sc.Err()
}
