package assemble_test

import (
	"testing"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

// An upstream's short reach keys become Caddy's reverse_proxy transport,
// with no proxy unless one is named; a plain-http upstream that may go
// through a forward proxy sends its own host as Host.
func TestTransportFromReach(t *testing.T) {
	const routes = `
upstreams:
  direct:
    url: http://127.0.0.1:1
  secured:
    url: https://backend.internal
    tls:
      server_name: backend.internal
  proxied:
    url: http://backend.internal
    proxy: http://egress:3128
  envproxied:
    url: http://backend.internal
    proxy: env
  custom:
    url: http://backend.internal
    transport:
      network_proxy: {from: none}
sources:
  s:
    path: /s
    provider: github
    secrets: [s-0123456789abcdef]
    default: [direct, secured, proxied, envproxied, custom]
`
	cfg, err := config.Parse("routes.yaml", []byte(routes), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"secured":    `{"compression":false,"dial_timeout":"10s","network_proxy":{"from":"none"},"tls":{"server_name":"backend.internal"}}`,
		"proxied":    `{"compression":false,"dial_timeout":"10s","network_proxy":{"from":"url","url":"http://egress:3128"}}`,
		"envproxied": `{"compression":false,"dial_timeout":"10s"}`,
		"custom":     `{"network_proxy":{"from":"none"}}`,
	}
	if len(parts.Transports) != len(want) {
		t.Errorf("transports for %d upstreams, want %d: %v", len(parts.Transports), len(want), parts.Transports)
	}
	for name, w := range want {
		if got := string(parts.Transports[name]); got != w || parts.Upstreams[name].TransportID != w {
			t.Errorf("%s: transport %s, want %s", name, got, w)
		}
	}
	for name, host := range map[string]bool{"direct": false, "secured": false, "proxied": true, "envproxied": true, "custom": false} {
		if parts.Upstreams[name].HostFromURL != host {
			t.Errorf("%s: HostFromURL %v, want %v", name, parts.Upstreams[name].HostFromURL, host)
		}
	}
}
