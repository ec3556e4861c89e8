package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hookgateCmd runs the binary in dir, as an operator would beside a
// running gateway.
func hookgateCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCaddyNativeConfig runs a gateway whose Caddyfile names routes.yaml by
// absolute path, then does what config-management tools do beside it:
// validate, adapt, and reload an edited routes.yaml without --force.
func TestCaddyNativeConfig(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir := t.TempDir()
	port, admin := freePort(t), freePort(t)
	routesDir := filepath.Join(dir, "etc", "hookgate")
	if err := os.MkdirAll(routesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	routes := filepath.Join(routesDir, "routes.yaml")
	writeFile(t, routes, routesFor(up.addr))
	caddyfile := filepath.Join(dir, "Caddyfile")
	writeFile(t, caddyfile, fmt.Sprintf(`{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
}
:%d {
	webhook_gateway %s
	reverse_proxy %s
}
`, admin, dir, port, routes, passthrough.addr))
	g := startGateway(t, dir, port, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	body := []byte(`{"zen":"absolute"}`)
	hdr := github.sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "abs-1")
	if status, _, resp := g.post("/webhooks/github", hdr, body); status != 200 {
		t.Fatalf("signed event through an absolute routes path: %d %s", status, resp)
	}
	store := filepath.Join(dir, "caddy", "hookgate", "hookgate.db")
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("store not in Caddy's data folder: %v", err)
	}

	t.Run("validate beside the running gateway", func(t *testing.T) {
		start := time.Now()
		out, err := hookgateCmd(t, dir, "validate", "--config", caddyfile)
		if err != nil || !strings.Contains(out, "Valid configuration") {
			t.Fatalf("validate: %v\n%s", err, out)
		}
		if strings.Contains(out, "locked") {
			t.Fatalf("validate touched the store:\n%s", out)
		}
		t.Logf("validate took %s", time.Since(start))
	})

	t.Run("adapt shows the sources", func(t *testing.T) {
		out, err := hookgateCmd(t, dir, "adapt", "--config", caddyfile)
		if err != nil {
			t.Fatalf("adapt: %v\n%s", err, out)
		}
		for _, want := range []string{`"handler":"webhook_gateway"`, `"sources":{`, `"github":{`, `"path":"/webhooks/github"`, `"{env.HOOKGATE_E2E_UNSET}"`} {
			if !strings.Contains(out, want) {
				t.Errorf("adapted config lacks %s:\n%s", want, out)
			}
		}
		if strings.Contains(out, routes) {
			t.Errorf("adapted config names the routes file instead of carrying it:\n%s", out)
		}
	})

	t.Run("reload without --force applies an edited routes.yaml", func(t *testing.T) {
		if status := rawRequest(t, port, "POST", "/webhooks/added", nil, "{}"); status != 404 {
			t.Fatalf("before the edit: %d, want 404 under the claimed prefix", status)
		}
		edited := routesFor(up.addr) + `  added:
    path: /webhooks/added
    provider: github
    secrets: ["added-secret-0123456789"]
    default: [legacy]
`
		writeFile(t, routes, edited)
		out, err := hookgateCmd(t, dir, "reload", "--config", caddyfile)
		if err != nil {
			t.Fatalf("reload: %v\n%s", err, out)
		}
		http.DefaultClient.CloseIdleConnections()
		if status := rawRequest(t, port, "POST", "/webhooks/added", nil, "{}"); status != 401 {
			t.Fatalf("after the reload, unsigned POST to the new source: %d, want 401", status)
		}
		added := newSigner(t, "github", "added-secret-0123456789")
		b := []byte(`{"zen":"added"}`)
		h := added.sign(t, b, "")
		h.Set("X-GitHub-Delivery", "added-1")
		if status, _, resp := g.post("/webhooks/added", h, b); status != 200 {
			t.Fatalf("signed event to the new source: %d %s", status, resp)
		}
	})

	t.Run("the config API reads a source", func(t *testing.T) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/config/apps/http/servers/srv0/routes/0/handle/0/routes/sources/added/path", admin))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `"/webhooks/added"` {
			t.Fatalf("GET /config/…/sources/added/path: %d %s", resp.StatusCode, b)
		}
	})

	if got := passthrough.all(); len(got) != 0 {
		t.Fatalf("webhook requests reached the backend: %+v", got)
	}
}

