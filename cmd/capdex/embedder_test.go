package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestEmbedProgress: off on a pipe unless verbose; verbose, a line per quarter and the end.
func TestEmbedProgress(t *testing.T) {
	var b bytes.Buffer
	if p := embedProgress(&b, false); p != nil {
		t.Fatal("a progress bar on a non-terminal without -v")
	}
	p := embedProgress(&b, true)
	for done := 64; done <= 1000; done += 64 {
		p(done, 1000)
	}
	p(1000, 1000)
	p(1000, 1000) // a second call at the end draws nothing more
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[3], "embedding capabilities: 1000/1000") {
		t.Errorf("lines:\n%s", b.String())
	}
	b.Reset()
	p(10, 20) // a later build
	p(20, 20)
	if got := strings.Count(b.String(), "\n"); got != 2 {
		t.Errorf("a later build drew %d lines:\n%s", got, b.String())
	}
}
