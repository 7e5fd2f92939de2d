package query

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// kind says what a lexicon entry names.
type kind uint8

const (
	kConcept kind = iota + 1 // a member of the shared concept lexicon; value = concept name
	kEntity                  // a registry entity; value = entity value
	kIntent                  // a registry intent written as such; value = intent value
	kSymptom                 // a registry symptom as words; value = symptom value
	kAlias                   // a capability alias; values = the symptoms it names
	kCue                     // a cue word of the rules; value = cue name
	kBlock                   // a blocker of the concept lexicon: matched like a member, naming nothing
)

// entry is one surface form. The fields a scan reads come first.
type entry struct {
	kind kind
	// member marks an entity named through a member of its concept ("docker" names the
	// entity "container"): where the same words also name an entity as such, that one wins
	member bool
	// verb marks a concept that is a verb of the lexicon (Lexicon.verbs): what the user
	// wants done, unless the rules find otherwise
	verb bool
	// cue is the bit of value for a cue (kind kCue), 0 for other kinds
	cue   cueSet
	toks  []string
	value string
	// tilde is "~" + value for a concept, the name Parsed.SignalTerms gives it
	tilde  string
	values []string
}

// packKey is one scope key of a pack: the pack's index and the key's weight (2 for words
// of the pack's own name and title, 1 for its entities, which sum up its children's).
type packKey struct {
	pack int32
	w    int32
}

// packInfo is one pack for browse scopes.
type packInfo struct {
	id    string
	nkeys int
}

// Lexicon maps surface forms to normalised values for one registry snapshot (see the
// package doc). It is immutable after NewLexicon and safe for concurrent use.
type Lexicon struct {
	generation uint64
	ncaps      int
	// zhShare is the share of the snapshot's capabilities described in Chinese (see
	// zhDescribedShare): the planner's view of the catalogue's language.
	zhShare float64

	// The entries as the builder adds them: first maps a first token key to their
	// indices. NewLexicon extends copies of the base lexicon's and drops its own once frozen.
	first   map[string][]int32
	entries []entry
	// all holds the entries as scans read them, and byKey maps a key to those it
	// starts (see freeze). nums numbers the keys of the entries' later tokens (from 1);
	// tail[tailAt[i]:tailAt[i+1]] are the numbers of all[i]'s tokens but the first.
	all    []entry
	tail   []int32
	tailAt []int32
	byKey  map[string]entryRange
	nums   map[string]int32
	words  *wordTable // what the scans found of the words of queries

	// intentVals maps a concept name (or a registry intent value without a concept) to
	// the registry intent values it stands for.
	intentVals map[string][]string
	verbs      map[string]bool // verb concepts: intents
	reads      map[string]bool // read-only verbs
	// memberEntities maps a concept name to the registry entity values that are members of
	// it without naming it ("reminder" of the concept remind): the entity a word of the
	// concept names when it is the object of a set-up verb (设个提醒: a reminder).
	memberEntities map[string][]string
	ids            map[string][]string

	packs    []packInfo
	packIDs  map[string]bool
	packKeys map[string][]packKey
}

// maxIDsPerName bounds the ids one short tool name may stand for.
const maxIDsPerName = 8

var defaultLexicon = sync.OnceValue(func() *Lexicon { return NewLexicon(nil) })

// baseLexicon holds the part every lexicon shares: cue words and concept members. Each
// NewLexicon copies its maps and appends to copies of its slices, never to its own.
var baseLexicon = sync.OnceValue(func() *Lexicon {
	l := &Lexicon{
		first:      make(map[string][]int32),
		words:      newWordTable(),
		intentVals: make(map[string][]string),
		verbs:      make(map[string]bool, len(verbConcepts)),
		reads:      make(map[string]bool, len(readConcepts)),
		ids:        make(map[string][]string),
		packKeys:   make(map[string][]packKey),
	}
	b := builder{l: l, seen: make(map[string]bool)}
	for _, v := range verbConcepts {
		l.verbs[v] = true
	}
	for _, v := range readConcepts {
		l.reads[v] = true
	}
	for name, phrases := range cueTable {
		for _, p := range phrases {
			b.add(p, kCue, name, nil)
		}
	}
	lx := text.DefaultLexicon()
	for _, name := range lx.Names() {
		for _, m := range lx.Members(name) {
			b.add(m, kConcept, name, nil)
		}
	}
	// After the members, so that a member wins over a blocker of the same words.
	for _, m := range lx.Blockers() {
		b.add(m, kBlock, "", nil)
	}
	l.freeze()
	return l
})

