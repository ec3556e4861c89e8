package ingest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/verify"
)

func compileYAML(t *testing.T, yaml string) error {
	t.Helper()
	cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{Expand: expandEnv})
	if err != nil {
		return err
	}
	_, err = compile(cfg)
	return err
}

// expandEnv expands {env.NAME} as Caddy's replacer does.
func expandEnv(s string) (string, error) {
	for {
		start := strings.Index(s, "{env.")
		if start < 0 {
			return s, nil
		}
		end := strings.Index(s[start:], "}")
		if end < 0 {
			return s, nil
		}
		s = s[:start] + os.Getenv(s[start+5:start+end]) + s[start+end+1:]
	}
}

func oneSource(source string) string {
	return "upstreams:\n  u: {url: \"http://127.0.0.1:1\"}\nsources:\n  s:\n    path: /hooks/s\n    default: [u]\n" + source
}

// A secret too short to be a MAC key, or a bare prefix whose placeholder
// expanded to nothing, fails the load with its file and line.
func TestWeakSharedKeysAreRefused(t *testing.T) {
	t.Setenv("HOOKGATE_TEST_UNSET", "")
	for name, c := range map[string]struct{ source, err string }{
		"whsec prefix alone (Standard Webhooks)": {"    provider: svix\n    secrets: [\"whsec_{env.HOOKGATE_TEST_UNSET}\"]\n", `routes.yaml:8:5: source s: secret 1 is only the prefix "whsec_"`},
		"stripe's bare prefix":                   {"    provider: stripe\n    secrets: [\"whsec_\"]\n", `secret 1 is only the prefix "whsec_"`},
		"short raw key":                          {"    provider: github\n    secrets: [hunter2]\n", "secret 1 gives a 7-byte key; at least 16"},
		"short decoded key":                      {"    provider: svix\n    secrets: [\"whsec_c2hvcnQ=\"]\n", "secret 1 gives a 5-byte key"},
		"short key in a declarative spec":        {"    verify: {algorithm: hmac-sha256, header: X-Sig}\n    secrets: [abc]\n", "secret 1 gives a 3-byte key"},
		"short key in a hash spec":               {"    verify: {algorithm: hash-sha256, header: X-Sig, content: \"{secret}{body}\"}\n    secrets: [abc]\n", "secret 1 gives a 3-byte key"},
		"short hex key (adyen)":                  {"    provider: adyen\n    secrets: [\"00ff\"]\n", "secret 1 gives a 2-byte key"},
	} {
		t.Run(name, func(t *testing.T) {
			err := compileYAML(t, oneSource(c.source))
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, want %q", err, c.err)
			}
		})
	}
	for name, source := range map[string]string{
		"long raw key":        "    provider: github\n    secrets: [\"0123456789abcdef\"]\n",
		"token (not a key)":   "    provider: gitlab\n    secrets: [tok]\n",
		"public key":          "    provider: discord\n    secrets: [\"" + strings.Repeat("ab", 32) + "\"]\n",
		"placeholder dropped": "    provider: github\n    secrets: [\"{env.HOOKGATE_TEST_UNSET}\", \"0123456789abcdef\"]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := compileYAML(t, oneSource(source)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A captured GitHub delivery re-sent with fresh, unsigned delivery ids is a
// duplicate: the signature covers neither an id nor a timestamp, so the
// body's digest is a second dedup key.
func TestReplayWithFreshUnsignedIDIsADuplicate(t *testing.T) {
	h := newHarness(t)
	body := []byte(`{"action":"opened","number":7}`)
	first := sign(t, "github", "gh-secret-0123456789", body)
	first.Set("X-GitHub-Delivery", "delivery-original")
	rec := h.send("/webhooks/github", first, body)
	if rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") != "" {
		t.Fatalf("original: %d %v", rec.Code, rec.Header())
	}
	id := rec.Header().Get("Hookgate-Event-Id")
	for i := range 3 {
		replay := first.Clone()
		replay.Set("X-GitHub-Delivery", fmt.Sprintf("fresh-%d", i))
		rec := h.send("/webhooks/github", replay, body)
		if rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") != "true" || rec.Header().Get("Hookgate-Event-Id") != id {
			t.Fatalf("replay %d with a fresh id: %d %v", i, rec.Code, rec.Header())
		}
	}
	if n := len(h.pending(t, "legacy")); n != 1 {
		t.Fatalf("%d deliveries pending, want the original's only", n)
	}
}

func TestReplayDigestSwitchAndWhoGetsIt(t *testing.T) {
	yaml := strings.Replace(routesYAML, "    secrets: [gh-secret-0123456789]\n", "    secrets: [gh-secret-0123456789]\n    dedup:\n      replay_digest: false\n", 1)
	h := routingHarnessAt(t, yaml, t.TempDir()+"/h.db")
	h.p.Attach(h.store, nil, func() time.Time { return testNow })
	body := []byte(`{"action":"opened","number":8}`)
	for i := range 2 {
		hdr := sign(t, "github", "gh-secret-0123456789", body)
		hdr.Set("X-GitHub-Delivery", fmt.Sprintf("switch-%d", i))
		if rec := h.send("/webhooks/github", hdr, body); rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") != "" {
			t.Fatalf("with replay_digest: false, event %d: %d %v", i, rec.Code, rec.Header())
		}
	}
	for name, want := range map[string]bool{
		"github": true, "shopify": true, "bitbucket": true, "hubspot-v1": true, "hubspot-v2": true, "woocommerce": true,
		"asana": true, "twilio": true, "stripe": false, "svix": false, "slack": false, "mailgun": false, "discord": false, "plaid": false,
	} {
		p, ok := verify.Lookup(name)
		if !ok {
			t.Fatalf("no preset %s", name)
		}
		if p.Replayable() != want {
			t.Errorf("%s: replayable %v, want %v", name, p.Replayable(), want)
		}
	}
}
