package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The HTTP/2 edge: an attacker opens many TLS connections and on each as
// many streams as the server allows, sending HEADERS and then nothing (or a
// byte now and then). The body budget is charged for bytes that arrived,
// and one client may hold only so many unfinished requests, so signed
// events from another client are still served, and the gateway's memory
// stays bounded.

const tlsCaddyfile = `{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
	local_certs
	skip_install_trust
	auto_https disable_redirects
}
https://127.0.0.1:%d {
	tls internal
	webhook_gateway ./routes.yaml {
		storage ./data/hookgate.db
	}
	reverse_proxy %s
}
`

func startTLSGateway(t *testing.T, routes, passthrough string) *gateway {
	t.Helper()
	dir := t.TempDir()
	port, admin := freePort(t), freePort(t)
	writeFile(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(tlsCaddyfile, admin, dir, port, passthrough))
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes)
	return startGateway(t, dir, port, admin)
}

// h2Flood is one attacking connection: a framer over TLS from a local
// address of its own.
type h2Flood struct {
	mu   sync.Mutex
	conn net.Conn
	fr   *http2.Framer
	// answered holds the streams the server answered or reset.
	answeredMu sync.Mutex
	answered   map[uint32]bool
	// onHeaders and onReset, when set, are told each response's status
	// and each reset stream.
	onHeaders func(id uint32, status int)
	onReset   func(id uint32)
	dec       *hpack.Decoder
}

func (f *h2Flood) answeredStreams() int {
	f.answeredMu.Lock()
	defer f.answeredMu.Unlock()
	return len(f.answered)
}

func dialH2(t *testing.T, from, addr string) *h2Flood {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, not h2", p)
	}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	f := &h2Flood{conn: conn, fr: http2.NewFramer(conn, bufio.NewReader(conn)), answered: map[uint32]bool{}, dec: hpack.NewDecoder(4096, nil)}
	f.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	go f.readLoop()
	return f
}

func (f *h2Flood) readLoop() {
	for {
		frame, err := f.fr.ReadFrame()
		if err != nil {
			return
		}
		switch fr := frame.(type) {
		case *http2.SettingsFrame:
			if !fr.IsAck() {
				f.mu.Lock()
				f.fr.WriteSettingsAck()
				f.mu.Unlock()
			}
		case *http2.PingFrame:
			if !fr.IsAck() {
				f.mu.Lock()
				f.fr.WritePing(true, fr.Data)
				f.mu.Unlock()
			}
		case *http2.RSTStreamFrame, *http2.HeadersFrame:
			f.answeredMu.Lock()
			f.answered[frame.Header().StreamID] = true
			f.answeredMu.Unlock()
			if h, ok := fr.(*http2.HeadersFrame); ok && f.onHeaders != nil {
				fields, _ := f.dec.DecodeFull(h.HeaderBlockFragment())
				for _, field := range fields {
					if field.Name == ":status" {
						status, _ := strconv.Atoi(field.Value)
						f.onHeaders(h.StreamID, status)
					}
				}
			}
			if r, ok := fr.(*http2.RSTStreamFrame); ok && f.onReset != nil {
				f.onReset(r.StreamID)
			}
		}
	}
}

// open starts streams 1, 3, … n with the request's HEADERS and no body.
func (f *h2Flood) open(n int, authority string) {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", authority}, {":path", "/webhooks/github"},
		{"content-type", "application/json"}} {
		enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range n {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block.Bytes(), EndHeaders: true})
	}
}

// trickle sends one byte on each of the first n streams.
func (f *h2Flood) trickle(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range n {
		f.fr.WriteData(uint32(2*i+1), false, []byte(" "))
	}
}

