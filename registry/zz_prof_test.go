package registry

import (
	"bytes"
	"testing"
)

func BenchmarkZZWarm(b *testing.B) {
	data := evalData(b, "metatool", "seal_tools")
	for _, d := range data { Import(bytes.NewReader(d), FormatJSONL) }
	for b.Loop() {
		for _, d := range data {
			if _, err := Import(bytes.NewReader(d), FormatJSONL); err != nil { b.Fatal(err) }
		}
	}
}
