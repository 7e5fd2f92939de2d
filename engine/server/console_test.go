package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// hidden is a built-in subtree the dev scope may not discover (finance only).
const hidden = "payments.payouts"

func TestConsoleAssets(t *testing.T) {
	ts := sharedServer(t)
	for _, tc := range []struct {
		path, ctype, contains string
	}{
		{"/ui/", "text/html", `<script src="/ui/app.js" defer></script>`},
		{"/ui/index.html", "text/html", `id="login-form"`},
		{"/ui/app.js", "text/javascript", "sessionStorage"},
		{"/ui/app.css", "text/css", "--blue"},
		{"/ui/favicon.svg", "image/svg+xml", "<svg"},
	} {
		r := ts.call(t, "GET", tc.path, "", nil) // no key: the assets hold no data
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), tc.ctype) || !bytes.Contains(r.body, []byte(tc.contains)) {
			t.Errorf("GET %s: %d %s, body has %q: %v", tc.path, r.status, r.header.Get("Content-Type"), tc.contains, bytes.Contains(r.body, []byte(tc.contains)))
		}
		if csp := r.header.Get("Content-Security-Policy"); csp != ConsoleCSP {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		if r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", tc.path, r.header)
		}
	}
	if strings.Contains(ConsoleCSP, "unsafe") || !strings.Contains(ConsoleCSP, "script-src 'self'") || !strings.Contains(ConsoleCSP, "style-src 'self'") {
		t.Errorf("CSP %q is not strict", ConsoleCSP)
	}
	// No inline script or style in the page: the CSP would refuse it.
	page := ts.call(t, "GET", "/ui/", "", nil).body
	if bytes.Contains(page, []byte("<style")) || bytes.Contains(page, []byte(" style=")) || bytes.Contains(page, []byte("<script>")) || regexp.MustCompile(` on[a-z]+=`).Match(page) {
		t.Error("the page has inline script or style")
	}
	for _, p := range []string{"/", "/ui"} {
		req, _ := http.NewRequest("GET", ts.url+p, nil)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
			t.Errorf("GET %s: %d to %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/ui/nothing.js", 404},
		{"GET", "/ui/../auth.go", 404},
		{"GET", "/ui/ui/app.js", 404},
		{"POST", "/ui/", 405},
		{"POST", "/", 401},                 // only GET and HEAD are redirected; the API answers the rest
		{"GET", "/v1/console/whoami", 401}, // the data needs a key
	} {
		if r := ts.call(t, tc.method, tc.path, "", nil); r.status != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.status, tc.want)
		}
	}
}

func TestConsoleWhoami(t *testing.T) {
	ts := sharedServer(t)
	var w Whoami
	ts.call(t, "GET", "/v1/console/whoami", devKey, nil).json(t, &w)
	if w.User != "dev-user" || w.Tenant != "default" || w.Admin || !slices.Equal(w.Scopes, []string{"dev"}) || len(w.KeyID) != 12 || w.Generation == 0 {
		t.Errorf("dev: %+v", w)
	}
	// No quarantine source and no upstreams endpoint on this daemon; the funnel (/v1/stats,
	// docs/feedback.md) is served.
	if w.Features["quarantine"] || w.Features["upstreams"] || !w.Features["stats"] || len(w.Features) != 3 {
		t.Errorf("features %v", w.Features)
	}
	ts.call(t, "GET", "/v1/console/whoami", adminKey, nil).json(t, &w)
	if !w.Admin {
		t.Errorf("admin: %+v", w)
	}
	q := startServer(t, serverSetup{quiet: true, options: func(o *Options) { o.Quarantine = &memQuarantine{} }})
	q.call(t, "GET", "/v1/console/whoami", devKey, nil).json(t, &w)
	if !w.Features["quarantine"] || w.Features["upstreams"] {
		t.Errorf("with a quarantine source: %v", w.Features)
	}
}