// freeze lays the entries out for scans: those a key starts side by side in one array, in
// the order they were added, each told whether it is a verb of this lexicon. A scan then
// reads a word's entries from consecutive memory, with no index or map between, and
// compares the words that follow with an entry's other tokens by number (tail), reading
// the entry only when they all agree: a word may start hundreds of aliases ("修复 …",
// "check …").
func (l *Lexicon) freeze() {
	l.all = make([]entry, 0, len(l.entries))
	l.tailAt = make([]int32, 0, len(l.entries)+1)
	l.byKey = make(map[string]entryRange, len(l.first))
	l.nums = make(map[string]int32)
	for key, list := range l.first {
		r := entryRange{lo: int32(len(l.all)), n: int32(len(list))}
		for _, i := range list {
			e := l.entries[i]
			e.verb = e.kind == kConcept && l.verbs[e.value]
			l.all = append(l.all, e)
			l.appendTail(e.toks[1:])
		}
		l.byKey[key] = r
	}
	l.tailAt = append(l.tailAt, int32(len(l.tail)))
}

// appendTail starts the next entry's tail: its tokens after the first, each by its number
// (numbered in the order first met).
func (l *Lexicon) appendTail(toks []string) {
	l.tailAt = append(l.tailAt, int32(len(l.tail)))
	for _, t := range toks {
		n := l.nums[t]
		if n == 0 {
			n = int32(len(l.nums) + 1)
			l.nums[t] = n
		}
		l.tail = append(l.tail, n)
	}
}

// entryRange is a run of a lexicon's entries: all[lo : lo+n].
type entryRange struct{ lo, n int32 }

// builder adds entries to a lexicon once each.
type builder struct {
	l    *Lexicon
	seen map[string]bool // kind, value and surface of every entry added
}

// add adds an entry unless it is there already or the surface has no words, and reports
// whether it did.
func (b *builder) add(surface string, k kind, value string, values []string) bool {
	dk := string(rune('0'+k)) + value + "\x00" + surface
	if b.seen[dk] {
		return false
	}
	b.seen[dk] = true
	ks := keys(surface)
	if len(ks) == 0 {
		return false
	}
	l := b.l
	list := l.first[ks[0]]
	l.first[ks[0]] = append(list[:len(list):len(list)], int32(len(l.entries)))
	e := entry{toks: ks, kind: k, value: value, values: values}
	switch k {
	case kCue:
		e.cue = cueBits[value]
	case kConcept:
		e.tilde = "~" + value
	}
	l.entries = append(l.entries, e)
	return true
}

