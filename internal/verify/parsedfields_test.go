package verify

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const adyenKey = "DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00"

// adyenBody is a notification whose item is signed with success "false";
// itemJSON replaces the item's `"success":"false"` member.
func adyenBody(t *testing.T, success string) []byte {
	t.Helper()
	item := &AdyenItem{PspReference: "PSP1", MerchantAccountCode: "ECOM", MerchantReference: "order-1", EventCode: "AUTHORISATION", Success: "false"}
	item.Amount.Value, item.Amount.Currency = json.Number("1000"), "EUR"
	sig, err := AdyenSignature(adyenKey, item)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"live":"true","notificationItems":[{"NotificationRequestItem":{"pspReference":"PSP1","merchantAccountCode":"ECOM",` +
		`"merchantReference":"order-1","amount":{"value":1000,"currency":"EUR"},"eventCode":"AUTHORISATION",` +
		success + `,"additionalData":{"hmacSignature":"` + sig + `"}}}]}`
	return []byte(body)
}

// An Adyen item signed with success "false" must not verify once it also
// carries "success":"true" under another spelling: encoding/json would
// match SUCCESS (or ſuccess, which folds to it) to the signed field and
// keep the last, while the backend, the rules and the dedup key read
// success, exactly, as "true".
func TestAdyenReadsSignedFieldsByExactKey(t *testing.T) {
	scheme := compilePreset(t, "adyen", adyenKey)
	if _, err := scheme.Verify(&Request{Body: adyenBody(t, `"success":"false"`)}); err != nil {
		t.Fatalf("the signed item: %v", err)
	}
	forged := map[string]string{
		"another case":      `"success":"true","SUCCESS":"false"`,
		"folded rune":       `"success":"true","ſuccess":"false"`,
		"repeated":          `"success":"true","success":"false"`,
		"only another case": `"SUCCESS":"false"`,
		"escaped":           `"success":"true","\u0053uccess":"false"`,
	}
	for name, member := range forged {
		if _, err := scheme.Verify(&Request{Body: adyenBody(t, member)}); err == nil {
			t.Errorf("%s (%s): verified", name, member)
		}
	}
	// A repeated key anywhere, signed field or not, is refused: the live
	// flag, the item list and the wrapper could be doubled the same way.
	for _, body := range []string{
		strings.Replace(string(adyenBody(t, `"success":"false"`)), `{"live":"true",`, `{"live":"true","Live":"false",`, 1),
		strings.Replace(string(adyenBody(t, `"success":"false"`)), `"notificationItems":[`, `"NotificationItems":[],"notificationItems":[`, 1),
	} {
		if _, err := scheme.Verify(&Request{Body: []byte(body)}); !errors.Is(err, ErrMalformedSignature) {
			t.Errorf("%s: %v, want refused as malformed", body, err)
		}
	}
}

// Mailgun and Microsoft Graph also read parsed fields (the signed
// timestamp and token; each item's clientState): a repeated key is refused.
func TestParsedFieldSchemesRefuseRepeatedKeys(t *testing.T) {
	now := time.Unix(1700000000, 0)
	mg := compilePreset(t, "mailgun", "mailgun-signing-key-0123456789")
	sig := MailgunSignature("mailgun-signing-key-0123456789", "tok-1", now)
	good := `{"signature":{"timestamp":"` + sig["timestamp"] + `","token":"tok-1","signature":"` + sig["signature"] + `"},"event-data":{"id":"e1"}}`
	if _, err := mg.Verify(&Request{Body: []byte(good), Now: now}); err != nil {
		t.Fatalf("mailgun: %v", err)
	}
	// Signed as tok-2; a backend reading token sees tok-1.
	sig = MailgunSignature("mailgun-signing-key-0123456789", "tok-2", now)
	doubled := `{"signature":{"timestamp":"` + sig["timestamp"] + `","token":"tok-1","signature":"` + sig["signature"] + `","TOKEN":"tok-2"},"event-data":{"id":"e1"}}`
	if _, err := mg.Verify(&Request{Body: []byte(doubled), Now: now}); err == nil {
		t.Error("mailgun: a token repeated by case verified")
	}

	graph := compilePreset(t, "microsoft-graph", "client-state-secret")
	good = `{"value":[{"clientState":"client-state-secret","resource":"users/1"}]}`
	if _, err := graph.Verify(&Request{Body: []byte(good)}); err != nil {
		t.Fatalf("graph: %v", err)
	}
	for _, body := range []string{
		`{"value":[{"clientState":"client-state-secret","resource":"users/1","Resource":"users/2"}]}`,
		`{"value":[{"clientstate":"x","clientState":"client-state-secret"}]}`,
	} {
		if _, err := graph.Verify(&Request{Body: []byte(body)}); err == nil {
			t.Errorf("graph: %s verified", body)
		}
	}
}

func TestStrictJSON(t *testing.T) {
	cases := map[string]bool{
		`{"a":1,"b":{"a":2,"c":[{"a":3},{"a":4}]}}`: true,
		`[{"a":1},{"a":1}]`:                         true,
		`{"a":{"b":1},"c":{"b":2}}`:                 true,
		`{"a":"A","A":1}`:                           false,
		`{"x":[{"k":1,"K":2}]}`:                     false,
		`{"x":{"y":{"k":1,"k":2}}}`:                 false,
		`{"k":1}{"k":2}`:                            false,
		`{"k":1`:                                    false,
		`"just a string"`:                           true,
	}
	for body, want := range cases {
		if got := strictJSON([]byte(body)); got != want {
			t.Errorf("strictJSON(%s) = %v, want %v", body, got, want)
		}
	}
}

// extendSHA256 is a SHA-256 length extension: from the digest of an
// unknown message of known length, the digest of message ‖ padding ‖ extra,
// made by loading the digest as crypto/sha256's internal state
// ("sha\x03", eight state words, a 64-byte block buffer, the byte count).
func extendSHA256(t *testing.T, digest []byte, msgLen int, extra []byte) (glue, forged []byte) {
	t.Helper()
	glue = []byte{0x80}
	for (msgLen+len(glue))%64 != 56 {
		glue = append(glue, 0)
	}
	glue = binary.BigEndian.AppendUint64(glue, uint64(msgLen)*8)
	state := append([]byte("sha\x03"), digest...)
	state = append(state, make([]byte, 64)...)
	state = binary.BigEndian.AppendUint64(state, uint64(msgLen+len(glue)))
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	h.Write(extra)
	return glue, h.Sum(nil)
}

// A plain SHA-256 of {secret}…{body} can be extended by anyone holding one
// request: the forged body is the captured one, the padding, and new data.
// The forgery is real (the test checks the digest with the secret), and it
// is refused because the body is no longer one JSON value.
func TestHashSchemesRefuseLengthExtension(t *testing.T) {
	const secret = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
	const target = "https://www.example.com/webhook_uri"
	custom, _ := New(Spec{Algorithm: "hash-sha256", Header: "X-Sig", Content: "{secret}{body}", Format: FormatJSON}, []string{secret})
	customEither, _ := New(Spec{Algorithm: "hash-sha256", Header: "X-Sig", Content: "{secret}{body}"}, []string{secret})
	cases := []struct {
		name   string
		scheme SpecScheme
		prefix string // what precedes the body in the hashed content, secret included
		body   string
	}{
		{"hubspot-v1", mustScheme(t, "hubspot-v1", secret), secret, `[{"eventId":1,"subscriptionType":"contact.creation","objectId":123}]`},
		{"hubspot-v2", mustScheme(t, "hubspot-v2", secret), secret + "POST" + target, `{"example_field":"example_value"}`},
		{"custom json", custom, secret, `{"id":"evt_1","amount":100}`},
		{"custom either, form", customEither, secret, `id=evt_1&amount=100`},
		{"custom either, json", customEither, secret, `{"id":"evt_1","amount":100}`},
	}
	extra := []byte(`&amount=999999,{"id":"evt_2","amount":999999}`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := c.scheme.(*Declarative).spec.Header
			msg := Message{Body: []byte(c.body), Method: "POST", URL: target}
			h, err := c.scheme.Sign(secret, msg)
			if err != nil {
				t.Fatal(err)
			}
			captured := &Request{Body: msg.Body, Header: h, Method: "POST", URL: target, Now: time.Now()}
			if _, err := c.scheme.Verify(captured); err != nil {
				t.Fatalf("the captured request: %v", err)
			}
			digest, _ := hex.DecodeString(h.Get(header))
			glue, forged := extendSHA256(t, digest, len(c.prefix)+len(c.body), extra)
			body := append(append([]byte(c.body), glue...), extra...)
			if real := sha256.Sum256(append([]byte(c.prefix), body...)); hex.EncodeToString(real[:]) != hex.EncodeToString(forged) {
				t.Fatal("the extension does not reproduce the provider's hash")
			}
			forgery := &Request{Body: body, Header: http.Header{}, Method: "POST", URL: target, Now: time.Now()}
			forgery.Header.Set(header, hex.EncodeToString(forged))
			if _, err := c.scheme.Verify(forgery); err == nil {
				t.Fatalf("length-extended body %q verified", body)
			}
		})
	}
}

// hash-sha256 still accepts an empty body (HubSpot v2 signs GETs without
// one) and refuses an unknown format at load.
func TestHashSchemeBodies(t *testing.T) {
	const secret = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
	s := mustScheme(t, "hubspot-v2", secret)
	msg := Message{Method: "GET", URL: "https://www.example.com/card?userId=1"}
	h, err := s.Sign(secret, msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(&Request{Header: h, Method: "GET", URL: msg.URL}); err != nil {
		t.Errorf("empty body: %v", err)
	}
	if _, err := New(Spec{Algorithm: "hash-sha256", Header: "X-Sig", Content: "{secret}{body}", Format: "xml"}, []string{secret}); err == nil {
		t.Error("format xml accepted")
	}
}