func TestConsoleTreeGates(t *testing.T) {
	ts := sharedServer(t)
	trees := map[string]Tree{}
	for _, key := range []string{devKey, adminKey} {
		var tr Tree
		ts.call(t, "GET", "/v1/console/tree", key, nil).json(t, &tr)
		trees[key] = tr
	}
	dev, admin := trees[devKey], trees[adminKey]
	byID := func(tr Tree) map[string]TreeNode {
		m := map[string]TreeNode{}
		for _, n := range tr.Nodes {
			m[n.ID] = n
		}
		return m
	}
	d, a := byID(dev), byID(admin)
	for id := range d {
		if id == hidden || strings.HasPrefix(id, hidden+".") {
			t.Errorf("the dev key's tree shows %s", id)
		}
	}
	if _, ok := a[hidden]; !ok || len(a) <= len(d) {
		t.Fatalf("admin sees %d nodes, dev %d", len(a), len(d))
	}
	// Counts are of what the key sees: payments has fewer descendants for dev.
	if a["payments"].Descendants-d["payments"].Descendants != 1+a[hidden].Descendants || a["payments"].Children != countKids(admin, "payments") {
		t.Errorf("payments: dev %d below, admin %d below", d["payments"].Descendants, a["payments"].Descendants)
	}
	if a[hidden].Parent != "payments" || a[hidden].Type != registry.TypePack || a[hidden].Children != 2 || a[hidden].Descendants != 2 {
		t.Errorf("%s for admin: %+v", hidden, a[hidden])
	}
	// Every node the key sees says whether it passes each gate, and why.
	for _, n := range dev.Nodes {
		g := n.Gates["discover"]
		if !g.Allowed || g.Reason == "" || len(n.Gates) != 3 {
			t.Errorf("%s gates %+v", n.ID, n.Gates)
		}
	}
	// The tree is in id order, parents before children.
	seen := map[string]bool{}
	for _, n := range dev.Nodes {
		if n.Parent != "" && !seen[n.Parent] {
			t.Errorf("%s comes before its parent %s", n.ID, n.Parent)
		}
		seen[n.ID] = true
	}
}

// countKids counts the nodes whose parent is id.
func countKids(tr Tree, id string) int {
	n := 0
	for _, x := range tr.Nodes {
		if x.Parent == id {
			n++
		}
	}
	return n
}

