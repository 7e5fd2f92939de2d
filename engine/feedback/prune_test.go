package feedback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/capdex/capdex/index"
)

// idfOf is the idf of a term of a query (0 capabilities for a term never learned).
func idfOf(t *tenant, term string) float64 {
	if x, ok := t.dict[term]; ok {
		return t.idf(t.capDF[x])
	}
	return t.idf(0)
}

// exhaustiveVotes is the reference of tenant.votes: every learned search's cosine with the
// query, by set intersection, without the inverted index or pruning; a capability gets a
// vote when one of its searches reaches MinSimilarity, of every search reaching MinSupport.
func exhaustiveVotes(t *tenant, terms []string, opt Options, now int64) []index.Vote {
	qn := 0.0
	for _, term := range terms {
		w := idfOf(t, term)
		qn += w * w
	}
	type userCap struct{ user, id string }
	per := map[userCap]float64{}
	sessions := map[string]int{}
	led := map[string]bool{}
	type nearSearch struct {
		sim, w float64
		i      int
		id     string
	}
	var near []nearSearch
	for i, l := range t.learned {
		dot := 0.0
		for _, term := range terms {
			if x, ok := t.dict[term]; ok && slices.Contains(l.terms, x) {
				w := idfOf(t, term)
				dot += w * w
			}
		}
		if dot == 0 {
			continue
		}
		sim := dot / math.Sqrt(qn*t.norms[i])
		if sim < opt.MinSupport {
			continue
		}
		w := sim * decay(time.Duration(now-l.at), opt.HalfLife)
		per[userCap{l.user, l.id}] += w
		sessions[l.id]++
		led[l.id] = led[l.id] || sim >= opt.MinSimilarity
		near = append(near, nearSearch{sim, w, i, l.id})
	}
	miss := map[string]float64{}
	for k, w := range per {
		m, ok := miss[k.id]
		if !ok {
			m = 1
		}
		miss[k.id] = m * (1 - min(w, opt.UserCap))
	}
	var out []index.Vote
	for id, m := range miss {
		if led[id] {
			out = append(out, index.Vote{ID: id, Weight: 1 - m, Sessions: sessions[id]})
		}
	}
	// consensus: the nearest ConsensusK searches at least ConsensusSim like the query; the
	// first capability (nearest first) holding Consensus of their similarity, when no search
	// leads it, gets its best decayed similarity × its share
	sort.Slice(near, func(a, b int) bool {
		if near[a].sim != near[b].sim {
			return near[a].sim > near[b].sim
		}
		return near[a].i < near[b].i
	})
	k, total := 0, 0.0
	for k < len(near) && k < opt.ConsensusK && near[k].sim >= opt.ConsensusSim {
		total += near[k].sim
		k++
	}
	for x := range k {
		id := near[x].id
		share, best, n := 0.0, 0.0, 0
		for _, s := range near[:k] {
			if s.id == id {
				share += s.sim
				best = max(best, s.w)
				n++
			}
		}
		if share /= total; share >= opt.Consensus {
			if !led[id] {
				out = append(out, index.Vote{ID: id, Weight: min(best*share, opt.UserCap), Sessions: n})
			}
			break
		}
	}
	sortVotes(out)
	return out
}

