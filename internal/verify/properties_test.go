package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// The catalog's properties beyond "its signature verifies": every preset,
// including any added later, must pass each one.

// TestNoHandshakeSignsAnEvent: a handshake's answer, for any input an
// attacker can put where a handshake reads its challenge, is never a
// signature that verifies for a body. The inputs are event bodies and the
// exact content the scheme signs for them (for a "{timestamp}.{body}"
// scheme, "1700000000.{…}"), so a handshake that MACs its challenge with
// the event key is caught whatever the content template.
func TestNoHandshakeSignsAnEvent(t *testing.T) {
	now := time.Unix(1700000000, 0)
	const target = "https://hooks.example.com/webhooks/x"
	for _, p := range Presets() {
		if len(p.Handshakes) == 0 {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			secret, key, err := GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = secret
			}
			signer, _ := SignerFor(p)
			if p.SampleSigner != nil {
				signer = p.SampleSigner
			}
			bodies := [][]byte{[]byte(`{"id":"evt_1","type":"x"}`)}
			if s, err := p.SampleEvent(key, now); err == nil {
				bodies = append(bodies, s.Body)
			}
			for _, body := range bodies {
				// What an attacker would want signed, and what the scheme
				// signs for it.
				payloads := []string{string(body)}
				if d, err := compileSignature(p.Spec); err == nil && p.Build == nil {
					var content bytes.Buffer
					d.writeContent(&content, &Request{Body: body, Method: http.MethodPost, URL: target, Header: http.Header{}}, d.tsFormat(now), "msg_1", nil)
					payloads = append(payloads, content.String())
				}
				var genuine []string // the signature values that verify body
				if signer != nil {
					if h, err := signer.Sign(key, Message{Body: body, Method: http.MethodPost, URL: target, ID: "msg_1", Header: http.Header{}, Time: now}); err == nil {
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
func signatureHeader(p Preset, name string) bool {
	if strings.EqualFold(name, p.Spec.Header) || strings.Contains(strings.ToLower(name), "signature") {
		return true
	}
	for _, h := range p.BespokeHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// challengeRequests puts payload everywhere a handshake reads a challenge,
// by GET and by POST.
func challengeRequests(payload, secret string) []*HandshakeRequest {
	bodies := [][]byte{
		nil,
		mustJSON(obj{"type": "url_verification", "challenge": payload}),
		mustJSON(obj{"event": "endpoint.url_validation", "payload": obj{"plainToken": payload}}),
		mustJSON(obj{"challenge": payload, "subscription": obj{"id": "s"}}),
	}
	query := url.Values{"crc_token": {payload}, "validationToken": {payload}, "hub.mode": {"subscribe"}, "hub.challenge": {payload}, "hub.verify_token": {"vt"}}
	header := http.Header{"X-Okta-Verification-Challenge": {payload}, "Twitch-Eventsub-Message-Type": {"webhook_callback_verification"},
		"X-Hook-Secret": {payload}, "Content-Type": {"application/json"}}
	var out []*HandshakeRequest
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, body := range bodies {
			out = append(out, &HandshakeRequest{Method: method, Header: header, Query: query, Body: body, Secrets: []string{secret}, VerifyToken: "vt"})
		}
	}
	return out
}

// answerStrings is every string an answer carries: its body, the string
// values of a JSON body, and its headers.
func answerStrings(resp *HandshakeResponse) []string {
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

// failingTransport fails every request, as an unreachable provider does,
// and counts them.
type failingTransport struct{ n int }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.n++
	return nil, errors.New("connection refused")
}

// TestFetchFailureIsNeverForgery: any preset that fetches what it verifies
// with (a certificate, a key) answers ErrKeyUnavailable, a 503, when the
// fetch fails, never a forgery. Every preset is tried with all its
// provider_options set, so one that fetches cannot go unnoticed.
func TestFetchFailureIsNeverForgery(t *testing.T) {
	failing := &failingTransport{}
	saved := fetchClient.Transport
	fetchClient.Transport = failing
	t.Cleanup(func() { fetchClient.Transport = saved })
	now := time.Now()
	fetching := 0
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			secret, key, err := GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = secret
			}
			opts := Options{ProviderOptions: map[string]string{}}
			for _, o := range p.Options {
				opts.ProviderOptions[o.Name] = o.Example
			}
			secrets := []string{secret}
			if len(p.Options) > 0 && p.SecretKind == SecretPublicKey {
				secrets = nil // keys come from the provider alone
			}
			scheme, err := p.Compile(secrets, opts)
			if err != nil {
				t.Fatal(err)
			}
			sample, err := p.SampleEvent(key, now)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := SignSample(p, key, sample, "https://hooks.example.com/webhooks/x", now)
			if err != nil {
				t.Fatalf("cannot sign its sample: %v", err)
			}
			h := sample.Header.Clone()
			for k, v := range signed {
				h[k] = v
			}
			before := failing.n
			_, err = scheme.Verify(&Request{Body: sample.Body, Header: h, Method: http.MethodPost, URL: "https://hooks.example.com/webhooks/x", Now: now})
			if failing.n == before {
				return // fetched nothing
			}
			fetching++
			if !errors.Is(err, ErrKeyUnavailable) || errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("a failed fetch answered %v, want ErrKeyUnavailable", err)
			}
		})
	}
	if fetching < 2 {
		t.Fatalf("%d presets fetched; aws-sns and plaid do", fetching)
	}
}