func TestConsoleVersionsAndDiff(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true})
	id := "demo.console_versions"
	for v, title := range []string{"First", "Second"} {
		def := testAction(id, v+1, title)
		def["handler"] = map[string]any{"kind": "go", "name": "echo"}
		if r := ts.call(t, "PUT", "/v1/capabilities/"+id, adminKey, def); r.status != 200 {
			t.Fatalf("PUT v%d: %d %s", v+1, r.status, r.body)
		}
	}
	var vs Versions
	ts.call(t, "GET", "/v1/console/capabilities/"+id+"/versions", devKey, nil).json(t, &vs)
	if vs.Active != 2 || len(vs.Versions) != 2 || vs.Versions[0].Version != 2 || vs.Versions[1].Title != "First" || !strings.HasPrefix(vs.Versions[0].Digest, "sha256:") || vs.Versions[0].Digest == vs.Versions[1].Digest {
		t.Errorf("versions %+v", vs)
	}
	var dev, admin Diff
	ts.call(t, "GET", "/v1/console/capabilities/"+id+"/diff?a=1&b=2", devKey, nil).json(t, &dev)
	ts.call(t, "GET", "/v1/console/capabilities/"+id+"/diff?a=1&b=2", adminKey, nil).json(t, &admin)
	changed := func(d Diff) (plus, minus []string) {
		for _, l := range d.Lines {
			switch l.Op {
			case "+":
				plus = append(plus, strings.TrimSpace(l.Text))
			case "-":
				minus = append(minus, strings.TrimSpace(l.Text))
			}
		}
		return
	}
	plus, minus := changed(dev)
	if !slices.Contains(plus, `"title": "Second",`) || !slices.Contains(minus, `"title": "First",`) || !slices.Contains(plus, `"version": 2,`) {
		t.Errorf("dev diff: + %q, - %q", plus, minus)
	}
	text := func(d Diff) string {
		var b strings.Builder
		for _, l := range d.Lines {
			b.WriteString(l.Text + "\n")
		}
		return b.String()
	}
	// Only an administrator sees the handler and the provenance.
	if strings.Contains(text(dev), `"handler"`) || strings.Contains(text(dev), "provenance") || !strings.Contains(text(admin), `"handler"`) {
		t.Errorf("dev sees:\n%s\nadmin sees:\n%s", text(dev), text(admin))
	}
	ts.call(t, "GET", "/v1/console/capabilities/"+id+"/diff?a=2&b=2", devKey, nil).json(t, &dev)
	if p, m := changed(dev); len(p)+len(m) != 0 {
		t.Errorf("a version against itself: + %q - %q", p, m)
	}
	for _, tc := range []struct {
		path, key string
		want      int
	}{
		{"/v1/console/capabilities/" + hidden + ".create/versions", devKey, 404},
		{"/v1/console/capabilities/" + hidden + ".create/diff?a=1&b=1", devKey, 404},
		{"/v1/console/capabilities/no.such.thing/versions", devKey, 404},
		{"/v1/console/capabilities/" + hidden + ".create/versions", adminKey, 200},
		{"/v1/console/capabilities/" + id + "/diff?a=1&b=9", devKey, 404},
		{"/v1/console/capabilities/" + id + "/diff?a=0&b=1", devKey, 400},
		{"/v1/console/capabilities/" + id + "/diff?a=x&b=1", devKey, 400},
		{"/v1/console/capabilities/Not%20An%20Id/versions", devKey, 400},
	} {
		r := ts.call(t, "GET", tc.path, tc.key, nil)
		if r.status != tc.want {
			t.Errorf("GET %s: %d, want %d: %s", tc.path, r.status, tc.want, r.body)
		}
		// A hidden capability's 404 says no more than an unknown one's.
		if tc.want == 404 && tc.key == devKey && strings.Contains(string(r.body), "finance") {
			t.Errorf("GET %s reveals: %s", tc.path, r.body)
		}
	}
}

