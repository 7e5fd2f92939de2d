package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
)

// TestOpenRefusesUnknownDeadline: a deadline for a retriever that does not exist is a
// mistake in the caller's configuration, never silently ignored.
func TestOpenRefusesUnknownDeadline(t *testing.T) {
	_, err := engine.Open(context.Background(), engine.Options{Deadlines: map[string]time.Duration{"lexcial": time.Second}})
	if !errors.Is(err, engine.ErrInvalidOptions) || !strings.Contains(err.Error(), `"lexcial"`) {
		t.Fatalf("Open with an unknown deadline name: %v", err)
	}
}

// TestDefaultDeadlines: every retriever has a deadline, and the map is the caller's own.
func TestDefaultDeadlines(t *testing.T) {
	d := engine.DefaultDeadlines()
	want := map[string]time.Duration{"exact": 50 * time.Millisecond, "metadata": 100 * time.Millisecond,
		"hierarchy": 100 * time.Millisecond, "lexical": 200 * time.Millisecond, "history": 300 * time.Millisecond,
		"semantic": 500 * time.Millisecond}
	if len(d) != len(want) {
		t.Fatalf("DefaultDeadlines = %v", d)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	d["exact"] = 0
	if engine.DefaultDeadlines()["exact"] != 50*time.Millisecond {
		t.Fatal("DefaultDeadlines shares its map")
	}
}
