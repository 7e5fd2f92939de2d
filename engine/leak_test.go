package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every engine a test
// opens is closed, and closing one stops its actor system, store and runs. Ignored: the
// writer goroutine that kelindar/column's Collection.Snapshot leaves behind (it never
// closes its s2.Writer; one per column snapshot the index writes), and Badger's watermark
// goroutine, which stops a moment after Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/klauspost/compress/s2.(*Writer).Reset.func1"),
		goleak.IgnoreAnyFunction("github.com/dgraph-io/badger/v4/y.(*WaterMark).process"),
	)
}
