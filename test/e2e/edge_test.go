package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawRequest sends one request exactly as written, request target
// included, and returns the status code.
func rawRequest(t *testing.T, port int, method, target string, header map[string]string, body string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Length: %d\r\n", method, target, port, len(body))
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n" + body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPathVariantsNeverReachTheBackend sends unsigned requests to every
// spelling of a source's path that a backend might route to its webhook
// handler, and to unknown paths under the claimed prefix: none may reach the
// handler behind the gateway, and none may be delivered.
func TestPathVariantsNeverReachTheBackend(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	g := startGateway(t, dir, port, admin)
	body := `{"zen":"unsigned"}`
	json := map[string]string{"Content-Type": "application/json"}

	variants := []string{
		"/webhooks/github", "/webhooks/github/", "/WEBHOOKS/github", "/webhooks//github", "//webhooks/github",
		"/webhooks/github;x", "/webhooks;a=b/github", "/Webhooks/Github", "/webhooks/./github", "/webhooks/x/../github",
		"/webhooks/github/.", "/webhooks%2Fgithub", "/webhooks%2fgithub", "/webhooks%252Fgithub", "/webhooks/%67ithub",
		"/webhooks/GitHub%2F", `/webhooks\github`, "/webhooks/github?x=1", "/webhooks/github/?x=1", "/webhooks/github#frag",
		"http://127.0.0.1/webhooks/github", "/webhooks/github%3Bx",
	}
	for _, v := range variants {
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE", "GET", "OPTIONS"} {
			status := rawRequest(t, port, method, v, json, body)
			if status < 400 {
				t.Errorf("unsigned %s %s answered %d", method, v, status)
			}
		}
	}
	// Under the claimed prefix /webhooks/, a path that names no source is 404.
	for _, v := range []string{"/webhooks/unknown", "/webhooks/githubb", "/webhooks/", "/webhooks", "/WEBHOOKS/Stripe/x", "/webhooks/a/b/c"} {
		if status := rawRequest(t, port, "POST", v, json, body); status != 404 {
			t.Errorf("POST %s under the claimed prefix: %d, want 404", v, status)
		}
	}
	if got := passthrough.all(); len(got) != 0 {
		for _, r := range got {
			t.Errorf("reached the backend unverified: %s %s", r.Method, r.URI)
		}
	}

	// The variants are the source: a signed request to one is accepted and
	// delivered with the path it came with.
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	signed := []byte(`{"zen":"signed variant"}`)
	hdr := github.sign(t, signed, "")
	hdr.Set("X-GitHub-Delivery", "variant-delivery-1")
	status, resp, _ := g.post("/Webhooks//GitHub/", hdr, signed)
	if status != 200 {
		t.Fatalf("signed POST to a variant: %d", status)
	}
	id := resp.Get("Hookgate-Event-Id")
	waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
	if uri := up.byEvent()[id][0].URI; uri != "/Webhooks//GitHub/" {
		t.Errorf("delivered to %s", uri)
	}

	// Only paths outside every source and claim pass through.
	if status := rawRequest(t, port, "POST", "/api/orders", json, body); status != 200 {
		t.Fatalf("passthrough: %d", status)
	}
	if got := passthrough.all(); len(got) != 1 || got[0].URI != "/api/orders" {
		t.Fatalf("passthrough saw %+v", got)
	}
	if len(up.all()) != 1 {
		t.Fatalf("upstream got %d requests, want only the signed one", len(up.all()))
	}
}

// rssKB reads a process's resident set size, or its peak with "VmHWM".
func rssKB(t *testing.T, pid int, field string) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.Fields(rest)[0])
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestDeclaredLengthCostsNothing holds waves of connections that declare a
// 5 MiB body and send a few bytes: the gateway holds only what arrived.
func TestDeclaredLengthCostsNothing(t *testing.T) {
	up := newRecorder(t, "", nil)
	routes := strings.Replace(routesFor(up.addr), "max_body: 64KiB", "max_body: 5MiB", 1)
	dir, port, admin := newGatewayDir(t, routes, "127.0.0.1:1")
	g := startGateway(t, dir, port, admin)
	before := rssKB(t, g.cmd.Process.Pid, "VmRSS")
	const conns, waves = 200, 3
	for range waves {
		var open []net.Conn
		for range conns {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"zen\":", 5<<20)
			open = append(open, c)
		}
		time.Sleep(500 * time.Millisecond) // let the gateway start reading every one
		for _, c := range open {
			c.Close()
		}
	}
	peak := rssKB(t, g.cmd.Process.Pid, "VmHWM")
	t.Logf("RSS before %d MiB, peak %d MiB after %d waves of %d stalled 5 MiB declarations", before>>10, peak>>10, waves, conns)
	if grown := peak - before; grown > 150<<10 {
		t.Fatalf("peak RSS grew by %d MiB for %d stalled connections (each declared 5 MiB)", grown>>10, conns)
	}
	// The gateway still serves.
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	body := []byte(`{"zen":"after the waves"}`)
	hdr := github.sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "after-waves")
	if status, _, text := g.post("/webhooks/github", hdr, body); status != 200 {
		t.Fatalf("after the waves: %d %s", status, text)
	}
}

