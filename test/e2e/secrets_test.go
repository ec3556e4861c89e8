package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// asanaSource is an Asana source whose learning window is open for an hour.
func asanaSource(upstream string) string {
	return fmt.Sprintf(`  asana:
    path: /webhooks/asana
    provider: asana
    public_url: https://hooks.example.test/webhooks/asana
    learn_secret: {until: "%s"}
    default: [%s]
`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), upstream)
}

var asanaEvent = []byte(`{"events":[{"action":"changed","resource":{"gid":"42","resource_type":"task"}}]}`)

func asanaSigned(secret string) http.Header {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(asanaEvent)
	return http.Header{"X-Hook-Signature": {hex.EncodeToString(mac.Sum(nil))}}
}

func (g *gateway) asanaHandshake(secret string) int {
	g.t.Helper()
	status, hdr, _ := g.post("/webhooks/asana", http.Header{"X-Hook-Secret": {secret}}, nil)
	if status == 200 && hdr.Get("X-Hook-Secret") != secret {
		g.t.Fatalf("handshake echoes %q", hdr.Get("X-Hook-Secret"))
	}
	return status
}

func (g *gateway) adminRaw(method, path string) (int, string) {
	g.t.Helper()
	req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", g.adminPort, path), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLearnedSecretsAdminAndCLI establishes Asana's secret on the real
// binary, lists it (fingerprint, never the secret) and revokes it through
// the CLI and the admin API: a revoked secret stops verifying at once and a
// new handshake may establish another. Outcomes are counted and logged.
func TestLearnedSecretsAdminAndCLI(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := routesFor(up.addr) + asanaSource("legacy")
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	const first, second = "asana-e2e-first-secret-0123", "asana-e2e-second-secret-4567"

	status, body := g.adminRaw("GET", "/hookgate/secrets")
	if status != 200 || !strings.Contains(body, `"secrets": []`) || !strings.Contains(body, `"window_open": true`) {
		t.Fatalf("secrets before a handshake: %d %s", status, body)
	}
	if s := g.asanaHandshake(first); s != 200 {
		t.Fatalf("handshake: %d", s)
	}
	if s := g.asanaHandshake("asana-e2e-attacker"); s != 403 {
		t.Fatalf("second handshake: %d", s)
	}
	if s, _, _ := g.post("/webhooks/asana", asanaSigned(first), asanaEvent); s != 200 {
		t.Fatalf("event with the learned secret: %d", s)
	}

	status, body = g.adminRaw("GET", "/hookgate/secrets")
	if status != 200 || !strings.Contains(body, `"scope": "asana https://hooks.example.test/webhooks/asana"`) ||
		!strings.Contains(body, `"fingerprint": "sha256:`) || strings.Contains(body, first) {
		t.Fatalf("admin list: %d %s", status, body)
	}
	out, err := g.cli("secrets", "list")
	if err != nil || !strings.Contains(out, "asana https://hooks.example.test/webhooks/asana") || !strings.Contains(out, "sha256:") || strings.Contains(out, first) {
		t.Fatalf("secrets list: %v\n%s", err, out)
	}
	out, err = g.cli("secrets", "revoke", "asana")
	if err != nil || !strings.Contains(out, "revoked the secret of asana") {
		t.Fatalf("secrets revoke: %v\n%s", err, out)
	}
	if s, _, _ := g.post("/webhooks/asana", asanaSigned(first), asanaEvent); s != 401 {
		t.Fatalf("event with a revoked secret: %d", s)
	}
	if out, err := g.cli("secrets", "revoke", "asana"); err == nil || !strings.Contains(out, "no learned secret") {
		t.Fatalf("revoking twice: %v\n%s", err, out)
	}

	if s := g.asanaHandshake(second); s != 200 {
		t.Fatalf("handshake after the revoke: %d", s)
	}
	if s, _, _ := g.post("/webhooks/asana", asanaSigned(second), asanaEvent); s != 200 {
		t.Fatalf("event with the new secret: %d", s)
	}
	if status, body := g.adminRaw("DELETE", "/hookgate/secrets/asana"); status != 200 || !strings.Contains(body, `"revoked"`) || strings.Contains(body, second) {
		t.Fatalf("admin revoke: %d %s", status, body)
	}
	if s, _, _ := g.post("/webhooks/asana", asanaSigned(second), asanaEvent); s != 401 {
		t.Fatalf("event after the admin revoke: %d", s)
	}
	if status, _ := g.adminRaw("DELETE", "/hookgate/secrets/asana"); status != 404 {
		t.Fatalf("admin revoke of nothing: %d", status)
	}

	_, stats := g.admin("GET", "/hookgate/stats")
	asana, _ := stats["requests"].(map[string]any)["asana"].(map[string]any)
	if asana["handshake"] != 2.0 || asana["rejected_handshake"] != 1.0 {
		t.Fatalf("counted outcomes: %v", asana)
	}
	log := g.log.String()
	for _, want := range []string{`"secret established by handshake"`, `"handshake refused"`, `"learned secret revoked"`, `"reason":"secret_exists"`} {
		if !strings.Contains(log, want) {
			t.Fatalf("log has no %s:\n%s", want, tail(log, 40))
		}
	}
	for _, secret := range []string{first, second, "asana-e2e-attacker"} {
		if strings.Contains(log, secret) {
			t.Fatalf("the log carries the secret %s", secret)
		}
	}
}

// TestNotionVerificationTokenIsRevealedInTheWindow: Notion's one-time
// verification request teaches the source its token, which the operator
// reads with `hookgate secrets reveal` (and the admin API) to paste into
// Notion; events signed with it are accepted. A second token is refused,
// Asana's learned secret is never revealed, and nothing is shown once the
// window is closed.
func TestNotionVerificationTokenIsRevealedInTheWindow(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	window := func(name, provider string, until time.Time) string {
		return fmt.Sprintf("  %s:\n    path: /webhooks/%s\n    provider: %s\n    public_url: https://hooks.example.test/webhooks/%s\n    learn_secret: {until: %q}\n    default: [legacy]\n",
			name, name, provider, name, until.UTC().Format(time.RFC3339))
	}
	routes := routesFor(up.addr) + window("notion", "notion", time.Now().Add(time.Hour)) + asanaSource("legacy") +
		window("closed", "notion", time.Now().Add(-time.Minute))
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	const token = "secret_e2eNotionVerificationToken0123"

	if out, err := g.cli("secrets", "reveal", "notion"); err == nil || !strings.Contains(out, "learned no secret") {
		t.Fatalf("reveal before the handshake: %v\n%s", err, out)
	}
	if s, _, _ := g.post("/webhooks/notion", http.Header{"Content-Type": {"application/json"}}, []byte(`{"verification_token":"`+token+`"}`)); s != 200 {
		t.Fatalf("verification request: %d", s)
	}
	if s, _, _ := g.post("/webhooks/notion", http.Header{"Content-Type": {"application/json"}}, []byte(`{"verification_token":"secret_attacker000000000000"}`)); s != 403 {
		t.Fatalf("a second verification request: %d", s)
	}
	out, err := g.cli("secrets", "reveal", "notion")
	if err != nil || strings.TrimSpace(out) != token {
		t.Fatalf("secrets reveal: %v\n%s", err, out)
	}
	event := []byte(`{"id":"367cba44-b6f3-4c92-81e7-6a2e9659efd4","type":"page.created","entity":{"id":"153104cd","type":"page"}}`)
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(event)
	if s, _, _ := g.post("/webhooks/notion", http.Header{"X-Notion-Signature": {"sha256=" + hex.EncodeToString(mac.Sum(nil))}}, event); s != 200 {
		t.Fatalf("event signed with the token: %d", s)
	}
	if s, _, _ := g.post("/webhooks/notion", http.Header{"X-Notion-Signature": {"sha256=" + strings.Repeat("0", 64)}}, event); s != 401 {
		t.Fatalf("forged event: %d", s)
	}
	if s := g.asanaHandshake("asana-e2e-never-shown-0123"); s != 200 {
		t.Fatalf("asana handshake: %d", s)
	}
	if status, body := g.adminRaw("POST", "/hookgate/secrets/asana/reveal"); status != 403 || strings.Contains(body, "asana-e2e-never-shown") {
		t.Fatalf("revealing Asana's secret: %d %s", status, body)
	}
	if status, body := g.adminRaw("POST", "/hookgate/secrets/closed/reveal"); status != 403 || !strings.Contains(body, "closed") {
		t.Fatalf("revealing after the window: %d %s", status, body)
	}
	if status, _ := g.adminRaw("GET", "/hookgate/secrets/notion/reveal"); status != 405 {
		t.Fatalf("GET of reveal: %d, want 405", status)
	}
}
