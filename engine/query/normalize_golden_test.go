package query

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var updateNormalize = flag.Bool("update", false, "rewrite testdata/normalize/requests.jsonl from this run")

// normalizeGoldenPath holds one request a line followed by every field the rules parse of
// it against the built-in registry.
const normalizeGoldenPath = "../../testdata/normalize/requests.jsonl"

// normalizeRecord is one line of the golden file: the request, then the parse.
type normalizeRecord struct {
	Request string `json:"request"`
	*Parsed
	Raw string `json:"raw,omitempty"` // hides Parsed.Raw: the request, already written
}

// TestNormalizeGolden parses every request of testdata/normalize/requests.jsonl with the
// rules and the built-in registry's lexicon and compares every field with the file. Add a
// line {"request": "..."} and run `go test ./engine/query -run NormalizeGolden -update` to
// fill it; review the file's diff like code.
func TestNormalizeGolden(t *testing.T) {
	b, err := os.ReadFile(normalizeGoldenPath)
	if err != nil {
		t.Fatal(err)
	}
	lex := builtinLexicon(t)
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var want normalizeRecord
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatalf("%s:%d: %v", normalizeGoldenPath, line, err)
		}
		p, err := Rules{}.Normalize(context.Background(), want.Request, lex)
		if err != nil {
			t.Fatalf("%s:%d: %v", normalizeGoldenPath, line, err)
		}
		p.Raw = "" // the request, already written
		got, err := json.Marshal(normalizeRecord{Request: want.Request, Parsed: p})
		if err != nil {
			t.Fatal(err)
		}
		n++
		out.Write(got)
		out.WriteByte('\n')
		if !*updateNormalize && !bytes.Equal(got, sc.Bytes()) {
			t.Errorf("%s:%d:\n got %s\nwant %s", normalizeGoldenPath, line, got, sc.Bytes())
		}
	}
	if n < 150 {
		t.Errorf("%d requests, want at least 150", n)
	}
	if *updateNormalize {
		if err := os.WriteFile(normalizeGoldenPath, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
