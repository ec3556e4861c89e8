package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

func routesFor(upstream string) string {
	return fmt.Sprintf(`
max_body: 64KiB
upstreams:
  legacy:
    url: http://%s
    timeout: 5s
    concurrency: 8
    retry:
      max_attempts: 50
      initial_interval: 50ms
      max_interval: 300ms
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: ["{env.HOOKGATE_E2E_UNSET}", "whsec_e2e_secret"]
    default: [legacy]
  github:
    path: /webhooks/github
    provider: github
    secrets: ["gh-e2e-secret-0123456789"]
    default: [legacy]
  svix:
    path: /webhooks/svix
    provider: svix
    secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
    default: [legacy]
  standard:
    path: /webhooks/standard
    provider: standard-webhooks
    secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
    default: [legacy]
`, upstream)
}

func stripeEvent(id string, pad int) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"payment_intent.succeeded","data":{"object":{"amount":%d,"note":"caf\u00e9 \"quoted\"","pad":%q}}}`+"\n",
		id, pad, strings.Repeat("x", pad)))
}

func TestGatewayEndToEnd(t *testing.T) {
	// The upstream fails the first two deliveries of evt_flaky, then accepts.
	var flakyMu sync.Mutex
	flakySeen := 0
	var up *recorder
	up = newRecorder(t, "", func(n int) int {
		reqs := up.all()
		if bytes.Contains(reqs[n-1].Body, []byte("evt_flaky")) {
			flakyMu.Lock()
			defer flakyMu.Unlock()
			flakySeen++
			if flakySeen <= 2 {
				return http.StatusServiceUnavailable
			}
		}
		return 200
	})
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	stripe := newSigner(t, "stripe", "whsec_e2e_secret")

	t.Run("signed events are acknowledged and delivered byte-exact", func(t *testing.T) {
		sent := map[string][]byte{}
		for i := range 5 {
			body := stripeEvent(fmt.Sprintf("evt_exact_%d", i), 100*i)
			status, hdr, resp := g.post("/webhooks/stripe?via=e2e", stripe.sign(t, body, ""), body)
			if status != 200 || hdr.Get("Hookgate-Event-Id") == "" {
				t.Fatalf("status %d %q", status, resp)
			}
			sent[hdr.Get("Hookgate-Event-Id")] = body
		}
		waitFor(t, "5 deliveries", 20*time.Second, func() bool {
			got := up.byEvent()
			for id := range sent {
				if len(got[id]) == 0 {
					return false
				}
			}
			return true
		})
		for id, reqs := range up.byEvent() {
			body, ok := sent[id]
			if !ok {
				continue
			}
			r := reqs[0]
			if !bytes.Equal(r.Body, body) {
				t.Errorf("event %s: body differs:\n got %q\nwant %q", id, r.Body, body)
			}
			if r.Method != "POST" || r.URI != "/webhooks/stripe?via=e2e" {
				t.Errorf("event %s: %s %s", id, r.Method, r.URI)
			}
			if r.Header.Get("Stripe-Signature") == "" || r.Header.Get("Idempotency-Key") != id ||
				r.Header.Get("Hookgate-Source") != "stripe" || r.Header.Get("Hookgate-Attempt") != "1" {
				t.Errorf("event %s: headers %v", id, r.Header)
			}
		}
	})

	t.Run("forged events are refused and never delivered", func(t *testing.T) {
		body := stripeEvent("evt_forged", 10)
		forged := newSigner(t, "stripe", "whsec_attacker").sign(t, body, "")
		if status, _, resp := g.post("/webhooks/stripe", forged, body); status != 401 {
			t.Fatalf("forged: %d %q", status, resp)
		}
		if status, _, _ := g.post("/webhooks/stripe", http.Header{}, body); status != 401 {
			t.Fatalf("unsigned: %d", status)
		}
		tampered := bytes.Replace(body, []byte("evt_forged"), []byte("evt_forgeD"), 1)
		if status, _, _ := g.post("/webhooks/stripe", stripe.sign(t, body, ""), tampered); status != 401 {
			t.Fatalf("tampered: %d", status)
		}
		big := stripeEvent("evt_big", 70<<10)
		if status, _, _ := g.post("/webhooks/stripe", stripe.sign(t, big, ""), big); status != 413 {
			t.Fatalf("oversized: %d", status)
		}
	})

	t.Run("25 concurrent copies are delivered once", func(t *testing.T) {
		body := stripeEvent("evt_copies", 50)
		ids := make(chan string, 25)
		var wg sync.WaitGroup
		for range 25 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each copy is signed afresh, as a provider's retry would be.
				status, hdr, _ := g.post("/webhooks/stripe", stripe.sign(t, body, ""), body)
				if status != 200 {
					t.Errorf("copy: status %d", status)
				}
				ids <- hdr.Get("Hookgate-Event-Id")
			}()
		}
		wg.Wait()
		close(ids)
		var id string
		for got := range ids {
			if id == "" {
				id = got
			}
			if got != id {
				t.Fatalf("copies answered with different event ids: %s, %s", id, got)
			}
		}
		waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) > 0 })
		time.Sleep(500 * time.Millisecond) // room for a second delivery, which must not come
		if n := len(up.byEvent()[id]); n != 1 {
			t.Fatalf("event delivered %d times", n)
		}
	})

	t.Run("an upstream failing twice then succeeding gets the event", func(t *testing.T) {
		body := stripeEvent("evt_flaky", 20)
		status, hdr, _ := g.post("/webhooks/stripe", stripe.sign(t, body, ""), body)
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		id := hdr.Get("Hookgate-Event-Id")
		waitFor(t, "three attempts", 30*time.Second, func() bool { return len(up.byEvent()[id]) >= 3 })
		reqs := up.byEvent()[id]
		for i, r := range reqs {
			if got := r.Header.Get("Hookgate-Attempt"); got != fmt.Sprint(i+1) {
				t.Errorf("attempt %d carried Hookgate-Attempt %q", i+1, got)
			}
			if !bytes.Equal(r.Body, body) {
				t.Errorf("attempt %d body differs", i+1)
			}
		}
		time.Sleep(500 * time.Millisecond)
		if n := len(up.byEvent()[id]); n != 3 {
			t.Fatalf("%d attempts, want exactly 3 (two failures, one success)", n)
		}
	})

	t.Run("other paths pass through to the next handler", func(t *testing.T) {
		resp, err := http.Post(g.url("/api/orders?x=1"), "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		got := passthrough.all()
		if len(got) != 1 || got[0].URI != "/api/orders?x=1" || string(got[0].Body) != "hello" || got[0].Header.Get("Hookgate-Event-Id") != "" {
			t.Fatalf("passthrough saw %+v", got)
		}
		// A source's path with a trailing slash is the source: verified, not passed on.
		resp, err = http.Post(g.url("/webhooks/stripe/"), "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(passthrough.all()); n != 1 || resp.StatusCode != 401 {
			t.Fatalf("unsigned POST to /webhooks/stripe/: %d, passed on %d times", resp.StatusCode, n-1)
		}
	})
}

func TestAckedEventsSurviveKill9(t *testing.T) {
	// Reserve the upstream's address, but start nothing there yet: the
	// upstream is down while events are acknowledged.
	upstreamAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(upstreamAddr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	acked := g.ackGitHubEvents(t, "delivery", 20)
	g.kill9()

	up := newRecorder(t, upstreamAddr, nil)
	g2 := startGateway(t, dir, port, admin)
	waitFor(t, "every acknowledged event", 30*time.Second, func() bool {
		got := up.byEvent()
		for id := range acked {
			if len(got[id]) == 0 {
				return false
			}
		}
		return true
	})
	for id, reqs := range up.byEvent() {
		if want, ok := acked[id]; ok && !bytes.Equal(reqs[0].Body, want) {
			t.Errorf("event %s: body changed across the crash", id)
		}
	}
	// A provider retry after the restart is still recognised.
	body := []byte(`{"action":"opened","number":0}`)
	h := github.sign(t, body, "")
	h.Set("X-GitHub-Delivery", "delivery-0")
	if status, hdr, _ := g2.post("/webhooks/github", h, body); status != 200 || hdr.Get("Hookgate-Duplicate") != "true" {
		t.Errorf("retry after restart not deduplicated: %d %v", status, hdr)
	}
}

func TestReload(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	send := func(delivery string) (int, string) {
		body := []byte(fmt.Sprintf(`{"delivery":%q}`, delivery))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", delivery)
		status, hdr, _ := g.post("/webhooks/github", h, body)
		return status, hdr.Get("Hookgate-Event-Id")
	}
	caddyfile := readFile(t, filepath.Join(dir, "Caddyfile"))

	// A broken routes.yaml is refused with file:line: reason, and the old
	// configuration keeps serving.
	writeFile(t, filepath.Join(dir, "routes.yaml"), routesFor(up.addr)+"    bogus_key: 1\n")
	status, resp := g.load(caddyfile)
	if status == 200 || !strings.Contains(resp, "routes.yaml:33:5: source standard: unknown key \\\"bogus_key\\\"") {
		t.Fatalf("broken reload: %d %s", status, resp)
	}
	if status, id := send("after-bad-reload"); status != 200 {
		t.Fatalf("old config stopped serving: %d", status)
	} else {
		waitFor(t, "delivery after the refused reload", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
	}

	// A good reload shares the open store: dedup state carries over and
	// delivery continues, now to the new upstream.
	up2 := newRecorder(t, "", nil)
	writeFile(t, filepath.Join(dir, "routes.yaml"), routesFor(up2.addr))
	if status, resp := g.load(caddyfile); status != 200 {
		t.Fatalf("good reload: %d %s", status, resp)
	}
	if status, _ := send("after-bad-reload"); status != 200 {
		t.Fatalf("duplicate after reload: %d", status)
	}
	status, id := send("after-good-reload")
	if status != 200 {
		t.Fatalf("after reload: %d", status)
	}
	waitFor(t, "delivery to the new upstream", 20*time.Second, func() bool { return len(up2.byEvent()[id]) == 1 })
	if n := len(up2.all()) + len(up.all()); n != 2 {
		t.Fatalf("%d deliveries in all, want 2 (the duplicate adds none)", n)
	}
	if strings.Contains(g.log.String(), "locked by another process") {
		t.Fatal("reload tried to open the store twice")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSendCommand(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	gatewayURL := fmt.Sprintf("http://127.0.0.1:%d", g.port)
	for _, source := range []string{"stripe", "github", "svix", "standard"} {
		out, err := exec.Command(binary, "send", "--routes", filepath.Join(dir, "routes.yaml"), "--source", source, "--gateway", gatewayURL).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "200 OK") {
			t.Fatalf("send %s: %v\n%s", source, err, out)
		}
	}
	waitFor(t, "four deliveries", 20*time.Second, func() bool { return len(up.all()) == 4 })
	out, err := exec.Command(binary, "send", "--provider", "github", "--secret", "not-the-secret", "--url", gatewayURL+"/webhooks/github").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "401") {
		t.Fatalf("send with a wrong secret: %v\n%s", err, out)
	}
}

// TestHostileRequests sends requests a webhook endpoint must survive: each
// gets a defined status, nothing is stored or delivered, the gateway stays up.
func TestHostileRequests(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	stripe := newSigner(t, "stripe", "whsec_e2e_secret")
	body := stripeEvent("evt_hostile", 10)
	good := stripe.sign(t, body, "")
	// Within max_body (64 KiB) but deeper than encoding/json's 10,000 levels:
	// Stripe's dedup key needs the parsed body.
	nestedBomb := []byte(`{"id":"evt_bomb","x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`)
	hugeNumber := []byte(`{"id":"evt_num","amount":1e999999}`)
	// A captured signature moved to another timestamp, and one an hour old.
	shifted := good.Clone()
	ts, _, _ := strings.Cut(strings.TrimPrefix(good.Get("Stripe-Signature"), "t="), ",")
	sec, _ := strconv.ParseInt(ts, 10, 64)
	shifted.Set("Stripe-Signature", strings.Replace(good.Get("Stripe-Signature"), "t="+ts, "t="+strconv.FormatInt(sec+1, 10), 1))
	stale, err := stripe.scheme.Sign(stripe.secret, verify.Message{Body: body, Time: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	raw := func(request string) string {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", g.port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write([]byte(request))
		reply, _ := io.ReadAll(conn)
		line, _, _ := strings.Cut(string(reply), "\r\n")
		return line
	}
	cases := []struct {
		name   string
		method string
		path   string
		header http.Header
		body   []byte
		want   int
	}{
		{"GET on a source", "GET", "/webhooks/stripe", good, nil, 405},
		{"PUT on a source", "PUT", "/webhooks/stripe", good, body, 405},
		{"signature of another source's secret", "POST", "/webhooks/stripe", newSigner(t, "github", "gh-e2e-secret-0123456789").sign(t, body, ""), body, 401},
		{"duplicated signature headers", "POST", "/webhooks/stripe", http.Header{"Stripe-Signature": {"t=1,v1=00", "t=2,v1=11"}}, body, 401},
		{"huge signature header (Caddy's header limit)", "POST", "/webhooks/stripe", http.Header{"Stripe-Signature": {strings.Repeat("v1=ab,", 10000)}}, body, 431},
		{"large signature header under the limit", "POST", "/webhooks/stripe", http.Header{"Stripe-Signature": {strings.Repeat("v1=ab,", 500)}}, body, 401},
		{"invalid UTF-8 body", "POST", "/webhooks/stripe", stripe.sign(t, []byte("\xff\xfe{\"id\":1}"), ""), []byte("\xff\xfe{\"id\":1}"), 400},
		{"deeply nested JSON", "POST", "/webhooks/stripe", stripe.sign(t, []byte(strings.Repeat("[", 100000)), ""), []byte(strings.Repeat("[", 100000)), 413},
		{"JSON nested past the parser's limit, signed", "POST", "/webhooks/stripe", stripe.sign(t, nestedBomb, ""), nestedBomb, 400},
		{"signature replayed with its timestamp shifted", "POST", "/webhooks/stripe", shifted, body, 401},
		{"signature an hour old, replayed", "POST", "/webhooks/stripe", stale, body, 401},
		{"no signature header", "POST", "/webhooks/stripe", http.Header{}, body, 401},
		{"Content-Length larger than max_body", "POST", "/webhooks/stripe", good, bytes.Repeat([]byte("a"), 70<<10), 413},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, g.url(c.path), bytes.NewReader(c.body))
		for k, v := range c.header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	// Path tricks: every spelling of a source's path is the source and
	// needs its signature; none passes through (TestPathVariantsNeverReachTheBackend
	// has the full list).
	for path, want := range map[string]string{
		"/webhooks/stripe/../github": "401", "/Webhooks/Stripe": "401", "/webhooks/stripe%2F": "401", "/webhooks/%73tripe": "401",
	} {
		if line := raw("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"); !strings.Contains(line, want) {
			t.Errorf("%s: %q, want %s", path, line, want)
		}
	}
	// A chunked body that never ends is cut off at max_body.
	endless := "POST /webhooks/stripe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nStripe-Signature: " + good.Get("Stripe-Signature") + "\r\nConnection: close\r\n\r\n"
	for range 20 {
		endless += "1000\r\n" + strings.Repeat("a", 4096) + "\r\n"
	}
	if line := raw(endless); !strings.Contains(line, "413") {
		t.Errorf("endless chunked body: %q", line)
	}
	// Nothing hostile was stored or delivered, and the gateway still works.
	if _, out := g.admin("GET", "/hookgate/events"); len(out["events"].([]any)) != 0 {
		t.Fatalf("hostile requests stored events: %v", out["events"])
	}
	if status, _, _ := g.post("/webhooks/stripe", good, body); status != 200 {
		t.Fatalf("the gateway stopped working: %d", status)
	}
	// A signed event with a number no float64 holds is the sender's
	// business: nothing here parses it, and the backend gets it byte-exact.
	status, hdr, _ := g.post("/webhooks/stripe", stripe.sign(t, hugeNumber, ""), hugeNumber)
	if status != 200 {
		t.Fatalf("signed event with a huge number: %d", status)
	}
	waitFor(t, "the huge-number event delivered", 10*time.Second, func() bool {
		got := up.byEvent()[hdr.Get("Hookgate-Event-Id")]
		return len(got) == 1 && bytes.Equal(got[0].Body, hugeNumber)
	})
	if got := passthrough.all(); len(got) != 0 {
		t.Errorf("%d path tricks passed through, want none", len(got))
	}
	// Memory stayed bounded through all of it.
	procStatus, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	var peakKB int
	for _, line := range strings.Split(string(procStatus), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peakKB, _ = strconv.Atoi(strings.Fields(rest)[0])
		}
	}
	if peakKB == 0 || peakKB > 512<<10 {
		t.Fatalf("peak RSS of the gateway after the hostile requests: %d KiB", peakKB)
	}
	t.Logf("%d hostile requests, each answered as defined; peak RSS %d MiB", len(cases)+6, peakKB>>10)
}
