package govern

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// TokenPrefix starts every confirmation token; it names the format version.
const TokenPrefix = "cdx1"

// MaxTokenBytes bounds the length of a token ParseToken accepts.
const MaxTokenBytes = 4096

var b64 = base64.RawURLEncoding.Strict()

// Claims are what a confirmation token binds. The JSON field order is fixed, so a payload has
// exactly one encoding.
type Claims struct {
	// Tenant, User and Session are the caller's, from the RuntimeContext.
	Tenant  string `json:"tn"`
	User    string `json:"us"`
	Session string `json:"se"`
	// Action and Version are the confirmed action and its active version.
	Action  string `json:"ac"`
	Version int    `json:"vr"`
	// SchemaDigest is registry.Digest of the confirmed definition.
	SchemaDigest string `json:"sd"`
	// ArgsDigest is ArgumentsDigest of the confirmed arguments.
	ArgsDigest string `json:"ad"`
	// Expires is the expiry in Unix seconds.
	Expires int64 `json:"ex"`
	// ID is the random single-use id (22 base64url characters, 128 bits).
	ID string `json:"id"`
}

// Token is a parsed confirmation token; its MAC is not verified by ParseToken.
type Token struct {
	// KeyID names the HMAC key (8 hex digits).
	KeyID string
	// Claims are the decoded payload.
	Claims Claims
	// payload and mac are the decoded raw parts.
	payload, mac []byte
}

// String encodes the token; for a parsed token it returns exactly the parsed text.
func (t *Token) String() string {
	return TokenPrefix + "." + t.KeyID + "." + b64.EncodeToString(t.payload) + "." + b64.EncodeToString(t.mac)
}

// ParseToken parses "cdx1.<kid>.<payload>.<mac>" strictly: the prefix, an 8-hex-digit key
// id, canonical unpadded base64url parts, a payload that is exactly the canonical JSON of
// Claims (no unknown, missing or reordered fields, no extra spaces), a non-empty action,
// a positive version and expiry, a well-formed single-use id and a 32-byte MAC. It does
// not check the MAC, the expiry or the bindings. Errors wrap ErrBadToken.
func ParseToken(s string) (*Token, error) {
	if len(s) > MaxTokenBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadToken, MaxTokenBytes)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != TokenPrefix {
		return nil, fmt.Errorf("%w: want %s.<kid>.<payload>.<mac>", ErrBadToken, TokenPrefix)
	}
	if !isKeyID(parts[1]) {
		return nil, fmt.Errorf("%w: key id", ErrBadToken)
	}
	payload, err := b64.DecodeString(parts[2])
	if err != nil || b64.EncodeToString(payload) != parts[2] {
		return nil, fmt.Errorf("%w: payload encoding", ErrBadToken)
	}
	mac, err := b64.DecodeString(parts[3])
	if err != nil || len(mac) != sha256.Size || b64.EncodeToString(mac) != parts[3] {
		return nil, fmt.Errorf("%w: mac encoding", ErrBadToken)
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: payload", ErrBadToken)
	}
	canon, err := json.Marshal(c)
	if err != nil || !bytes.Equal(canon, payload) {
		return nil, fmt.Errorf("%w: payload is not canonical", ErrBadToken)
	}
	if c.Action == "" || c.Version <= 0 || c.Expires <= 0 || !isNonce(c.ID) {
		return nil, fmt.Errorf("%w: claims", ErrBadToken)
	}
	return &Token{KeyID: parts[1], Claims: c, payload: payload, mac: mac}, nil
}

func isKeyID(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// isNonce reports whether s is 16 bytes in canonical unpadded base64url.
func isNonce(s string) bool {
	b, err := b64.DecodeString(s)
	return err == nil && len(b) == 16 && b64.EncodeToString(b) == s
}

// signer issues and checks tokens with one HMAC key.
type signer struct {
	key []byte
	kid string
}

func newSigner(key []byte) *signer {
	sum := sha256.Sum256(append([]byte("capdex token key id\x00"), key...))
	return &signer{key: key, kid: hex.EncodeToString(sum[:4])}
}

func (s *signer) mac(kid string, payloadB64 string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(TokenPrefix + "." + kid + "." + payloadB64))
	return m.Sum(nil)
}

// issue signs c, filling its single-use id.
func (s *signer) issue(c Claims) (*Token, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	c.ID = b64.EncodeToString(nonce[:])
	payload, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &Token{KeyID: s.kid, Claims: c, payload: payload, mac: s.mac(s.kid, b64.EncodeToString(payload))}, nil
}

// verify checks the key id and the MAC in constant time.
func (s *signer) verify(t *Token) bool {
	want := s.mac(t.KeyID, b64.EncodeToString(t.payload))
	return hmac.Equal(want, t.mac) && t.KeyID == s.kid
}

// expiresAt is the expiry as a time.
func (c *Claims) expiresAt() time.Time { return time.Unix(c.Expires, 0).UTC() }