func TestConsoleAudit(t *testing.T) {
	const acmeKey = "acme-key-0123456789abcdef"
	ts := startServer(t, serverSetup{quiet: true, cfg: func(c *Config) {
		c.Keys = append(c.Keys, KeyConfig{Key: acmeKey, Tenant: "acme", User: "ann", Scopes: []string{"dev"}})
	}})
	for _, key := range []string{devKey, adminKey, acmeKey} {
		if r := ts.call(t, "POST", "/v1/run", key, map[string]any{"id": "demo.echo", "arguments": map[string]any{"message": "secret-arg"}}); r.status != 200 {
			t.Fatalf("run: %d %s", r.status, r.body)
		}
	}
	page := func(key, q string) AuditPage {
		t.Helper()
		r := ts.call(t, "GET", "/v1/console/audit"+q, key, nil)
		if r.status != 200 {
			t.Fatalf("audit%s: %d %s", q, r.status, r.body)
		}
		var p AuditPage
		r.json(t, &p)
		return p
	}
	all := page(adminKey, "?n=10000")
	dev := page(devKey, "?n=10000")
	if all.Scanned != dev.Scanned || len(all.Records) <= len(dev.Records) || len(dev.Records) == 0 {
		t.Fatalf("admin %d records, dev %d, scanned %d", len(all.Records), len(dev.Records), all.Scanned)
	}
	for i := 1; i < len(all.Records); i++ {
		if all.Records[i].Seq >= all.Records[i-1].Seq {
			t.Fatalf("not newest first at %d", i)
		}
	}
	hiddenSeen := false
	for _, r := range all.Records {
		hiddenSeen = hiddenSeen || strings.HasPrefix(r.Action, hidden)
	}
	if !hiddenSeen {
		t.Fatalf("the admin's audit has no record of %s", hidden)
	}
	for _, r := range dev.Records {
		if strings.HasPrefix(r.Action, hidden) {
			t.Errorf("the dev key's audit shows %+v", r)
		}
		if len(r.Args) != 0 {
			t.Errorf("the dev key's audit shows run arguments: %s", r.Args)
		}
	}
	// Another tenant's key sees its own runs only.
	for _, r := range page(acmeKey, "?capability=demo.echo").Records {
		if r.Kind == "run" && r.Actor != "acme/ann" {
			t.Errorf("the acme key sees %+v", r)
		}
	}
	if got := page(acmeKey, "?capability=demo.echo&outcome=succeeded").Records; len(got) != 1 {
		t.Errorf("acme's own runs: %+v", got)
	}
	for _, r := range page(devKey, "?capability=demo.echo").Records {
		if strings.HasPrefix(r.Actor, "acme/") {
			t.Errorf("the dev key sees %+v", r)
		}
	}
	runs := page(adminKey, "?capability=demo.echo&outcome=succeeded")
	if len(runs.Records) != 3 {
		t.Errorf("succeeded runs of demo.echo: %+v", runs.Records)
	}
	mine := page(adminKey, "?capability=demo&outcome=succeeded&actor=DEV-USER")
	if len(mine.Records) != 1 || !strings.Contains(mine.Records[0].Actor, "dev-user") {
		t.Errorf("dev-user's runs under demo: %+v", mine.Records)
	}
	if got := page(adminKey, "?n=3"); got.Scanned != 3 || len(got.Records) != 3 {
		t.Errorf("n=3: scanned %d, %d records", got.Scanned, len(got.Records))
	}
	for _, q := range []string{"?n=0", "?n=x", "?n=10001"} {
		if r := ts.call(t, "GET", "/v1/console/audit"+q, adminKey, nil); r.status != 400 {
			t.Errorf("audit%s: %d", q, r.status)
		}
	}
	// Verifying the chain is an administrator's action.
	if r := ts.call(t, "POST", "/v1/console/audit/verify", devKey, nil); r.status != 403 {
		t.Errorf("verify with the dev key: %d", r.status)
	}
	var v AuditVerdict
	ts.call(t, "POST", "/v1/console/audit/verify", adminKey, nil).json(t, &v)
	if !v.OK || v.Records != all.Scanned || v.Error != "" {
		t.Errorf("verify: %+v (chain has %d)", v, all.Scanned)
	}
}

// consoleSearch posts to /v1/console/search and returns the events.
func consoleSearch(t *testing.T, ts *testServer, key string, body any) (int, []ConsoleSearchEvent, []string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", ts.url+"/v1/console/search", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil, nil
	}
	var evs []ConsoleSearchEvent
	var names []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev ConsoleSearchEvent
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	return resp.StatusCode, evs, names
}

