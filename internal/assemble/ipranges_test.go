package assemble_test

import (
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

// Named ranges are fetched again only when some source's list (its own, or
// the default it takes) names one, and never with refresh off.
func TestIPRangesRefreshOnlyForNamedRanges(t *testing.T) {
	const source = "upstreams:\n  u:\n    url: http://127.0.0.1:1\nsources:\n  s:\n    path: /s\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [u]\n"
	for _, c := range []struct {
		name, top, own string
		want           time.Duration
	}{
		{"named default", "allow_ips: [github]\n", "", config.DefaultIPRangesRefresh},
		{"named on the source", "ip_ranges: {refresh: 1h}\n", "    allow_ips: [stripe, 192.0.2.0/24]\n", time.Hour},
		{"addresses only", "allow_ips: [192.0.2.0/24, \"2001:db8::1\"]\n", "", 0},
		{"the source turns the named default off", "allow_ips: [github]\n", "    allow_ips: []\n", 0},
		{"refresh off", "allow_ips: [github]\nip_ranges: {refresh: off}\n", "", 0},
	} {
		cfg, err := config.Parse("routes.yaml", []byte(c.top+source+c.own), config.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		parts, err := assemble.Config(cfg, ingest.Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if parts.IPRangesRefresh != c.want {
			t.Errorf("%s: refresh %s, want %s", c.name, parts.IPRangesRefresh, c.want)
		}
	}
}
