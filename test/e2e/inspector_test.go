package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestInspectorInABrowser loads the event inspector in a real headless
// Chromium: it shows a dead event, replays it with the button, and shows
// the new attempt. HOOKGATE_SCREENSHOT=path saves the page as a PNG.
func TestInspectorInABrowser(t *testing.T) {
	ctx := newBrowser(t)
	var healthy atomic.Bool
	up := newRecorder(t, "", func(int) int {
		if healthy.Load() {
			return 200
		}
		return 503
	})
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\n    retry: {max_attempts: 1}\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
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
	startInspector(t, g.adminPort, inspectPort)

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

// newBrowser prepares a headless Chromium for one test. Names under
// example.test resolve to 127.0.0.1, so a page can come from another site
// than the inspector while everything stays on loopback.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is needed (apt-get install chromium; scripts/test.sh installs it as root)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP *.example.test 127.0.0.1"),
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

// startInspector runs `hookgate inspect` for the gateway's admin endpoint
// on 127.0.0.1:port and returns once it answers.
func startInspector(t *testing.T, adminPort, port int, args ...string) {
	t.Helper()
	args = append([]string{"inspect", "--address", fmt.Sprintf("127.0.0.1:%d", adminPort), "--listen", fmt.Sprintf("127.0.0.1:%d", port)}, args...)
	cmd := exec.Command(binary, args...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("inspector log:\n%s", log.String())
		}
	})
	waitFor(t, "the inspector to listen", 10*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("hookgate inspect exited:\n%s", log.String())
		default:
		}
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
}