// TestVotesPruningExact: the pruned walk of the inverted index gives the exhaustive
// cosine's votes, on a tenant whose searches share common words (the case pruning skips)
// and rare ones, at several least similarities.
func TestVotesPruningExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := newRecorder(t, nopStore{}, Options{})
	word := func() string { // Zipf-like: a few words are in most searches
		return fmt.Sprint("w", int(math.Floor(math.Pow(rng.Float64(), 3)*400)))
	}
	for i := range 3000 {
		q := "find"
		for range 2 + rng.IntN(6) {
			q += " " + word()
		}
		s := fmt.Sprint("s", i)
		id := fmt.Sprint("cap", rng.IntN(300))
		r.Searched("t", s, fmt.Sprint("u", rng.IntN(40)), q, []string{id}, false)
		r.Ran("t", s, id, true)
	}
	tn := r.lookup("t")
	tn.refresh()
	now := r.opt.Now().UnixNano()
	pruned := 0
	// lead, support, the consensus vote's least similarity and least share (the last at a
	// lead no random search reaches and a share a third reaches, so that consensus decides)
	for _, sims := range [][4]float64{{0.05, 0.05, 0.2, 0.5}, {0.15, 0.15, 0.2, 0.5}, {0.3, 0.3, 0.3, 0.5}, {0.6, 0.6, 0.6, 0.5},
		{0.3, 0.15, 0.2, 0.5}, {0.6, 0.1, 0.1, 0.5}, {0.9, 0.05, 0.05, 0.34}} {
		minSim := sims[1]
		opt := r.opt
		opt.MinSimilarity, opt.MinSupport, opt.ConsensusSim, opt.Consensus = sims[0], sims[1], sims[2], sims[3]
		for j := range 200 {
			q := "find"
			for range 1 + rng.IntN(5) {
				q += " " + word()
			}
			if j%7 == 0 {
				q += " unseen"
			}
			terms := Terms(q)
			got, want := tn.votes(terms, opt, now), exhaustiveVotes(tn, terms, opt, now)
			if len(got) != len(want) {
				t.Fatalf("min %.2f, %q: %d votes, want %d", minSim, q, len(got), len(want))
			}
			for k := range got {
				if got[k].ID != want[k].ID || got[k].Sessions != want[k].Sessions || math.Abs(got[k].Weight-want[k].Weight) > 1e-12 {
					t.Fatalf("min %.2f, %q: vote %d = %+v, want %+v", minSim, q, k, got[k], want[k])
				}
			}
			acc := new(accum)
			tn.similar(terms, minSim, acc)
			if len(acc.touched) < len(tn.post[tn.dict["find"]]) {
				pruned++
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no query pruned the posting list of the word every search holds")
	}
}

// TestLearnedCut: past MaxLearned the oldest searches are forgotten, their terms with them,
// and the rest still vote as the exhaustive reference does.
func TestLearnedCut(t *testing.T) {
	c := newClock()
	r := newRecorder(t, nopStore{}, Options{MaxLearned: 100, Now: c.now})
	for i := range 101 {
		c.advance(time.Minute)
		s := fmt.Sprint("s", i)
		q := fmt.Sprintf("convert unit%d of measure%d", i, i%10)
		id := fmt.Sprint("cap", i%20)
		r.Searched("t", s, fmt.Sprint("u", i), q, []string{id}, false)
		r.Ran("t", s, id, true)
	}
	tn := r.lookup("t")
	if len(tn.learned) != 75 {
		t.Fatalf("%d searches kept of 101 with MaxLearned 100, want 75", len(tn.learned))
	}
	if _, ok := tn.dict[Terms("unit3")[0]]; ok {
		t.Fatal("a forgotten search's term is still numbered")
	}
	if len(tn.names) != len(tn.dict) || len(tn.post) != len(tn.dict) || len(tn.capDF) != len(tn.dict) {
		t.Fatalf("term tables out of step: %d names, %d posts, %d dfs, %d terms", len(tn.names), len(tn.post), len(tn.capDF), len(tn.dict))
	}
	if vs := r.Votes("t", "unit3"); len(vs) != 0 {
		t.Fatalf("a forgotten search votes: %+v", vs)
	}
	vs := r.Votes("t", "unit90 measure0")
	if len(vs) == 0 || vs[0].ID != "cap10" {
		t.Fatalf("votes for a kept search's words: %+v, want cap10 first", vs)
	}
	want := exhaustiveVotes(tn, Terms("unit90 measure0"), r.opt, r.opt.Now().UnixNano())
	if len(want) != len(vs) {
		t.Fatalf("%d votes, the reference has %d", len(vs), len(want))
	}
}

// TestVotesWeighByCapabilities: a word many searches for one capability held ("forecast")
// still tells that capability apart, and a phrase searches for many capabilities held
// ("mentioned in my notes") does not: terms weigh by the capabilities they led to, not by
// the searches holding them.
func TestVotesWeighByCapabilities(t *testing.T) {
	r := newRecorder(t, nopStore{}, Options{})
	for i := range 40 {
		succeed(t, r, "acme", fmt.Sprint("w", i), fmt.Sprint("w", i), fmt.Sprintf("weather forecast for city%d", i), "weather.forecast")
	}
	for i := range 12 {
		id := fmt.Sprint("cap", i)
		succeed(t, r, "acme", fmt.Sprint("n", i), fmt.Sprint("n", i), fmt.Sprintf("open the thing mentioned in my notes task%d", i), id)
	}
	vs := r.Votes("acme", "the forecast for the place mentioned in my notes")
	if len(vs) == 0 || vs[0].ID != "weather.forecast" {
		t.Fatalf("votes %+v, want weather.forecast first", vs)
	}
}

// TestVotesNeedALead: past searches each only weakly like the query (below MinSimilarity,
// at or above MinSupport) give their capability no vote, however many users made them, when
// the query's nearest searches (the notes boilerplate, six capabilities) do not agree on it
// (TestVotesConsensus); one search at least MinSimilarity like the query leads a vote, and
// the weak ones then add to it.
func TestVotesNeedALead(t *testing.T) {
	r := newRecorder(t, nopStore{}, Options{MinSimilarity: 0.3, MinSupport: 0.1})
	for i := range 6 {
		id := fmt.Sprint("other", i)
		succeed(t, r, "acme", fmt.Sprint("o", i), fmt.Sprint("o", i), fmt.Sprintf("open the ledger mentioned in my notes task%d", i), id)
	}
	for i := range 8 {
		succeed(t, r, "acme", fmt.Sprint("w", i), fmt.Sprint("w", i), fmt.Sprintf("rotate invoice%d archive%d quarter%d year%d batch%d", i, i, i, i, i), "books.rotate")
	}
	query := "the ledger mentioned in my notes, rotate it"
	tn := r.lookup("acme")
	tn.refresh()
	for i, l := range tn.learned {
		if l.id != "books.rotate" {
			continue
		}
		sim := similarity(tn, Terms(query), i)
		if sim < 0.1 || sim >= 0.3 {
			t.Fatalf("fixture: a weak search is %.3f like the query, want 0.1..0.3", sim)
		}
	}
	if v, ok := vote(r.Votes("acme", query), "books.rotate"); ok {
		t.Fatalf("8 users' weak searches voted without a lead: %+v", v)
	}
	succeed(t, r, "acme", "lead", "lead", "rotate the ledger mentioned in my notes", "books.rotate")
	v, ok := vote(r.Votes("acme", query), "books.rotate")
	if !ok || v.Sessions != 9 {
		t.Fatalf("with a lead: %+v (found %v), want the lead and 8 supporting sessions", v, ok)
	}
}

// similarity is the cosine of terms with learned search i, by set intersection.
func similarity(t *tenant, terms []string, i int) float64 {
	qn, dot := 0.0, 0.0
	for _, term := range terms {
		w := idfOf(t, term)
		qn += w * w
		if x, ok := t.dict[term]; ok && slices.Contains(t.learned[i].terms, x) {
			dot += w * w
		}
	}
	return dot / math.Sqrt(qn*t.norms[i])
}
