package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestKilledImport kills a process in the middle of a large PutAll, 20 times at random
// points, and checks after each that the store opens, holds either the whole import or none
// of it, keeps an intact audit chain and no staging residue.
func TestKilledImport(t *testing.T) {
	n, rounds := 3000, 20
	if testing.Short() {
		n = 1000
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	run := func(round int) (*exec.Cmd, time.Time) {
		cmd, _ := startHelper(t, "import", dir, "CAPDEX_STORE_N="+strconv.Itoa(n), "CAPDEX_STORE_ROUND="+strconv.Itoa(round))
		return cmd, time.Now()
	}
	// Round 0 runs to the end: the whole import of new ids, and its duration.
	cmd, start := run(0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("uninterrupted import: %v", err)
	}
	full := time.Since(start)
	t.Logf("import of %d definitions took %v", n+n/10, full)
	version := 1 // committed version of the bulk.p*.c* ids
	records := 0 // committed audit records
	wantGen := 0 // committed imports
	verify := func(round int, killed bool) bool {
		t.Helper()
		t0 := time.Now()
		s, err := Open(Options{Dir: dir})
		t.Logf("round %d: open %v", round, time.Since(t0))
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		defer func() { t2 := time.Now(); s.Close(); t.Logf("round %d: close %v", round, time.Since(t2)) }()
		t3 := time.Now()
		checkNoResidue(t, s)
		t.Logf("round %d: residue check %v", round, time.Since(t3))
		caps, gen, err := s.Active()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		versions := map[int]int{}
		extra := 0
		for _, c := range caps {
			var p, i int
			if _, err := fmt.Sscanf(c.ID, "bulk.p%d.c%d", &p, &i); err == nil {
				versions[c.Version]++
			} else if _, err := fmt.Sscanf(c.ID, "bulk.r%d.x%d", &p, &i); err == nil && p == round {
				extra++
			}
		}
		committed := versions[round+1] == n && extra == n/10
		untouched := versions[version] == n && extra == 0
		if len(versions) != 1 || !(committed || untouched) {
			t.Fatalf("round %d (killed %v): partial import: versions %v, %d of %d new ids", round, killed, versions, extra, n/10)
		}
		t.Logf("round %d: active %v", round, time.Since(t3))
		nrec, err := s.VerifyAudit()
		t.Logf("round %d: verify %v", round, time.Since(t3))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if committed {
			version = round + 1
			records += n + n/10
			wantGen++
		}
		if nrec != records || int(gen) != wantGen {
			t.Fatalf("round %d: %d audit records, want %d; generation %d", round, nrec, records, gen)
		}
		return committed
	}
	if !verify(0, false) {
		t.Fatal("uninterrupted import not committed")
	}
	whole, none := 0, 0
	for round := 1; round <= rounds; round++ {
		t1 := time.Now()
		cmd, _ := run(round)
		t.Logf("round %d: helper ready after %v", round, time.Since(t1))
		delay := time.Duration(r.Int64N(int64(full) * 5 / 4))
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && !ee.Exited()
		if err != nil && !killed {
			t.Fatalf("round %d: helper failed: %v", round, err)
		}
		if verify(round, killed) {
			whole++
		} else {
			none++
		}
	}
	t.Logf("%d rounds: %d imports whole, %d none", rounds, whole, none)
}
