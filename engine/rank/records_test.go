package rank

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// recordCatalogues returns the built-in registry and a catalogue generated from seed, as
// snapshots.
func recordCatalogues(t *testing.T, seed int64) map[string]*registry.Snapshot {
	t.Helper()
	builtin, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 3000
	if testing.Short() {
		n = 500
	}
	out := map[string]*registry.Snapshot{}
	for name, caps := range map[string][]*registry.Capability{"builtin": builtin, "generated": testcat.GenerateCatalog(n, seed)} {
		snap, err := registry.NewSnapshot(1, caps)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = snap
	}
	return out
}

// TestTermCacheValues checks that every record holds its capability's intents, entities and
// symptoms, in order, as value numbers, and that the cache knows its capabilities are in id
// order.
func TestTermCacheValues(t *testing.T) {
	for name, snap := range recordCatalogues(t, 9) {
		t.Run(name, func(t *testing.T) {
			tc := NewTermCache(snap.Caps, simpleAnalyze)
			if !tc.byID {
				t.Fatal("a snapshot's capabilities are in id order")
			}
			seen := 0
			for d, c := range snap.Caps {
				values := tc.valuesOf(&tc.docs[d])
				for k, want := range haves(c) {
					got := make([]string, 0, len(values[k]))
					for _, v := range values[k] {
						got = append(got, tc.values[v])
					}
					if !slices.Equal(got, want) && len(want) > 0 {
						t.Fatalf("%s: values of kind %d %q, want %q", c.ID, k, got, want)
					}
					seen += len(want)
				}
			}
			if seen == 0 {
				t.Fatal("no capability has intents, entities or symptoms: the comparison proves little")
			}
		})
	}
	shuffled := []*registry.Capability{{ID: "b"}, {ID: "a"}}
	if NewTermCache(shuffled, simpleAnalyze).byID {
		t.Fatal("capabilities out of id order taken for ordered")
	}
}

// TestFoldKey checks that two strings share a foldKey exactly when strings.EqualFold finds
// them equal, on ASCII, on letters whose case folding leaves ASCII (the Kelvin sign, the long
// s) and on bytes that are not UTF-8.
func TestFoldKey(t *testing.T) {
	words := []string{"", "codex", "Codex", "CODEX", "codeX", "k", "K", "\u212a", "s", "S", "\u017f",
		"ſtop", "STOP", "stop", "Straße", "STRASSE", "straße", "ǅ", "ǆ", "Ǆ", "Σ", "σ", "ς",
		"\xff", "\xfe", "\xef\xbf\xbd", "\xff\xff\xff", "a\xffb", "A\xfeB", "更新", "更新X", "更新x", "版本"}
	for _, a := range words {
		for _, b := range words {
			if same, equal := foldKey(a) == foldKey(b), strings.EqualFold(a, b); same != equal {
				t.Errorf("%q %q: same key %v, EqualFold %v", a, b, same, equal)
			}
		}
	}
	if k := "already_folded"; foldKey(k) != k {
		t.Errorf("a folded ASCII string is its own key: %q", foldKey(k))
	}
}

// TestRerankValuesByRecord checks that the matched intents, entities and symptoms and the
// forbidden-intent penalty come out the same from a record's value numbers as from the
// capability's strings (a candidate of another generation has no record), for queries whose
// values differ from the capabilities' in case.
func TestRerankValuesByRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for name, snap := range recordCatalogues(t, 9) {
		t.Run(name, func(t *testing.T) {
			tc := NewTermCache(snap.Caps, simpleAnalyze)
			var pool [valueKinds][]string
			for _, c := range snap.Caps {
				for k, v := range haves(c) {
					pool[k] = append(pool[k], v...)
				}
			}
			pick := func(k int) []string {
				var out []string
				for range r.IntN(4) {
					if len(pool[k]) == 0 {
						break
					}
					v := pool[k][r.IntN(len(pool[k]))]
					switch r.IntN(3) {
					case 0:
						v = strings.ToUpper(v)
					case 1:
						v += "x" // matches nothing
					}
					out = append(out, v)
				}
				return out
			}
			opts := DefaultRerankOptions()
			matched := 0
			for range 200 {
				s := Signals{Intents: pick(valueIntent), Entities: pick(valueEntity), Symptoms: pick(valueSymptom), Forbidden: pick(valueIntent)}
				var withRec, without []Candidate
				for range 30 {
					d := r.IntN(len(snap.Caps))
					c := snap.Caps[d]
					withRec = append(withRec, Candidate{Doc: uint32(d), Cap: c})
					// a copy of the capability: the cache has no record for it
					cp := *c
					without = append(without, Candidate{Doc: uint32(d), Cap: &cp})
				}
				for _, cands := range [][]Candidate{withRec, without} {
					Fuse(cands, DefaultWeights())
					opts.Terms = tc
					Rerank(cands, s, opts)
					Complete(cands) // every candidate is read
				}
				byID := func(cands []Candidate) map[string]*Candidate {
					m := map[string]*Candidate{}
					for i := range cands {
						m[cands[i].Cap.ID] = &cands[i]
					}
					return m
				}
				other := byID(without)
				for i := range withRec {
					a := &withRec[i]
					b := other[a.Cap.ID]
					if !slices.Equal(a.MatchedIntents, b.MatchedIntents) || !slices.Equal(a.MatchedEntities, b.MatchedEntities) ||
						!slices.Equal(a.MatchedSymptoms, b.MatchedSymptoms) || hasComponent(a, CompForbidden) != hasComponent(b, CompForbidden) {
						t.Fatalf("%s under %+v: by record %q %q %q forbidden %v, by strings %q %q %q forbidden %v", a.Cap.ID, s,
							a.MatchedIntents, a.MatchedEntities, a.MatchedSymptoms, hasComponent(a, CompForbidden),
							b.MatchedIntents, b.MatchedEntities, b.MatchedSymptoms, hasComponent(b, CompForbidden))
					}
					matched += len(a.MatchedIntents) + len(a.MatchedEntities) + len(a.MatchedSymptoms)
				}
			}
			if matched == 0 {
				t.Fatal("nothing matched: the comparison proves little")
			}
		})
	}
}

