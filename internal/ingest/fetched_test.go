package ingest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hookgate/hookgate/internal/store"
)

// TestStoreFetchedIsOneEventWithTheWebhook: an event fetched from Stripe's
// API is stored once, routed like a webhook, marked reconcile; fetched
// again it is a duplicate, and so is the webhook of the same event that
// arrives after it.
func TestStoreFetchedIsOneEventWithTheWebhook(t *testing.T) {
	const secret = "whsec_0123456789abcdef0123"
	h, _ := routingHarness(t, `upstreams:
  billing: {url: "http://127.0.0.1:1"}
  other: {url: "http://127.0.0.1:1"}
sources:
  stripe:
    path: /hooks/stripe
    provider: stripe
    secrets: ["`+secret+`"]
    default: [other]
    routes:
      - when: body.type == "invoice.paid"
        to: [billing]
`)
	body := []byte(`{"id":"evt_fetched_1","object":"event","type":"invoice.paid","livemode":false,"data":{"object":{"id":"in_1"}}}`)
	stored, err := h.p.StoreFetched(context.Background(), "stripe", body)
	if err != nil || !stored {
		t.Fatalf("first fetch: %v %v", stored, err)
	}
	if again, err := h.p.StoreFetched(context.Background(), "stripe", body); err != nil || again {
		t.Fatalf("the same event fetched again: stored %v, %v", again, err)
	}
	rec := h.do("POST", "/hooks/stripe", sign(t, "stripe", secret, body), body)
	if rec.Code != http.StatusOK || rec.Header().Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("the webhook after its fetched copy: %d duplicate=%q", rec.Code, rec.Header().Get("Hookgate-Duplicate"))
	}
	events, _, err := h.store.List(store.ListFilter{Limit: 10})
	if err != nil || len(events) != 1 {
		t.Fatalf("%d events stored (%v), want 1", len(events), err)
	}
	e, err := h.store.Event(events[0].ID)
	if err != nil || e.Event.Origin != store.OriginReconcile || len(e.Deliveries) != 1 || e.Deliveries[0].Upstream != "billing" {
		t.Fatalf("stored %+v (%v)", e, err)
	}
	if _, err := h.p.StoreFetched(context.Background(), "nobody", body); err == nil {
		t.Fatal("a fetch for no source stored")
	}
}
