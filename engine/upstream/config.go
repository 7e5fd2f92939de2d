package upstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/capdex/capdex/registry"
)

// Defaults of Config.
const (
	// DefaultResyncEvery is how often a connected server's tools are listed again.
	DefaultResyncEvery = 5 * time.Minute
	// DefaultPingEvery is how often a connected server is pinged; a failed ping marks it
	// down and reconnects.
	DefaultPingEvery = 10 * time.Second
	// DefaultMaxBackoff caps the wait between two reconnection attempts.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultPrefixRoot is the pack the tools of server NAME go under: mcp.NAME.
	DefaultPrefixRoot = "mcp"
)

// DefaultACL is the ACL of an upstream without acl: every caller may discover, describe
// and execute its tools (the administrator chose to connect it; tools of side effect I
// still need a confirmation).
func DefaultACL() registry.ACL {
	return registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"*"}}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("upstream: invalid configuration")

// Config is one upstream MCP server. Exactly one of Command (stdio) and URL (streamable
// HTTP) is set.
type Config struct {
	// Name identifies the server (letters, digits, _ and -); its tools become
	// <Prefix>.<tool>.
	Name string
	// Command, Args and Env start a stdio server. The child gets PATH, HOME, LANG and TMPDIR
	// from capdex's environment plus Env; Env values may name environment variables
	// (${NAME}) or secret files (file:PATH).
	Command string
	Args    []string
	Env     map[string]string
	// Dir is the stdio server's working directory (default: capdex's).
	Dir string
	// BaseDir resolves relative file: paths (the configuration file's directory).
	BaseDir string
	// URL and Headers reach a streamable HTTP server; header values expand like Env.
	URL     string
	Headers map[string]string
	// ACL is given to the server's pack; its tools inherit it. Nil: DefaultACL().
	ACL *registry.ACL
	// Prefix is the pack id of the server's tools (default mcp.<name as an id segment>).
	Prefix string
	// TrustChanges accepts changed and new tools without quarantine (default false).
	TrustChanges bool
	// NetworkPolicy of the server's actions (default any: the upstream process is outside
	// capdex's network enforcement).
	NetworkPolicy registry.NetworkPolicy
	// Timeout of a tools/call (default: the run pipeline's default timeout).
	Timeout time.Duration
	// ResyncEvery, PingEvery and MaxBackoff default to the Default* constants.
	ResyncEvery, PingEvery, MaxBackoff time.Duration
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// Transport returns "stdio" or "http".
func (c *Config) Transport() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// PackID returns the pack id of the server's tools.
func (c *Config) PackID() string {
	if c.Prefix != "" {
		return c.Prefix
	}
	return DefaultPrefixRoot + "." + registry.IDSegment(c.Name)
}

// EffectiveACL returns the ACL of the server's pack.
func (c *Config) EffectiveACL() registry.ACL {
	if c.ACL != nil {
		return *c.ACL
	}
	return DefaultACL()
}

func (c *Config) withDefaults() Config {
	o := *c
	if o.ResyncEvery <= 0 {
		o.ResyncEvery = DefaultResyncEvery
	}
	if o.PingEvery <= 0 {
		o.PingEvery = DefaultPingEvery
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.NetworkPolicy == "" {
		o.NetworkPolicy = registry.NetworkAny
	}
	return o
}

// Validate reports every problem of the configurations in one ErrConfig error, each
// naming upstreams[i].
func Validate(cfgs []Config) error {
	var probs []string
	add := func(i int, format string, a ...any) {
		probs = append(probs, fmt.Sprintf("upstreams[%d]: ", i)+fmt.Sprintf(format, a...))
	}
	names := map[string]int{}
	packs := map[string]int{}
	for i, c := range cfgs {
		if !nameRE.MatchString(c.Name) {
			add(i, "name %q: want letters, digits, _ and - (starting with a letter or digit)", c.Name)
		} else if j, dup := names[c.Name]; dup {
			add(i, "name %q is also upstreams[%d]", c.Name, j)
		} else {
			names[c.Name] = i
		}
		switch {
		case c.Command == "" && c.URL == "":
			add(i, "set command (stdio) or url (streamable HTTP)")
		case c.Command != "" && c.URL != "":
			add(i, "set command or url, not both")
		case c.URL != "" && !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://"):
			add(i, "url %q: want http:// or https://", c.URL)
		}
		if c.URL != "" && (len(c.Args) > 0 || len(c.Env) > 0) {
			add(i, "args and env are for a stdio server (command)")
		}
		if c.Command != "" && len(c.Headers) > 0 {
			add(i, "headers are for an HTTP server (url)")
		}
		pack := c.PackID()
		if !registry.ValidID(pack) {
			add(i, "prefix %q is not a valid capability id", pack)
		} else if j, dup := packs[pack]; dup {
			add(i, "prefix %q is also upstreams[%d]'s", pack, j)
		} else {
			packs[pack] = i
		}
		switch c.NetworkPolicy {
		case "", registry.NetworkNone, registry.NetworkAllowlist, registry.NetworkAny:
		default:
			add(i, "network_policy %q (want none, allowlist or any)", c.NetworkPolicy)
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(probs, "; "))
	}
	return nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandValue resolves a configured env or header value: "file:PATH" is the file's content
// (trailing newlines trimmed; a relative PATH is relative to base), and every ${NAME} is
// the environment variable NAME. A missing variable or unreadable file is an error naming
// it.
func ExpandValue(v, base string, lookup func(string) (string, bool)) (string, error) {
	if p, ok := strings.CutPrefix(v, "file:"); ok {
		if !filepath.IsAbs(p) && base != "" {
			p = filepath.Join(base, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("secret file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	var missing []string
	out := envRef.ReplaceAllStringFunc(v, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		val, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
