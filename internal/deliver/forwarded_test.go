package deliver

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/hookgate/hookgate/internal/store"
)

// X-Forwarded-* from a sender that is not a trusted proxy never reach the
// backend; a trusted proxy's are extended, as reverse_proxy does.
func TestForwardedHeadersTrustedOnlyFromProxies(t *testing.T) {
	base, _ := url.Parse("http://backend.internal")
	forged := http.Header{"X-Forwarded-For": {"6.6.6.6"}, "X-Forwarded-Proto": {"gopher"}, "X-Forwarded-Host": {"evil.example"}}
	for _, c := range []struct {
		trusted            bool
		xff, proto, xfHost string
	}{
		{false, "203.0.113.9", "https", "hooks.example.com"},
		{true, "6.6.6.6, 203.0.113.9", "gopher", "evil.example"},
	} {
		ev := &store.Event{Method: "POST", Path: "/h", Host: "hooks.example.com", RemoteAddr: "203.0.113.9:5555",
			Proto: "https", Header: forged.Clone(), ViaTrustedProxy: c.trusted}
		req, err := buildRequest(context.Background(), Upstream{Name: "u", URL: base}, store.Task{Event: ev}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Values("X-Forwarded-For"); len(got) != 1 || got[0] != c.xff {
			t.Errorf("trusted=%v: X-Forwarded-For %q, want %q", c.trusted, got, c.xff)
		}
		if got := req.Header.Get("X-Forwarded-Proto"); got != c.proto {
			t.Errorf("trusted=%v: X-Forwarded-Proto %q, want %q", c.trusted, got, c.proto)
		}
		if got := req.Header.Get("X-Forwarded-Host"); got != c.xfHost {
			t.Errorf("trusted=%v: X-Forwarded-Host %q, want %q", c.trusted, got, c.xfHost)
		}
		if req.Host != "hooks.example.com" {
			t.Errorf("Host %q", req.Host)
		}
	}
}

// An upstream's static headers reach it, a route's shaping overrides them,
// and the gateway's own headers win over both; an upstream behind a forward
// proxy gets its own host as Host, so the proxy takes the request there.
func TestStaticHeadersAndHostBehindAProxy(t *testing.T) {
	base, _ := url.Parse("http://backend.internal:8080")
	ev := &store.Event{Method: "POST", Path: "/h", Host: "hooks.example.com", Header: http.Header{"Authorization": {"from the provider"}}}
	up := Upstream{Name: "u", URL: base, Headers: map[string]string{"Authorization": "Bearer static", "X-Team": "billing"}}
	task := store.Task{Event: ev, Delivery: store.Delivery{Shaping: store.Shaping{SetHeaders: map[string]string{"X-Team": "payments"}}}}
	req, err := buildRequest(context.Background(), up, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer static" {
		t.Errorf("Authorization %q", got)
	}
	if got := req.Header.Get("X-Team"); got != "payments" {
		t.Errorf("a route's set_headers lost to the upstream's: %q", got)
	}
	if req.Host != "hooks.example.com" {
		t.Errorf("direct: Host %q, want the public host", req.Host)
	}

	up.HostFromURL = true
	req, err = buildRequest(context.Background(), up, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if req.Host != "backend.internal:8080" || req.Header.Get("X-Forwarded-Host") != "hooks.example.com" {
		t.Errorf("behind a proxy: Host %q, X-Forwarded-Host %q", req.Host, req.Header.Get("X-Forwarded-Host"))
	}
}
