package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
)

// Digest returns the schema digest of a definition: "sha256:" and the hex SHA-256 of the
// canonical JSON (sorted keys, no insignificant whitespace) of its id, version, title,
// summary, when_to_use, when_not_to_use, arguments_schema, output_schema, handler and
// side_effect. Embedded schemas are canonicalised too, so their key order and spacing do
// not change the digest; empty lists and absent values are null. The digest pins what a
// confirmation approved: any change to what the caller was shown or to what will run
// changes it.
func Digest(c *Capability) string {
	var w bytes.Buffer
	// Keys in sorted order.
	w.WriteString(`{"arguments_schema":`)
	writeCanonicalOrNull(&w, c.ArgumentsSchema)
	w.WriteString(`,"handler":`)
	if c.Handler != nil {
		b, err := json.Marshal(c.Handler)
		if err != nil {
			// A Handler holds only strings, string slices and maps, an int and bools.
			b = []byte(strconv.Quote(err.Error()))
		}
		writeCanonicalOrNull(&w, b)
	} else {
		w.WriteString("null")
	}
	w.WriteString(`,"id":`)
	writeJSONString(&w, c.ID)
	w.WriteString(`,"output_schema":`)
	writeCanonicalOrNull(&w, c.OutputSchema)
	w.WriteString(`,"side_effect":`)
	writeJSONString(&w, string(c.SideEffect))
	w.WriteString(`,"summary":`)
	writeJSONString(&w, c.Summary)
	w.WriteString(`,"title":`)
	writeJSONString(&w, c.Title)
	w.WriteString(`,"version":`)
	w.WriteString(strconv.Itoa(c.Version))
	w.WriteString(`,"when_not_to_use":`)
	writeStringList(&w, c.WhenNotToUse)
	w.WriteString(`,"when_to_use":`)
	writeStringList(&w, c.WhenToUse)
	w.WriteByte('}')
	sum := sha256.Sum256(w.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Seal computes the definition's digest into c.Provenance.SchemaDigest. The loader and the
// importer seal every definition they return; call Seal again after changing one.
func Seal(c *Capability) {
	c.Provenance.SchemaDigest = Digest(c)
}

func writeCanonicalOrNull(w *bytes.Buffer, raw []byte) {
	if c := canonicalRaw(raw); c != nil {
		w.Write(c)
		return
	}
	w.WriteString("null")
}

func writeStringList(w *bytes.Buffer, list []string) {
	if len(list) == 0 {
		w.WriteString("null")
		return
	}
	w.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, s)
	}
	w.WriteByte(']')
}
