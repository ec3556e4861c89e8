package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requestVector is a whole provider request: what arrives, with the secret
// that signed it.
type requestVector struct {
	Preset  string            `json:"preset"`
	Source  string            `json:"source"`
	Secret  string            `json:"secret"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Payload string            `json:"payload"`
	Now     int64             `json:"now"`
}

func (v requestVector) request() *Request {
	h := http.Header{}
	for k, val := range v.Headers {
		h.Set(k, val)
	}
	method := v.Method
	if method == "" {
		method = http.MethodPost
	}
	now := time.Now()
	if v.Now != 0 {
		now = time.Unix(v.Now, 0).Add(time.Second)
	}
	return &Request{Body: []byte(v.Payload), Header: h, Method: method, URL: v.URL, Now: now}
}

// publishedAsRequests turns testdata/published.json into whole requests.
func publishedAsRequests(t *testing.T) []requestVector {
	t.Helper()
	data, err := os.ReadFile("testdata/published.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Provider        string            `json:"provider"`
		Source          string            `json:"source"`
		Secret          string            `json:"secret"`
		PublicKey       string            `json:"public_key"`
		Timestamp       string            `json:"timestamp"`
		ID              string            `json:"id"`
		URL             string            `json:"url"`
		Method          string            `json:"method"`
		Params          map[string]string `json:"params"`
		Payload         *string           `json:"payload"`
		Content         string            `json:"content"`
		Header          string            `json:"header"`
		TimestampHeader string            `json:"timestamp_header"`
		Signature       string            `json:"signature"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var out []requestVector
	for _, r := range raw {
		v := requestVector{Preset: r.Provider, Source: r.Source, Secret: r.Secret, Method: r.Method, URL: r.URL, Headers: map[string]string{}}
		if r.Payload != nil {
			v.Payload = *r.Payload
		}
		if r.Header != "" {
			v.Headers[r.Header] = r.Signature
		}
		if r.TimestampHeader != "" {
			v.Headers[r.TimestampHeader] = r.Timestamp
		}
		if r.Timestamp != "" {
			v.Now, _ = strconv.ParseInt(r.Timestamp, 10, 64)
		}
		switch r.Provider {
		case "standard-webhooks":
			v.Headers["webhook-id"], v.Headers["webhook-timestamp"] = r.ID, r.Timestamp
		case "slack":
			v.Headers["Content-Type"] = "application/x-www-form-urlencoded"
		case "twilio":
			if len(r.Params) > 0 {
				form := url.Values{}
				for k, val := range r.Params {
					form.Set(k, val)
				}
				v.Payload = form.Encode()
				v.Headers["Content-Type"] = "application/x-www-form-urlencoded"
			} else {
				v.Headers["Content-Type"] = "application/json"
			}
		case "sendgrid":
			v.Secret = r.PublicKey
		case "adyen":
			f := strings.Split(r.Content, ":")
			item := map[string]any{
				"pspReference": f[0], "originalReference": f[1], "merchantAccountCode": f[2], "merchantReference": f[3],
				"amount": map[string]any{"value": json.Number(f[4]), "currency": f[5]}, "eventCode": f[6], "success": f[7],
				"additionalData": map[string]string{"hmacSignature": r.Signature},
			}
			body, _ := json.Marshal(map[string]any{"live": "false", "notificationItems": []any{map[string]any{"NotificationRequestItem": item}}})
			v.Payload = string(body)
		}
		out = append(out, v)
	}
	return out
}

