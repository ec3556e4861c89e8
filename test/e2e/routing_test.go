package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRoutingThreeTypesToThreeUpstreams routes three Stripe event types of
// one source to three upstreams, with a path rewrite, a header and a
// transformed body on the way.
func TestRoutingThreeTypesToThreeUpstreams(t *testing.T) {
	billing, crm, legacy := newRecorder(t, "", nil), newRecorder(t, "", nil), newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
upstreams:
  billing: {url: "http://%s/billing"}
  crm: {url: "http://%s"}
  legacy: {url: "http://%s"}
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: [whsec_e2e_secret]
    default: [legacy]
    routes:
      - name: payments
        when: 'body.type startsWith "payment_intent."'
        to: [billing]
        path: '/payments/{body.data.object.id}'
        set_headers: {X-Tenant: '{query.tenant}'}
      - name: customers
        when: 'hasPrefix(body.type, "customer.")'
        to: [crm]
        transform: '{"customer": body.data.object.id, "event": body.type}'
        stop: true
`, billing.addr, crm.addr, legacy.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	stripe := newSigner(t, "stripe", "whsec_e2e_secret")
	send := func(eventType, objectID string) string {
		body := []byte(fmt.Sprintf(`{"id":"evt_%s","type":%q,"data":{"object":{"id":%q}}}`, objectID, eventType, objectID))
		status, hdr, resp := g.post("/webhooks/stripe?tenant=acme", stripe.sign(t, body, ""), body)
		if status != 200 {
			t.Fatalf("%s: %d %s", eventType, status, resp)
		}
		return hdr.Get("Hookgate-Event-Id")
	}
	pay := send("payment_intent.succeeded", "pi_1")
	cus := send("customer.created", "cus_1")
	inv := send("invoice.paid", "in_1")
	waitFor(t, "three deliveries", 20*time.Second, func() bool {
		return len(billing.all()) == 1 && len(crm.all()) == 1 && len(legacy.all()) == 1
	})
	b := billing.all()[0]
	if b.Header.Get("Hookgate-Event-Id") != pay || b.URI != "/billing/payments/pi_1?tenant=acme" || b.Header.Get("X-Tenant") != "acme" {
		t.Errorf("billing got %s %v", b.URI, b.Header)
	}
	c := crm.all()[0]
	var transformed map[string]string
	if c.Header.Get("Hookgate-Event-Id") != cus || json.Unmarshal(c.Body, &transformed) != nil ||
		transformed["customer"] != "cus_1" || transformed["event"] != "customer.created" || c.Header.Get("Content-Type") != "application/json" {
		t.Errorf("crm got %s %q", c.URI, c.Body)
	}
	l := legacy.all()[0]
	if l.Header.Get("Hookgate-Event-Id") != inv || !strings.Contains(string(l.Body), `"invoice.paid"`) || l.URI != "/webhooks/stripe?tenant=acme" {
		t.Errorf("legacy got %s %q", l.URI, l.Body)
	}
}

func TestRouteTools(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	writeFile(t, routes, `
upstreams:
  billing: {url: "http://127.0.0.1:1"}
  legacy: {url: "http://127.0.0.1:2"}
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: ["{env.HOOKGATE_TEST_STRIPE_SECRET}"]
    default: [legacy]
    routes:
      - name: payments
        when: 'body.type startsWith "payment_intent."'
        to: [billing]
`)
	env := append(os.Environ(), "HOOKGATE_TEST_STRIPE_SECRET=whsec_x-0123456789abcdef")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("validate-routes", routes)
	if err != nil || !strings.Contains(out, "valid: 1 sources, 1 routes, 2 upstreams") {
		t.Fatalf("validate-routes on a good file: %v\n%s", err, out)
	}
	event := filepath.Join(dir, "event.json")
	writeFile(t, event, `{"id":"evt_1","type":"payment_intent.created"}`)
	out, err = run("route", routes, "--source", "stripe", "--body", event)
	if err != nil || !strings.Contains(out, "rule payments  match") || !strings.Contains(out, "-> billing (route payments)") {
		t.Fatalf("route: %v\n%s", err, out)
	}
	writeFile(t, event, `{"id":"evt_2","type":"charge.failed"}`)
	out, _ = run("route", routes, "--source", "stripe", "--body", event)
	if !strings.Contains(out, "rule payments  no match") || !strings.Contains(out, "-> legacy (route default)") {
		t.Fatalf("route to the default:\n%s", out)
	}
	broken := filepath.Join(dir, "broken.yaml")
	writeFile(t, broken, "upstreams:\n  u:\n    url: http://x\nsources:\n  s:\n    path: /h\n    provider: strpe\n    secrets: [x-0123456789abcdef]\n    default: [v]\n    routes:\n      - when: 'body.type =='\n        to: [u]\n")
	out, err = run("validate-routes", broken)
	if err == nil || !strings.Contains(out, broken+`:9:14: source s.default: unknown upstream "v" (defined: u)`) {
		t.Fatalf("validate-routes on a broken file: %v\n%s", err, out)
	}
}
