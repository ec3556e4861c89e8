package rules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookgate/hookgate/internal/verify"
)

// stripeEvent is a realistic Stripe webhook, about 2.3 KB.
const stripeEvent = `{
  "id": "evt_3PqRsT2eZvKYlo2C1aBcDeFg",
  "object": "event",
  "api_version": "2024-06-20",
  "created": 1718901234,
  "data": {
    "object": {
      "id": "pi_3PqRsT2eZvKYlo2C1HiJkLmN",
      "object": "payment_intent",
      "amount": 2000,
      "amount_capturable": 0,
      "amount_received": 2000,
      "application": null,
      "application_fee_amount": null,
      "automatic_payment_methods": {"allow_redirects": "always", "enabled": true},
      "canceled_at": null,
      "cancellation_reason": null,
      "capture_method": "automatic_async",
      "client_secret": "pi_3PqRsT2eZvKYlo2C1HiJkLmN_secret_OpQrStUvWxYz0123456789",
      "confirmation_method": "automatic",
      "created": 1718901230,
      "currency": "eur",
      "customer": "cus_QhIjKlMnOpQrSt",
      "description": "Commande n\u00b0 4711 \u2014 Caf\u00e9 cr\u00e8me",
      "invoice": null,
      "last_payment_error": null,
      "latest_charge": "ch_3PqRsT2eZvKYlo2C1OpQrStU",
      "livemode": false,
      "metadata": {"order_id": "4711", "customer_email": "jane.doe@example.com", "channel": "web"},
      "next_action": null,
      "on_behalf_of": null,
      "payment_method": "pm_1PqRsU2eZvKYlo2CvWxYzAbC",
      "payment_method_options": {
        "card": {"installments": null, "mandate_options": null, "network": null, "request_three_d_secure": "automatic"},
        "link": {"persistent_token": null},
        "sepa_debit": {}
      },
      "payment_method_types": ["card", "link", "sepa_debit"],
      "processing": null,
      "receipt_email": "jane.doe@example.com",
      "review": null,
      "setup_future_usage": null,
      "shipping": {
        "address": {"city": "Paris", "country": "FR", "line1": "12 rue de la Paix", "line2": null, "postal_code": "75002", "state": null},
        "carrier": null,
        "name": "Jane Doe",
        "phone": "+33 1 23 45 67 89",
        "tracking_number": null
      },
      "statement_descriptor_suffix": "ORDER 4711",
      "status": "succeeded",
      "transfer_data": null,
      "transfer_group": null
    },
    "previous_attributes": {"status": "requires_confirmation"}
  },
  "livemode": false,
  "pending_webhooks": 2,
  "request": {"id": "req_AbCdEfGhIjKlMn", "idempotency_key": "8f14e45f-ceea-467f-a9b2-5c3e2f1d0a9b"},
  "type": "payment_intent.succeeded"
}`