func loadRequestVectors(t *testing.T, path string) []requestVector {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []requestVector
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func compilePreset(t *testing.T, name string, secrets ...string) Scheme {
	t.Helper()
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	s, err := p.Compile(secrets, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestCatalogVectors runs every published and extra vector through its
// preset, then tampered copies: a changed body byte and a changed secret.
func TestCatalogVectors(t *testing.T) {
	vectors := append(publishedAsRequests(t), loadRequestVectors(t, "testdata/vectors_extra.json")...)
	covered := map[string]bool{}
	for i, v := range vectors {
		t.Run(fmt.Sprintf("%s/%d", v.Preset, i), func(t *testing.T) {
			scheme := compilePreset(t, v.Preset, v.Secret)
			if _, err := scheme.Verify(v.request()); err != nil {
				t.Fatalf("vector from %s rejected: %v", v.Source, err)
			}
			if len(v.Payload) > 0 {
				tampered := v.request()
				tampered.Body = []byte(tamper(v.Payload))
				if _, err := scheme.Verify(tampered); err == nil {
					t.Errorf("tampered body accepted")
				}
			}
			if v.Preset != "sendgrid" && v.Preset != "plaid" && v.Preset != "standard-webhooks-ed25519" {
				other := compilePreset(t, v.Preset, flipSecret(v.Secret))
				if _, err := other.Verify(v.request()); !errors.Is(err, ErrInvalidSignature) {
					t.Errorf("another secret: got %v, want ErrInvalidSignature", err)
				}
			}
		})
		covered[v.Preset] = true
	}
	for _, want := range []string{"github", "slack", "shopify", "standard-webhooks", "twilio", "square", "paddle", "hubspot-v1", "hubspot-v2", "adyen", "sendgrid", "mux", "plaid", "standard-webhooks-ed25519"} {
		if !covered[want] {
			t.Errorf("no vector exercised preset %s", want)
		}
	}
}

// tamper changes one meaningful byte of a payload: a digit or letter inside
// the content, never only whitespace.
func tamper(s string) string {
	b := []byte(s)
	for i := len(b) / 2; i < len(b); i++ {
		c := b[i]
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			if c == 'x' {
				b[i] = 'y'
			} else {
				b[i] = 'x'
			}
			return string(b)
		}
	}
	return s + "x"
}

func TestTwilioURLVariants(t *testing.T) {
	s := compilePreset(t, "twilio", "12345")
	form := "CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212"
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Twilio-Signature": {"RSOYDt4T1cUTdK1PDd93/VVr8B8="}}
	for _, u := range []string{"https://mycompany.com/myapp.php?foo=1&bar=2", "https://mycompany.com:443/myapp.php?foo=1&bar=2"} {
		if _, err := s.Verify(&Request{Body: []byte(form), Header: h, URL: u, Now: time.Now()}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, err := s.Verify(&Request{Body: []byte(form), Header: h, URL: "https://mycompany.com:8443/myapp.php?foo=1&bar=2", Now: time.Now()}); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("another port accepted: %v", err)
	}
	// JSON variant: a body that does not match bodySHA256 fails even with a
	// valid URL signature.
	jsonURL := "https://mycompany.com/myapp.php?foo=1&bar=2&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620"
	jh := http.Header{"Content-Type": {"application/json"}, "X-Twilio-Signature": {"a9nBmqA0ju/hNViExpshrM61xv4="}}
	if _, err := s.Verify(&Request{Body: []byte(`{"property": "value", "boolean": true}`), Header: jh, URL: jsonURL, Now: time.Now()}); err != nil {
		t.Errorf("JSON variant: %v", err)
	}
	if _, err := s.Verify(&Request{Body: []byte(`{"property": "value", "boolean": false}`), Header: jh, URL: jsonURL, Now: time.Now()}); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("JSON variant with another body: %v", err)
	}
}

func TestSignsURL(t *testing.T) {
	for name, want := range map[string]bool{"twilio": true, "square": true, "hubspot-v2": true, "hubspot-v3": true, "contentful": true, "stripe": false, "github": false, "plaid": false} {
		p, _ := Lookup(name)
		if p.SignsURL() != want {
			t.Errorf("%s: SignsURL %v, want %v", name, !want, want)
		}
	}
}

// The gateway re-signs only presets whose signature it can make, that cover
// the body, with a shared secret.
func TestResignable(t *testing.T) {
	not := map[string]bool{}
	for _, name := range strings.Fields("adyen asana aws-sns basic-auth discord discord-events gitlab linear mailgun microsoft-graph okta plaid postmark sendgrid standard-webhooks-ed25519 " +
		"apple-app-store azure-event-grid braintree chargebee dropbox-sign figma google-pubsub monday notion paypal telegram telnyx") {
		not[name] = true
	}
	for _, p := range Presets() {
		if p.Resignable() == not[p.Name] {
			t.Errorf("%s: Resignable %v, want %v", p.Name, !not[p.Name], not[p.Name])
		}
		if _, err := SignerFor(p); p.Resignable() && err != nil {
			t.Errorf("%s: resignable without a signer: %v", p.Name, err)
		}
	}
}
