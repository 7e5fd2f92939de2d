package registry

import (
	"crypto/sha256"
	"encoding/hex"
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

// ToolName renders an id as a tool name valid in the OpenAI, Anthropic and MCP formats
// (^[a-zA-Z0-9_-]{1,64}$): "maintenance.codex.diagnose" → "maintenance__codex_diagnose".
// The first dot becomes "__", every other dot "_", and an underscore inside a segment "-"
// ("x.y_z" → "x__y-z", "x.y.z" → "x__y_z"), so distinct ids get distinct names and ToolID
// reverses the mapping. A name that would pass 64 bytes keeps its first 47 bytes, then "H"
// and 16 hex digits of the SHA-256 of the id: the only upper-case letter a tool name ever
// holds marks it as hashed (ToolID cannot reverse it; keep a name → id map for those).
// Lint refuses two ids with one name. An id that is not ValidID gets the same treatment
// byte for byte; its name may not be valid.
func ToolName(id string) string {
	return toolName(id, toolHashDigits)
}

// toolHashDigits is how many hex digits of the id's SHA-256 a hashed tool name keeps.
const toolHashDigits = 16

// maxToolName is the longest tool name the OpenAI and Anthropic formats accept.
const maxToolName = 64

func toolName(id string, hashDigits int) string {
	b := make([]byte, 0, len(id)+1)
	first := true
	for i := 0; i < len(id); i++ {
		switch c := id[i]; c {
		case '.':
			if first {
				b = append(b, '_', '_')
				first = false
			} else {
				b = append(b, '_')
			}
		case '_':
			b = append(b, '-')
		default:
			b = append(b, c)
		}
	}
	if len(b) <= maxToolName {
		return string(b)
	}
	sum := sha256.Sum256([]byte(id))
	keep := maxToolName - 1 - hashDigits
	return string(b[:keep]) + "H" + hex.EncodeToString(sum[:])[:hashDigits]
}

// ToolID reverses ToolName: it returns the id whose tool name is name, and false when name
// is not the tool name of any valid id or is a hashed name (see ToolName).
func ToolID(name string) (string, bool) {
	if name == "" || len(name) > maxToolName {
		return "", false
	}
	b := make([]byte, 0, len(name))
	first := true
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_':
			if first {
				if i+1 >= len(name) || name[i+1] != '_' {
					return "", false
				}
				i++
				first = false
			}
			b = append(b, '.')
		case c == '-':
			b = append(b, '_')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		default: // upper case (a hashed name) or a byte no tool name holds
			return "", false
		}
	}
	id := string(b)
	if !ValidID(id) || ToolName(id) != name {
		return "", false
	}
	return id, true
}
