package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// AdminKeyFile is the name of the generated admin key in the data directory.
const AdminKeyFile = "admin.key"

// Headers of the HTTP API.
const (
	// HeaderAPIKey carries the API key when Authorization: Bearer is not used.
	HeaderAPIKey = "X-API-Key"
	// HeaderSession names the caller's session (bound into confirmation tokens).
	HeaderSession = "X-Capdex-Session"
	// HeaderRequestID is read from the request (when sane) or generated, and echoed.
	HeaderRequestID = "X-Request-ID"
)

// caller is an authenticated identity.
type caller struct {
	Tenant, User string
	Scopes       []string
	// KeyID is the first 12 hex digits of the key's SHA-256: it names the key in logs and
	// binds MCP sessions to the key that opened them.
	KeyID string
}

func (c *caller) admin() bool { return slices.Contains(c.Scopes, "admin") }

// runtimeContext is the engine's view of the caller. The identity comes only from the
// key; the session from the header or the MCP session.
func (c *caller) runtimeContext(session string) registry.RuntimeContext {
	return registry.RuntimeContext{
		Tenant: c.Tenant, User: c.User, Scopes: slices.Clone(c.Scopes),
		Session: session, OS: localOS(),
	}
}

type keyEntry struct {
	sum [sha256.Size]byte
	who caller
}

// keyring maps API keys (by SHA-256) to identities. It is immutable after newKeyring.
type keyring struct{ keys []keyEntry }

func newKeyring(keys []KeyConfig) (*keyring, error) {
	kr := &keyring{}
	for i, k := range keys {
		var e keyEntry
		if k.Key != "" {
			e.sum = sha256.Sum256([]byte(k.Key))
		} else {
			b, err := hex.DecodeString(k.KeySHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%w: keys[%d]: key_sha256 is not 64 hex digits", ErrConfig, i)
			}
			copy(e.sum[:], b)
		}
		e.who = caller{Tenant: k.Tenant, User: k.User, Scopes: slices.Clone(k.Scopes), KeyID: hex.EncodeToString(e.sum[:6])}
		if e.who.Tenant == "" {
			e.who.Tenant = "default"
		}
		kr.keys = append(kr.keys, e)
	}
	return kr, nil
}

// lookup returns the identity of key. It compares the key's SHA-256 with every configured
// one in constant time and never stops early, so timing tells nothing about which key or
// how much of it matched.
func (kr *keyring) lookup(key string) (caller, bool) {
	if key == "" {
		return caller{}, false
	}
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range kr.keys {
		if subtle.ConstantTimeCompare(sum[:], kr.keys[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return caller{}, false
	}
	return kr.keys[found].who, true
}

// presentedKey returns the key of a request: Authorization: Bearer KEY, else X-API-Key.
func presentedKey(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, rest, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(rest)
		}
		return ""
	}
	return strings.TrimSpace(r.Header.Get(HeaderAPIKey))
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// ensureAdminKey returns the admin key kept at <dir>/admin.key, generating it (32 random
// bytes, base64url) with mode 0600 when it does not exist. A file others may read is
// tightened to 0600. With dir empty the key lives in memory only and path is "".
func ensureAdminKey(dir string) (key, path string, created bool, err error) {
	if dir == "" {
		k, err := newAdminKey()
		return k, "", true, err
	}
	path = filepath.Join(dir, AdminKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		k := strings.TrimSpace(string(b))
		if len(k) < 16 {
			return "", path, false, fmt.Errorf("%w: %s holds no key (delete it to generate a new one)", ErrAdminKey, path)
		}
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", path, false, fmt.Errorf("%w: %w", ErrAdminKey, err)
			}
		}
		return k, path, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", path, false, fmt.Errorf("%w: %w", ErrAdminKey, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", path, false, fmt.Errorf("%w: %w", ErrAdminKey, err)
	}
	k, err := newAdminKey()
	if err != nil {
		return "", path, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process won the race: use its key
		return ensureAdminKey(dir)
	}
	if err != nil {
		return "", path, false, fmt.Errorf("%w: %w", ErrAdminKey, err)
	}
	_, werr := f.WriteString(k + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return "", path, false, fmt.Errorf("%w: %w", ErrAdminKey, err)
	}
	return k, path, true, nil
}

func newAdminKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("%w: %w", ErrAdminKey, err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