func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestHTTP2HeaderOnlyStreams: 70 TLS connections from one address, 250
// header-only streams each (some trickling a byte now and then), do not
// stop signed events from another client; the gateway's memory stays
// bounded. HOOKGATE_H2_FLOOD_CONNS sets the number of connections.
func TestHTTP2HeaderOnlyStreams(t *testing.T) {
	conns := envCount(t, "HOOKGATE_H2_FLOOD_CONNS", 70)
	up := newRecorder(t, "", nil)
	g := startTLSGateway(t, routesFor(up.addr), up.addr)
	addr := fmt.Sprintf("127.0.0.1:%d", g.port)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	probe := func(id string) (int, string) {
		body := []byte(`{"action":"opened","probe":"` + id + `"}`)
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/webhooks/github", bytes.NewReader(body))
		for k, v := range github.sign(t, body, "") {
			req.Header[k] = v
		}
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.Header.Get("Hookgate-Event-Id") == "" && resp.StatusCode == 200 {
			return resp.StatusCode, "answered by something other than the gateway"
		}
		return resp.StatusCode, resp.Proto
	}
	// The site's certificate is issued by Caddy's internal CA just after
	// start.
	var status int
	var proto string
	waitFor(t, "the site's certificate", 30*time.Second, func() bool {
		status, proto = probe("before")
		return status != 0
	})
	if status != 200 || proto != "HTTP/2.0" {
		t.Fatalf("probe before the flood: %d %s", status, proto)
	}
	pid := g.cmd.Process.Pid
	before := rssKiB(t, pid)

	var floods []*h2Flood
	for range conns {
		f := dialH2(t, "127.0.0.2", addr)
		defer f.conn.Close()
		f.open(250, addr)
		floods = append(floods, f)
	}
	// Every stream past the caps is answered at once and the rest wait;
	// the probes go out while they wait, well within the body timeout.
	answered := func() (n int) {
		for _, f := range floods {
			n += f.answeredStreams()
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); answered() < conns*250-128 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, f := range floods[:conns/2] {
		f.trickle(250)
	}
	peak := 0
	served := 0
	const probes = 20
	for i := range probes {
		status, info := probe(fmt.Sprintf("during-%d", i))
		if status == 200 {
			served++
		} else {
			t.Errorf("probe %d during the flood: %d %s", i, status, info)
		}
		peak = max(peak, rssKiB(t, pid))
		if i%5 == 4 {
			for _, f := range floods[:conns/2] {
				f.trickle(250)
			}
		}
	}
	t.Logf("%d connections x 250 header-only streams from 127.0.0.2, %d answered at once: %d of %d signed probes from 127.0.0.1 served; gateway RSS %d MiB before, %d MiB at most during",
		conns, answered(), served, probes, before/1024, peak/1024)
	// The unbounded intake held 850 MB here; what the caps let the
	// attacker keep is a few dozen streams.
	if peak > before+200*1024 {
		t.Errorf("RSS grew from %d MiB to %d MiB under the flood", before/1024, peak/1024)
	}
	waitFor(t, "the probes delivered", 20*time.Second, func() bool { return len(up.byEvent()) >= probes+1 })
}

// TestFirstByteTimeout: a request that declares a body and sends none is
// answered 408 once the first-byte timeout passes, long before the body
// timeout.
func TestFirstByteTimeout(t *testing.T) {
	up := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, "unfinished_bodies:\n  first_byte_timeout: 1s\n"+routesFor(up.addr), up.addr)
	startGateway(t, dir, port, admin)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body timeout: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not start") {
		t.Fatalf("%d %q, want 408 for a body that did not start", resp.StatusCode, b)
	}
}

// h2Client sends requests as raw HTTP/2 frames, path and headers as given,
// several streams at a time on one connection.
type h2Client struct {
	*h2Flood
	nextID   uint32
	statusMu sync.Mutex
	statuses map[uint32]chan int
}

func dialH2Client(t *testing.T, from, addr string) *h2Client {
	c := &h2Client{nextID: 1, statuses: map[uint32]chan int{}}
	c.h2Flood = dialH2(t, from, addr)
	c.h2Flood.onHeaders = c.answered
	c.h2Flood.onReset = func(id uint32) { c.answered(id, 0) }
	return c
}

func (c *h2Client) answered(id uint32, status int) {
	c.statusMu.Lock()
	ch := c.statuses[id]
	delete(c.statuses, id)
	c.statusMu.Unlock()
	if ch != nil {
		ch <- status
	}
}

