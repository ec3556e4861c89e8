package ingest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

func TestPathKey(t *testing.T) {
	for in, want := range map[string]string{
		"/webhooks/github":           "/webhooks/github",
		"/webhooks/github/":          "/webhooks/github",
		"/WEBHOOKS/github":           "/webhooks/github",
		"/Webhooks/Github":           "/webhooks/github",
		"/webhooks//github":          "/webhooks/github",
		"//webhooks///github//":      "/webhooks/github",
		"/webhooks/github;x":         "/webhooks/github",
		"/webhooks;jsessionid=1/git": "/webhooks/git",
		"/webhooks/./github":         "/webhooks/github",
		"/webhooks/x/../github":      "/webhooks/github",
		"/../webhooks/github":        "/webhooks/github",
		`/webhooks\github`:           "/webhooks/github",
		"/webhooks%2Fgithub":         "/webhooks/github",
		"/webhooks%252Fgithub":       "/webhooks/github",
		"/webhooks/%67ithub":         "/webhooks/github",
		"/webhooks/github/.":         "/webhooks/github",
		"":                           "/",
		"/":                          "/",
	} {
		if got := ingest.PathKey(in); got != want {
			t.Errorf("ingest.PathKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlainPathsAreTheirOwnKey(t *testing.T) {
	for _, p := range []string{"/webhooks/github", "/a", "/a-b_c.d/e"} {
		if !ingest.IsPlainPath(p) {
			t.Errorf("%q not taken as plain", p)
		}
	}
	for _, p := range []string{"/a/", "/A", "/a//b", "/a/./b", "/a/../b", "/a;b", "/a%2f", `/a\b`, "a", ""} {
		if ingest.IsPlainPath(p) {
			t.Errorf("%q taken as plain", p)
		}
	}
}

func TestDefaultClaims(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want []string
	}{
		{[]string{"/webhooks/github", "/webhooks/stripe"}, []string{"/webhooks/"}},
		{[]string{"/webhooks/github"}, []string{"/webhooks/"}},
		{[]string{"/hooks/a/x", "/hooks/a/y", "/hooks/b"}, []string{"/hooks/"}},
		{[]string{"/hooks/a/x", "/hooks/a/y"}, []string{"/hooks/a/"}},
		{[]string{"/github", "/webhooks/stripe"}, nil},
		{[]string{"/webhooks/github", "/webhook/stripe"}, nil},
		{nil, nil},
	} {
		if got := ingest.DefaultClaims(c.keys); !slices.Equal(got, c.want) {
			t.Errorf("ingest.DefaultClaims(%v) = %v, want %v", c.keys, got, c.want)
		}
	}
}

func TestClaims(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/webhooks/github", "/WEBHOOKS/github/", "/webhooks//crm", "/webhooks/unknown", "/webhooks", "/webhooks/", "/Webhooks/a/b", "//127.0.0.1/webhooks/github", "//evil/WEBHOOKS/x", `\\host\webhooks\github`} {
		if !h.p.ClaimsPath(p) {
			t.Errorf("%s is not claimed", p)
		}
	}
	for _, p := range []string{"/", "/api/orders", "/webhooksx", "/webhooksx/github", "//host/api/orders"} {
		if h.p.ClaimsPath(p) {
			t.Errorf("%s is claimed", p)
		}
	}
}

// Every spelling of a source's path is verified: unsigned requests get 401,
// signed ones are accepted.
func TestPathVariantsAreVerified(t *testing.T) {
	h := newHarness(t)
	body := []byte(`{"zen":"variants"}`)
	for _, p := range []string{"/webhooks/github/", "/WEBHOOKS/github", "/webhooks//github", "/webhooks/github;x", "/Webhooks/Github", "/webhooks/./github", "/webhooks%2Fgithub"} {
		if rec := h.send(p, http.Header{}, body); rec.Code != 401 {
			t.Errorf("unsigned POST %s: %d, want 401", p, rec.Code)
		}
		hdr := sign(t, "github", "gh-secret-0123456789", body)
		hdr.Set("X-GitHub-Delivery", "variant "+p)
		if rec := h.send(p, hdr, body); rec.Code != 200 {
			t.Errorf("signed POST %s: %d, want 200: %s", p, rec.Code, rec.Body)
		}
	}
}

func TestClaimKeyAndExplicitClaims(t *testing.T) {
	cfgYAML := routesYAML + "claim: [/hooks/, /Other]\n"
	h := routingHarnessAt(t, cfgYAML, t.TempDir()+"/h.db")
	if !slices.Equal(h.p.Claimed(), []string{"/hooks/", "/other/"}) {
		t.Fatalf("claims %v", h.p.Claimed())
	}
	if !h.p.ClaimsPath("/OTHER") || !h.p.ClaimsPath("/hooks/x") || h.p.ClaimsPath("/webhooks/unknown") {
		t.Fatal("explicit claims replace the default one")
	}
	if got := h.p.Unclaimed(); len(got) != 3 {
		t.Fatalf("unclaimed sources %v, want all three", got)
	}
}

func TestPathsThatMatchAlikeAreRefused(t *testing.T) {
	yaml := `
upstreams:
  u: {url: "http://127.0.0.1:1"}
sources:
  a:
    path: /hooks/github
    provider: github
    secrets: [x-0123456789abcdef]
    default: [u]
  b:
    path: /Hooks/GitHub/
    provider: github
    secrets: [x-0123456789abcdef]
    default: [u]
`
	cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = compile(cfg)
	if err == nil || !strings.Contains(err.Error(), "routes.yaml:10:3: source b: path /Hooks/GitHub/ matches the same requests as source a") {
		t.Fatalf("got %v", err)
	}
}

// Refused requests are logged at INFO with source, reason and client IP,
// never a header value; a flood is sampled down.
func TestRejectionsLoggedAtInfoSampled(t *testing.T) {
	h := newHarness(t)
	core, logs := observer.New(zapcore.InfoLevel)
	h.p.Attach(h.store, zap.New(core), nil)
	h.p.SetClientIP(func(*http.Request) string { return "203.0.113.7" })
	const flood = 1000
	for range flood {
		h.send("/webhooks/github", http.Header{"X-Hub-Signature-256": {"sha256=deadbeef-secret-looking"}}, []byte(`{}`))
	}
	entries := logs.FilterMessage("request rejected").All()
	if len(entries) == 0 || len(entries) > flood/4 {
		t.Fatalf("%d rejection lines for %d refused requests", len(entries), flood)
	}
	e := entries[0]
	if e.Level != zapcore.InfoLevel {
		t.Fatalf("logged at %s", e.Level)
	}
	fields := e.ContextMap()
	if fields["source"] != "github" || fields["reason"] != "malformed_signature" || fields["client_ip"] != "203.0.113.7" {
		t.Fatalf("fields %v", fields)
	}
	for _, entry := range logs.All() {
		for k, v := range entry.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, "deadbeef") {
				t.Fatalf("a header value was logged in %s: %s", k, s)
			}
		}
	}
}
