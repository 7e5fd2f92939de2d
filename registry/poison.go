package registry

import (
	"regexp"
	"strings"
	"unicode"
)

// poisonCues are patterns of text aimed at the model rather than at a reader choosing a
// tool: instructions to ignore or hide, to reach for secrets, or to call other tools.
var poisonCues = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|other|all)\b.{0,20}\b(instructions?|rules?|prompts?|tools?)\b`), "asks the model to ignore its instructions"},
	{regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden)\s*>`), "carries a hidden-instruction tag"},
	{regexp.MustCompile(`(?i)\b(do not|don't|never)\b.{0,30}\b(tell|mention|inform|reveal|show|notify)\b.{0,30}\b(the )?user\b`), "asks the model to hide something from the user"},
	{regexp.MustCompile(`(?i)(~/\.ssh|id_rsa|id_ed25519|\.aws/credentials|/etc/passwd|\.env\b|mcp\.json|private key)`), "names a secret file or key"},
	{regexp.MustCompile(`(?i)\b(system prompt|your instructions|conversation history)\b`), "refers to the model's prompt or history"},
	{regexp.MustCompile(`(?i)\b(before|after|instead of) (using|calling|running) (this|any|the other) tool\b.{0,60}\b(read|call|send|pass|include)\b`), "tells the model to do something else first"},
	{regexp.MustCompile(`(?i)\b(send|forward|upload|exfiltrate|post)\b.{0,40}\b(to|at) (https?://|\S+@\S+\.\w+)`), "asks to send data to an address"},
}

// PoisoningFlags returns what in a tool's text looks aimed at the model (tool poisoning):
// one "possible tool poisoning: ..." entry per kind of cue found, or nil. Invisible
// characters (zero-width, bidirectional controls, Unicode tags) count as a cue.
func PoisoningFlags(text string) []string {
	var out []string
	for _, c := range poisonCues {
		if c.re.MatchString(text) {
			out = append(out, "possible tool poisoning: "+c.what)
		}
	}
	if strings.IndexFunc(text, invisible) >= 0 {
		out = append(out, "possible tool poisoning: carries invisible characters")
	}
	return out
}

func invisible(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F: // tags
		return true
	case r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return unicode.Is(unicode.Cf, r) && r != 0x00AD
}
