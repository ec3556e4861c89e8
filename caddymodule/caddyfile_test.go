package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

const testRoutes = `upstreams:
  legacy: {url: "http://127.0.0.1:9000"}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: ["{env.GH_SECRET}", "x-secret-0123456789"]
    default: [legacy]
`

func writeTestRoutes(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(testRoutes), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestUnmarshalCaddyfile(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "Caddyfile")
	writeTestRoutes(t, filepath.Join(dir, "routes.yaml"))
	writeTestRoutes(t, filepath.Join(dir, "conf", "routes.yml"))
	abs := filepath.Join(dir, "etc", "hookgate", "routes.yaml")
	writeTestRoutes(t, abs)
	cases := []struct {
		name, input     string
		inlined         bool // the routes file is inlined
		config, storage string
		err             string
	}{
		{name: "short form", input: "webhook_gateway ./routes.yaml", inlined: true},
		{name: "absolute path", input: "webhook_gateway " + abs, inlined: true},
		{name: "placeholder kept for provision", input: "webhook_gateway {env.ROUTES}", config: "{env.ROUTES}"},
		{name: "block form", input: "webhook_gateway {\n config conf/routes.yml\n storage data/h.db\n}",
			inlined: true, storage: filepath.Join(dir, "data", "h.db")},
		{name: "short form with storage block", input: "webhook_gateway routes.yaml {\n storage /var/lib/h.db\n}",
			inlined: true, storage: "/var/lib/h.db"},
		{name: "no routes file", input: "webhook_gateway", err: "needs a routes file"},
		{name: "not a routes file", input: "webhook_gateway ./routes", err: `"./routes" is neither a matcher nor a routes file`},
		{name: "missing routes file", input: "webhook_gateway ./nope.yaml", err: "reading routes file: open " + filepath.Join(dir, "nope.yaml")},
		{name: "routes twice", input: "webhook_gateway a.yaml {\n config b.yaml\n}", err: "routes file given twice"},
		{name: "extra argument", input: "webhook_gateway a.yaml b.yaml", err: "wrong argument count"},
		{name: "unknown subdirective", input: "webhook_gateway {\n config a.yaml\n store x\n}", err: `unknown subdirective "store"`},
		{name: "storage without value", input: "webhook_gateway {\n config a.yaml\n storage\n}", err: "wrong argument count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := caddyfile.NewDispenser(mustTokens(t, cf, c.input))
			var h Handler
			err := h.UnmarshalCaddyfile(d)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want error containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Config != c.config || h.Storage != c.storage {
				t.Fatalf("config %q storage %q, want %q %q", h.Config, h.Storage, c.config, c.storage)
			}
			if c.inlined != (h.Routes != nil) {
				t.Fatalf("routes inlined: %v", h.Routes)
			}
			if c.inlined {
				doc, err := h.Routes.Written()
				if err != nil || !strings.Contains(string(doc), `"sources":{"github":{"path":"/webhooks/github"`) {
					t.Fatalf("routes not inlined as written: %s %v", doc, err)
				}
			}
		})
	}
}

// adapt runs the Caddyfile adapter as `caddy adapt` does.
func adapt(t *testing.T, dir, caddyfileText string) (string, error) {
	t.Helper()
	cf := filepath.Join(dir, "Caddyfile")
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfileText), map[string]any{"filename": cf})
	return string(out), err
}

func TestDirectiveMatchersAndRoutesFile(t *testing.T) {
	dir := t.TempDir()
	writeTestRoutes(t, filepath.Join(dir, "routes.yaml"))
	abs := filepath.Join(dir, "etc", "routes.yaml")
	writeTestRoutes(t, abs)
	for _, c := range []struct{ name, directive, match string }{
		{"absolute short form", "webhook_gateway " + abs, ""},
		{"path matcher", "webhook_gateway /webhooks/* ./routes.yaml", `"path":["/webhooks/*"]`},
		{"path matcher and absolute file", "webhook_gateway /webhooks/* " + abs, `"path":["/webhooks/*"]`},
		{"named matcher", "@hooks path /webhooks/*\n\twebhook_gateway @hooks ./routes.yaml", `"path":["/webhooks/*"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := adapt(t, dir, ":8080 {\n\t"+c.directive+"\n\treverse_proxy 127.0.0.1:9000\n}\n")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, `"handler":"webhook_gateway","routes":{`) || !strings.Contains(out, `"sources":{"github":{`) {
				t.Fatalf("routes not inlined:\n%s", out)
			}
			if c.match != "" && !strings.Contains(out, c.match) {
				t.Fatalf("matcher %s missing:\n%s", c.match, out)
			}
			if c.match == "" && strings.Contains(out, `"match"`) {
				t.Fatalf("absolute routes file taken for a matcher:\n%s", out)
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
		})
	}
	_, err := adapt(t, dir, ":8080 {\n\twebhook_gateway /etc/caddy/routes\n}\n")
	if err == nil || !strings.Contains(err.Error(), "is read as a request matcher") {
		t.Fatalf("an ambiguous token gets no advice: %v", err)
	}
}

// A routes file with an error is refused when the Caddyfile is adapted,
// with the file, line and column.
func TestAdaptReportsRoutesFileLine(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(routes, []byte(strings.Replace(testRoutes, "default: [legacy]", "default: [legacyy]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := adapt(t, dir, ":8080 {\n\twebhook_gateway ./routes.yaml\n}\n")
	want := routes + `:8:14: source github.default: unknown upstream "legacyy"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func mustTokens(t *testing.T, filename, input string) []caddyfile.Token {
	t.Helper()
	tokens, err := caddyfile.Tokenize([]byte(input), filename)
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}
