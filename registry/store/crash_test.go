package store

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TestKilledImport kills a process in the middle of a large PutAll, 20 times at random
// points, and checks after each that the store opens, holds either the whole import or none
// of it, keeps an intact audit chain and no staging residue.
func TestKilledImport(t *testing.T) {
	// 3000 definitions (3300 with the new ids) are about 5 MB with their audit records,
	// several Badger transactions of the default 8 MiB memtable. With -short or -race (whose
	// JSON is many times slower) 500 definitions and a 2 MiB memtable still need several.
	n, rounds, mem := 3000, 20, int64(0)
	if testing.Short() || raceOn {
		n, mem = 500, 2<<20
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	run := func(round int) (*exec.Cmd, *bufio.Scanner) {
		return startHelper(t, "import", dir, "CAPDEX_STORE_N="+strconv.Itoa(n),
			"CAPDEX_STORE_ROUND="+strconv.Itoa(round), "CAPDEX_STORE_MEMTABLE="+strconv.FormatInt(mem, 10))
	}
	// Round 0 runs to the end: the whole import of new ids, and its duration.
	start := time.Now()
	cmd, out := run(0)
	if !out.Scan() || out.Text() != "done staged=1" {
		t.Fatalf("uninterrupted import said %q, want it staged across transactions", out.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("uninterrupted import: %v", err)
	}
	full := time.Since(start)
	t.Logf("import of %d definitions took %v", n+n/10, full)

	version := 1 // committed version of the bulk.p*.c* ids
	records := 0 // committed audit records
	wantGen := 0 // committed imports
	verify := func(round int) bool {
		t.Helper()
		s, err := Open(Options{Dir: dir, MemTableSize: mem})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		defer s.Close()
		checkNoResidue(t, s)
		// The active set, read from the pointers as Active does, without decoding every
		// definition (JSON is slow under -race).
		versions := map[int]int{}
		extra := 0
		for id, v := range activeVersions(t, s) {
			var p, i int
			if _, err := fmt.Sscanf(id, "bulk.p%d.c%d", &p, &i); err == nil {
				versions[v]++
			} else if _, err := fmt.Sscanf(id, "bulk.r%d.x%d", &p, &i); err == nil && p == round {
				extra++
			}
		}
		committed := versions[round+1] == n && extra == n/10
		untouched := versions[version] == n && extra == 0
		if len(versions) != 1 || !(committed || untouched) {
			t.Fatalf("round %d: partial import: versions %v, %d of %d new ids", round, versions, extra, n/10)
		}
		if committed {
			version = round + 1
			records += n + n/10
			wantGen++
		}
		for _, id := range []string{"bulk.p0.c0", fmt.Sprintf("bulk.p%d.c%d", (n-1)%50, n-1)} {
			c, err := s.Get(id, 0)
			if err != nil || c.Version != version || c.Title != genCap(id, version, version-1).Title {
				t.Fatalf("round %d: Get(%s) = %+v, %v; want version %d", round, id, c, err, version)
			}
		}
		nrec, err := s.VerifyAudit()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if nrec != records || int(s.Generation()) != wantGen {
			t.Fatalf("round %d: %d audit records, want %d; generation %d, want %d", round, nrec, records, s.Generation(), wantGen)
		}
		return committed
	}
	if !verify(0) {
		t.Fatal("uninterrupted import not committed")
	}
	whole, none := 0, 0
	for round := 1; round <= rounds; round++ {
		cmd, _ := run(round)
		// Kill points spread over the whole import and a little past its end.
		time.Sleep(time.Duration(r.Int64N(int64(full) * 5 / 4)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && !ee.Exited()) {
			t.Fatalf("round %d: helper failed: %v", round, err)
		}
		if verify(round) {
			whole++
		} else {
			none++
		}
	}
	t.Logf("%d kills: %d imports whole, %d none", rounds, whole, none)
	// End to end through the public API once.
	s, err := Open(Options{Dir: dir, MemTableSize: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	caps, gen, err := s.Active()
	if err != nil || int(gen) != wantGen {
		t.Fatalf("Active: gen %d, %v", gen, err)
	}
	for _, c := range caps {
		var p, i int
		if _, err := fmt.Sscanf(c.ID, "bulk.p%d.c%d", &p, &i); err == nil && c.Version != version {
			t.Fatalf("%s at version %d, want %d", c.ID, c.Version, version)
		}
	}
}

// activeVersions returns id → active version from the pointers (deleted ids left out).
func activeVersions(tb testing.TB, s *Store) map[string]int {
	tb.Helper()
	out := map[string]int{}
	err := s.db.View(func(txn *badger.Txn) error {
		gen, err := readGen(txn)
		if err != nil {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(pfxActive)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id, g, ok := parseActiveKey(it.Item().Key())
			if !ok || g > gen {
				continue
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			p, err := decodePointer(v)
			if err != nil {
				return err
			}
			if p.Deleted {
				delete(out, id)
			} else {
				out[id] = p.Version
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
