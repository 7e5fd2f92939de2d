package consoletest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// capdexServe builds capdex and starts `capdex serve` on 127.0.0.1:0 with a fresh data
// directory; it returns the URL and the admin key the daemon generated there.
func capdexServe(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "capdex")
	build := exec.Command("go", "build", "-o", bin, "github.com/capdex/capdex/cmd/capdex")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building capdex: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--home", home)
	cmd.Env = append(os.Environ(), "CAPDEX_CONFIG=", "CAPDEX_HOME=", "CAPDEX_ADDR=", "CAPDEX_REGISTRY_DIRS=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case first <- sc.Text():
			default:
			}
		}
	}()
	var url string
	select {
	case line := <-first:
		m := regexp.MustCompile(`serving (http://\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("capdex serve said %q", line)
		}
		url = m[1]
	case <-time.After(60 * time.Second):
		t.Fatal("capdex serve did not start within 60s")
	}
	key, err := os.ReadFile(filepath.Join(home, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	return url, strings.TrimSpace(string(key))
}

// TestConsoleOnCapdexServe signs in to the console of a `capdex serve` process with the
// admin key it generated, runs a search and verifies the audit chain.
func TestConsoleOnCapdexServe(t *testing.T) {
	exe := findChromium()
	if exe == "" {
		t.Skip("Chromium cannot be found (install Debian's chromium package, as .ci/run does, or set CAPDEX_CHROMIUM)")
	}
	if testing.Short() {
		t.Skip("builds capdex (-short)")
	}
	base, key := capdexServe(t)
	b := newBrowser(t, exe)
	b.signIn(base, key)
	if who := b.text("#who-name"); !strings.Contains(who, "admin@default (admin)") {
		t.Errorf("signed in as %q", who)
	}
	b.do("search",
		chromedp.Click(chromedp.CSS(`nav a[data-page="search"]`)),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "restart the codex app server"),
		chromedp.Click(chromedp.CSS("#search-go")),
		wait(`document.querySelector("#explain .match") !== null`),
	)
	if top := eval[string](b, `document.querySelector("#explain .match").dataset.id`); !strings.HasPrefix(top, "maintenance.codex") {
		t.Errorf("top match %q", top)
	}
	b.do("quarantine and upstreams say they are not here (or list)",
		chromedp.Click(chromedp.CSS(`nav a[data-page="quarantine"]`)),
		wait(`document.querySelector("#not-available, .quarantine-item, #quarantine-empty") !== null`),
	)
	b.do("verify the audit",
		chromedp.Click(chromedp.CSS(`nav a[data-page="audit"]`)),
		wait(`document.querySelector("#audit-table") !== null`),
		chromedp.Click(chromedp.CSS("#verify")),
		wait(`document.querySelector("#verify-ok, #verify-bad") !== null`),
	)
	if v := b.text("#verdict"); !strings.Contains(v, "Chain intact") {
		t.Errorf("verify: %q", v)
	}
	b.checkConsole()
}