func hasComponent(c *Candidate, name string) bool {
	return slices.ContainsFunc(c.Breakdown, func(x registry.ScoreComponent) bool { return x.Name == name })
}

// TestSortCands checks sortCands against a plain sort by lessBy, for lists with ties in
// score (broken by the fused score, then by id or docID), scores that differ in the last
// bits only, negative scores and both zeros, of lengths on both sides of the key buffer.
func TestSortCands(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	scores := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.02, -0.02, 0.02 + 1e-17, math.Nextafter(0.02, 1), math.Nextafter(0.02, 0)}
	for _, n := range []int{2, 3, 7, 64, 127, 128, 129, 300} {
		for _, byDoc := range []bool{false, true} {
			cands := make([]Candidate, n)
			for i := range cands {
				score := scores[r.IntN(len(scores))]
				if r.IntN(3) == 0 {
					score = r.Float64() - 0.5
				}
				// docIDs follow ids, as byDoc requires
				d := r.IntN(1000) + 1000*i
				cands[i] = Candidate{Doc: uint32(d), Cap: &registry.Capability{ID: fmt.Sprintf("c%07d", d)}, Score: score, Fused: float64(r.IntN(3))}
			}
			want := slices.Clone(cands)
			slices.SortFunc(want, func(a, b Candidate) int { return lessBy(&a, &b, false) })
			sortCands(cands, byDoc)
			for i := range cands {
				if cands[i].Doc != want[i].Doc {
					t.Fatalf("n=%d byDoc=%v: position %d holds %s (%v), want %s (%v)", n, byDoc, i,
						cands[i].Cap.ID, cands[i].Score, want[i].Cap.ID, want[i].Score)
				}
			}
		}
	}
}

// TestTermIndex checks lookups of every term, of terms the index lacks and of repeated
// terms in one batch, and a probe that meets another term with the same tag and length
// before the one looked up.
func TestTermIndex(t *testing.T) {
	ids := map[string]uint32{}
	for i := range 5000 {
		ids[fmt.Sprintf("t%x", i*7919)] = uint32(i)
	}
	x := newTermIndex(ids)
	var terms []string
	var want []int32
	for term, id := range ids {
		terms = append(terms, term, term+"?", "")
		want = append(want, int32(id), -1, -1)
	}
	terms = append(terms, terms[0])
	want = append(want, want[0])
	got := make([]int32, len(terms))
	x.lookup(terms, got, make([]uint64, len(terms)))
	if !slices.Equal(got, want) {
		t.Fatal("lookups differ from the map")
	}

	// "ab" where its probe starts, behind a slot with its tag and length but other bytes
	c := &termIndex{seed: maphash.MakeSeed(), slots: make([]termSlot, 8), mask: 7, text: "zzab"}
	h := maphash.String(c.seed, "ab")
	home := uint32(h) & c.mask
	c.slots[home] = termSlot{tag: uint32(h >> 32), id: 2, off: 0, n: 2}
	c.slots[(home+1)&c.mask] = termSlot{tag: uint32(h >> 32), id: 1, off: 2, n: 2}
	out := []int32{-1}
	c.lookup([]string{"ab"}, out, make([]uint64, 1))
	if out[0] != 0 {
		t.Fatalf("ab after a colliding slot: %d, want 0", out[0])
	}
}

// TestRerankCoverage checks that Rerank gives the candidates it ranks up to the first usable
// one their coverage of the query, and the others 0.
func TestRerankCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	avails := []registry.Availability{registry.Available, registry.Forbidden, registry.Unavailable, registry.Incompatible}
	for name, snap := range recordCatalogues(t, 9) {
		t.Run(name, func(t *testing.T) {
			tc := NewTermCache(snap.Caps, simpleAnalyze)
			opts := DefaultRerankOptions()
			opts.Terms = tc
			computed := 0
			for range 100 {
				terms := simpleAnalyze(snap.Caps[r.IntN(len(snap.Caps))].Title + " " + snap.Caps[r.IntN(len(snap.Caps))].Summary)
				slices.Sort(terms)
				s := Signals{Terms: slices.Compact(terms)}
				var cands []Candidate
				for range 20 {
					d := r.IntN(len(snap.Caps))
					cands = append(cands, Candidate{Doc: uint32(d), Cap: snap.Caps[d], Availability: avails[r.IntN(len(avails))],
						Evidence: []Source{{Retriever: Lexical, Rank: 1 + r.IntN(20), Raw: r.Float64()}}})
				}
				Fuse(cands, DefaultWeights())
				Rerank(cands, s, opts)
				Complete(cands) // every candidate is read
				q := tc.query(s.Terms)
				first := true
				for i := range cands {
					c := &cands[i]
					want := 0.0
					if first {
						want = tc.textCoverage(tc.doc(c), q)
						first = !Usable(c.Availability)
						computed++
					}
					if c.Coverage != want {
						t.Fatalf("%s at %d: coverage %v, want %v", c.Cap.ID, i, c.Coverage, want)
					}
				}
				q.release()
			}
			if computed < 110 {
				t.Fatalf("coverage computed for %d candidates only: the comparison proves little", computed)
			}
		})
	}
}