func BenchmarkExtractKey(b *testing.B) {
	body := []byte(stripeEvent)
	path := []string{"data", "object", "id"}
	b.Run("extract", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if key, ok := ExtractKey(body, path); !ok || key != "pi_3PqRsT2eZvKYlo2C1HiJkLmN" {
				b.Fatalf("%q %v", key, ok)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}

func TestExtractKeyAllocatesOnlyTheKey(t *testing.T) {
	body := []byte(stripeEvent)
	for _, path := range [][]string{{"id"}, {"data", "object", "id"}, {"data", "object", "amount"}, {"data", "object", "description"}} {
		if n := testing.AllocsPerRun(100, func() { ExtractKey(body, path) }); n > 1 {
			t.Errorf("%v: %v allocations", path, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ExtractKey(body, []string{"livemode"}) }); n != 0 {
		t.Errorf("a constant key: %v allocations", n)
	}
}

// The fast path reads names and values as a parse into map[string]any does.
func TestExtractKeyEdgeCases(t *testing.T) {
	bodies := []string{
		stripeEvent,
		`{"\u0069d":"a\"b\\c\/\b\f\n\r\t\u00e9"}`,
		`{"id":"\ud83d\ude00 \ud800 \ud800\u0041 \udc00\ud83d x"}`,
		`{"id":"\ud800\ud800\ude00"}`,
		"{\"id\":\"a\xffb\xc3\xa9\xed\xa0\x80\xef\xbf\xbd\"}",
		"{\"i\xffd\":\"no\",\"id\":\"yes\"}",
		`{"ID":"upper","Id":"mixed"}`,
		`{"id":"first","id":"second"}`,
		`{"data":{"object":{"id":"a"}},"data":{"other":1}}`,
		`{"data":{"object":{"id":"a"}},"data":null}`,
		`{"data":{"object":{"id":"a"}},"data":{"object":{"id":"b"}}}`,
		`{"data":{"object":{"id":"a","id":{"x":1}}}}`,
		`{"data":[{"object":{"id":"a"}}],"id":[1]}`,
		`{"x":{"data":{"object":{"id":"a"}}},"data":{"x":{"id":"b"},"object":{"y":{"id":"c"}}}}`,
		`{"id":-0}`, `{"id":-0.0}`, `{"id":0}`, `{"id":9223372036854775807}`, `{"id":9223372036854775808}`,
		`{"id":-9223372036854775808}`, `{"id":-9223372036854775809}`, `{"id":1E400}`, `{"id":1e-400}`,
		`{"id":123.456e-2}`, `{"id":1.0}`, `{"id":""}`, `{"id":{}}`, `{"id":[]}`,
		` [ {"id":1} ] `, "\t{\r\n\"id\" :\n\"x\" }\n",
	}
	paths := [][]string{{"id"}, {"data", "object", "id"}, {"ID"}, {"i\uFFFDd"}, {"data"}}
	for _, path := range paths {
		p := pathProgram(t, path)
		for _, b := range bodies {
			parsed, err := ParseBody(verify.FormatJSON, []byte(b))
			if err != nil {
				t.Fatalf("%q: %v", b, err)
			}
			want, err := p.Key(&Env{Body: parsed})
			if err != nil {
				want = ""
			}
			got, ok := ExtractKey([]byte(b), path)
			if !ok || got != want {
				t.Errorf("%q on %q: fast %q (%v), parsed %q", path, b, got, ok, want)
			}
		}
	}
}

// pathProgram compiles the key expression reading path.
func pathProgram(t *testing.T, path []string) *Program {
	t.Helper()
	src := "body"
	for _, name := range path {
		quoted, _ := json.Marshal(name)
		src += "?.[" + string(quoted) + "]"
	}
	p, err := CompileKey(src)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The fast path takes exactly the documents json.Valid does.
func TestExtractKeyValidity(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string {
		return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
	}
	bodies := []string{
		"", " ", "{", "}", "[", "]", "{}", "[]", "{} {}", "{}x", "{},", "[1,]", "[,1]", "{,}",
		`{"a"}`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{1:1}`, `{"a":1 "b":2}`, `["a":1]`, `{"a":1]`, `[1}`,
		`1`, `-`, `-1`, `01`, `1.`, `.1`, `1.e1`, `1e`, `1e+`, `1E-5`, `-0.0e+00`, `+1`, `0x1`, `1_0`, `Infinity`, `NaN`,
		`true`, `tru`, `truex`, `null`, `nul`, `false`, `False`,
		`"`, `"a`, `"\"`, `"\x"`, `"\u12"`, `"\u12G4"`, `"\uABCD"`, `"\'"`, "\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\"",
		"\ufeff{}", "{}\x00", "\v{}", "\f{}", "{}\n\r\t ",
		deep(10000), deep(10001), deepObj(10000), deepObj(10001),
		`[` + deep(9999) + `,1]`, `[` + deep(10000) + `,1]`,
	}
	for _, b := range bodies {
		want := json.Valid([]byte(b))
		if _, ok := ExtractKey([]byte(b), []string{"a"}); ok != want {
			t.Errorf("%.40q: ok %v, json.Valid %v", b, ok, want)
		}
	}
}
