package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestAlertRulesAndDashboard checks the shipped Prometheus rules with
// promtool (syntax, and the behaviour alerts_test.yml asks of them), then
// scrapes a real gateway's /metrics: every metric the rules and the Grafana
// dashboard name must be one the gateway exports, so renaming a metric
// without the rules fails here.
func TestAlertRulesAndDashboard(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed (apt-get install prometheus; scripts/test.sh installs it as root)")
	}
	rulesDir := filepath.Join(repoRoot(), "examples", "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = rulesDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	rules, err := os.ReadFile(filepath.Join(rulesDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dashboard, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "grafana", "hookgate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(dashboard, &dash); err != nil {
		t.Fatalf("examples/grafana/hookgate.json: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	used := metricNames(string(rules))
	if len(used) < 5 {
		t.Fatalf("alerts.yml names only %v", used)
	}
	usedByDashboard := metricNames(strings.Join(exprs, "\n"))

	exported := scrapeMetricNames(t)
	for _, set := range []struct {
		file  string
		names []string
	}{{"examples/prometheus/alerts.yml", used}, {"examples/grafana/hookgate.json", usedByDashboard}} {
		for _, name := range set.names {
			if !exported[name] {
				t.Errorf("%s uses %s, which the gateway does not export", set.file, name)
			}
		}
	}
	if t.Failed() {
		var have []string
		for n := range exported {
			have = append(have, n)
		}
		sort.Strings(have)
		t.Logf("exported: %s", strings.Join(have, ", "))
	}
}

// metricNames lists the Hookgate metric names an expression text uses.
func metricNames(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range regexp.MustCompile(`\bcaddy_hookgate_[a-z0-9_]+`).FindAllString(text, -1) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// scrapeMetricNames runs a gateway with an upstream, sends it one event
// (delivered) and one forged request (rejected), and returns the series
// names its /metrics serves, histograms' _bucket, _sum and _count included.
func scrapeMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	// Before any event: the series the alert rules take increase() of
	// exist at 0, so the first dead delivery or outage after a start is an
	// increase (a series born with its first sample has none).
	_, fresh := g.adminRaw("GET", "/metrics")
	for _, series := range []string{`caddy_hookgate_delivery_attempts_total{outcome="dead",upstream="legacy"} 0`,
		`caddy_hookgate_requests_total{outcome="unavailable",source="github"} 0`, `caddy_hookgate_requests_total{outcome="accepted",source="github"} 0`} {
		if !strings.Contains(fresh, series+"\n") {
			t.Errorf("a fresh gateway's /metrics lacks %s", series)
		}
	}
	// The store's disk use: its file, its bodies, its file system's room.
	for _, re := range []string{`caddy_hookgate_store_bytes\{kind="db",store="[^"]+hookgate\.db"\} [1-9][0-9]*`, `caddy_hookgate_store_bytes\{kind="bodies",store="[^"]+"\} [0-9]+`,
		`caddy_hookgate_store_free_bytes\{store="[^"]+"\} [1-9][0-9.e+]*`, `caddy_hookgate_store_filesystem_bytes\{store="[^"]+"\} [1-9][0-9.e+]*`} {
		if !regexp.MustCompile(re).MatchString(fresh) {
			t.Errorf("a fresh gateway's /metrics lacks %s", re)
		}
	}
	g.ackGitHubEvents(t, "metrics", 1)
	if status, _, _ := g.post("/webhooks/github", nil, []byte(`{"forged":true}`)); status != 401 {
		t.Fatalf("a forged request got %d", status)
	}
	waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()) == 1 })
	var metrics string
	// The dead series exists from the start at 0, so only the delivered
	// count says the attempt was recorded; and a scrape collects the
	// counters and the histograms concurrently, so it is no snapshot:
	// wait until one scrape shows both.
	waitFor(t, "the attempt counted and timed", 10*time.Second, func() bool {
		_, metrics = g.adminRaw("GET", "/metrics")
		return strings.Contains(metrics, `caddy_hookgate_delivery_attempts_total{outcome="delivered",upstream="legacy"} 1`+"\n") &&
			strings.Contains(metrics, `caddy_hookgate_delivery_duration_seconds_count{upstream="legacy"} 1`+"\n")
	})
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(caddy_hookgate_[a-z0-9_]+)[{ ]`).FindAllStringSubmatch(metrics, -1) {
		exported[m[1]] = true
	}
	return exported
}

// TestAccessLogCarriesTheOutcome: the handler puts each webhook's outcome
// and event id in the request's variables, so Caddy's access log carries
// them with log_append.
func TestAccessLogCarriesTheOutcome(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  github:\n    path: /webhooks/github\n    provider: github\n    secrets: [gh-e2e-secret-0123456789]\n    default: [legacy]\n", up.addr)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	access := filepath.Join(dir, "access.log")
	caddyfile := filepath.Join(dir, "Caddyfile")
	writeFile(t, caddyfile, strings.Replace(readFile(t, caddyfile), "\twebhook_gateway ./routes.yaml {",
		"\tlog {\n\t\toutput file "+access+"\n\t}\n\tlog_append hookgate_event_id {http.vars.hookgate.event_id}\n\tlog_append hookgate_outcome {http.vars.hookgate.outcome}\n\twebhook_gateway ./routes.yaml {", 1))
	g := startGateway(t, dir, port, admin)
	var id string
	for k := range g.ackGitHubEvents(t, "access", 1) {
		id = k
	}
	if status, _, _ := g.post("/webhooks/github", nil, []byte(`{"forged":true}`)); status != 401 {
		t.Fatalf("forged: %d", status)
	}
	var lines []map[string]any
	waitFor(t, "two access log lines", 10*time.Second, func() bool {
		lines = nil
		data, _ := os.ReadFile(access)
		for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			var entry map[string]any
			if json.Unmarshal([]byte(line), &entry) == nil {
				lines = append(lines, entry)
			}
		}
		return len(lines) >= 2
	})
	if lines[0]["hookgate_outcome"] != "accepted" || lines[0]["hookgate_event_id"] != id {
		t.Fatalf("the accepted request's access log line: %v", lines[0])
	}
	if lines[1]["hookgate_outcome"] != "rejected_missing_signature" {
		t.Fatalf("the forged request's access log line: %v", lines[1])
	}
}
