package index

import "strings"

// restates reports whether the text s of a capability's when_to_use only repeats its
// summary (importers of flat catalogues fill when_to_use with the description's first
// sentence). Such a copy is not indexed: it would count the summary's first sentence
// twice, outweighing the rest of the summary and the name.
func restates(summary, s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.Contains(summary, s)
}