// deliveredGateway runs a gateway whose upstream takes everything and
// returns it with n GitHub events, each delivered once.
func deliveredGateway(t *testing.T, n int, caddyfile func(dir string, port, adminPort int, passthrough string) string) (*gateway, *recorder, []string) {
	t.Helper()
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\n    retry: {max_attempts: 1}\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	if caddyfile != nil {
		writeFile(t, filepath.Join(dir, "Caddyfile"), caddyfile(dir, port, admin, passthrough.addr))
	}
	g := startGateway(t, dir, port, admin)
	var ids []string
	for id := range g.ackGitHubEvents(t, "inspect", n) {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	waitFor(t, "every event delivered", 20*time.Second, func() bool {
		for _, id := range ids {
			_, e := g.admin("GET", "/hookgate/events/"+id)
			if e["status"] != "delivered" {
				return false
			}
		}
		return true
	})
	return g, up, ids
}

// attempts returns how many attempts the store holds for the event's one
// delivery, and that delivery's state.
func (g *gateway) attempts(id string) (int, string) {
	g.t.Helper()
	_, e := g.admin("GET", "/hookgate/events/"+id)
	ds, _ := e["deliveries"].([]any)
	if len(ds) != 1 {
		g.t.Fatalf("event %s has deliveries %v", id, e["deliveries"])
	}
	d := ds[0].(map[string]any)
	n, _ := d["attempts"].(float64)
	state, _ := d["state"].(string)
	return int(n), state
}

// checkNotReplayed checks that none of ids was delivered again: one
// attempt each in the store and at the upstream. It then replays sentinel
// through the admin endpoint and waits for it, so a replay made before,
// had there been one, would have reached the upstream by then too.
func checkNotReplayed(t *testing.T, g *gateway, up *recorder, ids []string, sentinel string) {
	t.Helper()
	for _, id := range ids {
		if n, state := g.attempts(id); n != 1 || state != "delivered" {
			t.Errorf("event %s: %d attempts, %s; want 1, delivered (a refused call changed it)", id, n, state)
		}
	}
	before, seen := len(up.all()), len(up.byEvent()[sentinel])
	if status, out := g.admin("POST", "/hookgate/events/"+sentinel+"/replay"); status != 200 {
		t.Fatalf("replaying the sentinel: %d %v", status, out)
	}
	waitFor(t, "the sentinel's replay", 20*time.Second, func() bool { return len(up.byEvent()[sentinel]) > seen })
	time.Sleep(300 * time.Millisecond)
	if got := len(up.all()); got != before+1 {
		t.Errorf("the upstream got %d requests after the refused calls, want only the sentinel's replay", got-before)
	}
	for _, id := range ids {
		if n := len(up.byEvent()[id]); n != 1 {
			t.Errorf("the upstream got event %s %d times, want once", id, n)
		}
	}
}

// call sends one request to base with the given Host, Origin and headers.
func call(t *testing.T, method, base, path, host string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// TestInspectorRefusesCrossSiteCalls sends what a hostile web page can make
// a browser send to the inspector: simple cross-site POSTs (text/plain, no
// custom header) to the replay endpoints, a preflight, and reads under a
// foreign Host, which is what DNS rebinding produces. Each gets 403, reads
// nothing and replays nothing; the page's own calls, with its header, work.
func TestInspectorRefusesCrossSiteCalls(t *testing.T) {
	g, up, ids := deliveredGateway(t, 3, nil)
	port := freePort(t)
	startInspector(t, g.adminPort, port, "--allow-host", "inspect.example.test")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	own := fmt.Sprintf("127.0.0.1:%d", port)
	rebound := fmt.Sprintf("rebound.evil.example:%d", port)
	const evil = "https://evil.example"
	simple := map[string]string{"Origin": evil, "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
	refused := []struct {
		name, method, path, host string
		header                   map[string]string
	}{
		{"cross-site simple POST, bulk replay", "POST", "/hookgate/replay?status=delivered", "", simple},
		{"cross-site simple POST, one event", "POST", "/hookgate/events/" + ids[0] + "/replay", "", simple},
		{"cross-site form POST", "POST", "/hookgate/replay?status=delivered", "", map[string]string{"Origin": evil, "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Mode": "navigate"}},
		{"cross-site preflight", "OPTIONS", "/hookgate/replay?status=delivered", "", map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-hookgate-inspector"}},
		{"cross-site POST with the header", "POST", "/hookgate/replay?status=delivered", "", map[string]string{"Origin": evil, "X-Hookgate-Inspector": "1"}},
		{"same-origin POST without the header", "POST", "/hookgate/replay?status=delivered", "", map[string]string{"Origin": "http://" + own}},
		{"cross-site read", "GET", "/hookgate/events?limit=50", "", map[string]string{"Origin": evil}},
		{"foreign Host, event list", "GET", "/hookgate/events?limit=50", rebound, nil},
		{"foreign Host, one event", "GET", "/hookgate/events/" + ids[0], rebound, nil},
		{"foreign Host, the page", "GET", "/hookgate/ui/", rebound, nil},
		{"foreign Host, bulk replay with the header", "POST", "/hookgate/replay?status=delivered", rebound, map[string]string{"Origin": "http://" + rebound, "X-Hookgate-Inspector": "1"}},
	}
	for _, c := range refused {
		status, hdr, body := call(t, c.method, base, c.path, c.host, c.header)
		if status != 403 {
			t.Errorf("%s: %d, want 403: %s", c.name, status, body)
		}
		if strings.Contains(body, "opened") || strings.Contains(body, ids[0]) {
			t.Errorf("%s: the answer shows stored events: %s", c.name, body)
		}
		for k := range hdr {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: the answer grants %s: %s", c.name, k, hdr.Get(k))
			}
		}
	}
	checkNotReplayed(t, g, up, ids[1:], ids[0])

	// The page's own calls: the same bulk replay, same-origin with the
	// header, under each loopback name and under an allowed name.
	for _, c := range []struct{ host, origin string }{
		{"", "http://" + own},
		{fmt.Sprintf("localhost:%d", port), fmt.Sprintf("http://localhost:%d", port)},
		{"inspect.example.test", "https://inspect.example.test"},
	} {
		status, _, body := call(t, "GET", base, "/hookgate/events?limit=50", c.host, map[string]string{"Origin": c.origin, "Sec-Fetch-Site": "same-origin"})
		if status != 200 || !strings.Contains(body, ids[1]) {
			t.Errorf("reading events under %s: %d %s", c.origin, status, body)
		}
	}
	before := len(up.all())
	status, _, body := call(t, "POST", base, "/hookgate/replay?status=delivered", "", map[string]string{"Origin": "http://" + own, "X-Hookgate-Inspector": "1", "Sec-Fetch-Site": "same-origin"})
	if status != 200 || !strings.Contains(body, `"replayed": 3`) {
		t.Fatalf("same-origin bulk replay with the header: %d %s", status, body)
	}
	waitFor(t, "the bulk replay", 20*time.Second, func() bool { return len(up.all()) == before+3 })
}

// attackPage is what a hostile site serves: it tries the inspector's
// replay endpoints with every request a page can make without the
// inspector's consent, then reads the event list, and puts what each
// attempt saw in the page.
const attackPage = `<!doctype html>
<title>attack</title>
<iframe name="sink"></iframe>
<form id="csrf" method="POST" enctype="text/plain" target="sink" action="%[1]s/hookgate/replay?status=delivered"><input name="x" value="y"></form>
<pre id="out"></pre>
<script>
const t = %[1]q;
const outcome = (p) => p.then((r) => "answered " + r.type + " " + r.status, (e) => "failed " + e.name);
Promise.all([
  outcome(fetch(t + "/hookgate/replay?status=delivered", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: "x"})),
  outcome(fetch(t + "/hookgate/events/%[2]s/replay", {method: "POST", mode: "no-cors", body: "x"})),
  outcome(fetch(t + "/hookgate/replay?status=delivered", {method: "POST", headers: {"X-Hookgate-Inspector": "1"}})),
  fetch(t + "/hookgate/events?limit=50").then((r) => r.text(), (e) => "failed " + e.name),
]).then((results) => {
  document.querySelector("iframe").addEventListener("load", () => {
    document.getElementById("out").textContent = results.join("\n");
    document.title = "done";
  });
  document.getElementById("csrf").submit();
});
</script>`

// TestInspectorCrossSitePageInABrowser opens a hostile page from another
// site in headless Chromium while the inspector runs: its form POST,
// no-cors fetches, preflighted fetch and read replay nothing and read
// nothing.
func TestInspectorCrossSitePageInABrowser(t *testing.T) {
	ctx := newBrowser(t)
	g, up, ids := deliveredGateway(t, 3, nil)
	port := freePort(t)
	startInspector(t, g.adminPort, port)
	var attack atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attack.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, attackPage, fmt.Sprintf("http://127.0.0.1:%d", port), ids[0])
	}))
	defer evil.Close()
	_, evilPort, _ := net.SplitHostPort(strings.TrimPrefix(evil.URL, "http://"))

	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("http://attacker.example.test:%s/", evilPort)),
		chromedp.WaitVisible(chromedp.CSS("#out:not(:empty)")),
	)
	if err != nil {
		t.Fatalf("running the attack page: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#out")))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("what the attack page saw:\n%s", out)
	if attack.Load() == 0 {
		t.Fatal("the attack page was not served")
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "failed") {
		t.Errorf("the preflighted fetch with the inspector's header got through: %q", out)
	}
	if strings.Contains(out, ids[0]) || strings.Contains(out, "opened") {
		t.Errorf("the attack page read stored events:\n%s", out)
	}
	checkNotReplayed(t, g, up, ids[1:], ids[0])
}

