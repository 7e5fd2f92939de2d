package registry

// ReadIntents returns the intents that only read or look: a capability declaring only these
// changes nothing, and a request asking only for these asks for nothing to change. The query
// parser (engine/query) and the ranker's caution rule (engine/rank) both start from this list,
// so the two agree on what a read is.
func ReadIntents() []string {
	return []string{
		"diagnose", "inspect", "verify", "check", "list", "search", "query", "get", "show",
		"view", "read", "status", "monitor", "analyze", "explain", "find", "lookup", "browse",
		"compare", "describe", "estimate", "preview", "summarize", "report", "audit", "test",
		"explore", "navigate", "recommend", "translate", "calculate", "track", "watch",
	}
}
