package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
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
	f := &h2Flood{conn: conn, fr: http2.NewFramer(conn, bufio.NewReader(conn)), answered: map[uint32]bool{}}
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
