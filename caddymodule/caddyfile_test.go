package caddymodule

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "Caddyfile")
	cases := []struct {
		name, input     string
		config, storage string
		err             string
	}{
		{name: "short form", input: "webhook_gateway ./routes.yaml", config: filepath.Join(dir, "routes.yaml")},
		{name: "absolute path", input: "webhook_gateway /etc/hookgate/routes.yaml", config: "/etc/hookgate/routes.yaml"},
		{name: "placeholder kept for provision", input: "webhook_gateway {env.ROUTES}", config: "{env.ROUTES}"},
		{name: "block form", input: "webhook_gateway {\n config conf/routes.yaml\n storage data/h.db\n}",
			config: filepath.Join(dir, "conf", "routes.yaml"), storage: filepath.Join(dir, "data", "h.db")},
		{name: "short form with storage block", input: "webhook_gateway routes.yaml {\n storage /var/lib/h.db\n}",
			config: filepath.Join(dir, "routes.yaml"), storage: "/var/lib/h.db"},
		{name: "no routes file", input: "webhook_gateway", err: "needs a routes file"},
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
		})
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
