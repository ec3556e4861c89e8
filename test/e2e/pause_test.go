package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// upstreamState reads one upstream from GET /hookgate/upstreams.
func (g *gateway) upstreamState(name string) map[string]any {
	g.t.Helper()
	status, out := g.admin("GET", "/hookgate/upstreams")
	if status != 200 {
		g.t.Fatalf("GET /hookgate/upstreams: %d %v", status, out)
	}
	list, _ := out["upstreams"].([]any)
	for _, u := range list {
		if m, _ := u.(map[string]any); m["name"] == name {
			return m
		}
	}
	g.t.Fatalf("no upstream %s in %v", name, out)
	return nil
}

// metricValue finds a metric line with the given name whose labels include
// every one of labels, and returns its value as written.
func metricValue(t *testing.T, metrics, name string, labels ...string) (string, bool) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(metrics, -1) {
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(m[1], l)
		}
		if ok {
			return m[2], true
		}
	}
	return "", false
}

// TestPausedUpstreamWaitsAcrossRestartAndReload pauses one of two upstreams
// with the CLI on the real binary: events are ACKed and the other upstream
// is served while the paused one gets nothing, through a reload and a kill
// -9 and a new start; the metrics show the pause and the backlog by
// upstream; a resume through the admin API delivers everything that waited,
// once, with no attempt burned by the pause.
func TestPausedUpstreamWaitsAcrossRestartAndReload(t *testing.T) {
	legacy := newRecorder(t, "", nil)
	audit := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
upstreams:
  legacy:
    url: http://%s
    retry: {max_attempts: 2, max_age: 1s}
  audit:
    url: http://%s
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy, audit]
`, legacy.addr, audit.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)

	if out, err := g.cli("upstreams", "pause", "legacy"); err != nil || !strings.Contains(out, "legacy: paused") {
		t.Fatalf("hookgate upstreams pause legacy: %v\n%s", err, out)
	}
	if status, out := g.admin("POST", "/hookgate/upstreams/nosuch/pause"); status != 404 {
		t.Fatalf("pausing an undefined upstream: %d %v", status, out)
	}
	acked := g.ackGitHubEvents(t, "before", 3)
	waitFor(t, "the running upstream served", 20*time.Second, func() bool { return len(audit.byEvent()) == 3 })

	// A reload of the same configuration keeps the pause.
	caddyfile, err := os.ReadFile(filepath.Join(dir, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if status, body := g.load(string(caddyfile)); status != 200 {
		t.Fatalf("reload: %d %s", status, body)
	}
	for id, body := range g.ackGitHubEvents(t, "reloaded", 1) {
		acked[id] = body
	}
	waitFor(t, "the running upstream served after the reload", 20*time.Second, func() bool { return len(audit.byEvent()) == 4 })
	// The upstream has its requests before the gateway has recorded their
	// outcomes: wait for the records, which the metrics below count.
	waitFor(t, "the running upstream's deliveries recorded", 20*time.Second, func() bool {
		return g.upstreamState("audit")["pending"] == float64(0)
	})

	u := g.upstreamState("legacy")
	if u["state"] != "paused" || u["paused"] != true || u["pending"] != float64(4) {
		t.Fatalf("paused upstream: %v", u)
	}
	if a := g.upstreamState("audit"); a["state"] != "running" || a["paused"] != false {
		t.Fatalf("running upstream: %v", a)
	}
	_, metrics := g.adminRaw("GET", "/metrics")
	store := fmt.Sprintf(`store="%s"`, filepath.Join(dir, "data", "hookgate.db"))
	for _, m := range []struct{ name, upstream, want string }{
		{"caddy_hookgate_upstream_paused", "legacy", "1"},
		{"caddy_hookgate_upstream_paused", "audit", "0"},
		{"caddy_hookgate_upstream_pending_deliveries", "legacy", "4"},
		{"caddy_hookgate_upstream_pending_deliveries", "audit", "0"},
		{"caddy_hookgate_dead_deliveries", "legacy", "0"},
	} {
		got, ok := metricValue(t, metrics, m.name, store, `upstream="`+m.upstream+`"`)
		if !ok || got != m.want {
			t.Errorf("%s{upstream=%q} = %q (found %v), want %s", m.name, m.upstream, got, ok, m.want)
		}
	}
	if got, ok := metricValue(t, metrics, "caddy_hookgate_upstream_oldest_pending_seconds", `upstream="legacy"`); !ok || got == "0" {
		t.Errorf("oldest pending age of the paused upstream: %q (found %v)", got, ok)
	}

	// A crash and a new start: still paused, still ACKing.
	g.kill9()
	g = startGateway(t, dir, port, admin)
	for id, body := range g.ackGitHubEvents(t, "restarted", 2) {
		acked[id] = body
	}
	waitFor(t, "the running upstream served after the restart", 20*time.Second, func() bool { return len(audit.byEvent()) == 6 })
	out, err := g.cli("upstreams", "list", "--json")
	if err != nil {
		t.Fatalf("hookgate upstreams list: %v\n%s", err, out)
	}
	var listed struct {
		Upstreams []struct {
			Name    string `json:"name"`
			State   string `json:"state"`
			Pending int    `json:"pending"`
		} `json:"upstreams"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(listed.Upstreams) != 2 || listed.Upstreams[1].Name != "legacy" || listed.Upstreams[1].State != "paused" || listed.Upstreams[1].Pending != 6 {
		t.Fatalf("after the restart: %+v", listed.Upstreams)
	}
	// The pause outlasted max_age (1s): nothing went dead meanwhile.
	time.Sleep(1500 * time.Millisecond)
	if n := len(legacy.all()); n != 0 {
		t.Fatalf("a paused upstream received %d requests", n)
	}

	if status, out := g.admin("POST", "/hookgate/upstreams/legacy/resume"); status != 200 || out["state"] != "running" {
		t.Fatalf("resume: %d %v", status, out)
	}
	waitFor(t, "everything delivered after the resume", 10*time.Second, func() bool { return len(legacy.byEvent()) == len(acked) })
	time.Sleep(300 * time.Millisecond)
	for id, reqs := range legacy.byEvent() {
		if _, ok := acked[id]; !ok {
			t.Fatalf("delivered an event never ACKed: %s", id)
		}
		if len(reqs) != 1 || reqs[0].Header.Get("Hookgate-Attempt") != "1" {
			t.Fatalf("event %s: %d requests, attempt %q; want one first attempt", id, len(reqs), reqs[0].Header.Get("Hookgate-Attempt"))
		}
		if string(reqs[0].Body) != string(acked[id]) {
			t.Fatalf("event %s: body changed", id)
		}
	}
	if u := g.upstreamState("legacy"); u["state"] != "running" || u["dead"] != float64(0) {
		t.Fatalf("after the resume: %v", u)
	}
}

