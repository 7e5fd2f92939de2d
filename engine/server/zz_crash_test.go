package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestCrashDuringAdminWrites kills `capdex serve` with SIGKILL while admin PUTs of new
// capabilities and new versions are in flight, and restarts it, again and again: every
// write answered 200 is present after the restart, and `capdex audit verify` passes
// after every kill.
func TestCrashDuringAdminWrites(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	home := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), true)
	client := &http.Client{Timeout: 10 * time.Second}
	put := func(url, id string, def map[string]any) (int, error) {
		b, _ := json.Marshal(def)
		req, _ := http.NewRequest("PUT", url+"/v1/capabilities/"+id, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// acked is the highest version of every id whose PUT was answered 200.
	acked := map[string]int{}
	var mu sync.Mutex
	sharedVersion := 0 // the shared id's last acknowledged version
	verify := func(d *daemon) {
		t.Helper()
		mu.Lock()
		ids := make([]string, 0, len(acked))
		for id := range acked {
			ids = append(ids, id)
		}
		mu.Unlock()
		sort.Strings(ids)
		ts := d.ts()
		for _, id := range ids {
			r := ts.call(t, "GET", "/v1/capabilities/"+id, adminKey, nil)
			var got struct{ Version int }
			if r.status != 200 || json.Unmarshal(r.body, &got) != nil || got.Version < acked[id] {
				t.Fatalf("acknowledged %s@%d lost after a SIGKILL: %d %s", id, acked[id], r.status, r.body)
			}
		}
	}
	total, lostInFlight := 0, 0
	start := time.Now()
	for round := 0; round < rounds; round++ {
		d := startDaemon(t, "--home", home, "--config", cfg, "--log-level", "warn")
		verify(d)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		acks := make(chan struct{}, 1)
		writer := func(next func(n int) (string, map[string]any, func())) {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id, def, onAck := next(n)
				code, err := put(d.url, id, def)
				if err != nil { // the daemon died under this request: not acknowledged
					mu.Lock()
					lostInFlight++
					mu.Unlock()
					return
				}
				if code != 200 {
					t.Errorf("PUT %s: %d", id, code)
					return
				}
				mu.Lock()
				total++
				if v := def["version"].(int); v > acked[id] {
					acked[id] = v
				}
				if onAck != nil {
					onAck()
				}
				mu.Unlock()
				select {
				case acks <- struct{}{}:
				default:
				}
			}
		}
		wg.Add(3)
		for w := range 2 {
			go writer(func(n int) (string, map[string]any, func()) { // new capabilities
				id := fmt.Sprintf("demo.crash_r%02d_w%d_%03d", round, w, n)
				return id, testAction(id, 1, "Crash test "+id), nil
			})
		}
		go writer(func(n int) (string, map[string]any, func()) { // new versions of one capability
			mu.Lock()
			v := sharedVersion + 1
			mu.Unlock()
			return "demo.crash_shared", testAction("demo.crash_shared", v, fmt.Sprintf("Shared v%d", v)), func() { sharedVersion = v }
		})
		// Kill once this round has an acknowledged write (so every round both keeps and
		// cuts writes), a random while later.
		select {
		case <-acks:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		d.kill()
		close(stop)
		wg.Wait()
		auditVerify(t, home)
	}
	d := startDaemon(t, "--home", home, "--config", cfg, "--log-level", "warn")
	verify(d)
	if total < rounds {
		t.Errorf("only %d acknowledged writes in %d rounds: the test wrote too little to mean anything", total, rounds)
	}
	t.Logf("%d SIGKILLs during admin writes in %v: %d acknowledged writes (%d ids, shared id at v%d) all present after restart; %d writes cut by the kill; audit verified after every kill",
		rounds, time.Since(start).Round(time.Millisecond), total, len(acked), sharedVersion, lostInFlight)
	if err := d.stop(t); err != nil {
		t.Errorf("final stop: %v", err)
	}
	t.Log(auditVerify(t, home))
}
