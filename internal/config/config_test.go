package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/deliver"
)

const validConfig = `
storage:
  path: ./data/hookgate.db
  retention: 7d
max_body: 1MiB
upstreams:
  legacy:
    url: http://127.0.0.1:9000/base
    timeout: 3s
    concurrency: 4
    retry:
      max_attempts: 3
      initial_interval: 1s
      max_interval: 10s
  billing:
    url: https://billing.internal
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: ["{env.NEW}", "{env.OLD}", "{env.UNSET}"]
    tolerance: 5m
    default: [legacy]
    routes:
      - name: payments
        when: 'body.type startsWith "payment_intent."'
        to: [billing]
      - name: invoices
        schema: ./schemas/invoice.json
        to: legacy
  crm:
    path: /webhooks/crm
    verify:
      algorithm: hmac-sha256
      header: X-Crm-Signature
      prefix: "sha256="
      encoding: hex
      content: "{timestamp}.{body}"
      timestamp_header: X-Crm-Timestamp
    secrets: [plain-secret-0123456789]
    dedup:
      key: 'headers["x-crm-delivery"]'
      window: 72h
    response:
      status: 202
      body: accepted
    default: [legacy]
`

func expandEnv(env map[string]string) Options {
	return Options{Expand: func(s string) (string, error) {
		for k, v := range env {
			s = strings.ReplaceAll(s, "{env."+k+"}", v)
		}
		if strings.Contains(s, "{env.") {
			return "", nil // unset variables expand to nothing, as in Caddy
		}
		return s, nil
	}}
}

