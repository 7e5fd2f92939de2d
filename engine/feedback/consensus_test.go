package feedback

import (
	"fmt"
	"testing"
)

// consensusTenant learns three users' searches that each share only part of query (below
// the lead of 0.3, at least the consensus similarity of 0.2), for the capabilities ids (one
// per search), among unrelated searches of twenty other capabilities.
func consensusTenant(t *testing.T, query string, ids [3]string) *Recorder {
	t.Helper()
	r := newRecorder(t, nopStore{}, Options{})
	for i := range 20 {
		succeed(t, r, "acme", fmt.Sprint("o", i), fmt.Sprint("o", i), fmt.Sprintf("show the weather of city%d tomorrow", i), fmt.Sprint("other", i))
	}
	words := [3]string{"archive", "quarter", "ledger"}
	for i, id := range ids {
		succeed(t, r, "acme", fmt.Sprint("u", i), fmt.Sprint("u", i), fmt.Sprintf("rotate invoices %s%d %s batch%d folder%d", words[i], i, words[(i+1)%3], i, i), id)
	}
	tn := r.lookup("acme")
	tn.refresh()
	for i, l := range tn.learned {
		if sim := similarity(tn, Terms(query), i); len(l.id) > 5 && l.id[:5] != "other" && (sim < 0.2 || sim >= 0.3) {
			t.Fatalf("fixture: search %d for %s is %.3f like the query, want 0.2..0.3", i, l.id, sim)
		}
	}
	return r
}

// TestVotesConsensus: when the query's nearest past searches agree on a capability, it gets
// a vote without a lead, weaker than any led vote; when they disagree, none does.
func TestVotesConsensus(t *testing.T) {
	query := "rotate the invoices of the northern branch before the audit deadline friday"
	r := consensusTenant(t, query, [3]string{"books.rotate", "books.rotate", "books.rotate"})
	v, ok := vote(r.Votes("acme", query), "books.rotate")
	if !ok || v.Sessions != 3 {
		t.Fatalf("three users' searches agree on books.rotate: vote %+v (found %v), want one of 3 sessions", v, ok)
	}
	if v.Weight < 0.2 || v.Weight >= r.opt.MinSimilarity {
		t.Fatalf("a consensus vote weighs %.3f, want its best similarity (0.2..%.1f)", v.Weight, r.opt.MinSimilarity)
	}
	// the same searches for three capabilities, against a shorter query (the words they
	// share weigh less now that they led to three capabilities)
	query = "rotate the invoices of the northern branch"
	r = consensusTenant(t, query, [3]string{"books.rotate", "books.archive", "books.audit"})
	if vs := r.Votes("acme", query); len(vs) != 0 {
		t.Fatalf("three users' searches for three capabilities voted: %+v", vs)
	}
}
