package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Digest returns the schema digest of a definition: "sha256:" and the hex SHA-256 of the
// canonical JSON (sorted keys, no insignificant whitespace) of its id, version, title,
// summary, when_to_use, when_not_to_use, arguments_schema, output_schema, handler and
// side_effect. Embedded schemas are canonicalised too, so their key order and spacing do
// not change the digest. It pins what a confirmation approved: any change to what the
// caller was shown or to what will run changes it.
func Digest(c *Capability) string {
	doc := map[string]any{
		"id":               c.ID,
		"version":          c.Version,
		"title":            c.Title,
		"summary":          c.Summary,
		"when_to_use":      emptyToNil(c.WhenToUse),
		"when_not_to_use":  emptyToNil(c.WhenNotToUse),
		"arguments_schema": canonicalValue(c.ArgumentsSchema),
		"output_schema":    canonicalValue(c.OutputSchema),
		"handler":          nil,
		"side_effect":      c.SideEffect,
	}
	if c.Handler != nil {
		b, err := json.Marshal(c.Handler)
		if err == nil {
			doc["handler"] = canonicalValue(b)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		// Every value above is a plain string, number, slice or decoded JSON; Marshal cannot
		// fail on them. Hash the error text rather than panic, should that ever change.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Seal computes the definition's digest into c.Provenance.SchemaDigest. The loader and the
// importer seal every definition they return; call Seal again after changing one.
func Seal(c *Capability) {
	c.Provenance.SchemaDigest = Digest(c)
}

func emptyToNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// canonicalValue decodes a JSON document for re-marshalling with sorted keys; numbers keep
// their literal text. Empty input is nil; invalid JSON is kept as a string of its bytes so
// that different invalid inputs still compare and digest differently.
func canonicalValue(raw []byte) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "invalid JSON: " + string(raw)
	}
	return v
}
