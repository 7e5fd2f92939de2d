package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry/store"
)

// rawStore opens the data directory itself, as an attacker with the directory (and no
// audit key) can, and runs fn on it.
func rawStore(t *testing.T, home string, fn func(s *store.Store)) {
	t.Helper()
	s, err := store.Open(store.Options{Dir: home})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fn(s)
}

// TestCLIAuditVerifyDetectsDamage: capdex audit verify fails, naming the damage, on a
// deleted head, a rolled back head, a record past the head, a gap, and a deleted meta/gen;
// it passes again once the damage is undone.
func TestCLIAuditVerifyDetectsDamage(t *testing.T) {
	home := t.TempDir()
	if _, errs, code := cli(t, home, "list"); code != 0 { // seeds the store
		t.Fatalf("list: exit %d %s", code, errs)
	}
	if out, errs, code := cli(t, home, "audit", "verify"); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("fresh store: exit %d %s %s", code, out, errs)
	}
	var head struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	var headRaw, rec3 []byte
	rawStore(t, home, func(s *store.Store) {
		headRaw, _ = s.RawGet([]byte("meta/audit"))
		rec3, _ = s.RawGet(store.AuditKey(3))
	})
	if err := json.Unmarshal(headRaw, &head); err != nil || head.Seq < 5 {
		t.Fatalf("head %s: %v", headRaw, err)
	}
	var rec2 struct {
		Hash string `json:"hash"`
	}
	rawStore(t, home, func(s *store.Store) {
		v, _ := s.RawGet(store.AuditKey(2))
		_ = json.Unmarshal(v, &rec2)
	})
	rolled, _ := json.Marshal(map[string]any{"seq": 2, "hash": rec2.Hash})
	var gen []byte
	rawStore(t, home, func(s *store.Store) { gen, _ = s.RawGet([]byte("meta/gen")) })
	for _, tc := range []struct {
		name         string
		damage, undo func(s *store.Store) error
		want         string
	}{
		{"head deleted", func(s *store.Store) error { return s.RawDelete([]byte("meta/audit")) },
			func(s *store.Store) error { return s.RawSet([]byte("meta/audit"), headRaw) }, "head missing"},
		{"head rolled back", func(s *store.Store) error { return s.RawSet([]byte("meta/audit"), rolled) },
			func(s *store.Store) error { return s.RawSet([]byte("meta/audit"), headRaw) }, "past the head"},
		{"record past the head", func(s *store.Store) error { return s.RawSet(store.AuditKey(head.Seq+2), rec3) },
			func(s *store.Store) error { return s.RawDelete(store.AuditKey(head.Seq + 2)) }, "past the head"},
		{"gap", func(s *store.Store) error { return s.RawDelete(store.AuditKey(3)) },
			func(s *store.Store) error { return s.RawSet(store.AuditKey(3), rec3) }, "record 3: missing"},
		{"meta/gen deleted", func(s *store.Store) error { return s.RawDelete([]byte("meta/gen")) },
			func(s *store.Store) error { return s.RawSet([]byte("meta/gen"), gen) }, "meta/gen is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rawStore(t, home, func(s *store.Store) {
				if err := tc.damage(s); err != nil {
					t.Fatal(err)
				}
			})
			out, errs, code := cli(t, home, "audit", "verify")
			if code == 0 || !strings.Contains(errs, tc.want) {
				t.Errorf("audit verify on a damaged store: exit %d, stdout %q, stderr %q; want %q", code, out, errs, tc.want)
			}
			rawStore(t, home, func(s *store.Store) {
				if err := tc.undo(s); err != nil {
					t.Fatal(err)
				}
			})
			if out, errs, code := cli(t, home, "audit", "verify"); code != 0 {
				t.Fatalf("after undoing: exit %d %s %s", code, out, errs)
			}
		})
	}
	// A deleted meta/gen must not be re-seeded over: every command refuses the store.
	rawStore(t, home, func(s *store.Store) { _ = s.RawDelete([]byte("meta/gen")) })
	if _, errs, code := cli(t, home, "list"); code == 0 || !strings.Contains(errs, "meta/gen") {
		t.Fatalf("list over a deleted meta/gen: exit %d %s", code, errs)
	}
}

// TestCLIAuditKey: with CAPDEX_AUDIT_KEY_FILE every command seals its records, verify
// checks them, and a chain rebuilt without the key fails.
func TestCLIAuditKey(t *testing.T) {
	home := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("s", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAPDEX_AUDIT_KEY_FILE", keyFile)
	if _, errs, code := cli(t, home, "list"); code != 0 { // seeds the store, sealed
		t.Fatalf("list: exit %d %s", code, errs)
	}
	out, errs, code := cli(t, home, "audit", "verify")
	if code != 0 || !strings.Contains(out, "HMAC") {
		t.Fatalf("keyed verify: exit %d %s %s", code, out, errs)
	}
	rawStore(t, home, func(s *store.Store) {
		v, _ := s.RawGet(store.AuditKey(1))
		i := strings.LastIndex(string(v), `,"mac":"`)
		if i < 0 {
			t.Fatalf("record 1 carries no mac: %s", v)
		}
		_ = s.RawSet(store.AuditKey(1), append(v[:i:i], '}'))
	})
	if _, errs, code := cli(t, home, "audit", "verify"); code == 0 || !strings.Contains(errs, "unsigned") {
		t.Fatalf("stripped MAC: exit %d %s", code, errs)
	}
}
