// Package policy makes the pure permission and availability decisions of capdex: whether a
// caller passes a gate (discover ⊇ describe ⊇ execute) and whether a capability is usable by
// that caller now. Every decision carries a human reason; deny overrides allow and nothing is
// allowed by default. The package reads only registry types and keeps no state beyond a
// Table, the compact copy of one snapshot that Availability reads for a search.
package policy
