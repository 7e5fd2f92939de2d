package govern

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/capdex/capdex/registry"
)

// resourceWords are argument-name segments that name what a run touches: an argument called
// "path", "target_path", "bin_dir" or "repo_ids" names affected resources.
var resourceWords = map[string]bool{
	"id": true, "ids": true, "path": true, "paths": true, "file": true, "files": true,
	"dir": true, "dirs": true, "directory": true, "folder": true, "resource": true,
	"resources": true, "target": true, "targets": true, "url": true, "urls": true,
	"host": true, "hosts": true, "package": true, "packages": true, "image": true,
	"images": true, "container": true, "containers": true, "repo": true, "repository": true,
	"branch": true, "service": true, "services": true, "table": true, "database": true,
	"bucket": true, "key": true, "keys": true, "email": true, "recipient": true,
	"recipients": true, "channel": true, "user": true, "users": true, "account": true, "environment": true, "env": true, "namespace": true,
}

const maxSummaryValue = 80

// summarize writes the human summary of a confirmation: title, id and version, the
// arguments, side effect and risk.
func summarize(c *registry.Capability, args map[string]any) string {
	var sb strings.Builder
	title := c.Title
	if title == "" {
		title = c.ID
	}
	fmt.Fprintf(&sb, "%s (%s v%d)", title, c.ID, c.Version)
	keys := sortedKeys(args)
	if len(keys) == 0 {
		sb.WriteString(" with no arguments (defaults apply)")
	} else {
		sb.WriteString(" with ")
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%s=%s", k, short(args[k]))
		}
	}
	fmt.Fprintf(&sb, ". Side effect %s (%s), risk %s.", orUnknown(string(c.SideEffect)), sideEffectScope(c.SideEffect), orUnknown(string(c.RiskLevel)))
	return sb.String()
}

// affectedResources lists argument values whose names say they identify a resource
// ("path=/usr/local/bin", "ids=[a b]" → "/usr/local/bin", "a", "b"); without any, the scope of
// the side effect with the action's entities.
func affectedResources(c *registry.Capability, args map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(args) {
		if !namesResource(k) {
			continue
		}
		switch v := args[k].(type) {
		case string:
			if v != "" {
				out = append(out, k+": "+v)
			}
		case json.Number:
			out = append(out, k+": "+v.String())
		case []any:
			for _, e := range v {
				switch e := e.(type) {
				case string, json.Number:
					out = append(out, fmt.Sprintf("%s: %v", k, e))
				}
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	scope := sideEffectScope(c.SideEffect)
	if len(c.Entities) > 0 {
		return []string{scope + " (" + strings.Join(c.Entities, ", ") + ")"}
	}
	return []string{scope}
}

func namesResource(key string) bool {
	k := strings.ToLower(key)
	if resourceWords[k] {
		return true
	}
	segs := strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	return len(segs) > 1 && resourceWords[segs[len(segs)-1]]
}

func sideEffectScope(s registry.SideEffect) string {
	switch s {
	case registry.SideEffectRead:
		return "read only"
	case registry.SideEffectWriteLocal:
		return "the local machine"
	case registry.SideEffectWriteShared:
		return "shared or remote data"
	case registry.SideEffectImpact:
		return "external systems, possibly irreversibly"
	}
	return "unknown scope"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// short renders an argument value compactly for a summary.
func short(v any) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if r := []rune(s); len(r) > maxSummaryValue {
		s = string(r[:maxSummaryValue]) + "…"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
