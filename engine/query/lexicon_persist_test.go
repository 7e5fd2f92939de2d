package query

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

// builtinSnapshot is the built-in registry as a snapshot.
func builtinSnapshot(tb testing.TB) *registry.Snapshot {
	tb.Helper()
	caps, err := registry.Builtin()
	if err != nil {
		tb.Fatalf("Builtin: %v", err)
	}
	snap, err := registry.NewSnapshot(3, caps)
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

// goldenRequests returns the requests of testdata/normalize/requests.jsonl (Chinese,
// English and mixed).
func goldenRequests(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile(normalizeGoldenPath)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			Request string `json:"request"`
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r.Request)
	}
	return out
}

// sameLexicon fails t unless got and want hold the same entries in the same layout and
// the same maps (the word table, a cache of queries' words, aside).
func sameLexicon(t *testing.T, got, want *Lexicon) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"generation", got.generation, want.generation},
		{"ncaps", got.ncaps, want.ncaps},
		{"zhShare", got.zhShare, want.zhShare},
		{"all", got.all, want.all},
		{"tail", got.tail, want.tail},
		{"tailAt", got.tailAt, want.tailAt},
		{"byKey", got.byKey, want.byKey},
		{"nums", got.nums, want.nums},
		{"intentVals", got.intentVals, want.intentVals},
		{"verbs", got.verbs, want.verbs},
		{"reads", got.reads, want.reads},
		{"memberEntities", got.memberEntities, want.memberEntities},
		{"ids", got.ids, want.ids},
		{"packs", got.packs, want.packs},
		{"packIDs", got.packIDs, want.packIDs},
		{"packKeys", got.packKeys, want.packKeys},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s differs", f.name)
		}
	}
	if got.first != nil || got.entries != nil {
		t.Error("a loaded lexicon keeps builder state")
	}
}

// TestLexiconPersistedSameAsBuilt writes the lexicons of the fixture and the built-in
// registry and loads them: each equals the built one by structure, writes the bytes it
// was loaded from, and parses and plans every golden request (Chinese and English) as the
// built one does.
func TestLexiconPersistedSameAsBuilt(t *testing.T) {
	reqs := goldenRequests(t)
	if len(reqs) < 150 {
		t.Fatalf("%d requests", len(reqs))
	}
	zh := 0
	for _, q := range reqs {
		if bytes.ContainsFunc([]byte(q), func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
			zh++
		}
	}
	if zh == 0 || zh == len(reqs) {
		t.Fatalf("%d of %d requests hold Chinese: want both languages", zh, len(reqs))
	}
	for _, snap := range []*registry.Snapshot{fixtureSnapshot(t), builtinSnapshot(t)} {
		built := NewLexicon(snap)
		b := built.AppendPersisted(nil)
		loaded, err := LoadLexicon(b, snap)
		if err != nil {
			t.Fatal(err)
		}
		sameLexicon(t, loaded, built)
		if again := loaded.AppendPersisted(nil); !bytes.Equal(again, b) {
			t.Error("the loaded lexicon writes other bytes")
		}
		compared := 0
		for _, q := range reqs {
			pw, errW := Rules{}.Normalize(context.Background(), q, built)
			pg, errG := Rules{}.Normalize(context.Background(), q, loaded)
			if !errors.Is(errG, errW) || !reflect.DeepEqual(pg, pw) {
				t.Errorf("%q: parsed\n got %+v (%v)\nwant %+v (%v)", q, pg, errG, pw, errW)
				continue
			}
			if errW != nil {
				continue
			}
			if g, w := PlanSteps(pg, nil, loaded), PlanSteps(pw, nil, built); !reflect.DeepEqual(g, w) {
				t.Errorf("%q: plan %v, want %v", q, g, w)
			}
			compared++
		}
		if compared < 150 {
			t.Errorf("%d parses compared", compared)
		}
		t.Logf("%d capabilities: %d entries, %d bytes, %d parses compared", len(snap.Caps), len(built.all), len(b), compared)
	}
}

// TestLexiconPersistedDamaged checks that damaged or foreign bytes are refused with an
// error wrapping ErrLexiconPersisted, and never panic.
func TestLexiconPersistedDamaged(t *testing.T) {
	snap := builtinSnapshot(t)
	b := NewLexicon(snap).AppendPersisted(nil)
	refused := func(name string, b []byte, s *registry.Snapshot) {
		t.Helper()
		if l, err := LoadLexicon(b, s); !errors.Is(err, ErrLexiconPersisted) || l != nil {
			t.Errorf("%s: loaded (err %v)", name, err)
		}
	}
	refused("empty", nil, snap)
	refused("another format", append([]byte("qlex0"), b[len(lexFormat):]...), snap)
	refused("a trailing byte", append(slices.Clone(b), 0), snap)
	refused("no snapshot", b, nil)
	// Fewer capabilities.
	fewer, err := registry.NewSnapshot(snap.Generation, snap.Caps[:len(snap.Caps)-1])
	if err != nil {
		t.Fatal(err)
	}
	refused("fewer capabilities", b, fewer)
	// A capability this build analyses otherwise: a checked one (the first) names another
	// entity in the snapshot than in the bytes.
	caps := slices.Clone(snap.Caps)
	c := *caps[0]
	c.Entities = append(slices.Clone(c.Entities), "zzqx_entity_never_written")
	caps[0] = &c
	other, err := registry.NewSnapshot(snap.Generation, caps)
	if err != nil {
		t.Fatal(err)
	}
	refused("an entity differs", b, other)
	// A lexicon whose shared part differs (a concept entry fewer).
	built := NewLexicon(snap)
	cut := *built
	for i := range cut.all {
		if cut.all[i].kind == kConcept {
			cut.all = slices.Delete(slices.Clone(cut.all), i, i+1)
			break
		}
	}
	refused("a shared entry fewer", cut.AppendPersisted(nil), snap)
	// Truncations and flipped bytes: never a panic; a truncation is always refused.
	step := max(1, len(b)/400)
	for i := 0; i < len(b); i += step {
		refused("truncated", b[:i], snap)
		d := slices.Clone(b)
		d[i] ^= 0x5a
		if l, err := LoadLexicon(d, snap); err == nil && l == nil || err != nil && !errors.Is(err, ErrLexiconPersisted) {
			t.Errorf("flip at %d: lexicon %v, err %v", i, l != nil, err)
		}
	}
}
