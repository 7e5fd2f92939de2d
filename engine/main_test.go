package engine_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: Close must stop the
// actor system, the store (Badger) and the handlers' processes. The one goroutine ignored
// is not the engine's: kelindar/column's Collection.Snapshot, which the index writes one
// column snapshot with, never closes its s2.Writer, whose Reset leaves a goroutine waiting
// on a channel nobody closes (one per snapshot; the server package ignores it too).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/klauspost/compress/s2.(*Writer).Reset.func1"))
}