func TestConsoleSearch(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true})
	q := registry.SearchRequest{Query: "create a vendor payout", Explain: true}
	st, evs, names := consoleSearch(t, ts, adminKey, ConsoleSearchRequest{Request: q})
	if st != 200 || len(evs) < 2 || names[len(names)-1] != "final" || names[0] != "partial" {
		t.Fatalf("admin: %d, events %q", st, names)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].AtUS < evs[i-1].AtUS {
			t.Errorf("event %d at %d µs, before %d", i, evs[i].AtUS, evs[i-1].AtUS)
		}
	}
	final := evs[len(evs)-1].Response
	if len(final.Matches) == 0 || final.Matches[0].Explain == nil || len(final.Matches[0].Explain.Evidence) == 0 {
		t.Fatalf("final %+v", final)
	}
	ids := func(r *registry.SearchResponse) []string {
		var out []string
		for _, m := range r.Matches {
			out = append(out, m.ResourceID)
		}
		return out
	}
	if !slices.ContainsFunc(ids(final), func(id string) bool { return strings.HasPrefix(id, hidden) }) {
		t.Fatalf("the admin's search does not find %s: %q", hidden, ids(final))
	}
	// Acting as a dev user, the finance-only pack disappears, as it does for the dev key.
	as := &ActAs{User: "someone", Scopes: []string{"dev"}}
	st, evs, _ = consoleSearch(t, ts, adminKey, ConsoleSearchRequest{Request: q, ActAs: as})
	if st != 200 {
		t.Fatalf("act as: %d", st)
	}
	asIDs := ids(evs[len(evs)-1].Response)
	_, devEvs, _ := consoleSearch(t, ts, devKey, ConsoleSearchRequest{Request: q})
	if slices.ContainsFunc(asIDs, func(id string) bool { return strings.HasPrefix(id, hidden) }) || !slices.Equal(asIDs, ids(devEvs[len(devEvs)-1].Response)) {
		t.Errorf("acting as dev: %q; the dev key: %q", asIDs, ids(devEvs[len(devEvs)-1].Response))
	}
	for _, tc := range []struct {
		key  string
		body any
		want int
	}{
		{devKey, ConsoleSearchRequest{Request: q, ActAs: as}, 403},
		{adminKey, ConsoleSearchRequest{Request: q, ActAs: &ActAs{Scopes: []string{"dev"}}}, 400},
		{devKey, ConsoleSearchRequest{Request: registry.SearchRequest{Query: " "}}, 400},
		{devKey, map[string]any{"query": "flat requests are refused"}, 400},
	} {
		if st, _, _ := consoleSearch(t, ts, tc.key, tc.body); st != tc.want {
			t.Errorf("%+v: %d, want %d", tc.body, st, tc.want)
		}
	}
}

func TestQualityRecorder(t *testing.T) {
	q := newQualityRecorder()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	resp := func(r registry.Resolution, partial bool) *registry.SearchResponse {
		return &registry.SearchResponse{Resolution: r, SearchMeta: registry.SearchMeta{Partial: partial}}
	}
	// Bucket 0 (10:00): three searches; bucket 2 (10:02): one; one too old, one nil.
	q.add(t0.Add(10*time.Second), 1*time.Millisecond, resp(registry.Confident, false))
	q.add(t0.Add(20*time.Second), 2*time.Millisecond, resp(registry.Ambiguous, true))
	q.add(t0.Add(30*time.Second), 10*time.Millisecond, resp(registry.NoConfidentMatch, false))
	q.add(t0.Add(125*time.Second), 4*time.Millisecond, resp(registry.Confident, false))
	q.add(t0.Add(-time.Hour), time.Millisecond, resp(registry.Confident, false))
	q.add(t0, time.Millisecond, nil)
	s := q.series(t0.Add(150*time.Second), time.Minute, 3*time.Minute)
	if len(s.Buckets) != 3 || !s.Buckets[0].Start.Equal(t0) || s.BucketSeconds != 60 {
		t.Fatalf("buckets %+v", s.Buckets)
	}
	b0, b1, b2 := s.Buckets[0], s.Buckets[1], s.Buckets[2]
	if b0.Searches != 3 || b0.Confident != 1 || b0.Ambiguous != 1 || b0.NoMatch != 1 || b0.Partial != 1 || b0.P50MS != 2 || b0.P95MS != 10 {
		t.Errorf("bucket 0 %+v", b0)
	}
	if b1.Searches != 0 || b1.P50MS != 0 || b2.Searches != 1 || b2.P95MS != 4 {
		t.Errorf("buckets 1, 2: %+v %+v", b1, b2)
	}
	if s.Total.Searches != 4 || s.Total.P50MS != 2 || s.Total.P95MS != 10 || s.PartialRate != 0.25 {
		t.Errorf("total %+v, partial rate %v", s.Total, s.PartialRate)
	}
	// The ring keeps the latest qualityKeep searches.
	for i := 0; i < qualityKeep+5; i++ {
		q.add(t0.Add(time.Duration(i)*time.Millisecond), time.Millisecond, resp(registry.Confident, false))
	}
	if s := q.series(t0, time.Hour, time.Hour); s.Total.Searches != qualityKeep {
		t.Errorf("after wrapping: %d searches", s.Total.Searches)
	}
}

