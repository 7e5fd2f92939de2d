package registry

import (
	"os"
	"io"
	"testing"
)

func BenchmarkZZImportSeal(b *testing.B) {
	data, _ := os.ReadFile("/work/shared/eval/seal_tools/tools.jsonl")
	for b.Loop() {
		clear(schemaCache.m)
		if _, err := ImportWith(bytesReader(data), ImportOptions{Format: "jsonl"}); err != nil { b.Fatal(err) }
	}
}
func bytesReader(b []byte) *bytesR { return &bytesR{b: b} }
type bytesR struct{ b []byte }
func (r *bytesR) Read(p []byte) (int, error) { if len(r.b) == 0 { return 0, io.EOF }; n := copy(p, r.b); r.b = r.b[n:]; return n, nil }
