// Package e2e runs the real hookgate binary with a real Caddyfile on
// loopback, sends signed webhooks and watches a real upstream.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// binary is the hookgate binary built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	// This binary started again as a child process by a test.
	if os.Getenv("HOOKGATE_E2E_CHILD") == "sweeper" {
		fmt.Fprintln(os.Stderr, sweeperChild(os.Getenv("HOOKGATE_E2E_STORE")))
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "hookgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "hookgate")
	build := exec.Command("go", "build", "-o", binary, "./cmd/hookgate")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hookgate:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// gateway is one running hookgate process.
type gateway struct {
	t         *testing.T
	dir       string
	port      int
	adminPort int
	cmd       *exec.Cmd
	log       *syncBuffer
	exited    chan struct{}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

const caddyfileTemplate = `{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
	log {
		level DEBUG
	}
}
:%d {
	webhook_gateway ./routes.yaml {
		storage ./data/hookgate.db
	}
	reverse_proxy %s
}
`

// newGatewayDir writes a Caddyfile and routes.yaml into a fresh folder.
func newGatewayDir(t *testing.T, routes, passthrough string) (dir string, port, adminPort int) {
	t.Helper()
	dir = t.TempDir()
	port, adminPort = freePort(t), freePort(t)
	writeFile(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(caddyfileTemplate, adminPort, dir, port, passthrough))
	writeFile(t, filepath.Join(dir, "routes.yaml"), routes)
	return dir, port, adminPort
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startGateway(t *testing.T, dir string, port, adminPort int) *gateway {
	t.Helper()
	return startGatewayWith(t, dir, port, adminPort, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
}

// startGatewayWith starts the binary in dir with the given arguments and
// waits for its admin endpoint and its site on port.
func startGatewayWith(t *testing.T, dir string, port, adminPort int, args ...string) *gateway {
	t.Helper()
	g := &gateway{t: t, dir: dir, port: port, adminPort: adminPort, log: &syncBuffer{}, exited: make(chan struct{})}
	g.cmd = exec.Command(binary, args...)
	g.cmd.Dir = dir
	g.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		g.kill()
		if t.Failed() {
			t.Logf("gateway log:\n%s", g.log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/config/", adminPort))
		if err == nil {
			resp.Body.Close()
			if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				conn.Close()
				return g
			}
		}
		select {
		case <-g.exited:
			t.Fatalf("gateway exited at start:\n%s", g.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start:\n%s", g.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 ends the process the hard way, as a crash would.
func (g *gateway) kill9() {
	g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.exited
}

func (g *gateway) kill() {
	select {
	case <-g.exited:
		return
	default:
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(15 * time.Second):
		g.kill9()
	}
}

func (g *gateway) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", g.port, path)
}

// post sends a webhook and returns the status, headers and body.
func (g *gateway) post(path string, header http.Header, body []byte) (int, http.Header, string) {
	g.t.Helper()
	var resp *http.Response
	var err error
	// A connection error is retried once, as providers retry.
	for try := 0; try < 2; try++ {
		req, _ := http.NewRequest(http.MethodPost, g.url(path), bytes.NewReader(body))
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
	}
	if err != nil {
		g.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// load posts a Caddyfile to the admin endpoint, as `caddy reload` does.
func (g *gateway) load(caddyfile string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/load", g.adminPort), strings.NewReader(caddyfile))
	req.Header.Set("Content-Type", "text/caddyfile")
	// What `caddy reload --force` sends: routes.yaml may change while the Caddyfile does not.
	req.Header.Set("Cache-Control", "must-revalidate")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("admin load: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// The reload closes the old server's idle connections; reusing one
	// would fail the next request.
	http.DefaultClient.CloseIdleConnections()
	return resp.StatusCode, string(b)
}

// recorder is an upstream that records what it receives.
type recorder struct {
	mu       sync.Mutex
	requests []recorded
	respond  func(n int) int // status for the n-th request (1-based)
	srv      *http.Server
	addr     string
}

type recorded struct {
	Method, URI string
	Header      http.Header
	Body        []byte
	// Answered marks a request answered to a sender still waiting; Cut one
	// whose sender went away first: it was not a delivery.
	Answered, Cut bool
}

func newRecorder(t *testing.T, addr string, respond func(n int) int) *recorder {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{respond: respond, addr: l.Addr().String()}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, recorded{Method: req.Method, URI: req.RequestURI, Header: req.Header.Clone(), Body: body})
		n := len(r.requests)
		r.mu.Unlock()
		status := 200
		if r.respond != nil {
			status = r.respond(n)
		}
		w.WriteHeader(status)
		r.mu.Lock()
		if req.Context().Err() != nil {
			r.requests[n-1].Cut = true
		} else {
			r.requests[n-1].Answered = true
		}
		r.mu.Unlock()
	})}
	go r.srv.Serve(l)
	t.Cleanup(func() { r.srv.Shutdown(context.Background()) })
	return r
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.requests...)
}

// byEvent groups the requests answered to their sender by Hookgate-Event-Id.
func (r *recorder) byEvent() map[string][]recorded {
	out := map[string][]recorded{}
	for _, req := range r.all() {
		if !req.Answered {
			continue
		}
		id := req.Header.Get("Hookgate-Event-Id")
		out[id] = append(out[id], req)
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signer signs bodies the way a provider does.
type signer struct {
	scheme verify.SpecScheme
	secret string
}

func newSigner(t *testing.T, preset, secret string) signer {
	t.Helper()
	p, ok := verify.Lookup(preset)
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	s, err := verify.New(p.Spec, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	return signer{scheme: s, secret: secret}
}

func (s signer) sign(t *testing.T, body []byte, id string) http.Header {
	t.Helper()
	h, err := s.scheme.Sign(s.secret, verify.Message{Body: body, ID: id, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// ackGitHubEvents posts n signed GitHub events with delivery ids prefix-0…
// and returns their bodies by event id; every one must be ACKed.
func (g *gateway) ackGitHubEvents(t *testing.T, prefix string, n int) map[string][]byte {
	t.Helper()
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	acked := map[string][]byte{}
	for i := range n {
		body := []byte(fmt.Sprintf(`{"action":"opened","number":%d,"delivery":%q}`, i, prefix))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprintf("%s-%d", prefix, i))
		status, hdr, resp := g.post("/webhooks/github", h, body)
		if status != 200 {
			t.Fatalf("event %d: %d %q", i, status, resp)
		}
		acked[hdr.Get("Hookgate-Event-Id")] = body
	}
	return acked
}

// envCount reads a positive count from the environment variable name, or
// returns def when it is not set.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// envSeed reads a random seed from the environment variable name, or
// picks one; the test logs it, so a run's random choices can be repeated.
func envSeed(t *testing.T, name string) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		seed := rand.Uint64()
		t.Logf("%s=%d", name, seed)
		return seed
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	t.Logf("%s=%d", name, seed)
	return seed
}