// NewLexicon builds the lexicon of a snapshot: the cue words of the rules, the shared
// concept lexicon of index/text, and every capability's entities, intents, symptoms,
// aliases, ids and tool names, and every pack's id and title. A nil snapshot gives the
// cue words and concepts only.
func NewLexicon(snap *registry.Snapshot) *Lexicon {
	base := baseLexicon()
	if snap == nil {
		return base
	}
	l := &Lexicon{
		generation: snap.Generation,
		ncaps:      len(snap.Caps),
		zhShare:    zhDescribedShare(snap.Caps),
		first:      maps.Clone(base.first),
		words:      newWordTable(),
		entries:    slices.Clip(base.entries),
		intentVals: make(map[string][]string),
		verbs:      maps.Clone(base.verbs),
		reads:      base.reads,
		ids:        make(map[string][]string),
		packIDs:    make(map[string]bool),
		packKeys:   make(map[string][]packKey),
	}
	b := builder{l: l, seen: make(map[string]bool)}
	lx := text.DefaultLexicon()
	conceptsOf := make(map[string][]string) // memo of text.Concepts per value
	concepts := func(v string) []string {
		cs, ok := conceptsOf[v]
		if !ok {
			cs = text.Concepts(v)
			conceptsOf[v] = cs
		}
		return cs
	}
	symptoms := make(map[string]symptomInfo)
	info := func(s string) symptomInfo {
		in, ok := symptoms[s]
		if !ok {
			in = newSymptomInfo(s)
			symptoms[s] = in
		}
		return in
	}
	for _, c := range snap.Caps {
		for _, v := range c.Intents {
			v = text.Fold(v)
			b.add(v, kIntent, v, nil)
			cs := concepts(v)
			if len(cs) == 0 {
				cs = []string{v}
			}
			for _, cn := range cs {
				l.verbs[cn] = true
				l.intentVals[cn] = addUnique(l.intentVals[cn], v)
			}
		}
		for _, v := range c.Entities {
			v = text.Fold(v)
			if b.seen[string(rune('0'+kEntity))+v+"\x00"+v] {
				continue
			}
			for _, cn := range concepts(v) {
				if cn != v {
					if l.memberEntities == nil {
						l.memberEntities = make(map[string][]string)
					}
					l.memberEntities[cn] = addUnique(l.memberEntities[cn], v)
				}
			}
			b.add(v, kEntity, v, nil)
			// An entity that names a concept ("schedule") is met by all its members (日程).
			if slices.Contains(concepts(v), v) {
				for _, m := range lx.Members(v) {
					if b.add(m, kEntity, v, nil) && m != v {
						l.entries[len(l.entries)-1].member = true
					}
				}
			}
		}
		for _, v := range c.Symptoms {
			v = text.Fold(v)
			b.add(v, kSymptom, v, nil)
		}
		for _, a := range c.Aliases {
			if syms := aliasSymptoms(a, c.Symptoms, info); len(syms) > 0 {
				b.add(a, kAlias, strings.Join(syms, ","), syms)
			}
		}
		l.addIDs(c)
		if c.ResourceType == registry.TypePack {
			l.addPack(c)
		}
	}
	l.freeze()
	l.first, l.entries = nil, nil
	return l
}

// SameLexiconInputs reports whether a and b (two definitions of one id) give NewLexicon the
// same entries: it reads every capability's intents, entities, symptoms, aliases, id,
// external id and resource type, and a pack's title. A snapshot holding the ids of
// another at the same positions, whose changed capabilities are all the same for this, has
// the other's lexicon (its Generation aside).
func SameLexiconInputs(a, b *registry.Capability) bool {
	return a.ID == b.ID && a.ResourceType == b.ResourceType && a.ExternalID == b.ExternalID &&
		(a.ResourceType != registry.TypePack || a.Title == b.Title) &&
		slices.Equal(a.Intents, b.Intents) && slices.Equal(a.Entities, b.Entities) &&
		slices.Equal(a.Symptoms, b.Symptoms) && slices.Equal(a.Aliases, b.Aliases)
}

// symptomInfo is what an alias is compared with: the stems and concepts of a symptom's words.
type symptomInfo struct {
	keys, concepts []string
}

func newSymptomInfo(symptom string) symptomInfo {
	words := strings.ReplaceAll(symptom, "_", " ")
	return symptomInfo{keys: keys(words), concepts: text.ConceptsIn(words)}
}

// aliasSymptoms returns the symptoms an alias names: those sharing a word stem (of three
// letters or more) or a concept with it. info returns the (memoised) symptom info.
func aliasSymptoms(alias string, symptoms []string, info func(string) symptomInfo) []string {
	if len(symptoms) == 0 {
		return nil
	}
	aKeys := keys(alias)
	aConcepts := text.ConceptsIn(alias)
	var out []string
	for _, s := range symptoms {
		in := info(s)
		hit := false
		for _, k := range in.keys {
			if len(k) > 2 && slices.Contains(aKeys, k) {
				hit = true
			}
		}
		for _, c := range in.concepts {
			if slices.Contains(aConcepts, c) {
				hit = true
			}
		}
		if hit {
			out = append(out, text.Fold(s))
		}
	}
	return out
}

