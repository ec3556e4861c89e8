package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const allowRoutes = `upstreams:
  app:
    url: http://127.0.0.1:9000
allow_ips: [github, 192.0.2.0/24]
ip_ranges:
  refresh: 6h
sources:
  inherits:
    path: /a
    provider: github
    secrets: [x-0123456789abcdef]
    default: [app]
  own:
    path: /b
    provider: stripe
    secrets: [whsec_x]
    default: [app]
    allow_ips:
      - stripe
      - 2001:db8::/32
      - 198.51.100.7
  open:
    path: /c
    provider: github
    secrets: [x-0123456789abcdef]
    default: [app]
    allow_ips: []
`

func TestParseAllowIPs(t *testing.T) {
	cfg, err := Parse("routes.yaml", []byte(allowRoutes), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.AllowIPs.Set || !reflect.DeepEqual(cfg.AllowIPs.Entries, []string{"github", "192.0.2.0/24"}) || cfg.AllowIPs.At != (Pos{4, 12}) {
		t.Errorf("top-level allow_ips: %+v", cfg.AllowIPs)
	}
	if cfg.IPRanges.Refresh.Std() != 6*time.Hour || cfg.IPRanges.Off {
		t.Errorf("ip_ranges: %+v", cfg.IPRanges)
	}
	inherits, own, open := cfg.Sources[0].AllowIPs, cfg.Sources[1].AllowIPs, cfg.Sources[2].AllowIPs
	if inherits.Set || len(inherits.Entries) != 0 {
		t.Errorf("a source without allow_ips: %+v", inherits)
	}
	if !own.Set || !reflect.DeepEqual(own.Entries, []string{"stripe", "2001:db8::/32", "198.51.100.7"}) {
		t.Errorf("a source's own allow_ips: %+v", own)
	}
	if !open.Set || len(open.Entries) != 0 {
		t.Errorf("allow_ips: [] must be set and empty: %+v", open)
	}

	// Unset, nothing is limited and named ranges refresh daily.
	cfg, err = Parse("routes.yaml", []byte(strings.Replace(allowRoutes, "allow_ips: [github, 192.0.2.0/24]\nip_ranges:\n  refresh: 6h\n", "", 1)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AllowIPs.Set || cfg.IPRanges.Refresh.Std() != DefaultIPRangesRefresh || cfg.IPRanges.Off {
		t.Errorf("defaults: %+v %+v", cfg.AllowIPs, cfg.IPRanges)
	}
	cfg, err = Parse("routes.yaml", []byte(strings.Replace(allowRoutes, "refresh: 6h", "refresh: off", 1)), Options{})
	if err != nil || !cfg.IPRanges.Off {
		t.Errorf("refresh: off: %v %+v", err, cfg)
	}
}

func TestParseAllowIPsErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"[github, 192.0.2.0/24]", "[githb, 192.0.2.0/24]", `routes.yaml:4:13: allow_ips: "githb" is not an address, a CIDR or a named range; did you mean github?`},
		{"      - 2001:db8::/32", "      - 2001:db8::/129", `routes.yaml:20:9: source own.allow_ips: "2001:db8::/129" is not a CIDR`},
		{"      - 198.51.100.7", "      - 198.51.100.256", `routes.yaml:21:9: source own.allow_ips: "198.51.100.256" is not an address or a CIDR`},
		{"      - stripe", "      - strpe", `routes.yaml:19:9: source own.allow_ips: "strpe" is not an address, a CIDR or a named range; did you mean stripe?`},
		{"    allow_ips: []", "    allow_ips: 10.0.0.0/8", `routes.yaml:27:16: source open.allow_ips must be a list`},
		{"    allow_ips: []", "    allow_ips:", `routes.yaml:27:15: source open.allow_ips must be a list`},
		{"    allow_ips: []", "    allow_ips: [{cidr: 10.0.0.0/8}]", `routes.yaml:27:17: source open.allow_ips must be a string`},
		{"    allow_ips: []", "    allow_ips: [nope]", `(named ranges: apple-app-store, customer-io, github, knock, paddle, paddle-sandbox, pagerduty, paystack, persona, razorpay, revolut, sentry, square, square-sandbox, stripe, telegram, workos)`},
		{"refresh: 6h", "refresh: 10s", `routes.yaml:6:12: ip_ranges.refresh must be off or at least 1m0s`},
		{"refresh: 6h", "refresh: soon", `routes.yaml:6:12: ip_ranges.refresh: invalid duration "soon"`},
		{"refresh: 6h", "refersh: 6h", `routes.yaml:6:3: ip_ranges: unknown key "refersh"`},
	} {
		yaml := strings.Replace(allowRoutes, c.from, c.to, 1)
		_, err := Parse("routes.yaml", []byte(yaml), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant it to contain: %s", c.to, err, c.want)
		}
		if err != nil && strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: one mistake, several errors:\n%v", c.to, err)
		}
	}
}

// TestAllowIPsJSON: the JSON form carries allow_ips as the file does, and
// its errors name the JSON path.
func TestAllowIPsJSON(t *testing.T) {
	doc, err := Inline("/etc/hookgate/routes.yaml", []byte(allowRoutes))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ParseJSON("webhook_gateway routes", doc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, _ := Parse("/etc/hookgate/routes.yaml", []byte(allowRoutes), Options{})
	if !reflect.DeepEqual(fromJSON.AllowIPs.Entries, fromFile.AllowIPs.Entries) || fromJSON.IPRanges.Refresh.Std() != 6*time.Hour {
		t.Errorf("top level differs: %+v %+v", fromJSON.AllowIPs, fromJSON.IPRanges)
	}
	for i := range fromFile.Sources {
		a, b := fromJSON.Sources[i].AllowIPs, fromFile.Sources[i].AllowIPs
		if a.Set != b.Set || !reflect.DeepEqual(a.Entries, b.Entries) {
			t.Errorf("source %s: %+v from JSON, %+v from the file", fromFile.Sources[i].Name, a, b)
		}
	}
	bad := strings.Replace(string(doc), `"198.51.100.7"`, `"198.51.100.7/40"`, 1)
	_, err = ParseJSON("webhook_gateway routes", []byte(bad), Options{})
	if err == nil || !strings.Contains(err.Error(), `webhook_gateway routes: sources.own.allow_ips[2]: "198.51.100.7/40" is not a CIDR`) {
		t.Errorf("JSON error: %v", err)
	}
}
