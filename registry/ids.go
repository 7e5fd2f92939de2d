package registry

import (
	"strconv"
	"strings"
)

// ValidID reports whether id is one or more lowercase [a-z0-9_] segments joined by dots.
func ValidID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	seg := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '.':
			if seg == 0 {
				return false
			}
			seg = 0
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			seg++
		default:
			return false
		}
	}
	return seg > 0
}

// Parent returns the id of the parent pack, or "" for a root id.
func Parent(id string) string {
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		return id[:i]
	}
	return ""
}

// Leaf returns the last segment of an id.
func Leaf(id string) string {
	return id[strings.LastIndexByte(id, '.')+1:]
}

// SplitVersion splits "a.b@3" into "a.b" and 3; without "@" the version is 0.
func SplitVersion(ref string) (id string, version int, err error) {
	i := strings.IndexByte(ref, '@')
	if i < 0 {
		return ref, 0, nil
	}
	v, err := strconv.Atoi(ref[i+1:])
	if err != nil || v <= 0 {
		return "", 0, ErrBadID
	}
	return ref[:i], v, nil
}

// ToolName renders an id as a tool name valid in OpenAI, Anthropic and MCP formats:
// "maintenance.codex.diagnose" → "maintenance__codex_diagnose" (the first dot becomes "__",
// the others "_"), truncated to 64 bytes.
func ToolName(id string) string {
	name := strings.Replace(id, ".", "__", 1)
	name = strings.ReplaceAll(name, ".", "_")
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}