// TestInspectorPausesAndResumes clicks the inspector's Pause button in a
// real headless Chromium: the upstream shows as paused and receives nothing
// while events are ACKed; Resume delivers them.
func TestInspectorPausesAndResumes(t *testing.T) {
	ctx := newBrowser(t)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	inspectPort := freePort(t)
	startInspector(t, g.adminPort, inspectPort)

	page := fmt.Sprintf("http://127.0.0.1:%d/hookgate/ui/", inspectPort)
	row := `tr[data-upstream="legacy"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(row+" button.pause")),
		chromedp.Click(chromedp.CSS(row+" button.pause")),
		chromedp.WaitVisible(chromedp.CSS(row+" button.resume")),
	)
	if err != nil {
		t.Fatalf("pausing from the inspector: %v", err)
	}
	if state, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .badge"))); err != nil || state != "paused" {
		t.Fatalf("the paused upstream shows as %q (%v)", state, err)
	}
	if u := g.upstreamState("legacy"); u["paused"] != true {
		t.Fatalf("the button did not pause the upstream: %v", u)
	}
	acked := g.ackGitHubEvents(t, "ui-pause", 2)
	time.Sleep(500 * time.Millisecond)
	if n := len(up.all()); n != 0 {
		t.Fatalf("a paused upstream received %d requests", n)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+" button.resume")),
		chromedp.WaitVisible(chromedp.CSS(row+" button.pause")),
	)
	if err != nil {
		t.Fatalf("resuming from the inspector: %v", err)
	}
	waitFor(t, "delivered after the resume", 10*time.Second, func() bool { return len(up.byEvent()) == len(acked) })
	if state, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" .badge"))); err != nil || state != "running" {
		t.Fatalf("the resumed upstream shows as %q (%v)", state, err)
	}
}
