package samples

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// TestNoHandshakeSignsAnEvent: a handshake's answer, for any input an
// attacker can put where a handshake reads its challenge, is never a
// signature that verifies for a body. The inputs are event bodies and the
// exact content the scheme signs for them (for a "{timestamp}.{body}"
// scheme, "1700000000.{…}"), so a handshake that MACs its challenge with
// the event key is caught whatever the content template.
func TestNoHandshakeSignsAnEvent(t *testing.T) {
	now := time.Unix(1700000000, 0)
	const target = "https://hooks.example.com/webhooks/x"
	for _, p := range verify.Presets() {
		if len(p.Handshakes) == 0 {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			secret, key, err := verify.GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = secret
			}
			signer, _ := verify.SignerFor(p)
			if k := kits[p.Name]; k.Signer != nil {
				signer = k.Signer
			}
			bodies := [][]byte{[]byte(`{"id":"evt_1","type":"x"}`)}
			if s, err := Event(p, key, now); err == nil {
				bodies = append(bodies, s.Body)
			}
			for _, body := range bodies {
				// What an attacker would want signed, and what the scheme
				// signs for it.
				payloads := []string{string(body)}
				if p.Bespoke.Build == nil {
					content, err := verify.SignedContent(p.Spec, verify.Message{Body: body, Method: http.MethodPost, URL: target, ID: "msg_1", Header: http.Header{}, Time: now})
					if err != nil {
						t.Fatal(err)
					}
					if content != nil {
						payloads = append(payloads, string(content))
					}
				}
				var genuine []string // the signature values that verify body
				if signer != nil {
					if h, err := signer.Sign(key, verify.Message{Body: body, Method: http.MethodPost, URL: target, ID: "msg_1", Header: http.Header{}, Time: now}); err == nil {
						for name, vs := range h {
							if !signatureHeader(p, name) {
								continue
							}
							for _, v := range vs {
								genuine = append(genuine, signatureParts(v)...)
							}
						}
					}
				}
				for _, payload := range payloads {
					for _, h := range p.Handshakes {
						for _, req := range challengeRequests(payload, secret) {
							resp, ok := h.Answer(req)
							if !ok || resp == nil {
								continue
							}
							for _, c := range answerStrings(resp) {
								for _, g := range genuine {
									if len(g) >= 16 && strings.Contains(c, g) {
										t.Fatalf("%s answers a %s challenge of %q with %q: the signature of an event with that body", h.Name, req.Method, payload, c)
									}
								}
							}
						}
					}
				}
			}
		})
	}
}

// signatureHeader reports whether a header a signer set carries the
// signature (not its timestamp or message id).
func signatureHeader(p verify.Preset, name string) bool {
	if strings.EqualFold(name, p.Spec.Header) || strings.Contains(strings.ToLower(name), "signature") {
		return true
	}
	for _, h := range p.Bespoke.Headers {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// challengeRequests puts payload everywhere a handshake reads a challenge,
// by GET and by POST.
func challengeRequests(payload, secret string) []*verify.HandshakeRequest {
	bodies := [][]byte{
		nil,
		mustJSON(obj{"type": "url_verification", "challenge": payload}),
		mustJSON(obj{"event": "endpoint.url_validation", "payload": obj{"plainToken": payload}}),
		mustJSON(obj{"challenge": payload, "subscription": obj{"id": "s"}}),
	}
	query := url.Values{"crc_token": {payload}, "validationToken": {payload}, "hub.mode": {"subscribe"}, "hub.challenge": {payload}, "hub.verify_token": {"vt"}}
	header := http.Header{"X-Okta-Verification-Challenge": {payload}, "Twitch-Eventsub-Message-Type": {"webhook_callback_verification"},
		"X-Hook-Secret": {payload}, "Content-Type": {"application/json"}}
	var out []*verify.HandshakeRequest
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, body := range bodies {
			out = append(out, &verify.HandshakeRequest{Method: method, Header: header, Query: query, Body: body, Secrets: []string{secret}, VerifyToken: "vt"})
		}
	}
	return out
}

// answerStrings is every string an answer carries: its body, the string
// values of a JSON body, and its headers.
func answerStrings(resp *verify.HandshakeResponse) []string {
	out := []string{string(resp.Body)}
	var v any
	if json.Unmarshal(resp.Body, &v) == nil {
		var walk func(any)
		walk = func(v any) {
			switch t := v.(type) {
			case string:
				out = append(out, t)
			case map[string]any:
				for _, x := range t {
					walk(x)
				}
			case []any:
				for _, x := range t {
					walk(x)
				}
			}
		}
		walk(v)
	}
	for _, vs := range resp.Header {
		out = append(out, vs...)
	}
	return out
}

// signatureParts splits a signature header value into what a handshake
// could hand out: the value, and each part between separators, in its own
// encoding and in the other usual ones.
func signatureParts(v string) []string {
	out := []string{v}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
		_, value, found := strings.Cut(part, "=")
		if !found {
			value = part
		}
		out = append(out, part, value)
		if raw, err := hex.DecodeString(value); err == nil {
			out = append(out, base64.StdEncoding.EncodeToString(raw))
		}
		if raw, err := base64.StdEncoding.DecodeString(value); err == nil {
			out = append(out, hex.EncodeToString(raw))
		}
	}
	return out
}

