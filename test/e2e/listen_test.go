package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// cuttable is a TCP proxy whose connections a test can cut, refusing new
// ones until it is restored: a dropped network between a laptop and the
// gateway.
type cuttable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	down   bool
}

func newCuttable(t *testing.T, target string) *cuttable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cuttable{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			down := c.down
			if !down {
				c.conns = append(c.conns, in)
			}
			c.mu.Unlock()
			if down {
				in.Close()
				continue
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

// cut closes every connection and refuses new ones until restore.
func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = true
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func (c *cuttable) restore() {
	c.mu.Lock()
	c.down = false
	c.mu.Unlock()
}

// localApp is a developer's app: it verifies GitHub's signature with its
// own secret, as it would in production, and keeps what it was sent.
type localApp struct {
	mu       sync.Mutex
	got      map[string][]string // bodies by Hookgate-Event-Id, one per delivery
	forgery  int
	server   *httptest.Server
	received chan struct{}
}

func newLocalApp(t *testing.T, secret string) *localApp {
	p, _ := verify.Lookup("github")
	scheme, err := verify.New(p.Spec, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	app := &localApp{got: map[string][]string{}, received: make(chan struct{}, 100)}
	app.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := scheme.Verify(&verify.Request{Body: body, Header: r.Header, Method: r.Method, Now: time.Now()}); err != nil {
			app.mu.Lock()
			app.forgery++
			app.mu.Unlock()
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		app.mu.Lock()
		id := r.Header.Get("Hookgate-Event-Id")
		app.got[id] = append(app.got[id], string(body))
		app.mu.Unlock()
		app.received <- struct{}{}
	}))
	t.Cleanup(app.server.Close)
	return app
}

func (a *localApp) snapshot() (map[string][]string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for k, v := range a.got {
		out[k] = append([]string(nil), v...)
	}
	return out, a.forgery
}

const listenToken = "listen-token-e2e-0123456789abcdef"

// TestListenStreamsToALocalApp runs `hookgate listen` as its own process
// against a gateway reached through a network that drops: the stored event
// from before it started (--since), the new ones, and those sent while the
// stream was cut all reach the local app once each, signed again with the
// app's own secret.
func TestListenStreamsToALocalApp(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n    listen_tokens:\n      - token: \"{env.E2E_LISTEN_TOKEN}\"\n", up.addr)
	t.Setenv("E2E_LISTEN_TOKEN", listenToken) // a placeholder: Caddy's debug log shows the configuration
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	caddyfile := filepath.Join(dir, "Caddyfile")
	writeFile(t, caddyfile, strings.Replace(readFile(t, caddyfile), "\twebhook_gateway ./routes.yaml {", "\thookgate_listen /hookgate/listen/*\n\twebhook_gateway ./routes.yaml {", 1))
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	ids := make([]string, 6)
	send := func(i int) {
		body := []byte(fmt.Sprintf(`{"action":"opened","number":%d}`, i))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("listen-", i))
		h.Set("X-GitHub-Event", "pull_request")
		status, hdr, _ := g.post("/webhooks/github", h, body)
		if status != 200 {
			t.Fatalf("event %d: %d", i, status)
		}
		ids[i] = hdr.Get("Hookgate-Event-Id")
	}

	// The stream's refusals: no token, a wrong one, a source without one.
	for _, c := range []struct{ path, token string }{{"/hookgate/listen/github", ""}, {"/hookgate/listen/github", "wrong-token-0123456789abcdef"}, {"/hookgate/listen/nope", listenToken}} {
		req, _ := http.NewRequest("GET", g.url(c.path), nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("GET %s with %q: %d, want 401", c.path, c.token, resp.StatusCode)
		}
	}
	// The admin endpoint serves the same stream.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/hookgate/listen/github", admin), nil)
	req.Header.Set("Authorization", "Bearer "+listenToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || first != ": hookgate listen\n" {
		t.Fatalf("the admin endpoint's stream: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), first)
	}

	send(0) // stored before the listener starts
	app := newLocalApp(t, "local-app-secret-0123456789")
	network := newCuttable(t, fmt.Sprintf("127.0.0.1:%d", port))
	listen := exec.Command(binary, "listen", "--from", "http://"+network.ln.Addr().String(), "--source", "github",
		"--to", app.server.URL+"/webhooks/github", "--secret", "local-app-secret-0123456789", "--since", "1h")
	listen.Env = append(listen.Environ(), "HOOKGATE_LISTEN_TOKEN="+listenToken)
	out := &syncBuffer{}
	listen.Stdout, listen.Stderr = out, out
	if err := listen.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		listen.Process.Kill()
		listen.Wait()
		if t.Failed() {
			t.Logf("hookgate listen:\n%s", out.String())
		}
	})
	delivered := func(n int) func() bool {
		return func() bool { got, _ := app.snapshot(); return len(got) >= n }
	}
	waitFor(t, "the stored event replayed", 20*time.Second, delivered(1))
	send(1)
	send(2)
	waitFor(t, "the new events", 20*time.Second, delivered(3))

	network.cut()
	send(3)
	send(4)
	time.Sleep(2 * time.Second) // the listener tries and fails meanwhile
	network.restore()
	waitFor(t, "the events sent while the stream was cut", 30*time.Second, delivered(5))
	send(5)
	waitFor(t, "an event after the resumption", 20*time.Second, delivered(6))
	time.Sleep(1500 * time.Millisecond) // room for a repeat, which must not come

	got, forged := app.snapshot()
	if forged != 0 {
		t.Fatalf("the local app refused %d signatures", forged)
	}
	for i, id := range ids {
		want := fmt.Sprintf(`{"action":"opened","number":%d}`, i)
		if len(got[id]) != 1 || got[id][0] != want {
			t.Errorf("event %d (%s) reached the app %d times: %q", i, id, len(got[id]), got[id])
		}
	}
	if len(got) != len(ids) {
		t.Errorf("the app got %d events, want %d", len(got), len(ids))
	}
	text := out.String()
	if !strings.Contains(text, "resumed after "+ids[2]) || !strings.Contains(text, ids[4]+"  github pull_request → 200") {
		t.Fatalf("the listener's output:\n%s", text)
	}
	if strings.Contains(g.log.String(), listenToken) || strings.Contains(g.log.String(), "Bearer") {
		t.Fatal("the gateway logged the listen token")
	}
}