// addIDs registers the names an id may be written as: the id, its tool name
// (registry.ToolName), the id with "_" for ".", its last two segments joined by "_"
// ("codex_diagnose"), a leaf holding "_" or "-" ("schedule_create") and the external id.
// Only names holding a separator are registered: a plain word is never an explicit id.
func (l *Lexicon) addIDs(c *registry.Capability) {
	id := c.ID
	names := []string{id, registry.ToolName(id), strings.ReplaceAll(id, ".", "_")}
	segs := strings.Split(id, ".")
	if n := len(segs); n >= 2 {
		names = append(names, segs[n-2]+"_"+segs[n-1])
	}
	if leaf := registry.Leaf(id); strings.ContainsAny(leaf, "_-") {
		names = append(names, leaf)
	}
	if c.ExternalID != "" {
		ext := text.Fold(c.ExternalID)
		names = append(names, ext)
		if _, after, ok := strings.Cut(ext, "::"); ok {
			names = append(names, after)
		}
	}
	for _, n := range names {
		if !strings.ContainsAny(n, "._-:") || strings.ContainsAny(n, " \t") {
			continue
		}
		if list := l.ids[n]; len(list) < maxIDsPerName && !slices.Contains(list, id) {
			l.ids[n] = append(list, id)
		}
	}
}

// addPack indexes a pack's scope keys: the words of its last id segment and title
// (weight 2) and of its entities (weight 1). Only the last segment of the id: the
// others name its ancestors, whose words must not make a descendant an equal match.
func (l *Lexicon) addPack(c *registry.Capability) {
	own := scopeKeys(nil, c.Title+" "+strings.ReplaceAll(registry.Leaf(c.ID), "_", " "), false)
	ents := scopeKeys(nil, strings.Join(c.Entities, " "), false)
	idx := int32(len(l.packs))
	l.packIDs[c.ID] = true
	n := len(own)
	for _, k := range own {
		l.packKeys[k] = append(l.packKeys[k], packKey{idx, 2})
	}
	for _, k := range ents {
		if !slices.Contains(own, k) {
			l.packKeys[k] = append(l.packKeys[k], packKey{idx, 1})
			n++
		}
	}
	l.packs = append(l.packs, packInfo{id: c.ID, nkeys: n})
}

// scopeKeys returns the unique keys a text offers for scope matching: word stems, CJK
// bigrams (a lone CJK character as itself) and "~concept" names. With query set, generic
// and stop words are left out.
func scopeKeys(dst []string, s string, query bool) []string {
	toks := tokenize(nil, s)
	for i := range toks {
		t := &toks[i]
		if !t.cjk {
			if query && (text.IsStopWord(t.word) || slices.Contains(genericWords, t.key)) {
				continue
			}
			dst = addUnique(dst, t.key)
			continue
		}
		next := i+1 < len(toks) && toks[i+1].cjk && toks[i+1].start == t.end
		prev := i > 0 && toks[i-1].cjk && toks[i-1].end == t.start
		switch {
		case next:
			dst = addUnique(dst, s[t.start:toks[i+1].end])
		case !prev:
			dst = addUnique(dst, t.key)
		}
	}
	for _, c := range text.ConceptsIn(s) {
		dst = addUnique(dst, "~"+c)
	}
	return dst
}

