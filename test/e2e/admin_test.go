package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func (g *gateway) admin(method, path string) (int, map[string]any) {
	g.t.Helper()
	req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", g.adminPort, path), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (g *gateway) cli(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("HOOKGATE_ADMIN=127.0.0.1:%d", g.adminPort))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAdminAPIAndCLI drives each admin endpoint and CLI command against a
// running gateway: dead letters, masked details, replay, cancel, bulk
// replay, stats, metrics, and parameter validation.
func TestAdminAPIAndCLI(t *testing.T) {
	var healthy atomic.Bool
	up := newRecorder(t, "", func(int) int {
		if healthy.Load() {
			return 200
		}
		return 500
	})
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`
upstreams:
  legacy:
    url: http://%s
    retry: {max_attempts: 1}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy]
`, up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	var ids []string
	for i := range 3 {
		body := []byte(fmt.Sprintf(`{"n":%d}`, i))
		h := github.sign(t, body, "")
		h.Set("X-GitHub-Delivery", fmt.Sprint("admin-", i))
		status, hdr, _ := g.post("/webhooks/github", h, body)
		if status != 200 {
			t.Fatalf("post: %d", status)
		}
		ids = append(ids, hdr.Get("Hookgate-Event-Id"))
	}
	waitFor(t, "three dead events", 20*time.Second, func() bool {
		_, out := g.admin("GET", "/hookgate/events?status=dead")
		events, _ := out["events"].([]any)
		return len(events) == 3
	})

	// Listing: newest first, paged with a cursor.
	_, page1 := g.admin("GET", "/hookgate/events?limit=2")
	events := page1["events"].([]any)
	if len(events) != 2 || events[0].(map[string]any)["id"] != ids[2] || page1["next_cursor"] == nil {
		t.Fatalf("page 1: %v", page1)
	}
	_, page2 := g.admin("GET", "/hookgate/events?limit=2&cursor="+page1["next_cursor"].(string))
	if ev := page2["events"].([]any); len(ev) != 1 || ev[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("page 2: %v", page2)
	}

	// Detail: the signature is masked, attempts are there.
	status, detail := g.admin("GET", "/hookgate/events/"+ids[0])
	headers := detail["headers"].(map[string]any)
	if status != 200 || headers["X-Hub-Signature-256"].([]any)[0] != "[masked]" || detail["body"] != `{"n":0}` {
		t.Fatalf("detail %d: %v", status, detail)
	}
	attempts := detail["deliveries"].([]any)[0].(map[string]any)["history"].([]any)
	if len(attempts) != 1 || attempts[0].(map[string]any)["status"] != 500.0 {
		t.Fatalf("attempts: %v", attempts)
	}

	// Validation and unknown ids.
	for path, want := range map[string]int{
		"/hookgate/events?status=lost":                400,
		"/hookgate/events?limit=0":                    400,
		"/hookgate/events?since=yesterday":            400,
		"/hookgate/events/not-an-id":                  400,
		"/hookgate/events/01ARZ3NDEKTSV4RRFFQ69G5FAV": 404,
		"/hookgate/nothing":                           404,
	} {
		if status, _ := g.admin("GET", path); status != want {
			t.Errorf("GET %s: %d, want %d", path, status, want)
		}
	}
	if status, _ := g.admin("POST", "/hookgate/events/01ARZ3NDEKTSV4RRFFQ69G5FAV/replay"); status != 404 {
		t.Errorf("replaying an unknown event: %d, want 404", status)
	}

	// CLI: list and stats as tables; replay one event once the upstream heals.
	out, err := g.cli("events", "list", "--status", "dead")
	if err != nil || strings.Count(out, "legacy:dead(1)") != 3 {
		t.Fatalf("events list: %v\n%s", err, out)
	}
	out, err = g.cli("stats")
	if err != nil || !strings.Contains(out, "3 dead") || !strings.Contains(out, "github  accepted  3") ||
		!regexp.MustCompile(`(?m)^github\s+3\s+[0-9.]+ (B|KiB)\s+[0-9.]+ B$`).MatchString(out) {
		t.Fatalf("stats (each source's events, stored bytes and body bytes): %v\n%s", err, out)
	}
	healthy.Store(true)
	if out, err = g.cli("events", "replay", ids[0]); err != nil || !strings.Contains(out, "replayed: 1") {
		t.Fatalf("events replay: %v\n%s", err, out)
	}
	waitFor(t, "the replayed delivery", 20*time.Second, func() bool {
		_, d := g.admin("GET", "/hookgate/events/"+ids[0])
		return d["status"] == "delivered"
	})
	// The plan first: two dead deliveries to legacy, nothing replayed.
	if out, err = g.cli("replay", "--status", "dead", "--dry-run"); err != nil || !strings.Contains(out, "would replay 2 deliveries") ||
		!strings.Contains(out, "  legacy: 2") || !strings.Contains(out, "for example: ") {
		t.Fatalf("bulk replay --dry-run: %v\n%s", err, out)
	}
	if _, d := g.admin("GET", "/hookgate/events?status=dead"); len(d["events"].([]any)) != 2 {
		t.Fatalf("the dry run replayed something: %v", d)
	}
	// Bulk replay of the rest, with progress, through the CLI.
	if out, err = g.cli("replay", "--status", "dead", "--page", "1"); err != nil || !strings.Contains(out, "replayed: 2") {
		t.Fatalf("bulk replay: %v\n%s", err, out)
	}
	waitFor(t, "all delivered", 20*time.Second, func() bool {
		_, out := g.admin("GET", "/hookgate/events?status=delivered")
		ev, _ := out["events"].([]any)
		return len(ev) == 3
	})

	// Cancel: a pending retry stops.
	healthy.Store(false)
	routesRetry := strings.Replace(routes, "retry: {max_attempts: 1}", "retry: {max_attempts: 50, initial_interval: 1h, max_interval: 1h}", 1)
	writeFile(t, dir+"/routes.yaml", routesRetry)
	if status, resp := g.load(readFile(t, dir+"/Caddyfile")); status != 200 {
		t.Fatalf("reload: %s", resp)
	}
	body := []byte(`{"n":99}`)
	h := github.sign(t, body, "")
	h.Set("X-GitHub-Delivery", "admin-cancel")
	_, hdr, _ := g.post("/webhooks/github", h, body)
	cancelID := hdr.Get("Hookgate-Event-Id")
	waitFor(t, "first failed attempt", 20*time.Second, func() bool {
		_, d := g.admin("GET", "/hookgate/events/"+cancelID)
		ds, _ := d["deliveries"].([]any)
		return len(ds) == 1 && ds[0].(map[string]any)["attempts"].(float64) == 1
	})
	if out, err = g.cli("events", "cancel", cancelID); err != nil || !strings.Contains(out, "canceled: 1") {
		t.Fatalf("cancel: %v\n%s", err, out)
	}
	if _, d := g.admin("GET", "/hookgate/events/"+cancelID); d["status"] != "canceled" {
		t.Fatalf("after cancel: %v", d["status"])
	}

	// The admin API lives on the admin listener only.
	resp, err := http.Get(g.url("/hookgate/stats"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := passthrough.all(); len(got) != 1 || got[0].URI != "/hookgate/stats" {
		t.Fatalf("/hookgate/ on the site was not passed through: %v", got)
	}

	// Metrics on Caddy's metrics endpoint.
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", g.adminPort))
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`caddy_hookgate_requests_total{outcome="accepted",source="github"} 4`,
		`caddy_hookgate_delivery_attempts_total{outcome="dead",upstream="legacy"} 3`,
		`caddy_hookgate_ack_duration_seconds_count{source="github"} 4`,
		`caddy_hookgate_pending_deliveries{store=`,
		`caddy_hookgate_breaker_open{store=`,
		`,upstream="legacy"} 0`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