// do sends one request, its body in two DATA frames, and returns the
// status (0 for a reset stream).
func (c *h2Client) do(authority, method, path string, header map[string]string, body string) int {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
	enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "https"})
	enc.WriteField(hpack.HeaderField{Name: ":authority", Value: authority})
	enc.WriteField(hpack.HeaderField{Name: ":path", Value: path})
	for k, v := range header {
		if k == "Transfer-Encoding" || k == "Expect" {
			continue // connection-specific: a protocol error in HTTP/2
		}
		enc.WriteField(hpack.HeaderField{Name: strings.ToLower(k), Value: v})
	}
	ch := make(chan int, 1)
	c.mu.Lock()
	id := c.nextID
	c.nextID += 2
	c.statusMu.Lock()
	c.statuses[id] = ch
	c.statusMu.Unlock()
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: body == ""})
	if body != "" {
		half := len(body) / 2
		c.fr.WriteData(id, false, []byte(body[:half]))
		c.fr.WriteData(id, true, []byte(body[half:]))
	}
	c.mu.Unlock()
	select {
	case s := <-ch:
		return s
	case <-time.After(20 * time.Second):
		return -1
	}
}

// TestEdgeFuzzHTTP2 is TestEdgeFuzz over HTTP/2: random spellings of the
// sources' paths, methods, header sets and bodies, sent as raw frames on a
// few connections at once (paths as given, never cleaned by a client),
// among them header-only streams and streams whose body trickles in, while
// signed probes from another address must be served. Nothing unverified
// reaches the upstream, nothing a backend could read as a webhook path
// reaches the backend, and the gateway never answers 500.
// HOOKGATE_EDGE_FUZZ_N and HOOKGATE_EDGE_FUZZ_SEED as for TestEdgeFuzz.
func TestEdgeFuzzHTTP2(t *testing.T) {
	n := envCount(t, "HOOKGATE_EDGE_FUZZ_N", 600)
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("HOOKGATE_EDGE_FUZZ_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (HOOKGATE_EDGE_FUZZ_SEED=%d replays this run), %d requests", seed, seed, n)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	g := startTLSGateway(t, routesFor(up.addr), passthrough.addr)
	addr := fmt.Sprintf("127.0.0.1:%d", g.port)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	waitFor(t, "the site's certificate", 30*time.Second, func() bool {
		resp, err := client.Get("https://" + addr + "/api/ready")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})

	// Header-only and trickling streams held open from the attacker's address.
	held := dialH2(t, "127.0.0.2", addr)
	defer held.conn.Close()
	held.open(40, addr)
	held.trickle(20)

	const workers = 4
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for w := range workers {
		c := dialH2Client(t, "127.0.0.2", addr)
		defer c.conn.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed+uint64(w), seed^0x9e3779b97f4a7c15))
			for i := w; i < n; i += workers {
				method := pick(rng, []string{"POST", "POST", "POST", "PUT", "PATCH", "GET", "HEAD", "DELETE", "OPTIONS"})
				target := fuzzTarget(rng)
				if !strings.HasPrefix(target, "/") {
					target = "/" + strings.TrimPrefix(target, "http://127.0.0.1")
				}
				header, body := fuzzHeadersAndBody(rng)
				status := c.do(addr, method, target, header, body)
				mu.Lock()
				statuses[status]++
				mu.Unlock()
				if status >= 500 && status != http.StatusServiceUnavailable && status != http.StatusBadGateway && status != http.StatusNotImplemented {
					t.Errorf("request %d: %s %q answered %d", i, method, target, status)
				}
				if status == -1 {
					t.Errorf("request %d: %s %q not answered", i, method, target)
				}
			}
		}()
	}
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	for i := range 10 {
		body := []byte(fmt.Sprintf(`{"action":"opened","probe":%d}`, i))
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/webhooks/github", bytes.NewReader(body))
		for k, v := range github.sign(t, body, "") {
			req.Header[k] = v
		}
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("h2-fuzz-probe-%d", i))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Hookgate-Event-Id") == "" {
			t.Errorf("probe %d during the fuzz: %d", i, resp.StatusCode)
		}
	}
	wg.Wait()
	waitFor(t, "the probes delivered", 20*time.Second, func() bool { return len(up.byEvent()) >= 10 })
	time.Sleep(300 * time.Millisecond)
	for _, r := range up.all() {
		if !strings.Contains(string(r.Body), `"probe"`) {
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