// siteCaddyfile is the gateway's Caddyfile plus the inspector's site as
// docs/security.md documents it: basic_auth, then reverse_proxy to
// `hookgate inspect`. Only the address differs (plain HTTP on a test port).
const siteCaddyfile = `{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
}
:%d {
	webhook_gateway ./routes.yaml {
		storage ./data/hookgate.db
	}
	reverse_proxy %s
}
http://inspect.example.test:%d {
	basic_auth {
		ops %s
	}
	reverse_proxy 127.0.0.1:%d
}
`

// TestInspectorBehindCaddyBasicAuth runs the inspector behind a Caddy site
// with basic_auth, as docs/security.md describes for teams that reach it
// over the network: no password, no page and no replay; a hostile page's
// simple POST still refused with the password cached; and the page, in
// Chromium with the password, lists events and replays one.
func TestInspectorBehindCaddyBasicAuth(t *testing.T) {
	ctx := newBrowser(t)
	hash, err := exec.Command(binary, "hash-password", "--plaintext", "inspect-e2e-password").Output()
	if err != nil {
		t.Fatalf("hash-password: %v", err)
	}
	sitePort, inspectPort := freePort(t), freePort(t)
	g, up, ids := deliveredGateway(t, 3, func(dir string, port, adminPort int, passthrough string) string {
		return fmt.Sprintf(siteCaddyfile, adminPort, dir, port, passthrough, sitePort, strings.TrimSpace(string(hash)), inspectPort)
	})
	site := fmt.Sprintf("inspect.example.test:%d", sitePort)
	startInspector(t, g.adminPort, inspectPort, "--allow-host", site)
	base := fmt.Sprintf("http://127.0.0.1:%d", sitePort)
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:inspect-e2e-password"))
	same := map[string]string{"Origin": "http://" + site, "X-Hookgate-Inspector": "1", "Sec-Fetch-Site": "same-origin"}

	if status, _, body := call(t, "GET", base, "/hookgate/ui/", site, nil); status != 401 {
		t.Errorf("the page without the password: %d %s", status, body)
	}
	if status, _, body := call(t, "POST", base, "/hookgate/replay?status=delivered", site, same); status != 401 {
		t.Errorf("a replay without the password: %d %s", status, body)
	}
	cached := map[string]string{"Authorization": auth, "Origin": "https://evil.example", "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"}
	if status, _, body := call(t, "POST", base, "/hookgate/replay?status=delivered", site, cached); status != 403 {
		t.Errorf("a cross-site simple POST with the password cached: %d %s", status, body)
	}
	checkNotReplayed(t, g, up, ids[1:], ids[0])

	row := chromedp.CSS(fmt.Sprintf(`tr[data-id="%s"]`, ids[1]))
	err = chromedp.Do(ctx,
		// What a browser sends once the operator has typed the password.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}})
			return err
		}),
		chromedp.Navigate("http://"+site+"/hookgate/ui/"),
		chromedp.WaitVisible(row),
		chromedp.Click(row),
		chromedp.WaitVisible(chromedp.CSS("#deliveries li.ok")),
		chromedp.Click(chromedp.CSS("#replay")),
		chromedp.WaitVisible(chromedp.CSS("#deliveries li.ok:nth-child(2)")),
	)
	if err != nil {
		t.Fatalf("the inspector behind basic_auth: %v", err)
	}
	if n := len(up.byEvent()[ids[1]]); n != 2 {
		t.Fatalf("the upstream got the replayed event %d times, want 2", n)
	}
}

