package store

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestNoGoroutineLeak: Close stops every goroutine Open started (Badger's included).
func TestNoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := Open(Options{Dir: t.TempDir(), ValueLogGCInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, titled("a.b", 1, "x"), "u"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutAll(ctx, importBatch(1000, 1), "u"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Active(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // let the value-log GC loop run
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