// TestForwardedHeadersFromTrustedProxiesOnly: a sender's own X-Forwarded-For
// never reaches the upstream, unless Caddy's trusted_proxies vouch for it.
func TestForwardedHeadersFromTrustedProxiesOnly(t *testing.T) {
	for _, c := range []struct {
		name, trusted, wantXFF string
	}{
		{"direct client", "10.0.0.0/8", "127.0.0.1"},
		{"behind a trusted proxy", "127.0.0.0/8", "6.6.6.6, 127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newRecorder(t, "", nil)
			dir, port, admin := newGatewayDir(t, routesFor(up.addr), "127.0.0.1:1")
			caddyfile := fmt.Sprintf(caddyfileTemplate, admin, dir, port, "127.0.0.1:1")
			caddyfile = strings.Replace(caddyfile, "\tlog {", "\tservers {\n\t\ttrusted_proxies static "+c.trusted+"\n\t}\n\tlog {", 1)
			writeFile(t, filepath.Join(dir, "Caddyfile"), caddyfile)
			g := startGateway(t, dir, port, admin)
			github := newSigner(t, "github", "gh-e2e-secret-0123456789")
			body := []byte(`{"zen":"forwarded"}`)
			hdr := github.sign(t, body, "")
			hdr.Set("X-GitHub-Delivery", "fwd-"+c.trusted)
			hdr.Set("X-Forwarded-For", "6.6.6.6")
			status, resp, text := g.post("/webhooks/github", hdr, body)
			if status != 200 {
				t.Fatalf("%d %s", status, text)
			}
			id := resp.Get("Hookgate-Event-Id")
			waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
			if got := up.byEvent()[id][0].Header.Get("X-Forwarded-For"); got != c.wantXFF {
				t.Fatalf("upstream saw X-Forwarded-For %q, want %q", got, c.wantXFF)
			}
		})
	}
}

// TestStoredRequestsShowNoCredentials: a source's own verification header
// and credential body fields are masked in the admin API.
func TestStoredRequestsShowNoCredentials(t *testing.T) {
	up := newRecorder(t, "", nil)
	routes := routesFor(up.addr) + `  pw:
    path: /webhooks/pw
    verify: {algorithm: token, header: X-Webhook-Password}
    secrets: ["pw-secret-0123456789"]
    default: [legacy]
  graph:
    path: /webhooks/graph
    provider: microsoft-graph
    secrets: ["client-state-0123456789"]
    default: [legacy]
`
	dir, port, admin := newGatewayDir(t, routes, "127.0.0.1:1")
	g := startGateway(t, dir, port, admin)
	status, resp, text := g.post("/webhooks/pw", http.Header{"X-Webhook-Password": {"pw-secret-0123456789"}}, []byte(`{"n":1}`))
	if status != 200 {
		t.Fatalf("token source: %d %s", status, text)
	}
	pwID := resp.Get("Hookgate-Event-Id")
	graphBody := []byte(`{"value":[{"subscriptionId":"sub-1","clientState":"client-state-0123456789","changeType":"created","resource":"users/1"}]}`)
	status, resp, text = g.post("/webhooks/graph", http.Header{}, graphBody)
	if status != 200 {
		t.Fatalf("graph source: %d %s", status, text)
	}
	graphID := resp.Get("Hookgate-Event-Id")
	for _, id := range []string{pwID, graphID} {
		code, raw := g.adminRaw("GET", "/hookgate/events/"+id)
		if code != 200 {
			t.Fatalf("event %s: %d %s", id, code, raw)
		}
		for _, secret := range []string{"pw-secret-0123456789", "client-state-0123456789"} {
			if strings.Contains(raw, secret) {
				t.Errorf("event %s shows %q:\n%s", id, secret, raw)
			}
		}
		if !strings.Contains(raw, "[masked]") {
			t.Errorf("event %s masks nothing:\n%s", id, raw)
		}
	}
	// The upstream still gets the request byte for byte.
	waitFor(t, "both deliveries", 20*time.Second, func() bool { return len(up.byEvent()[graphID]) == 1 && len(up.byEvent()[pwID]) == 1 })
	if got := up.byEvent()[graphID][0].Body; string(got) != string(graphBody) {
		t.Fatalf("graph body delivered as %s", got)
	}
}
