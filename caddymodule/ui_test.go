package caddymodule

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAdmin stands in for Caddy's admin endpoint: it records what reaches
// it and, as Caddy does, grants CORS to the Origin it was sent.
type fakeAdmin struct {
	mu  sync.Mutex
	got []*http.Request
	srv *httptest.Server
}

func newFakeAdmin(t *testing.T) *fakeAdmin {
	a := &fakeAdmin{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.got = append(a.got, r.Clone(r.Context()))
		a.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAdmin) take() []*http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	got := a.got
	a.got = nil
	return got
}

func TestInspectorChecks(t *testing.T) {
	admin := newFakeAdmin(t)
	adminHost := strings.TrimPrefix(admin.srv.URL, "http://")
	listen := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2020}
	h, err := InspectorHandler(adminHost, false, nil, listen, []string{"Inspect.Example.com", "ops.example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	const own, evil = "127.0.0.1:2020", "https://evil.example"
	page := "/hookgate/ui/"
	replay := "/hookgate/replay?status=delivered"
	type hdr map[string]string
	cases := []struct {
		name         string
		method, path string
		host         string
		header       hdr
		status       int
		forwarded    bool
	}{
		{"page on 127.0.0.1", "GET", page, own, nil, 200, false},
		{"page on localhost", "GET", page, "localhost:2020", nil, 200, false},
		{"page on [::1]", "GET", page, "[::1]:2020", nil, 200, false},
		{"page reached by a link from another site", "GET", page, own, hdr{"Sec-Fetch-Site": "cross-site"}, 200, false},
		{"page under a foreign Host (DNS rebinding)", "GET", page, "rebound.evil.example:2020", nil, 403, false},
		{"page on another port", "GET", page, "127.0.0.1:2021", nil, 403, false},
		{"page on bare localhost", "GET", page, "localhost", nil, 403, false},
		{"page on an allowed name, bare", "GET", page, "inspect.example.com", nil, 200, false},
		{"page on an allowed name, own port", "GET", page, "INSPECT.example.com:2020", nil, 200, false},
		{"page on an allowed name, other port", "GET", page, "inspect.example.com:9999", nil, 403, false},
		{"page on an allowed name:port", "GET", page, "ops.example.com:8443", nil, 200, false},
		{"page on an allowed name:port, bare", "GET", page, "ops.example.com", nil, 403, false},

		{"read without Origin", "GET", "/hookgate/events", own, nil, 200, true},
		{"read from the page", "GET", "/hookgate/events", own, hdr{"Origin": "http://" + own, "Sec-Fetch-Site": "same-origin"}, 200, true},
		{"read through a proxy's name", "GET", "/hookgate/events", "inspect.example.com", hdr{"Origin": "https://inspect.example.com"}, 200, true},
		{"read under a foreign Host (DNS rebinding)", "GET", "/hookgate/events", "rebound.evil.example:2020", nil, 403, false},
		{"cross-site read", "GET", "/hookgate/events", own, hdr{"Origin": evil}, 403, false},
		{"read from a null origin", "GET", "/hookgate/events", own, hdr{"Origin": "null"}, 403, false},
		{"read from another port's origin", "GET", "/hookgate/events", own, hdr{"Origin": "http://127.0.0.1:2021"}, 403, false},
		{"cross-site read without Origin", "GET", "/hookgate/events", own, hdr{"Sec-Fetch-Site": "cross-site"}, 403, false},
		{"same-site read without Origin", "GET", "/hookgate/events", own, hdr{"Sec-Fetch-Site": "same-site"}, 403, false},
		{"websocket", "GET", "/hookgate/events", own, hdr{"Upgrade": "websocket", "Connection": "Upgrade"}, 403, false},

		{"cross-site simple POST", "POST", replay, own, hdr{"Origin": evil, "Content-Type": "text/plain"}, 403, false},
		{"cross-site POST with the header", "POST", replay, own, hdr{"Origin": evil, inspectorHeader: "1"}, 403, false},
		{"same-origin POST without the header", "POST", replay, own, hdr{"Origin": "http://" + own}, 403, false},
		{"POST without Origin or header", "POST", replay, own, nil, 403, false},
		{"POST with a wrong header value", "POST", replay, own, hdr{"Origin": "http://" + own, inspectorHeader: "0"}, 403, false},
		{"POST under a foreign Host with the header", "POST", replay, "rebound.evil.example:2020", hdr{"Origin": "http://rebound.evil.example:2020", inspectorHeader: "1"}, 403, false},
		{"same-origin POST with the header", "POST", replay, own, hdr{"Origin": "http://" + own, inspectorHeader: "1"}, 200, true},
		{"POST through a proxy's name with the header", "POST", replay, "inspect.example.com", hdr{"Origin": "https://inspect.example.com", inspectorHeader: "1"}, 200, true},
		{"POST from a tool with the header", "POST", replay, own, hdr{inspectorHeader: "1"}, 200, true},
		{"DELETE without the header", "DELETE", "/hookgate/events/x", own, hdr{"Origin": "http://" + own}, 403, false},
		{"POST to the page without the header", "POST", page, own, nil, 403, false},

		{"preflight from another site", "OPTIONS", replay, own, hdr{"Origin": evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-hookgate-inspector"}, 403, false},
		{"preflight from its own origin", "OPTIONS", replay, own, hdr{"Origin": "http://" + own, "Access-Control-Request-Method": "POST"}, 204, false},

		{"escaped dot segments", "GET", "/hookgate/%2e%2e/load", own, nil, 403, false},
		{"escaped slash", "GET", "/hookgate/..%2fconfig/", own, nil, 403, false},
		{"dot segments under the page", "GET", "/hookgate/ui/%2e%2e/events", own, nil, 403, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.path, nil)
			r.Host = c.host
			for k, v := range c.header {
				r.Header.Set(k, v)
			}
			r.Header.Set("Referer", "http://"+own+"/hookgate/ui/")
			r.Header.Set("Cookie", "session=1")
			r.Header.Set("Authorization", "Basic b3BzOnNlY3JldA==")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.status {
				t.Errorf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			for k := range w.Header() {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("answer carries %s: %q", k, w.Header().Get(k))
				}
			}
			got := admin.take()
			if !c.forwarded {
				if len(got) != 0 {
					t.Fatalf("forwarded to the admin endpoint: %s %s", got[0].Method, got[0].RequestURI)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("the admin endpoint got %d requests, want 1", len(got))
			}
			f := got[0]
			if f.Method != c.method || f.RequestURI != c.path || f.Host != adminHost || f.Header.Get("Origin") != "http://"+adminHost {
				t.Errorf("forwarded %s %s Host %s Origin %s", f.Method, f.RequestURI, f.Host, f.Header.Get("Origin"))
			}
			for _, k := range []string{"Referer", "Cookie", "Authorization", "Sec-Fetch-Site"} {
				if v := f.Header.Get(k); v != "" {
					t.Errorf("forwarded %s: %q", k, v)
				}
			}
		})
	}
}

func TestInspectorHosts(t *testing.T) {
	hosts, err := inspectorHosts(&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 2020}, []string{"::1", "[fd00::1]:9000", "ops.internal"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"localhost:2020", "127.0.0.1:2020", "[::1]:2020", "192.0.2.7:2020", "[::1]", "[fd00::1]:9000", "ops.internal", "ops.internal:2020"} {
		if !hosts[want] {
			t.Errorf("%s not allowed; allowed: %v", want, hosts)
		}
	}
	if len(hosts) != 8 {
		t.Errorf("allowed %d hosts, want 8: %v", len(hosts), hosts)
	}
	wildcard, _ := inspectorHosts(&net.TCPAddr{IP: net.IPv4zero, Port: 2020}, nil)
	if len(wildcard) != 3 {
		t.Errorf("listening on 0.0.0.0 allows %v, want the loopback names only", wildcard)
	}
	for _, bad := range []string{"", "https://ops.internal", "ops.internal:http", "ops.internal:0", "*.internal", "ops.internal/x"} {
		if _, err := inspectorHosts(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2020}, []string{bad}); err == nil {
			t.Errorf("--allow-host %q accepted", bad)
		}
	}
}

// TestInspectorPageRefusesFraming: a page on another site must not overlay
// the Replay button in a frame.
func TestInspectorPageRefusesFraming(t *testing.T) {
	w := httptest.NewRecorder()
	serveUI(w, httptest.NewRequest("GET", "/hookgate/ui/", nil))
	if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") || w.Header().Get("X-Frame-Options") != "DENY" {
		t.Fatalf("status %d, CSP %q, X-Frame-Options %q", w.Code, w.Header().Get("Content-Security-Policy"), w.Header().Get("X-Frame-Options"))
	}
}
