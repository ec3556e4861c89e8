package assemble_test

import (
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

// TestProviderOptions: Plaid may go without static keys when it has API
// credentials; a key no preset reads is an error at its line.
func TestProviderOptions(t *testing.T) {
	base := "upstreams:\n  legacy:\n    url: http://x\nsources:\n  s:\n    path: /h\n    default: [legacy]\n"
	cases := map[string]string{
		"    provider: plaid\n    provider_options:\n      client_id: c\n      secret: s\n": "",
		"    provider: plaid\n": "no secret configured",
		"    provider: plaid\n    provider_options:\n      client_id: c\n      secret: s\n      region: eu\n":              "routes.yaml:9:5: source s: provider_options: unknown option region for provider plaid (known: client_id, secret, environment)",
		"    provider: github\n    secrets: [s-0123456789abcdef]\n    provider_options:\n      client_id: c\n":             "provider github takes no provider_options",
		"    verify:\n      header: X-Sig\n    secrets: [s-0123456789abcdef]\n    provider_options:\n      client_id: c\n": "provider_options needs a provider",
		"    provider: plaid\n    provider_options: [client_id]\n":                                                         "must map option names to values",
	}
	for src, want := range cases {
		cfg, err := config.Parse("routes.yaml", []byte(base+src), config.Options{})
		if err == nil {
			_, err = assemble.Config(cfg, ingest.Hooks{})
		}
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", src, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}
