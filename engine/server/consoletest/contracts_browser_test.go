package consoletest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// Upstreams and the funnel are served by other parts of capdex (the gateway's
// /v1/upstreams, the retrieval-quality /v1/stats). Until a daemon has them, their pages
// say "not available". This test answers those endpoints in the browser, in the shape of
// their contracts, to check that the pages render them; the rest goes to the real daemon.

var upstreamsJSON = `{"upstreams":[
 {"name":"files-mcp","transport":"stdio","state":"connected","last_sync":"2026-12-01T09:30:00Z","tools":14,"quarantined":2,"error":""},
 {"name":"github","transport":"streamable-http","state":"connecting","last_sync":"2026-12-01T09:12:00Z","tools":31,"quarantined":0,"error":""},
 {"name":"jira","transport":"sse","state":"down","last_sync":null,"tools":0,"quarantined":0,"error":"dial tcp 127.0.0.1:7777: connection refused"}]}`

var statsJSON = `{"funnel":[
 {"resource_id":"demo.echo","searched":120,"described":64,"ran":51,"succeeded":50},
 {"resource_id":"maintenance.codex.restart_app_server","searched":80,"described":30,"ran":12,"succeeded":9},
 {"resource_id":"notifications.slack.send_message","searched":45,"described":40,"ran":38,"succeeded":38}],
 "search_to_describe":0.54,"describe_to_run":0.75,"run_success":0.96,"clarification_rate":0.08}`

// answerContracts fulfils /v1/upstreams and /v1/stats with the contract-shaped answers,
// and /v1/console/whoami with the daemon's own answer where those features are on.
func answerContracts(t *testing.T, b *browser, base string) {
	t.Helper()
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: "*/v1/upstreams"}, {URLPattern: "*/v1/stats"}, {URLPattern: "*/v1/console/whoami"},
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	t.Cleanup(cancel)
	go func() {
		for ev, err := range paused {
			if err != nil || ctx.Err() != nil {
				return
			}
			body, status := "", int64(200)
			switch {
			case strings.HasSuffix(ev.Request.URL, "/v1/upstreams"):
				body = upstreamsJSON
			case strings.HasSuffix(ev.Request.URL, "/v1/stats"):
				body = statsJSON
			default:
				var err error
				body, status, err = whoamiWithFeatures(base, fmt.Sprint(ev.Request.Headers["Authorization"]))
				if err != nil {
					body, status = fmt.Sprintf(`{"error":{"code":"internal","message":%q}}`, err), 500
				}
			}
			chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
				RequestID: ev.RequestID, ResponseCode: status, Body: []byte(body),
				ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}},
			})
		}
	}()
}

func whoamiWithFeatures(base, auth string) (string, int64, error) {
	req, err := http.NewRequest("GET", base+"/v1/console/whoami", nil)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var w map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		return "", 0, err
	}
	if f, ok := w["features"].(map[string]any); ok {
		f["upstreams"], f["stats"] = true, true
	}
	b, err := json.Marshal(w)
	return string(b), int64(resp.StatusCode), err
}

func TestConsolePagesOfOtherContracts(t *testing.T) {
	exe := findChromium()
	if exe == "" {
		t.Skip("Chromium cannot be found (install Debian's chromium package, as .ci/run does, or set CAPDEX_CHROMIUM)")
	}
	base := startDaemon(t, nil)
	b := newBrowser(t, exe)
	answerContracts(t, b, base)
	b.signIn(base, readKey)
	b.do("open the upstreams",
		chromedp.Click(chromedp.CSS(`nav a[data-page="upstreams"]`)),
		wait(`document.querySelector("#upstreams") !== null`),
	)
	text := b.text("#upstreams")
	for _, want := range []string{"files-mcp", "connected", "connecting", "down", "connection refused", "streamable-http"} {
		if !strings.Contains(text, want) {
			t.Errorf("the upstreams table lacks %q: %s", want, text)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("#upstreams tr").length`); n != 4 {
		t.Errorf("%d rows", n)
	}
	b.shot("10-upstreams-contract")
	b.do("open quality",
		chromedp.Click(chromedp.CSS(`nav a[data-page="quality"]`)),
		wait(`document.querySelector("#funnel-table") !== null`),
	)
	if f := b.text("#funnel"); !strings.Contains(f, "54.0%") || !strings.Contains(f, "maintenance.codex.restart_app_server") || !strings.Contains(f, "96.0%") {
		t.Errorf("funnel: %s", f)
	}
	// Sorted by searches, the busiest first.
	if first := eval[string](b, `document.querySelector("#funnel-table tr:nth-child(2) a").textContent`); first != "demo.echo" {
		t.Errorf("first row %q", first)
	}
	b.shot("11-quality-funnel-contract")
	b.checkConsole()
}
