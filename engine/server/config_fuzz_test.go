package server

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParseConfig decodes capdex.yaml bytes. It must never panic; a refusal wraps
// ErrConfig; an accepted configuration survives ApplyDefaults and Validate (which may
// refuse it, with ErrConfig) and a YAML round trip: encoding it and decoding that again
// gives the same encoding.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		fullConfig,
		"",
		"addr: 127.0.0.1:1\n",
		"data_dir: d\naudit_key_file: ../audit.key\nlimits: {max_registry_file_bytes: 1024}\n",
		"deadlines: {exact: -1s, nope: 5ms}\n",
		"keys: [{key: short, user: u}, {key_sha256: zz}]\n",
		"fusion: {k: -1}\nlog_level: loud\nlog_format: xml\n",
		"token_ttl: 5\n",
		"limits: {max_body_bytes: -1, read_header_timeout: [1]}\n",
		"a: &x [1, 2]\nb: *x\n",
		"data_dir: x\n---\ndata_dir: y\n",
		"registry_dirs: {a: b}\n",
		"base_urls: {a: [1]}\n",
		"local_identity: {scopes: dev}\n",
		"\xff\xfe",
		strings.Repeat("[", 200),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrConfig) || c != nil {
				t.Fatalf("refusal %v (config %v) does not wrap ErrConfig", err, c)
			}
			return
		}
		enc, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("encoding an accepted configuration: %v", err)
		}
		c2, err := ParseConfig(enc)
		if err != nil {
			t.Fatalf("re-decoding an accepted configuration: %v\n%s", err, enc)
		}
		enc2, err := yaml.Marshal(c2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the configuration (%v):\n%s\n---\n%s", err, enc, enc2)
		}
		c.ApplyDefaults()
		if err := c.Validate(); err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("Validate: %v does not wrap ErrConfig", err)
		}
		_ = c.EngineOptions()
	})
}
