package ingest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/verify"
)

const stripeSecret = "whsec_body-format-0123456789"

// stripeYAML has one source that parses bodies for a rule and one that
// only reads its dedup key (the fast path).
const stripeYAML = `
upstreams:
  legacy:
    url: http://127.0.0.1:1
  billing:
    url: http://127.0.0.1:2
sources:
  ruled:
    path: /ruled
    provider: stripe
    secrets: [` + stripeSecret + `]
    default: [legacy]
    routes:
      - name: big
        when: 'body.amount > 100'
        to: [billing]
  plain:
    path: /plain
    provider: stripe
    secrets: [` + stripeSecret + `]
    default: [legacy]
`

func (h *harness) sendAs(t *testing.T, path, contentType, body string) (code int, duplicate string) {
	t.Helper()
	hdr := signWith(t, "stripe", stripeSecret, []byte(body), "")
	hdr.Set("Content-Type", contentType)
	rec := h.do("POST", path, hdr, []byte(body))
	return rec.Code, rec.Header().Get("Hookgate-Duplicate")
}

// The same signed Stripe event re-sent as a form is still that event: the
// body is read as Stripe sends it (JSON), whatever the unsigned
// Content-Type says, so it gets the same dedup key and is delivered once.
func TestDedupIgnoresContentType(t *testing.T) {
	h, _ := routingHarness(t, stripeYAML)
	const event = `{"id":"evt_1","type":"charge.succeeded","amount":500}`
	for _, path := range []string{"/ruled", "/plain"} {
		if code, dup := h.sendAs(t, path, "application/json", event); code != 200 || dup != "" {
			t.Fatalf("%s first: %d %q", path, code, dup)
		}
		for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", ""} {
			if code, dup := h.sendAs(t, path, ct, event); code != 200 || dup != "true" {
				t.Errorf("%s as %q: %d, duplicate %q: delivered twice", path, ct, code, dup)
			}
		}
	}
	if n := len(h.pending(t, "legacy")) + len(h.pending(t, "billing")); n != 2 {
		t.Fatalf("%d deliveries, want 2 (billing from /ruled, legacy from /plain)", n)
	}
}

// A Stripe body without its id still deduplicates: the body's digest is
// the key, so a retry of it is one event and another body is not.
func TestEmptyPresetKeyFallsBackToDigest(t *testing.T) {
	h, _ := routingHarness(t, stripeYAML)
	const event = `{"type":"charge.succeeded","amount":5}`
	for i, want := range []string{"", "true"} {
		if code, dup := h.sendAs(t, "/ruled", "application/json", event); code != 200 || dup != want {
			t.Fatalf("copy %d: %d, duplicate %q, want %q", i, code, dup, want)
		}
	}
	if code, dup := h.sendAs(t, "/ruled", "application/json", `{"type":"charge.succeeded","amount":6}`); code != 200 || dup != "" {
		t.Fatalf("another body: %d %q", code, dup)
	}
	tasks := h.pending(t, "legacy")
	if len(tasks) != 2 || !strings.HasPrefix(tasks[0].Event.DedupKey, "sha256:") {
		t.Fatalf("stored: %d, key %q", len(tasks), tasks[0].Event.DedupKey)
	}
}

// Ids above 2^53 are different keys: 9007199254740992 after
// 9007199254740993 is a new event, delivered, on both paths; and number
// rules still compare.
func TestNumericDedupKeysAreExact(t *testing.T) {
	h, _ := routingHarness(t, stripeYAML)
	for _, path := range []string{"/ruled", "/plain"} {
		for _, id := range []string{"9007199254740993", "9007199254740992", "18446744073709551617", "18446744073709551616"} {
			body := `{"id":` + id + `,"type":"charge.succeeded","amount":150}`
			if code, dup := h.sendAs(t, path, "application/json", body); code != 200 || dup != "" {
				t.Errorf("%s id %s: %d, duplicate %q", path, id, code, dup)
			}
		}
	}
	if n := len(h.pending(t, "billing")); n != 4 {
		t.Fatalf("billing got %d events, want 4 (body.amount > 100 takes each /ruled event)", n)
	}
	keys := map[string]bool{}
	for _, task := range append(h.pending(t, "legacy"), h.pending(t, "billing")...) {
		keys[task.Event.Source+":"+task.Event.DedupKey] = true
	}
	if !keys["ruled:9007199254740992"] || !keys["plain:18446744073709551617"] || len(keys) != 8 {
		t.Fatalf("dedup keys %v", keys)
	}
}

const adyenHMACKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

// An Adyen item signed with success "false", re-sent with
// "success":"true" beside "SUCCESS":"false", is refused: encoding/json
// would verify the SUCCESS value while everyone downstream reads success.
func TestAdyenCaseForgeryIsRefused(t *testing.T) {
	yaml := "upstreams:\n  legacy:\n    url: http://127.0.0.1:1\nsources:\n  adyen:\n    path: /adyen\n    provider: adyen\n    secrets: [" + adyenHMACKey + "]\n    default: [legacy]\n"
	h, _ := routingHarness(t, yaml)
	item := &verify.AdyenItem{PspReference: "PSP1", MerchantAccountCode: "ECOM", MerchantReference: "o-1", EventCode: "AUTHORISATION", Success: "false"}
	item.Amount.Value, item.Amount.Currency = json.Number("1000"), "EUR"
	sig, err := verify.AdyenSignature(adyenHMACKey, item)
	if err != nil {
		t.Fatal(err)
	}
	body := func(success string) []byte {
		return []byte(`{"live":"false","notificationItems":[{"NotificationRequestItem":{"pspReference":"PSP1","merchantAccountCode":"ECOM","merchantReference":"o-1",` +
			`"amount":{"value":1000,"currency":"EUR"},"eventCode":"AUTHORISATION",` + success + `,"additionalData":{"hmacSignature":"` + sig + `"}}}]}`)
	}
	if rec := h.do("POST", "/adyen", nil, body(`"success":"true","SUCCESS":"false"`)); rec.Code != 401 {
		t.Fatalf("forged item: %d %s", rec.Code, rec.Body)
	}
	if n := len(h.pending(t, "legacy")); n != 0 {
		t.Fatalf("forged item delivered (%d)", n)
	}
	if rec := h.do("POST", "/adyen", nil, body(`"success":"false"`)); rec.Code != 200 {
		t.Fatalf("signed item: %d %s", rec.Code, rec.Body)
	}
}

// mode cannot rely on a live marker the signature does not cover (Adyen's
// live, Square's environment header, Mailgun's test flag): the load fails
// and says why.
func TestModeRefusesUnsignedLiveMarkers(t *testing.T) {
	for provider, secret := range map[string]string{"adyen": adyenHMACKey, "square": "square-signature-key-0123456789", "mailgun": "mailgun-signing-key-0123456789"} {
		yaml := "upstreams:\n  legacy:\n    url: http://127.0.0.1:1\nsources:\n  s:\n    path: /s\n    provider: " + provider + "\n    secrets: [" + secret + "]\n    public_url: https://hooks.example.com/s\n    mode: live\n    default: [legacy]\n"
		cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = compile(cfg)
		if err == nil || !strings.Contains(err.Error(), "mode cannot rely on it") || !strings.Contains(err.Error(), "routes.yaml:") {
			t.Errorf("%s with mode: %v", provider, err)
		}
	}
}
