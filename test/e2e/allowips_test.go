package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/ipranges"
)

// allowSource is a GitHub source limited to allow.
func allowSource(name, allow string) string {
	return fmt.Sprintf(`  %s:
    path: /webhooks/%s
    provider: github
    secrets: ["gh-e2e-secret-0123456789"]
    default: [legacy]
    allow_ips: %s
`, name, name, allow)
}

// postGitHub sends a signed GitHub delivery with extra headers.
func (g *gateway) postGitHub(t *testing.T, path, delivery string, extra map[string]string) (int, string, string) {
	t.Helper()
	body := []byte(fmt.Sprintf(`{"zen":%q}`, delivery))
	hdr := newSigner(t, "github", "gh-e2e-secret-0123456789").sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", delivery)
	for k, v := range extra {
		hdr.Set(k, v)
	}
	status, resp, text := g.post(path, hdr, body)
	return status, resp.Get("Hookgate-Event-Id"), text
}

// storedEvents counts the events the admin API lists.
func (g *gateway) storedEvents(t *testing.T) int {
	t.Helper()
	status, out := g.admin("GET", "/hookgate/events")
	events, ok := out["events"].([]any)
	if status != 200 || !ok {
		t.Fatalf("listing events: %d %v", status, out)
	}
	return len(events)
}

