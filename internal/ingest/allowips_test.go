package ingest_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
)

const allowRoutes = `
upstreams:
  legacy:
    url: http://127.0.0.1:1
allow_ips: [192.0.2.0/24, "2001:db8::/32"]
sources:
  github:
    path: /github
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
  own:
    path: /own
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
    allow_ips: [198.51.100.7, stripe]
  open:
    path: /open
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
    allow_ips: []
  meta:
    path: /meta
    provider: meta
    secrets: [app-secret-0123456789]
    verify_token: my-verify-token
    default: [legacy]
`

// readSpy records whether anything read the request body.
type readSpy struct {
	r    *bytes.Reader
	read atomic.Bool
}

func (s *readSpy) Read(p []byte) (int, error) { s.read.Store(true); return s.r.Read(p) }

func allowHarness(t *testing.T) (*harness, *outcomes, *observer.ObservedLogs) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "hookgate.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	h := pipelineOn(t, allowRoutes, st, zap.New(core))
	seen := &outcomes{}
	h.p.SetObserver(seen)
	return h, seen, logs
}

// sendFrom posts a signed GitHub delivery from a client address.
func (h *harness) sendFrom(t *testing.T, client, path string) (*httptest.ResponseRecorder, *readSpy) {
	t.Helper()
	// Client and path in the body: no two requests are one event.
	body := []byte(`{"zen":"from ` + client + ` to ` + path + `"}`)
	req := httptest.NewRequest(http.MethodPost, path, nil)
	spy := &readSpy{r: bytes.NewReader(body)}
	req.Body, req.ContentLength = httpBody{spy}, int64(len(body))
	for k, v := range sign(t, "github", "gh-secret-0123456789", body) {
		req.Header[k] = v
	}
	req.Header.Set("X-GitHub-Delivery", "d-"+client+path)
	req.RemoteAddr = client
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	return rec, spy
}

type httpBody struct{ *readSpy }

func (httpBody) Close() error { return nil }

func TestAllowIPs(t *testing.T) {
	h, seen, logs := allowHarness(t)
	cases := []struct {
		client, path string
		want         int
	}{
		{"192.0.2.10:443", "/github", 200},          // the top-level default
		{"[2001:db8::5]:443", "/github", 200},       // IPv6 in the default
		{"[::ffff:192.0.2.11]:443", "/github", 200}, // IPv4-mapped counts as IPv4
		{"198.51.100.7:443", "/github", 403},
		{"[2001:db9::5]:443", "/github", 403},
		{"198.51.100.7:443", "/own", 200},   // a source's own list replaces the default
		{"54.187.174.169:1", "/own", 200},   // a named range in it
		{"192.0.2.10:443", "/own", 403},     // the default no longer applies
		{"203.0.113.99:443", "/open", 200},  // allow_ips: [] turns the default off
		{"[2001:db9::1]:80", "/open", 200},  //
		{"not-an-address", "/github", 403},  // an address that does not parse is refused
		{"192.0.2.10:443", "/GITHUB/", 200}, // any spelling of the path is the source
		{"10.0.0.1:443", "/Github//", 403},
	}
	accepted := 0
	for _, c := range cases {
		rec, spy := h.sendFrom(t, c.client, c.path)
		if rec.Code != c.want {
			t.Errorf("%s from %s: %d %q, want %d", c.path, c.client, rec.Code, rec.Body.String(), c.want)
			continue
		}
		if c.want == 403 {
			if rec.Body.String() != "forbidden\n" || rec.Header().Get("Hookgate-Event-Id") != "" {
				t.Errorf("%s from %s: answered %q %v", c.path, c.client, rec.Body.String(), rec.Header())
			}
			if spy.read.Load() {
				t.Errorf("%s from %s: the body was read before the refusal", c.path, c.client)
			}
		} else {
			accepted++
		}
	}
	// Nothing refused was stored or queued.
	events, _, err := h.store.List(store.ListFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	deliveries := 0
	for _, e := range events {
		deliveries += len(e.Deliveries)
	}
	if len(events) != accepted || deliveries != accepted {
		t.Errorf("%d events and %d deliveries stored, want %d", len(events), deliveries, accepted)
	}
	if n := seen.get("rejected_ip_not_allowed"); n != 5 {
		t.Errorf("counted %d rejected_ip_not_allowed, want 5: %v", n, seen.n)
	}
	refused := logs.FilterMessage("request rejected").FilterField(zap.String("reason", "ip_not_allowed")).All()
	if len(refused) != 5 {
		t.Fatalf("logged %d refusals, want 5", len(refused))
	}
	for _, entry := range refused {
		for _, f := range entry.Context {
			if strings.Contains(f.String, "sha256=") || strings.Contains(f.String, "zen") {
				t.Errorf("a refusal logged a header or the body: %v", entry.Context)
			}
		}
		if entry.ContextMap()["client_ip"] == "" {
			t.Errorf("refusal logged without the client address: %v", entry.ContextMap())
		}
	}
}

// TestAllowIPsUsesTheClientIP: the address checked is the one the pipeline is
// given (Caddy's, which honours trusted_proxies), not the connection's peer
// and not a header the sender wrote.
func TestAllowIPsUsesTheClientIP(t *testing.T) {
	h, _, _ := allowHarness(t)
	client := "198.51.100.1"
	h.p.SetClientIP(func(*http.Request) string { return client })
	if rec, _ := h.sendFrom(t, "192.0.2.10:443", "/github"); rec.Code != 403 {
		t.Fatalf("peer in the list, client outside: %d", rec.Code)
	}
	client = "192.0.2.77"
	if rec, _ := h.sendFrom(t, "10.9.9.9:443", "/github"); rec.Code != 200 {
		t.Fatalf("client in the list behind a peer outside it: %d %s", rec.Code, rec.Body)
	}
	// By default the client is the connection's peer: forwarding headers
	// are a sender's say-so.
	h, _, _ = allowHarness(t)
	body := []byte(`{"zen":"forged"}`)
	req := httptest.NewRequest(http.MethodPost, "/github", bytes.NewReader(body))
	for k, v := range sign(t, "github", "gh-secret-0123456789", body) {
		req.Header[k] = v
	}
	req.Header.Set("X-Forwarded-For", "192.0.2.1")
	req.Header.Set("X-Real-Ip", "192.0.2.1")
	req.Header.Set("Forwarded", "for=192.0.2.1")
	req.RemoteAddr = "10.9.9.9:443"
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	if rec.Code != 403 {
		t.Fatalf("forwarding headers from an untrusted peer let it in: %d", rec.Code)
	}
}

// TestAllowIPsRefusesHandshakes: a handshake (Meta's GET challenge) from
// outside the list gets 403 too, and its challenge is not echoed.
func TestAllowIPsRefusesHandshakes(t *testing.T) {
	h, _, _ := allowHarness(t)
	target := "/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=my-verify-token"
	for client, want := range map[string]int{"192.0.2.1:1": 200, "203.0.113.1:1": 403} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.RemoteAddr = client
		rec := httptest.NewRecorder()
		h.p.ServeHTTP(rec, req)
		if rec.Code != want || (want == 403 && strings.Contains(rec.Body.String(), "1158201444")) {
			t.Errorf("handshake from %s: %d %q, want %d", client, rec.Code, rec.Body.String(), want)
		}
	}
}
