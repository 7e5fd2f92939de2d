package index

import "strconv"

// FeedbackSource gives the votes of a tenant's past successful sessions whose searches were
// like a query: each capability those sessions ran successfully, with its strength (0..1,
// already decayed with age and capped per user) and the number of sessions behind it. query is the
// query's text. It is called concurrently by searches; it must return only the tenant's own
// sessions.
type FeedbackSource interface {
	Votes(tenant, query string) []Vote
}

// Vote is one capability's share of a FeedbackSource's answer.
type Vote struct {
	ID       string
	Weight   float64
	Sessions int
}

// sessionsMatched names the evidence of a feedback vote without the past queries behind
// it: "3 past successful sessions".
func sessionsMatched(n int) string {
	if n == 1 {
		return "1 past successful session"
	}
	return strconv.Itoa(n) + " past successful sessions"
}
