package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEdgeFuzz sends random unsigned and forged requests (paths, methods,
// encodings, header sets, content types) at a gateway in front of a
// passthrough backend. Invariants: nothing reaches the upstream (nothing is
// verified), nothing whose path a backend could read as a webhook path
// reaches the backend, and the gateway never answers 500.
// HOOKGATE_EDGE_FUZZ_N sets the number of requests (default 600) and
// HOOKGATE_EDGE_FUZZ_SEED replays a run.
func TestEdgeFuzz(t *testing.T) {
	n := 600
	if v, err := strconv.Atoi(os.Getenv("HOOKGATE_EDGE_FUZZ_N")); err == nil && v > 0 {
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("HOOKGATE_EDGE_FUZZ_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (HOOKGATE_EDGE_FUZZ_SEED=%d replays this run), %d requests", seed, seed, n)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	startGateway(t, dir, port, admin)

	statuses := map[int]int{}
	for i := range n {
		method := pick(rng, []string{"POST", "POST", "POST", "PUT", "PATCH", "GET", "HEAD", "DELETE", "OPTIONS", "post", "PoSt"})
		target := fuzzTarget(rng)
		header, body := fuzzHeadersAndBody(rng)
		status, err := sendRaw(port, method, target, header, body)
		if err != nil {
			continue // a request line the server refused outright
		}
		statuses[status]++
		// 501 is Go's HTTP server refusing a transfer encoding before any
		// handler runs; 502 is the passthrough's backend; 503 is backpressure.
		if status >= 500 && status != http.StatusNotImplemented && status != http.StatusServiceUnavailable && status != http.StatusBadGateway {
			t.Errorf("request %d: %s %q answered %d", i, method, target, status)
		}
	}
	if got := up.all(); len(got) != 0 {
		for _, r := range got {
			t.Errorf("reached the upstream without a valid signature: %s %s", r.Method, r.URI)
		}
	}
	for _, r := range passthrough.all() {
		if webhookPath(r.URI) {
			t.Errorf("reached the backend unverified: %s %s", r.Method, r.URI)
		}
	}
	t.Logf("statuses %v; %d passed through to the backend", statuses, len(passthrough.all()))
	if len(passthrough.all()) == 0 {
		t.Errorf("nothing passed through: the run did not exercise the passthrough")
	}
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// fuzzTarget builds a request target: mostly a spelling of a source's path
// or of the claimed prefix, sometimes an ordinary path.
func fuzzTarget(rng *rand.Rand) string {
	bases := []string{"/webhooks/github", "/webhooks/stripe", "/webhooks/svix", "/webhooks/standard", "/webhooks/unknown", "/webhooks", "/webhooks/", "/api/orders", "/", "/webhooksx/github", "/static/app.js"}
	p := pick(rng, bases)
	for range rng.IntN(4) {
		switch rng.IntN(12) {
		case 0: // flip the case of letters
			b := []byte(p)
			for j := range b {
				if rng.IntN(3) == 0 && b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 32
				}
			}
			p = string(b)
		case 1:
			p = strings.Replace(p, "/", "//", 1+rng.IntN(2))
		case 2:
			p += "/"
		case 3:
			p += ";" + pick(rng, []string{"x", "jsessionid=1", "", "a=b"})
		case 4: // percent-encode a character, once or twice
			if len(p) > 1 {
				j := 1 + rng.IntN(len(p)-1)
				enc := fmt.Sprintf("%%%02X", p[j])
				if rng.IntN(2) == 0 {
					enc = strings.Replace(enc, "%", "%25", 1)
				}
				p = p[:j] + enc + p[j+1:]
			}
		case 5:
			p = strings.Replace(p, "/webhooks/", pick(rng, []string{"/webhooks/./", "/webhooks/x/../", "/./webhooks/", "/x/../webhooks/"}), 1)
		case 6:
			p = strings.Replace(p, "/", `\`, 1+rng.IntN(2))
			if !strings.HasPrefix(p, "/") {
				p = "/" + p
			}
		case 7:
			p += "?" + pick(rng, []string{"x=1", "token=abc", "a=%2F", ""})
		case 8:
			p += "#frag"
		case 9:
			p += pick(rng, []string{".", "/.", "%2e", "%20", "..;/"})
		case 10:
			p = "http://127.0.0.1" + p
		case 11:
			p = strings.Replace(p, "webhooks", pick(rng, []string{"WebHooks", "webhooks%2F", "webhook%73"}), 1)
		}
	}
	return p
}

func fuzzHeadersAndBody(rng *rand.Rand) (map[string]string, string) {
	h := map[string]string{}
	if rng.IntN(5) > 0 {
		h["Content-Type"] = pick(rng, []string{"application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", "application/json; charset=utf-16", ""})
	}
	forged := []struct{ name, value string }{
		{"X-Hub-Signature-256", "sha256=" + strings.Repeat("ab", 32)},
		{"X-GitHub-Delivery", "fuzz-" + strconv.Itoa(rng.IntN(1e9))},
		{"Stripe-Signature", "t=" + strconv.FormatInt(time.Now().Unix(), 10) + ",v1=" + strings.Repeat("cd", 32)},
		{"Webhook-Id", "msg_fuzz"}, {"Webhook-Timestamp", strconv.FormatInt(time.Now().Unix(), 10)},
		{"Webhook-Signature", "v1,Zm9yZ2Vk"}, {"Svix-Signature", "v1,Zm9yZ2Vk"},
		{"X-Forwarded-For", "6.6.6.6"}, {"Content-Encoding", "gzip"},
		{"X-HTTP-Method-Override", "POST"}, {"Expect", "100-continue"},
	}
	for _, f := range forged {
		if rng.IntN(3) == 0 {
			h[f.name] = f.value
		}
	}
	if rng.IntN(12) == 0 {
		h["Transfer-Encoding"] = pick(rng, []string{"identity", "chunked, identity"})
	}
	body := pick(rng, []string{`{"id":"evt_fuzz","type":"payment_intent.succeeded"}`, `{"zen":"fuzz"}`, `a=1&b=2`, ``, `{"id":1e999}`, strings.Repeat("x", rng.IntN(2048))})
	return h, body
}

// sendRaw writes one request as given and reads the status.
func sendRaw(port int, method, target string, header map[string]string, body string) (int, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n", method, target, port)
	if _, chunked := header["Transfer-Encoding"]; !chunked {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n" + body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return 0, err
	}
	br := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode >= 200 {
			return resp.StatusCode, nil
		}
	}
}

// webhookPath is the test's own, deliberately paranoid reading of a
// request URI as a backend might route it: any decoding, case, slashes,
// dot segments or parameters that turn it into /webhooks or a path under
// it.
func webhookPath(uri string) bool {
	p := uri
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		p = u.EscapedPath()
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	for range 4 {
		if d, err := url.PathUnescape(p); err == nil {
			p = d
		}
	}
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	p = path.Clean("/" + strings.Join(segs, "/"))
	return p == "/webhooks" || strings.HasPrefix(p, "/webhooks/")
}