func TestQualityRecorderConcurrent(t *testing.T) {
	q := newQualityRecorder()
	var wg sync.WaitGroup
	now := time.Now()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				q.add(now, time.Millisecond, &registry.SearchResponse{Resolution: registry.Confident})
				if i%50 == 0 {
					q.series(now, time.Second, time.Minute)
				}
			}
		}()
	}
	wg.Wait()
	if s := q.series(now, time.Second, time.Minute); s.Total.Searches != 2000 {
		t.Errorf("%d searches", s.Total.Searches)
	}
}

func TestConsoleQualityEndpoint(t *testing.T) {
	ts := startServer(t, serverSetup{quiet: true})
	for _, query := range []string{"echo a message", "restart the codex app server"} {
		if r := ts.call(t, "POST", "/v1/search", devKey, registry.SearchRequest{Query: query}); r.status != 200 {
			t.Fatal(r.status)
		}
	}
	if st, _, _ := consoleSearch(t, ts, devKey, ConsoleSearchRequest{Request: registry.SearchRequest{Query: "send a slack message"}}); st != 200 {
		t.Fatal(st)
	}
	var s QualitySeries
	ts.call(t, "GET", "/v1/console/quality?bucket=10s&span=10m", devKey, nil).json(t, &s)
	if len(s.Buckets) != 60 || s.Total.Searches != 3 || s.Total.Confident+s.Total.Ambiguous+s.Total.NoMatch != 3 || s.Total.P95MS <= 0 {
		t.Errorf("series: %d buckets, total %+v", len(s.Buckets), s.Total)
	}
	for _, q := range []string{"?bucket=0s", "?bucket=x", "?span=200h", "?bucket=1s&span=2h"} {
		if r := ts.call(t, "GET", "/v1/console/quality"+q, devKey, nil); r.status != 400 {
			t.Errorf("quality%s: %d", q, r.status)
		}
	}
}

func TestDiffLines(t *testing.T) {
	render := func(ls []DiffLine) string {
		var b strings.Builder
		for _, l := range ls {
			b.WriteString(l.Op + l.Text + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		a, b []string
		want string
	}{
		{nil, nil, ""},
		{[]string{"x"}, []string{"x"}, " x\n"},
		{[]string{"a", "b", "c"}, []string{"a", "c"}, " a\n-b\n c\n"},
		{[]string{"a", "c"}, []string{"a", "b", "c"}, " a\n+b\n c\n"},
		{[]string{"a", "b", "c"}, []string{"a", "B", "c"}, " a\n-b\n+B\n c\n"},
		{[]string{"a"}, []string{"b"}, "-a\n+b\n"},
		{[]string{"p", "x", "y", "s"}, []string{"p", "y", "x", "s"}, " p\n-x\n y\n+x\n s\n"},
	} {
		if got := render(diffLines(tc.a, tc.b)); got != tc.want {
			t.Errorf("diff %q %q:\n%s\nwant\n%s", tc.a, tc.b, got, tc.want)
		}
	}
	// Past the table bound the diff is coarse but still turns a into b.
	a, b := make([]string, 3000), make([]string, 3000)
	for i := range a {
		a[i], b[i] = fmt.Sprint("a", i), fmt.Sprint("b", i)
	}
	var back []string
	for _, l := range diffLines(a, b) {
		if l.Op != "-" {
			back = append(back, l.Text)
		}
	}
	if !slices.Equal(back, b) {
		t.Error("the coarse diff does not rebuild b")
	}
}

// memQuarantine is a QuarantineSource in memory.
type memQuarantine struct {
	mu    sync.Mutex
	items []QuarantineItem
	log   []string
}

func (m *memQuarantine) Quarantined(context.Context) ([]QuarantineItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.items), nil
}

func (m *memQuarantine) decide(verb, id, actor string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.items, func(it QuarantineItem) bool { return it.ResourceID == id })
	if i < 0 {
		return fmt.Errorf("%w: %s is not waiting", engine.ErrNotFound, id)
	}
	m.items = slices.Delete(m.items, i, i+1)
	m.log = append(m.log, verb+" "+id+" "+actor)
	return nil
}