// TestAllowIPsDirectClient: a client on loopback is let in by a list that
// holds 127.0.0.1/32 and refused, before anything is stored or delivered, by
// one that does not; a handshake is refused the same way.
func TestAllowIPsDirectClient(t *testing.T) {
	up := newRecorder(t, "", nil)
	routes := routesFor(up.addr) + allowSource("allowed", "[127.0.0.1/32]") + allowSource("refused", `[192.0.2.0/24, "::1", stripe]`) +
		`  meta:
    path: /webhooks/meta
    provider: meta
    secrets: ["app-secret-0123456789"]
    verify_token: my-verify-token
    default: [legacy]
    allow_ips: [10.0.0.0/8]
`
	dir, port, admin := newGatewayDir(t, routes, "127.0.0.1:1")
	g := startGateway(t, dir, port, admin)

	status, id, text := g.postGitHub(t, "/webhooks/allowed", "allowed-1", nil)
	if status != 200 || id == "" {
		t.Fatalf("from 127.0.0.1 to a source allowing 127.0.0.1/32: %d %s", status, text)
	}
	status, refusedID, text := g.postGitHub(t, "/webhooks/refused", "refused-1", nil)
	if status != 403 || refusedID != "" || text != "forbidden\n" {
		t.Fatalf("from 127.0.0.1 to a source that excludes it: %d %q", status, text)
	}
	resp, err := http.Get(g.url("/webhooks/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=my-verify-token"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a handshake from outside the list: %d", resp.StatusCode)
	}
	waitFor(t, "the allowed delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
	time.Sleep(300 * time.Millisecond) // room for a delivery that must not come
	if n := len(up.all()); n != 1 {
		t.Fatalf("upstream got %d requests, want only the allowed one", n)
	}
	if n := g.storedEvents(t); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	_, metrics := g.adminRaw("GET", "/metrics")
	for _, want := range []string{
		`caddy_hookgate_requests_total{outcome="rejected_ip_not_allowed",source="refused"} 1`,
		`caddy_hookgate_requests_total{outcome="rejected_ip_not_allowed",source="meta"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if log := g.log.String(); !strings.Contains(log, `"reason":"ip_not_allowed"`) || strings.Contains(log, "sha256=") {
		t.Errorf("the refusal is not logged, or the log shows a signature")
	}
}

// TestAllowIPsBehindProxy: behind one of Caddy's trusted_proxies the client
// is the address X-Forwarded-For names; from any other peer the header is
// the sender's say-so and the peer's own address is checked.
func TestAllowIPsBehindProxy(t *testing.T) {
	for _, c := range []struct {
		name, trusted string
		want          map[string]int // X-Forwarded-For → status
	}{
		{"trusted proxy", "127.0.0.0/8", map[string]int{"203.0.113.9": 200, "198.51.100.1": 403, "": 403, "203.0.113.10, 198.51.100.1": 200}},
		{"untrusted peer", "10.0.0.0/8", map[string]int{"203.0.113.9": 403, "198.51.100.1": 403, "": 403}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newRecorder(t, "", nil)
			routes := routesFor(up.addr) + allowSource("proxied", "[203.0.113.0/24]")
			dir, port, admin := newGatewayDir(t, routes, "127.0.0.1:1")
			caddyfile := fmt.Sprintf(caddyfileTemplate, admin, dir, port, "127.0.0.1:1")
			caddyfile = strings.Replace(caddyfile, "\tlog {", "\tservers {\n\t\ttrusted_proxies static "+c.trusted+"\n\t}\n\tlog {", 1)
			writeFile(t, filepath.Join(dir, "Caddyfile"), caddyfile)
			g := startGateway(t, dir, port, admin)
			accepted := 0
			for xff, want := range c.want {
				extra := map[string]string{}
				if xff != "" {
					extra["X-Forwarded-For"] = xff
				}
				status, _, text := g.postGitHub(t, "/webhooks/proxied", "via-"+xff, extra)
				if status != want {
					t.Errorf("X-Forwarded-For %q: %d %q, want %d", xff, status, text, want)
				}
				if status == 200 {
					accepted++
				}
			}
			if n := g.storedEvents(t); n != accepted {
				t.Fatalf("%d events stored, want %d", n, accepted)
			}
		})
	}
}

// TestAllowIPsRefreshesNamedRanges: the app fetches a named range's list
// when it starts (here from a stand-in for GitHub's meta API), keeps the
// bundled list when the fetch fails, and fetches nothing with
// ip_ranges.refresh: off. GitHub's bundled hooks list excludes loopback.
func TestAllowIPsRefreshesNamedRanges(t *testing.T) {
	var metaStatus atomic.Int32
	var fetched atomic.Int32
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/meta" {
			http.NotFound(w, r)
			return
		}
		fetched.Add(1)
		if s := metaStatus.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		w.Write([]byte(`{"hooks":["127.0.0.1/32"],"web":["10.0.0.0/8"]}`))
	}))
	defer meta.Close()
	t.Setenv(ipranges.TestBaseEnv, meta.URL)
	start := func(t *testing.T, top string) *gateway {
		up := newRecorder(t, "", nil)
		dir, port, admin := newGatewayDir(t, top+routesFor(up.addr)+allowSource("gh", "[github]"), "127.0.0.1:1")
		return startGateway(t, dir, port, admin)
	}

	t.Run("refresh off keeps the bundled list", func(t *testing.T) {
		g := start(t, "ip_ranges:\n  refresh: off\n")
		time.Sleep(time.Second) // room for a fetch that must not happen
		if status, _, _ := g.postGitHub(t, "/webhooks/gh", "off-1", nil); status != 403 {
			t.Fatalf("loopback with GitHub's bundled list: %d", status)
		}
		if n := fetched.Load(); n != 0 {
			t.Fatalf("refresh: off fetched the list %d times", n)
		}
	})
	t.Run("a failed fetch keeps the bundled list", func(t *testing.T) {
		metaStatus.Store(http.StatusBadGateway)
		g := start(t, "")
		waitFor(t, "the fetch", 10*time.Second, func() bool { return fetched.Load() > 0 })
		waitFor(t, "the failure logged", 10*time.Second, func() bool {
			return strings.Contains(g.log.String(), "could not refresh a named IP range")
		})
		if status, _, _ := g.postGitHub(t, "/webhooks/gh", "failed-1", nil); status != 403 {
			t.Fatalf("loopback after a failed refresh: %d", status)
		}
		if status, _, _ := g.postGitHub(t, "/webhooks/github", "unlimited-1", nil); status != 200 {
			t.Fatalf("a source without allow_ips stopped working: %d", status)
		}
	})
	t.Run("a fetched list replaces the bundled one", func(t *testing.T) {
		metaStatus.Store(0)
		g := start(t, "")
		n := 0
		waitFor(t, "the refreshed list in use", 10*time.Second, func() bool {
			n++
			status, _, _ := g.postGitHub(t, "/webhooks/gh", fmt.Sprintf("fetched-%d", n), nil)
			return status == 200
		})
	})
}