// exprReads lists what an expression reads: header names and whether it
// reads the body.
func exprReads(t *testing.T, src string) (headers []string, body bool) {
	t.Helper()
	tree, err := parser.Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	v := &readVisitor{}
	ast.Walk(&tree.Node, v)
	return v.headers, v.body
}

type readVisitor struct {
	headers []string
	body    bool
}

func (v *readVisitor) Visit(n *ast.Node) {
	switch node := (*n).(type) {
	case *ast.IdentifierNode:
		if node.Value == "body" {
			v.body = true
		}
	case *ast.MemberNode:
		if id, ok := node.Node.(*ast.IdentifierNode); ok && id.Value == "headers" {
			if s, ok := node.Property.(*ast.StringNode); ok {
				v.headers = append(v.headers, s.Value)
			}
		}
	}
}

// TestEveryReadIsSignedOrDocumented: what a preset's dedup key and live
// marker read is covered by the signature, or the preset says otherwise: a
// live marker over unsigned input is LiveUnsigned (and mode refuses it); a
// dedup key over an unsigned header is safe only where the body's digest
// is a second key (Replayable) or the preset's Unsigned list says why. A
// declarative scheme signs the timestamp and id it reads.
func TestEveryReadIsSignedOrDocumented(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			var signed []string
			if p.Build == nil {
				s, err := compileSpec(p.Spec)
				if err != nil {
					t.Fatal(err)
				}
				signed = s.SignedHeaders()
				if d, ok := s.(*Declarative); ok {
					if (p.Spec.TimestampHeader != "" || p.Spec.TimestampKey != "") && !d.needsTS {
						t.Errorf("reads a timestamp its content does not sign")
					}
					if p.Spec.IDHeader != "" && !d.needsID {
						t.Errorf("reads an id its content does not sign")
					}
				}
			}
			isSigned := func(h string) bool {
				return slices.ContainsFunc(signed, func(s string) bool { return strings.EqualFold(s, h) })
			}
			documented := func(h string) bool {
				return slices.ContainsFunc(p.Unsigned, func(u string) bool { return strings.HasPrefix(strings.ToLower(u), strings.ToLower(h)+":") })
			}
			if p.Live != "" {
				headers, body := exprReads(t, p.Live)
				for _, h := range headers {
					if !isSigned(h) && !p.LiveUnsigned {
						t.Errorf("live marker reads unsigned header %s without LiveUnsigned", h)
					}
				}
				if body && p.BodyUnsigned && !p.LiveUnsigned {
					t.Errorf("live marker reads an unsigned body without LiveUnsigned")
				}
			}
			if p.DedupKey != "" {
				headers, _ := exprReads(t, p.DedupKey)
				for _, h := range headers {
					if !isSigned(h) && !p.Replayable() && !p.BodyUnsigned && !documented(h) {
						t.Errorf("dedup key reads unsigned header %s: a capture sent again under another value would be a new event (sign it, or say why in Unsigned)", h)
					}
				}
			}
		})
	}
}
