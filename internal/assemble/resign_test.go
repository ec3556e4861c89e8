package assemble_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

func TestResigning(t *testing.T) {
	const routes = `
upstreams:
  gateway-signed:
    url: http://127.0.0.1:1
    sign:
      scheme: standard-webhooks
      secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
  provider-signed:
    url: http://127.0.0.1:2
    sign:
      scheme: source
sources:
  stripe:
    path: /stripe
    provider: stripe
    secrets: [whsec_stripe_secret]
    default: [gateway-signed, provider-signed]
`
	cfg, err := config.Parse("routes.yaml", []byte(routes), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","type":"charge.succeeded"}`)
	received := time.Unix(1700000000, 0)
	stripePreset, _ := verify.Lookup("stripe")
	original, _ := samples.Sign(stripePreset, "whsec_stripe_secret", samples.Sample{Body: body, Header: http.Header{}}, "", received)
	ev := &store.Event{ID: store.ID{1, 2, 3}, Source: "stripe", Method: "POST", Path: "/stripe", Host: "hooks.example.com", Proto: "https", Header: original, Body: body}
	later := received.Add(time.Hour)

	// The provider's own signature is stale an hour later.
	stripe, _ := stripePreset.Compile([]string{"whsec_stripe_secret"}, verify.Options{})
	if _, err := stripe.Verify(&verify.Request{Body: body, Header: original, Now: later}); err == nil {
		t.Fatal("an hour-old Stripe signature verified")
	}

	req := httptest.NewRequest("POST", "http://backend/stripe", nil)
	req.Header = original.Clone()
	if err := parts.Upstreams["provider-signed"].Sign(req, ev, later); err != nil {
		t.Fatal(err)
	}
	if _, err := stripe.Verify(&verify.Request{Body: body, Header: req.Header, Now: later}); err != nil {
		t.Fatalf("re-signed with the provider scheme, rejected: %v", err)
	}

	req = httptest.NewRequest("POST", "http://backend/stripe", nil)
	req.Header = original.Clone()
	if err := parts.Upstreams["gateway-signed"].Sign(req, ev, later); err != nil {
		t.Fatal(err)
	}
	sw, _ := verify.Lookup("standard-webhooks")
	gateway, _ := sw.Compile([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, verify.Options{})
	if _, err := gateway.Verify(&verify.Request{Body: body, Header: req.Header, Now: later}); err != nil {
		t.Fatalf("gateway signature rejected: %v", err)
	}
	if req.Header.Get("webhook-id") != ev.ID.String() || req.Header.Get("Stripe-Signature") == "" {
		t.Fatalf("headers: %v", req.Header)
	}
}

func TestResigningRefusesUnsignableSources(t *testing.T) {
	const routes = "upstreams:\n  u:\n    url: http://x\n    sign:\n      scheme: source\nsources:\n  d:\n    path: /d\n    provider: discord\n    secrets: [\"0000000000000000000000000000000000000000000000000000000000000000\"]\n    default: [u]\n"
	cfg, err := config.Parse("routes.yaml", []byte(routes), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assemble.Config(cfg, ingest.Hooks{}); err == nil || !strings.Contains(err.Error(), "routes.yaml:4:5: upstream u: sign: source cannot re-sign events of source d") {
		t.Fatalf("got %v", err)
	}
}