// failingProvider stands in for an SNS host and Plaid's API that fail
// every request, as an unreachable or broken provider does, and counts
// them.
func failingProvider(t *testing.T) *atomic.Int32 {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "unavailable", http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(verify.EnvTestSNSURL, srv.URL)
	t.Setenv(verify.EnvTestPlaidURL, srv.URL)
	t.Setenv(verify.EnvTestJWKSURL, srv.URL)
	t.Setenv(verify.EnvTestPayPalURL, srv.URL)
	return &n
}

// pinning names the provider_options that give a scheme its keys instead
// of fetching them.
var pinning = map[string]bool{"keys": true, "root": true, "certificate": true}

func TestFetchFailureIsNeverForgery(t *testing.T) {
	failing := failingProvider(t)
	now := time.Now()
	fetching := 0
	for _, p := range verify.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			secret, key, err := verify.GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = secret
			}
			opts := verify.Options{ProviderOptions: map[string]string{}}
			for _, o := range p.Keys.Options {
				if !pinning[o.Name] {
					opts.ProviderOptions[o.Name] = o.Example
				}
			}
			if aud := verify.TestKeyOptions(key)["audience"]; aud != "" {
				opts.ProviderOptions["audience"] = aud
			}
			secrets := []string{secret}
			if len(p.Keys.Options) > 0 && p.Keys.Kind == verify.SecretPublicKey {
				secrets = nil // keys come from the provider alone
			}
			scheme, err := p.Compile(secrets, opts)
			if err != nil {
				t.Fatal(err)
			}
			sample, err := Event(p, key, now)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := Sign(p, key, sample, "https://hooks.example.com/webhooks/x", now)
			if err != nil {
				t.Fatalf("cannot sign its sample: %v", err)
			}
			h := sample.Header.Clone()
			for k, v := range signed {
				h[k] = v
			}
			before := failing.Load()
			_, err = scheme.Verify(&verify.Request{Body: sample.Body, Header: h, Method: http.MethodPost, URL: "https://hooks.example.com/webhooks/x", Now: now})
			if failing.Load() == before {
				return // fetched nothing
			}
			fetching++
			if !errors.Is(err, verify.ErrKeyUnavailable) || errors.Is(err, verify.ErrInvalidSignature) {
				t.Fatalf("a failed fetch answered %v, want verify.ErrKeyUnavailable", err)
			}
		})
	}
	if fetching < 5 {
		t.Fatalf("%d presets fetched; aws-sns, plaid, paypal, google-pubsub and azure-event-grid do", fetching)
	}
}
