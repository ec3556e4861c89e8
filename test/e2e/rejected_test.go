package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestRejectedRequestsAreKept: refused requests are kept per source, with
// their reason and masked headers, in the admin API and `hookgate
// rejected`, and survive a crash of the gateway.
func TestRejectedRequestsAreKept(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n  stripe:\n    path: /webhooks/stripe\n    provider: stripe\n    secrets: [whsec_e2e-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)

	g.ackGitHubEvents(t, "fine", 1) // accepted: not a rejection
	signature := "sha256=" + strings.Repeat("ab", 32)
	if status, _, _ := g.post("/webhooks/github", http.Header{"X-Hub-Signature-256": {signature}, "X-Github-Event": {"push"}, "X-Github-Delivery": {"d-forged"}}, []byte(`{"forged":true}`)); status != 401 {
		t.Fatalf("forged: %d", status)
	}
	if status, _, _ := g.post("/webhooks/stripe", http.Header{"Stripe-Signature": {"t=1,v1=" + strings.Repeat("cd", 32)}}, []byte(`{"id":"evt_1"}`)); status != 401 {
		t.Fatalf("stale stripe: %d", status)
	}
	read := func(g *gateway) map[string][]map[string]any {
		status, body := g.adminRaw("GET", "/hookgate/rejected")
		if status != 200 {
			t.Fatalf("GET /hookgate/rejected: %d %s", status, body)
		}
		var v struct {
			Sources map[string]struct {
				Records []map[string]any `json:"records"`
			} `json:"sources"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		out := map[string][]map[string]any{}
		for name, l := range v.Sources {
			out[name] = l.Records
		}
		return out
	}
	logs := read(g)
	gh, st := logs["github"], logs["stripe"]
	if len(gh) != 1 || len(st) != 1 {
		t.Fatalf("kept: %v", logs)
	}
	headers := gh[0]["headers"].(map[string]any)
	if gh[0]["reason"] != "invalid_signature" || gh[0]["status"] != 401.0 || gh[0]["client_ip"] != "127.0.0.1" ||
		fmt.Sprint(headers["X-Github-Event"]) != "[push]" || fmt.Sprint(headers["X-Hub-Signature-256"]) != "[[71 bytes]]" {
		t.Fatalf("github's refusal: %v", gh[0])
	}
	if st[0]["reason"] != "stale_timestamp" {
		t.Fatalf("stripe's refusal: %v", st[0])
	}
	// Nothing of the signature is anywhere in what the API answers.
	if _, raw := g.adminRaw("GET", "/hookgate/rejected"); strings.Contains(raw, "abab") || strings.Contains(raw, "forged") {
		t.Fatalf("the log shows a signature or a body: %s", raw)
	}
	if status, _ := g.admin("GET", "/hookgate/rejected?source=nope"); status != 404 {
		t.Fatalf("an unknown source: %d", status)
	}
	if status, _ := g.admin("GET", "/hookgate/rejected?limit=0"); status != 400 {
		t.Fatalf("limit=0: %d", status)
	}

	out, err := g.cli("rejected", "--source", "github", "--headers")
	if err != nil || !strings.Contains(out, "github: 1 kept") || !strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "invalid_signature") ||
		!strings.Contains(out, "POST /webhooks/github") || !strings.Contains(out, "X-Github-Event: push") || strings.Contains(out, "stripe") {
		t.Fatalf("hookgate rejected --source github --headers: %v\n%s", err, out)
	}

	// The read above wrote the logs to the store: they outlive a crash.
	g.kill9()
	g2 := startGateway(t, dir, port, admin)
	if logs := read(g2); len(logs["github"]) != 1 || len(logs["stripe"]) != 1 || logs["github"][0]["reason"] != "invalid_signature" {
		t.Fatalf("after kill -9 and a restart: %v", logs)
	}
}
