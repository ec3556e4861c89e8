package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAdminShowsMaskedBodies: with inspector.mask_bodies the admin API shows
// an event's body with personal data masked, while the upstream receives it
// byte for byte. Tracing is off here, so the provider's traceparent reaches
// the upstream untouched and the gateway adds none of its own.
func TestAdminShowsMaskedBodies(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
inspector: {mask_bodies: true}
upstreams:
  legacy:
    url: http://%s
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy]
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)

	body := []byte(`{"action":"opened","sender":{"email":"jane@example.com","name":"Jane Roe"},"comment":"call me at +1 415 555 0100","number":7}`)
	h := newSigner(t, "github", "gh-e2e-secret-0123456789").sign(t, body, "")
	h.Set("X-GitHub-Delivery", "masked-1")
	const providers = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h.Set("Traceparent", providers)
	status, hdr, resp := g.post("/webhooks/github", h, body)
	if status != 200 {
		t.Fatalf("post: %d %s", status, resp)
	}
	id := hdr.Get("Hookgate-Event-Id")
	waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })
	got := up.byEvent()[id][0]
	if string(got.Body) != string(body) {
		t.Errorf("upstream got %q, want the raw body %q", got.Body, body)
	}
	if tp := got.Header.Values("Traceparent"); len(tp) != 1 || tp[0] != providers {
		t.Errorf("upstream got traceparent %q, want only the provider's", tp)
	}

	code, ev := g.admin("GET", "/hookgate/events/"+id)
	if code != 200 {
		t.Fatalf("admin: %d %v", code, ev)
	}
	shown, _ := ev["body"].(string)
	for _, personal := range []string{"jane@example.com", "Jane Roe", "555 0100"} {
		if strings.Contains(shown, personal) {
			t.Errorf("admin API shows %q: %s", personal, shown)
		}
	}
	if !strings.Contains(shown, `"action":"opened"`) || !strings.Contains(shown, `"number":7`) || ev["body_masked"] != true {
		t.Errorf("admin API body %s, body_masked %v", shown, ev["body_masked"])
	}
}