// TestJSONConfigRunsAGateway runs the gateway from a Caddy JSON config with
// no routes.yaml, then changes a secret through the config API.
func TestJSONConfigRunsAGateway(t *testing.T) {
	up := newRecorder(t, "", nil)
	dir := t.TempDir()
	port, admin := freePort(t), freePort(t)
	cfg := fmt.Sprintf(`{
  "admin": {"listen": "127.0.0.1:%d"},
  "storage": {"module": "file_system", "root": %q},
  "apps": {"http": {"servers": {"hooks": {"listen": [":%d"], "routes": [
    {"handle": [{"handler": "webhook_gateway", "storage": %q, "routes": {
      "upstreams": {"legacy": {"url": "http://%s", "retry": {"initial_interval": "50ms", "max_interval": "200ms"}}},
      "sources": {"github": {"path": "/webhooks/github", "provider": "github", "secrets": ["json-secret-0123456789"], "default": ["legacy"]}}
    }}]},
    {"handle": [{"handler": "static_response", "status_code": 299}]}
  ]}}}}
}`, admin, filepath.Join(dir, "caddy-data"), port, filepath.Join(dir, "data", "hookgate.db"), up.addr)
	writeFile(t, filepath.Join(dir, "caddy.json"), cfg)
	g := startGatewayWith(t, dir, port, admin, "run", "--config", filepath.Join(dir, "caddy.json"))

	github := newSigner(t, "github", "json-secret-0123456789")
	body := []byte(`{"zen":"json"}`)
	hdr := github.sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "json-1")
	status, resp, text := g.post("/webhooks/github", hdr, body)
	if status != 200 {
		t.Fatalf("signed event: %d %s", status, text)
	}
	id := resp.Get("Hookgate-Event-Id")
	waitFor(t, "the delivery", 20*time.Second, func() bool { return len(up.byEvent()[id]) == 1 })

	// Rotate the secret through the config API: PATCH one value.
	req, _ := http.NewRequest(http.MethodPatch,
		fmt.Sprintf("http://127.0.0.1:%d/config/apps/http/servers/hooks/routes/0/handle/0/routes/sources/github/secrets", admin),
		strings.NewReader(`["rotated-secret-0123456789"]`))
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("PATCH secrets: %d %s", r.StatusCode, b)
	}
	http.DefaultClient.CloseIdleConnections()
	hdr = github.sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "json-2")
	if status, _, _ := g.post("/webhooks/github", hdr, body); status != 401 {
		t.Fatalf("old secret after rotation: %d, want 401", status)
	}
	rotated := newSigner(t, "github", "rotated-secret-0123456789")
	hdr = rotated.sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "json-3")
	if status, _, text := g.post("/webhooks/github", hdr, body); status != 200 {
		t.Fatalf("new secret after rotation: %d %s", status, text)
	}

	// A JSON config's errors name the JSON path.
	bad := strings.Replace(cfg, `"default": ["legacy"]`, `"default": ["legacyy"]`, 1)
	writeFile(t, filepath.Join(dir, "bad.json"), bad)
	out, err := hookgateCmd(t, dir, "validate", "--config", filepath.Join(dir, "bad.json"))
	if err == nil || !strings.Contains(out, `webhook_gateway routes: sources.github.default: unknown upstream`) {
		t.Fatalf("validate of a bad JSON config: %v\n%s", err, out)
	}
	var v any
	if json.Unmarshal([]byte(cfg), &v) != nil {
		t.Fatal("test config is not JSON")
	}
}

// TestMetricsWithTwoStoresSharingNames scrapes /metrics while two stores
// have sources and upstreams of the same names: it must answer 200.
func TestMetricsWithTwoStoresSharingNames(t *testing.T) {
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir := t.TempDir()
	portA, portB, admin := freePort(t), freePort(t), freePort(t)
	writeFile(t, filepath.Join(dir, "routes.yaml"), routesFor(up.addr))
	writeFile(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(`{
	admin 127.0.0.1:%d
	storage file_system %s/caddy-data
	metrics
}
:%d {
	webhook_gateway ./routes.yaml {
		storage ./a/hookgate.db
	}
	reverse_proxy %s
}
:%d {
	webhook_gateway ./routes.yaml {
		storage ./b/hookgate.db
	}
	reverse_proxy %s
}
`, admin, dir, portA, passthrough.addr, portB, passthrough.addr))
	g := startGateway(t, dir, portA, admin)
	github := newSigner(t, "github", "gh-e2e-secret-0123456789")
	for i, port := range []int{portA, portB} {
		body := []byte(fmt.Sprintf(`{"zen":"site %d"}`, i))
		hdr := github.sign(t, body, "")
		hdr.Set("X-GitHub-Delivery", fmt.Sprintf("site-%d", i))
		g.port = port
		if status, _, text := g.post("/webhooks/github", hdr, body); status != 200 {
			t.Fatalf("site %d: %d %s", i, status, text)
		}
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", admin))
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d\n%s", resp.StatusCode, metrics)
	}
	for _, store := range []string{"a", "b"} {
		want := fmt.Sprintf(`caddy_hookgate_breaker_open{store=%q,upstream="legacy"} 0`, filepath.Join(dir, store, "hookgate.db"))
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(string(metrics), "caddy_http_requests_total") && !strings.Contains(string(metrics), "caddy_admin_http_requests_total") {
		t.Errorf("Caddy's own metrics are missing:\n%.2000s", metrics)
	}
}

// TestValidateRoutesWarnsOutsideClaims: a source outside every claimed
// prefix is valid but warned about.
func TestValidateRoutesWarnsOutsideClaims(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	writeFile(t, routes, routesFor("127.0.0.1:1")+`  outside:
    path: /stripe-hooks
    provider: github
    secrets: ["x-secret-0123456789"]
    default: [legacy]
claim: [/webhooks/]
`)
	out, err := hookgateCmd(t, dir, "validate-routes", routes)
	if err != nil {
		t.Fatalf("validate-routes: %v\n%s", err, out)
	}
	for _, want := range []string{"valid: 5 sources", "claimed prefixes (unknown paths under them get 404): /webhooks/",
		"warning: source path /stripe-hooks lies outside every claimed prefix"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "lies outside every claimed prefix") != 1 {
		t.Errorf("sources inside the claim were warned about:\n%s", out)
	}
}
