package registry

import (
	"fmt"
	"unicode/utf8"
)

// text refuses control characters in the prose of c: C0 (but tab, newline and carriage
// return), DEL, C1, the bidirectional overrides and isolates (U+202A-U+202E,
// U+2066-U+2069) that make text read otherwise than it is, and invalid UTF-8. A title is
// one line, so it may hold no newline or tab either. Prose reaches terminals (capdex
// describe), logs and models' prompts, where such characters rewrite what is shown.
func (l *linter) text(c *Capability) {
	l.oneText(c, "title", c.Title, true)
	l.oneText(c, "summary", c.Summary, false)
	l.oneText(c, "guidance", c.Guidance, false)
	l.oneText(c, "owner", c.Owner, true)
	l.oneText(c, "reviewer", c.Reviewer, true)
	for i, s := range c.WhenToUse {
		l.oneText(c, fmt.Sprintf("when_to_use[%d]", i), s, false)
	}
	for i, s := range c.WhenNotToUse {
		l.oneText(c, fmt.Sprintf("when_not_to_use[%d]", i), s, false)
	}
	for i, s := range c.Aliases {
		l.oneText(c, fmt.Sprintf("aliases[%d]", i), s, true)
	}
	for i, s := range c.Steps {
		l.oneText(c, fmt.Sprintf("steps[%d].title", i), s.Title, true)
		l.oneText(c, fmt.Sprintf("steps[%d].command", i), s.Command, false)
		l.oneText(c, fmt.Sprintf("steps[%d].note", i), s.Note, false)
	}
	for i, ex := range c.Examples {
		l.oneText(c, fmt.Sprintf("examples[%d].title", i), ex.Title, true)
	}
}

func (l *linter) oneText(c *Capability, field, s string, oneLine bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			l.add(c, field, "invalid UTF-8 at byte %d", i)
			return
		case controlRune(r, oneLine):
			l.add(c, field, "control character U+%04X at byte %d (NUL, ESC and other control characters are not allowed%s)", r, i, lineNote(oneLine))
			return
		}
		i += n
	}
}

func lineNote(oneLine bool) string {
	if oneLine {
		return "; this field is one line"
	}
	return ""
}

// controlRune reports whether r may not appear in prose (see text).
func controlRune(r rune, oneLine bool) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return oneLine
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