// bestPack returns the pack whose keys best cover the text's scope keys: the highest
// weight of keys in common; among equals, a pack that is an ancestor of all the others
// (they matched through words it shares with them), else the one with fewest keys of its
// own (the most specific), then the smallest id. It needs at least minHits keys in common.
func (l *Lexicon) bestPack(s string, minHits int) string {
	if len(l.packs) == 0 {
		return ""
	}
	qk := scopeKeys(nil, s, true)
	score := make(map[int32]int32)
	hits := make(map[int32]int)
	for _, k := range qk {
		for _, pk := range l.packKeys[k] {
			score[pk.pack] += pk.w
			hits[pk.pack]++
		}
	}
	var top []int32
	bestScore := int32(0)
	for p, sc := range score {
		if hits[p] < minHits {
			continue
		}
		switch {
		case sc > bestScore:
			bestScore, top = sc, append(top[:0], p)
		case sc == bestScore:
			top = append(top, p)
		}
	}
	if len(top) == 0 {
		return ""
	}
	slices.Sort(top)
	for _, p := range top {
		anc := true
		for _, q := range top {
			if q != p && !strings.HasPrefix(l.packs[q].id, l.packs[p].id+".") {
				anc = false
				break
			}
		}
		if anc {
			return l.packs[p].id
		}
	}
	best := top[0]
	for _, p := range top[1:] {
		if l.packs[p].nkeys < l.packs[best].nkeys || l.packs[p].nkeys == l.packs[best].nkeys && l.packs[p].id < l.packs[best].id {
			best = p
		}
	}
	return l.packs[best].id
}

// isPack reports whether id is a known pack.
func (l *Lexicon) isPack(id string) bool { return l.packIDs[id] }

// Generation is the registry generation of the snapshot the lexicon was built from.
func (l *Lexicon) Generation() uint64 { return l.generation }

// IsRead reports whether an intent (a concept name or registry intent value) only reads.
func (l *Lexicon) IsRead(intent string) bool {
	if l.reads[intent] {
		return true
	}
	for _, p := range []string{"get", "list", "query", "search", "show", "check", "view", "read", "find", "fetch", "lookup", "inspect", "diagnose", "describe", "count", "stat"} {
		if strings.HasPrefix(intent, p) {
			return true
		}
	}
	return false
}

// match is one lexicon entry found in a token stream, over tokens [i, j).
type match struct {
	e    *entry
	i, j int
}

// follows reports whether toks[1:] are the tokens numbered tail, each joinable to the one
// before.
func follows(s string, toks []token, tail []int32) bool {
	for k, n := range tail {
		if toks[k+1].num != n || !joinable(s, &toks[k], &toks[k+1]) {
			return false
		}
	}
	return true
}

// scan finds every entry in toks, which a scan with l gave (analysis.scanText: each token
// holds the entries its key starts). Concept members are matched longest first, left to
// right, without overlap (as index/text does), and a blocker is consumed naming nothing;
// other entries are all reported, overlapping freely, but for an entity named through a
// member inside a blocker.
func (l *Lexicon) scan(s string, toks []token, dst []match) []match {
	conceptEnd, blockEnd := 0, 0
	for i := range toks {
		var bestConcept *entry
		bestLen := 0
		r := toks[i].first
		for k := r.lo; k < r.lo+r.n; k++ {
			tail := l.tail[l.tailAt[k]:l.tailAt[k+1]]
			n := 1 + len(tail)
			if i+n > len(toks) || !follows(s, toks[i:i+n], tail) {
				continue
			}
			e := &l.all[k]
			if e.kind == kConcept || e.kind == kBlock {
				if i >= conceptEnd && n > bestLen {
					bestConcept, bestLen = e, n
				}
				continue
			}
			if e.member && i < blockEnd {
				continue // an entity named by a member, inside a blocker
			}
			dst = append(dst, match{e: e, i: i, j: i + n})
		}
		if bestConcept != nil && bestConcept.kind == kBlock {
			conceptEnd = i + bestLen // 没问题 "fine" is not 问题 "issue"
			blockEnd = conceptEnd
		} else if bestConcept != nil {
			dst = append(dst, match{e: bestConcept, i: i, j: i + bestLen})
			conceptEnd = i + bestLen
		}
	}
	return dst
}
