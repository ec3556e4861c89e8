package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInspectorInABrowser loads the event inspector in a real headless
// Chromium: it shows a dead event, replays it with the button, and shows
// the new attempt. HOOKGATE_SCREENSHOT=path saves the page as a PNG.
func TestInspectorInABrowser(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is needed (apt-get install chromium; .ci/run installs it)")
	}
	var healthy atomic.Bool
	up := newRecorder(t, "", func(int) int {
		if healthy.Load() {
			return 200
		}
		return 503
	})
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\n    retry: {max_attempts: 1}\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret")
	var id string
	for i := range 3 {
		if i == 2 {
			healthy.Store(false)
		} else {
			healthy.Store(true)
		}
		body := []byte(fmt.Sprintf(`{"action":"opened","number":%d}`, i))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("ui-", i))
		_, hdr, _ := g.post("/webhooks/github", h, body)
		id = hdr.Get("Hookgate-Event-Id")
		waitFor(t, "the attempt", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
	}
	waitFor(t, "the last event dead", 20*time.Second, func() bool {
		_, d := g.admin("GET", "/hookgate/events/"+id)
		return d["status"] == "dead"
	})

	inspectPort := freePort(t)
	inspect := exec.Command(binary, "inspect", "--address", fmt.Sprintf("127.0.0.1:%d", g.adminPort), "--listen", fmt.Sprintf("127.0.0.1:%d", inspectPort))
	inspect.Stdout, inspect.Stderr = os.Stderr, os.Stderr
	if err := inspect.Start(); err != nil {
		t.Fatal(err)
	}
	defer inspect.Process.Kill()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	page := fmt.Sprintf("http://127.0.0.1:%d/hookgate/ui/", inspectPort)
	row := chromedp.CSS(fmt.Sprintf(`tr[data-id="%s"]`, id))
	healthy.Store(true)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(row)); err != nil {
		t.Fatalf("loading the inspector: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(row+" .badge"))
	if err != nil || status != "dead" {
		t.Fatalf("the dead event shows as %q (%v)", status, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(row),
		chromedp.WaitVisible(chromedp.CSS("#detail")),
		chromedp.WaitVisible(chromedp.CSS("#deliveries li.bad")),
		chromedp.Click(chromedp.CSS("#replay")),
		chromedp.WaitVisible(chromedp.CSS("#deliveries li.ok")),
	)
	if err != nil {
		t.Fatalf("replaying from the inspector: %v", err)
	}
	history, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deliveries")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(history, "attempt 1 · 503") || !strings.Contains(history, "attempt 2 · 200") || !strings.Contains(history, "delivered") {
		t.Fatalf("attempt history after replay:\n%s", history)
	}
	if n := len(up.byEvent()[id]); n != 2 {
		t.Fatalf("the upstream saw %d attempts, want 2", n)
	}
	if path := os.Getenv("HOOKGATE_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(repoRoot(), path)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
