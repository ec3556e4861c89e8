package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const alertRoutes = `
upstreams:
  legacy:
    url: http://%s
    timeout: 5s
    retry:
      max_attempts: 1
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: ["gh-e2e-secret-0123456789"]
    default: [legacy]
alerts:
  - name: ops
    to: "{env.ALERT_WEBHOOK_URL}"
    inspector_url: https://ops.example.com/hookgate/ui/
    format: %s
    on:
%s
    repeat: 1h
`

// TestAlertOnDeadDelivery: a dead delivery makes exactly one alert POST in
// the json format, carrying the event id and nothing of the event; a second
// dead delivery within repeat makes none; the alert itself is an event of
// the hookgate-alerts source, listed and delivered by the engine.
func TestAlertOnDeadDelivery(t *testing.T) {
	backend := newRecorder(t, "", func(int) int { return http.StatusBadRequest }) // final: dead at once
	alerts := newRecorder(t, "", nil)
	t.Setenv("ALERT_WEBHOOK_URL", "http://"+alerts.addr+"/services/T0/hook?token=abc")
	dir, port, adminPort := newGatewayDir(t, fmt.Sprintf(alertRoutes, backend.addr, "json", "      dead: true\n      breaker_open: true"), "127.0.0.1:1")
	g := startGateway(t, dir, port, adminPort)

	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	post := func(n int) string {
		body := []byte(fmt.Sprintf(`{"action":"opened","number":%d,"card":"4242-private-marker"}`, n))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprintf("alert-dead-%d", n))
		status, hdr, resp := g.post("/webhooks/github", h, body)
		if status != 200 {
			t.Fatalf("event %d: %d %q", n, status, resp)
		}
		return hdr.Get("Hookgate-Event-Id")
	}
	first := post(1)
	waitFor(t, "the alert", 15*time.Second, func() bool { return len(alerts.all()) >= 1 })
	second := post(2)
	waitFor(t, "the second delivery dead", 15*time.Second, func() bool {
		_, ev := g.admin(http.MethodGet, "/hookgate/events/"+second)
		ds, _ := ev["deliveries"].([]any)
		return len(ds) == 1 && ds[0].(map[string]any)["state"] == "dead"
	})
	time.Sleep(time.Second) // room for a second alert, which must not come

	got := alerts.all()
	if len(got) != 1 {
		t.Fatalf("%d alert POSTs, want 1", len(got))
	}
	a := got[0]
	if a.Method != http.MethodPost || a.URI != "/services/T0/hook?token=abc" || a.Header.Get("Content-Type") != "application/json" {
		t.Errorf("alert request %s %s %v", a.Method, a.URI, a.Header)
	}
	var body map[string]any
	if err := json.Unmarshal(a.Body, &body); err != nil {
		t.Fatalf("alert body %s: %v", a.Body, err)
	}
	if body["alert"] != "dead" || body["event_id"] != first || body["source"] != "github" || body["upstream"] != "legacy" ||
		body["link"] != "https://ops.example.com/hookgate/ui/#/events/"+first ||
		!strings.Contains(fmt.Sprint(body["message"]), first) || body["at"] == nil {
		t.Errorf("alert body %s", a.Body)
	}
	for _, leak := range []string{"4242-private-marker", "sha256=", "gh-e2e-secret"} {
		if strings.Contains(string(a.Body), leak) || strings.Contains(fmt.Sprint(a.Header), leak) {
			t.Errorf("the alert carries %q: %s %v", leak, a.Body, a.Header)
		}
	}
	if a.Header.Get("X-Hub-Signature-256") != "" || a.Header.Get("Hookgate-Source") != "hookgate-alerts" {
		t.Errorf("alert headers %v", a.Header)
	}
	// The alert is an event of its own source, delivered by the engine.
	_, list := g.admin(http.MethodGet, "/hookgate/events?source=hookgate-alerts")
	events, _ := list["events"].([]any)
	if len(events) != 1 {
		t.Fatalf("alert events: %v", list)
	}
	ds := events[0].(map[string]any)["deliveries"].([]any)
	if d := ds[0].(map[string]any); d["upstream"] != "alert:ops" || d["state"] != "delivered" {
		t.Errorf("alert delivery %v", d)
	}
}

// TestAlertOnRejectedFlood: forged requests past the share and minimum
// raise one rejected alert, in the slack format.
func TestAlertOnRejectedFlood(t *testing.T) {
	backend := newRecorder(t, "", nil)
	alerts := newRecorder(t, "", nil)
	t.Setenv("ALERT_WEBHOOK_URL", "http://"+alerts.addr+"/slack")
	dir, port, adminPort := newGatewayDir(t, fmt.Sprintf(alertRoutes, backend.addr, "slack", "      rejected: {ratio: 0.5, min: 20, window: 5m}"), "127.0.0.1:1")
	g := startGateway(t, dir, port, adminPort)

	forger := newSigner(t, "github", "not-the-secret-0123456789")
	for i := range 19 {
		body := []byte(fmt.Sprintf(`{"forged":%d}`, i))
		if status, _, _ := g.post("/webhooks/github", forger.sign(t, body, ""), body); status != http.StatusUnauthorized {
			t.Fatalf("forged request %d: %d", i, status)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(alerts.all()); n != 0 {
		t.Fatalf("%d alerts before min requests", n)
	}
	for i := 19; i < 30; i++ {
		body := []byte(fmt.Sprintf(`{"forged":%d}`, i))
		g.post("/webhooks/github", forger.sign(t, body, ""), body)
	}
	waitFor(t, "the rejected alert", 15*time.Second, func() bool { return len(alerts.all()) >= 1 })
	time.Sleep(time.Second)
	got := alerts.all()
	if len(got) != 1 {
		t.Fatalf("%d alert POSTs, want 1", len(got))
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil || len(body) != 1 {
		t.Fatalf("slack body %s: %v", got[0].Body, err)
	}
	if text := fmt.Sprint(body["text"]); text != "Hookgate rejected: source github refused 20 of 20 requests (100%) in the last 5m0s <https://ops.example.com/hookgate/ui/|inspect>" {
		t.Errorf("slack text %q", text)
	}
	if len(backend.all()) != 0 {
		t.Error("a forged request was delivered")
	}

	// Genuine requests bring the share under the ratio: resolved.
	g.ackGitHubEvents(t, "flood-over", 31)
	waitFor(t, "the resolved alert", 15*time.Second, func() bool { return len(alerts.all()) >= 2 })
	var resolved map[string]any
	json.Unmarshal(alerts.all()[1].Body, &resolved)
	if text := fmt.Sprint(resolved["text"]); text != "Hookgate resolved, rejected: source github refuses few of its requests again over the last 5m0s <https://ops.example.com/hookgate/ui/|inspect>" {
		t.Errorf("resolved slack text %q", text)
	}
}
