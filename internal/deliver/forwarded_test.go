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