func (m *memQuarantine) Approve(_ context.Context, id, actor string) error {
	return m.decide("approve", id, actor)
}

func (m *memQuarantine) Reject(_ context.Context, id, actor string) error {
	return m.decide("reject", id, actor)
}

func TestConsoleQuarantine(t *testing.T) {
	mq := &memQuarantine{items: []QuarantineItem{
		{ResourceID: "demo.echo", Upstream: "u", Reason: "changed", New: &QuarantinedTool{Description: "new"}},
		{ResourceID: hidden + ".create", Upstream: "u", Reason: "changed", New: &QuarantinedTool{Description: "new"}},
		{ResourceID: "gateway.brand_new", Upstream: "u", Reason: "new", New: &QuarantinedTool{Description: "new"}},
	}}
	ts := startServer(t, serverSetup{quiet: true, options: func(o *Options) { o.Quarantine = mq }})
	list := func(key string) []string {
		var out struct{ Items []QuarantineItem }
		ts.call(t, "GET", "/v1/quarantine", key, nil).json(t, &out)
		var ids []string
		for _, it := range out.Items {
			if it.Flags == nil {
				t.Errorf("%s: flags null", it.ResourceID)
			}
			ids = append(ids, it.ResourceID)
		}
		return ids
	}
	if got := list(adminKey); len(got) != 3 {
		t.Errorf("admin sees %q", got)
	}
	if got := list(devKey); !slices.Equal(got, []string{"demo.echo"}) {
		t.Errorf("dev sees %q", got)
	}
	if r := ts.call(t, "POST", "/v1/quarantine/approve", devKey, QuarantineDecision{ResourceID: "demo.echo"}); r.status != 403 {
		t.Errorf("approve with the dev key: %d", r.status)
	}
	if r := ts.call(t, "POST", "/v1/quarantine/reject", devKey, QuarantineDecision{ResourceID: "demo.echo"}); r.status != 403 {
		t.Errorf("reject with the dev key: %d", r.status)
	}
	if r := ts.call(t, "POST", "/v1/quarantine/approve", adminKey, QuarantineDecision{ResourceID: "demo.echo"}); r.status != 200 || !strings.Contains(string(r.body), `"approved"`) {
		t.Errorf("approve: %d %s", r.status, r.body)
	}
	if r := ts.call(t, "POST", "/v1/quarantine/reject", adminKey, QuarantineDecision{ResourceID: "gateway.brand_new"}); r.status != 200 || !strings.Contains(string(r.body), `"rejected"`) {
		t.Errorf("reject: %d %s", r.status, r.body)
	}
	for _, body := range []any{QuarantineDecision{ResourceID: "demo.echo"}, QuarantineDecision{}, `{"id":"demo.echo"}`} {
		want := 400
		if d, ok := body.(QuarantineDecision); ok && d.ResourceID != "" {
			want = 404 // decided already
		}
		if r := ts.call(t, "POST", "/v1/quarantine/approve", adminKey, body); r.status != want {
			t.Errorf("approve %v: %d, want %d", body, r.status, want)
		}
	}
	mq.mu.Lock()
	defer mq.mu.Unlock()
	if !slices.Equal(mq.log, []string{"approve demo.echo api:root@default", "reject gateway.brand_new api:root@default"}) {
		t.Errorf("decisions %q", mq.log)
	}
}