// TestInspectorDeepLinkAndAnswers: in a real browser, an event's own
// address (#/events/<id>) opens it without a click, each attempt shows
// what the upstream answered, and the time filter keeps a recent event.
func TestInspectorDeepLinkAndAnswers(t *testing.T) {
	ctx := newBrowser(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		w.Write([]byte(`{"error":"order 1234 is unknown to the backend"}`))
	}))
	defer refusing.Close()
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: %s\n    retry: {max_attempts: 1}\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", refusing.URL)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	var id string
	for k := range g.ackGitHubEvents(t, "deeplink", 2) {
		id = k
	}
	waitFor(t, "the event dead", 20*time.Second, func() bool {
		_, d := g.admin("GET", "/hookgate/events/"+id)
		return d["status"] == "dead"
	})
	inspectPort := freePort(t)
	startInspector(t, g.adminPort, inspectPort)
	page := fmt.Sprintf("http://127.0.0.1:%d/hookgate/ui/#/events/%s", inspectPort, id)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#deliveries pre.answer"))); err != nil {
		t.Fatalf("opening the event by its link: %v", err)
	}
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#detail-title")))
	if err != nil || !strings.Contains(title, id) {
		t.Fatalf("the linked event's title %q (%v)", title, err)
	}
	answer, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deliveries")))
	if err != nil || !strings.Contains(answer, "422") || !strings.Contains(answer, "order 1234 is unknown to the backend") {
		t.Fatalf("the attempt shows %q (%v)", answer, err)
	}
	row := chromedp.CSS(fmt.Sprintf(`tr[data-id="%s"]`, id))
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#since"), "1h"), chromedp.Click(chromedp.CSS("#filters button")), chromedp.WaitVisible(row)); err != nil {
		t.Fatalf("the last hour's events: %v", err)
	}
}

// TestInspectorShowsRefusedRequests: the inspector lists the refused
// requests with their reason, and a click shows the masked headers.
// HOOKGATE_SCREENSHOT_REJECTED=path saves the page as a PNG.
func TestInspectorShowsRefusedRequests(t *testing.T) {
	ctx := newBrowser(t)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	g.ackGitHubEvents(t, "fine", 2)
	forged := http.Header{"X-Hub-Signature-256": {"sha256=" + strings.Repeat("ef", 32)}, "X-Github-Event": {"push"}, "User-Agent": {"GitHub-Hookshot/e2e"}}
	for range 3 {
		if status, _, _ := g.post("/webhooks/github", forged, []byte(`{"forged":true}`)); status != 401 {
			t.Fatalf("forged: %d", status)
		}
	}
	inspectPort := freePort(t)
	startInspector(t, g.adminPort, inspectPort)
	page := fmt.Sprintf("http://127.0.0.1:%d/hookgate/ui/", inspectPort)
	row := chromedp.CSS(`#rejected tr[data-reason="invalid_signature"]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.Click(chromedp.CSS("#rejected-details summary")), chromedp.WaitVisible(row)); err != nil {
		t.Fatalf("the refused requests: %v", err)
	}
	count, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#rejected-count")))
	if err != nil || count != "(3 kept)" {
		t.Fatalf("the panel counts %q (%v)", count, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(row))
	if err != nil || !strings.Contains(text, "github") || !strings.Contains(text, "401") || !strings.Contains(text, "POST /webhooks/github") || !strings.Contains(text, "127.0.0.1") {
		t.Fatalf("the row reads %q (%v)", text, err)
	}
	headers := chromedp.CSS("#rejected tr.rejected-headers pre")
	if err := chromedp.Do(ctx, chromedp.Click(row), chromedp.WaitVisible(headers)); err != nil {
		t.Fatalf("opening the headers: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(headers))
	if err != nil || !strings.Contains(shown, "X-Github-Event: push") || !strings.Contains(shown, "X-Hub-Signature-256: [71 bytes]") || strings.Contains(shown, "efef") {
		t.Fatalf("the headers read %q (%v)", shown, err)
	}
	if path := os.Getenv("HOOKGATE_SCREENSHOT_REJECTED"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