func TestParseValid(t *testing.T) {
	cfg, err := Parse("/etc/hookgate/routes.yaml", []byte(validConfig), expandEnv(map[string]string{"NEW": "whsec_new-0123456789", "OLD": "whsec_old-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.Path != "/etc/hookgate/data/hookgate.db" {
		t.Errorf("storage path %q not resolved against the routes file", cfg.Storage.Path)
	}
	if cfg.Storage.Retention.Std() != 7*24*time.Hour || cfg.MaxBody != 1<<20 {
		t.Errorf("retention %s, max_body %d", cfg.Storage.Retention, cfg.MaxBody)
	}
	legacy := cfg.Upstreams["legacy"]
	if legacy.URL.String() != "http://127.0.0.1:9000/base" || legacy.Timeout.Std() != 3*time.Second || legacy.Concurrency != 4 ||
		!reflect.DeepEqual(legacy.Delivery().Retry, deliver.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Second, MaxInterval: 10 * time.Second, RetryOn: deliver.DefaultRetryOn}) {
		t.Errorf("legacy upstream: %+v", legacy)
	}
	billing := cfg.Upstreams["billing"]
	if billing.Timeout.Std() != DefaultTimeout || billing.Concurrency != DefaultConcurrency || billing.Retry.MaxAttempts != DefaultMaxAttempts {
		t.Errorf("billing defaults not applied: %+v", billing)
	}
	if len(cfg.Sources) != 2 || cfg.Sources[0].Name != "stripe" || cfg.Sources[1].Name != "crm" {
		t.Fatalf("sources out of file order: %v", cfg.Sources)
	}
	stripe := cfg.Sources[0]
	if strings.Join(stripe.Secrets, ",") != "whsec_new-0123456789,whsec_old-0123456789" {
		t.Errorf("secrets %v: unset placeholder should be dropped", stripe.Secrets)
	}
	if len(stripe.Routes) != 2 || stripe.Routes[1].To.Names[0] != "legacy" || stripe.Routes[1].Schema.File != "/etc/hookgate/schemas/invoice.json" {
		t.Errorf("routes: %+v %+v", stripe.Routes[0], stripe.Routes[1])
	}
	if stripe.Routes[0].When.At.Line != 26 {
		t.Errorf("when position %+v, want line 26", stripe.Routes[0].When.At)
	}
	crm := cfg.Sources[1]
	if crm.Verify == nil || crm.Verify.Header != "X-Crm-Signature" || crm.Dedup.Window.Std() != 72*time.Hour || crm.Response.Status != 202 {
		t.Errorf("crm: %+v %+v", crm, crm.Verify)
	}
}

func TestParseErrors(t *testing.T) {
	base := "upstreams:\n  legacy:\n    url: http://127.0.0.1:9000\n"
	source := func(extra string) string {
		return base + "sources:\n  s:\n    path: /hook\n    provider: github\n    secrets: [x-0123456789abcdef]\n" + extra
	}
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "storag:\n  path: x\n" + source(""), "routes.yaml:1:1: routes file: unknown key \"storag\""},
		{"unknown upstream", source("    default: [legcy]\n"), "routes.yaml:9:14: source s.default: unknown upstream \"legcy\" (defined: legacy)"},
		{"bad duration", base + "  b:\n    url: http://x\n    timeout: 5 minutes\n" + strings.TrimPrefix(source(""), base), "routes.yaml:6:14: upstream b.timeout: invalid duration \"5 minutes\""},
		{"bad size", "max_body: lots\n" + source(""), "routes.yaml:1:11: max_body: invalid size"},
		{"no secret", base + "sources:\n  s:\n    path: /hook\n    verify:\n      header: X\n    secrets: [\"{env.NOPE}\"]\n", "routes.yaml:9:5: source s: no secret configured"},
		{"path without slash", strings.Replace(source(""), "/hook", "hook", 1), "path must start with /"},
		{"provider and verify", source("    verify:\n      header: X\n"), "provider and verify exclude each other"},
		{"neither provider nor verify", base + "sources:\n  s:\n    path: /hook\n    secrets: [x-0123456789abcdef]\n", "set provider (a preset) or verify"},
		{"route without to", source("    routes:\n      - when: 'true'\n"), "routes.yaml:10:9: source s.routes[0]: to is required"},
		{"route without condition", source("    routes:\n      - to: [legacy]\n"), "set when, schema, or both"},
		{"duplicate path", source("  t:\n    path: /hook\n    provider: github\n    secrets: [x-0123456789abcdef]\n"), "path /hook is already used by source s"},
		{"bad url scheme", "upstreams:\n  legacy:\n    url: ftp://x\n" + strings.TrimPrefix(source(""), base), "routes.yaml:3:10: upstream legacy.url: scheme must be http or https"},
		{"missing url", "upstreams:\n  legacy:\n    timeout: 1s\n" + strings.TrimPrefix(source(""), base), "upstream legacy: url is required"},
		{"repeated key", source("    path: /again\n"), "key \"path\" appears twice"},
		{"intervals reversed", "upstreams:\n  legacy:\n    url: http://x\n    retry:\n      initial_interval: 1m\n      max_interval: 1s\n" + strings.TrimPrefix(source(""), base), "max_interval (1s) is shorter than initial_interval (1m0s)"},
		{"window over retention", "storage:\n  retention: 1h\n" + source("    dedup:\n      window: 2h\n"), "dedup.window 2h0m0s is longer than storage.retention 1h0m0s"},
		{"zero concurrency", "upstreams:\n  legacy:\n    url: http://x\n    concurrency: 0\n" + strings.TrimPrefix(source(""), base), "routes.yaml:4:18: upstream legacy.concurrency must be at least 1"},
		{"yaml syntax", "sources: [\n", "routes.yaml:1:1: did not find expected node content"},
		{"yaml syntax without a line", "\tx: 1\n", "routes.yaml: found character that cannot start any token"},
		{"no sources", base, "no sources defined"},
		{"rejections kept", source("    rejections:\n      keep: 5000\n"), "routes.yaml:10:13: source s.rejections.keep must be between 0 and 1000, got 5000"},
		{"rejection bodies", source("    rejections:\n      body_bytes: 1MiB\n"), "routes.yaml:10:19: source s.rejections.body_bytes must be at most 64KiB"},
		{"non-2xx response", source("    response:\n      status: 500\n"), "response.status must be a 2xx status"},
		{"jetstream without url", "storage:\n  jetstream:\n    stream: H\n" + source(""), "routes.yaml:3:5: storage.jetstream: url is required"},
		{"jetstream stream name", "storage:\n  jetstream:\n    url: nats://x\n    stream: a.b\n" + source(""), "routes.yaml:4:13: storage.jetstream.stream: \"a.b\" must be"},
		{"jetstream replicas", "storage:\n  jetstream:\n    url: nats://x\n    replicas: 7\n" + source(""), "replicas: 7 is more than JetStream's 5"},
		{"jetstream and path", "storage:\n  path: x.db\n  jetstream:\n    url: nats://x\n" + source(""), "routes.yaml:4:5: storage: path and jetstream exclude each other"},
		{"jetstream and ordering", "storage:\n  jetstream:\n    url: nats://x\n" + "upstreams:\n  legacy:\n    url: http://x\n    ordering:\n      key: body.id\n" + strings.TrimPrefix(source(""), base), "routes.yaml:8:12: upstream legacy: ordering is not available with storage.jetstream"},
		{"jetstream upstream name", "storage:\n  jetstream:\n    url: nats://x\n" + "upstreams:\n  legacy.v2:\n    url: http://x\n" + strings.Replace(strings.TrimPrefix(source(""), base), "secrets: [x-0123456789abcdef]", "secrets: [x-0123456789abcdef]\n    default: [legacy.v2]", 1), "upstream legacy.v2: with storage.jetstream an upstream name must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("routes.yaml", []byte(c.yaml), Options{Expand: func(s string) (string, error) {
				if strings.Contains(s, "{env.") {
					return "", nil
				}
				return s, nil
			}})
			if err == nil {
				t.Fatalf("accepted:\n%s", c.yaml)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

func TestParseJetStream(t *testing.T) {
	cfg, err := Parse("routes.yaml", []byte("storage:\n  retention: 3d\n  jetstream:\n    url: '{env.NATS}'\n    replicas: 3\n    credentials: hg.creds\n"+
		"upstreams:\n  app:\n    url: http://x\nsources:\n  s:\n    path: /h\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [app]\n"),
		Options{Expand: func(s string) (string, error) {
			return strings.ReplaceAll(s, "{env.NATS}", "nats://a:4222,nats://b:4222"), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	js := cfg.Storage.JetStream
	if js == nil || js.URL != "nats://a:4222,nats://b:4222" || js.Stream != DefaultJetStreamStream || js.Replicas != 3 || js.Credentials != "hg.creds" || cfg.Storage.Retention.Std() != 72*time.Hour {
		t.Fatalf("storage: %+v %+v", cfg.Storage, js)
	}
}

func TestParseReportsEveryError(t *testing.T) {
	yaml := "upstreams:\n  a:\n    url: nope\n    timeout: x\nsources:\n  s:\n    path: /h\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [b]\n"
	_, err := Parse("r.yaml", []byte(yaml), Options{})
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) < 2 {
		t.Fatalf("want every error reported, got %q", err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(path, []byte(validConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, expandEnv(map[string]string{"NEW": "a"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != path || string(cfg.Storage.Path) != filepath.Join(dir, "data", "hookgate.db") {
		t.Fatalf("file %s storage %s", cfg.File, cfg.Storage.Path)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), Options{}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestUnits(t *testing.T) {
	// Caddy's units: go-humanize sizes, as the Caddyfile reads them.
	sizes := map[string]int64{"512": 512, "64KiB": 64 << 10, "5MiB": 5 << 20, "2MB": 2e6, "1 GiB": 1 << 30, "10B": 10,
		"5mb": 5e6, "10M": 10e6, "1.5MiB": 3 << 19, "64kib": 64 << 10}
	for in, want := range sizes {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "0", "5XB", "MiB", "99999999999GiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	durations := map[string]time.Duration{"90s": 90 * time.Second, "7d": 7 * 24 * time.Hour, "1h30m": 90 * time.Minute,
		"7d12h": 180 * time.Hour, "1.5d": 36 * time.Hour}
	for in, want := range durations {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "5", "xd", "1w"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

// TestUnitsInFiles: a routes file takes Caddy's units, and durations as
// whole nanoseconds as Caddy's JSON writes them; {$X} is named as the
// Caddyfile syntax it is.
func TestUnitsInFiles(t *testing.T) {
	routes := "storage:\n  retention: 7d12h\nmax_body: 1.5MiB\nmax_inflight_body: 5mb\nupstreams:\n  u:\n    url: http://x\n    timeout: 15000000000\n" +
		"sources:\n  s:\n    path: /s\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [u]\n"
	cfg, err := Parse("routes.yaml", []byte(routes), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.Retention.Std() != 180*time.Hour || cfg.MaxBody != 3<<19 || cfg.MaxInflightBody != 5e6 || cfg.Upstreams["u"].Timeout.Std() != 15*time.Second {
		t.Fatalf("retention %s, max_body %d, max_inflight_body %d, timeout %s", cfg.Storage.Retention, cfg.MaxBody, cfg.MaxInflightBody, cfg.Upstreams["u"].Timeout)
	}
	json := `{"storage":{"retention":604800000000000},"upstreams":{"u":{"url":"http://x","timeout":"1m"}},"sources":{"s":{"path":"/s","provider":"github","secrets":["s-0123456789abcdef"],"default":["u"]}}}`
	if cfg, err := ParseJSON("routes", []byte(json), Options{}); err != nil || cfg.Storage.Retention.Std() != 7*24*time.Hour {
		t.Fatalf("JSON nanoseconds: %v", err)
	}
	_, err = Parse("routes.yaml", []byte(strings.Replace(routes, "[s-0123456789abcdef]", `["{$GH_SECRET}"]`, 1)), Options{})
	if err == nil || !strings.Contains(err.Error(), "routes.yaml:13:15: source s.secrets: {$GH_SECRET} is Caddyfile syntax") || !strings.Contains(err.Error(), "write {env.GH_SECRET}") {
		t.Fatalf("{$X}: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(validConfig))
	f.Add([]byte("sources: {a: {path: /x, provider: github, secrets: [s-0123456789abcdef]}}"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.yaml", data, Options{})
		if err == nil && len(cfg.Sources) == 0 {
			t.Fatal("a config without sources was accepted")
		}
	})
}

func TestJSONSecretsAreNotPlaceholders(t *testing.T) {
	yaml := "upstreams:\n  u:\n    url: http://x\nsources:\n  s:\n    path: /h\n    provider: plaid\n    secrets: ['{\"kty\":\"EC\",\"kid\":\"k1\"}', \"{env.JWK}\"]\n"
	cfg, err := Parse("r.yaml", []byte(yaml), Options{Expand: func(s string) (string, error) {
		if s == "{env.JWK}" {
			return `{"kty":"EC","kid":"k2"}`, nil
		}
		if strings.Contains(s, "{") {
			return "", fmt.Errorf("unrecognized placeholder %s", s)
		}
		return s, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Sources[0].Secrets
	if len(got) != 2 || got[0] != `{"kty":"EC","kid":"k1"}` || got[1] != `{"kty":"EC","kid":"k2"}` {
		t.Fatalf("secrets %q", got)
	}
}

func TestUpstreamDeliveryOptions(t *testing.T) {
	yaml := `
max_pending: 5000
upstreams:
  billing:
    url: http://127.0.0.1:9000
    rate: 600/m
    burst: 5
    retry:
      max_age: 24h
      retry_on: [429, 5xx, network]
    breaker:
      failure_ratio: 0.3
      window: 30s
    ordering:
      key: body.data.object.id
    sign:
      scheme: standard-webhooks
      secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
sources:
  s:
    path: /h
    provider: stripe
    secrets: [x-0123456789abcdef]
    default: [billing]
`
	cfg, err := Parse("r.yaml", []byte(yaml), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Upstreams["billing"].Delivery()
	sign, ordering := cfg.Upstreams["billing"].Sign, cfg.Upstreams["billing"].Ordering
	if cfg.MaxPending != 5000 || b.Rate != 10 || b.Burst != 5 || b.Retry.MaxAge != 24*time.Hour ||
		!reflect.DeepEqual(b.Retry.RetryOn, deliver.RetryOn{Codes: map[int]bool{429: true}, Class5xx: true, Network: true}) {
		t.Errorf("upstream: %+v", b)
	}
	if b.Breaker != (deliver.BreakerPolicy{FailureRatio: 0.3, Window: 30 * time.Second, MinRequests: 10, Cooldown: 30 * time.Second}) {
		t.Errorf("breaker: %+v", b.Breaker)
	}
	if ordering == nil || ordering.Key.Src != "body.data.object.id" || sign == nil || sign.Scheme != "standard-webhooks" || sign.Secret == "" {
		t.Errorf("ordering/sign: %+v %+v", ordering, sign)
	}
	bad := map[string]string{
		"rate: fast":                             "invalid rate",
		"rate: 5/d":                              "invalid rate unit",
		"retry:\n      retry_on: [teapot]":       `"teapot" is not a status code`,
		"breaker:\n      failure_ratio: 2":       "failure_ratio must be a number in (0, 1]",
		"ordering: {}":                           "ordering: key is required",
		"sign:\n      scheme: hmac":              "sign.scheme must be standard-webhooks or source",
		"sign:\n      scheme: standard-webhooks": "needs a secret",
	}
	for frag, want := range bad {
		y := "upstreams:\n  u:\n    url: http://x\n    " + frag + "\nsources:\n  s:\n    path: /h\n    provider: stripe\n    secrets: [x-0123456789abcdef]\n"
		if _, err := Parse("r.yaml", []byte(y), Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", frag, err, want)
		}
	}
}

// TestReconcileBlock: the reconcile block's rules, each error at its line.
func TestReconcileBlock(t *testing.T) {
	base := "upstreams:\n  app: {url: \"http://127.0.0.1:9\"}\nsources:\n  s:\n    path: /hooks/s\n    provider: %s\n    secrets: [\"0123456789abcdef0123\"]\n    default: [app]\n    reconcile:\n%s"
	for _, c := range []struct{ provider, block, want string }{
		{"stripe", "      credentials: rk_test_0123456789\n", ""},
		{"github", "      credentials: ghp_0123456789\n      hook: repos/acme/app/hooks/123\n", ""},
		{"github", "      credentials: ghp_0123456789\n      hook: orgs/acme/hooks/9\n      every: 5m\n      lookback: 24h\n", ""},
		{"shopify", "      credentials: x\n", `routes.yaml:9:5: source s.reconcile: provider "shopify" has no event API`},
		{"stripe", "      every: 15m\n", "routes.yaml:10:7: source s.reconcile: credentials are required"},
		{"github", "      credentials: ghp_0123456789\n      hook: users/x/hooks/1\n", "routes.yaml:11:13: source s.reconcile: hook must be repos/OWNER/REPO/hooks/ID"},
		{"github", "      credentials: ghp_0123456789\n", "routes.yaml:10:7: source s.reconcile: hook must be repos/OWNER/REPO/hooks/ID"},
		{"stripe", "      credentials: rk\n      hook: repos/a/b/hooks/1\n", "routes.yaml:11:13: source s.reconcile: hook is for github, gitlab, paddle and paypal only"},
		{"gitlab", "      credentials: glpat-0123456789\n      hook: projects/acme%2Fapp/hooks/7\n      api_base: https://gitlab.example.com\n", ""},
		{"gitlab", "      credentials: glpat-0123456789\n      hook: groups/42/hooks/7\n", ""},
		{"gitlab", "      credentials: glpat-0123456789\n      hook: repos/acme/app/hooks/7\n", "routes.yaml:11:13: source s.reconcile: hook must be projects/ID/hooks/ID or groups/ID/hooks/ID"},
		{"paddle", "      credentials: pdl_live_apikey_0123\n      hook: ntfset_01hv6scjn6ex5bej5bdy4w9ax3\n", ""},
		{"paddle", "      credentials: pdl_live_apikey_0123\n", "routes.yaml:10:7: source s.reconcile: hook must be the notification destination's id"},
		{"paypal", "      credentials: \"AbCdEf:s3cr3t\"\n", ""},
		{"paypal", "      credentials: \"AbCdEf:s3cr3t\"\n      hook: 8PT597110X687430LKGECATA\n", ""},
		{"paypal", "      credentials: AbCdEf\n", "routes.yaml:10:7: source s.reconcile: paypal credentials are CLIENT_ID:SECRET"},
		{"square", "      credentials: EAAAl0123456789\n", ""},
		{"stripe", "      credentials: rk\n      every: 10s\n", "routes.yaml:11:14: source s.reconcile.every must be at least 1m"},
		{"stripe", "      credentials: rk\n      evry: 10m\n", `did you mean every?`},
	} {
		_, err := Parse("routes.yaml", []byte(fmt.Sprintf(base, c.provider, c.block)), Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %q: %v", c.provider, c.block, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %q: %v, want %q", c.provider, c.block, err, c.want)
		}
	}
}

// TestNoSecrets: a check without secrets leaves credentials' placeholders
// as written, names their sources, and still refuses a placeholder that
// is malformed or of the wrong kind, at its line.
func TestNoSecrets(t *testing.T) {
	doc := func(secret, alertTo string) string {
		return "upstreams:\n  app: {url: \"http://127.0.0.1:9\"}\nsources:\n  gh:\n    path: /hooks/gh\n    provider: github\n    secrets: [\"" + secret +
			"\"]\n    default: [app]\n  st:\n    path: /hooks/st\n    provider: stripe\n    secrets: [whsec_literal-0123456789]\n    default: [app]\n" +
			"alerts:\n  - name: ops\n    to: \"" + alertTo + "\"\n    on: {dead: true}\n"
	}
	expand := func(s string) (string, error) {
		return strings.NewReplacer("{env.UNSET}", "", "{env.ALERTS}", "").Replace(s), nil
	}
	if _, err := Parse("routes.yaml", []byte(doc("{env.UNSET}", "{env.ALERTS}")), Options{Expand: expand}); err == nil {
		t.Fatal("unset placeholders passed a check that resolves them")
	}
	cfg, err := Parse("routes.yaml", []byte(doc("{env.UNSET}", "{env.ALERTS}")), Options{Expand: expand, NoSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Unresolved["gh"] || cfg.Unresolved["st"] || !cfg.Unresolved[""] || cfg.Sources[0].Secrets[0] != "{env.UNSET}" {
		t.Fatalf("unresolved %v, secrets %v", cfg.Unresolved, cfg.Sources[0].Secrets)
	}
	for _, c := range []struct{ secret, want string }{
		{"{env.A}}", `routes.yaml:7:15: source gh.secrets: "{env.A}}" has a } that closes no placeholder`},
		{"{env.A}{env.B", "has an unclosed placeholder"},
		{"{$GH_SECRET}", "is Caddyfile syntax"},
		{"{http.request.header.X}", "is not a placeholder routes.yaml takes"},
	} {
		_, err := Parse("routes.yaml", []byte(doc(c.secret, "https://alerts.example.com/x")), Options{Expand: expand, NoSecrets: true})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.secret, err, c.want)
		}
	}
}
