package samples

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// sampleRequest builds a preset's sample with a fresh key pair and the
// headers `hookgate send` sends: the sample's, then the signer's.
func sampleRequest(t *testing.T, p verify.Preset, now time.Time, target string) (secret string, s Sample) {
	t.Helper()
	secret, signingKey, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	return secret, signedRequest(t, p, signingKey, now, target)
}

// signedRequest is sampleRequest with a given signing key.
func signedRequest(t *testing.T, p verify.Preset, signingKey string, now time.Time, target string) Sample {
	t.Helper()
	s, err := Event(p, signingKey, now)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := Sign(p, signingKey, s, target, now)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range signed {
		s.Header[k] = v
	}
	return s
}

func hasFold(names []string, name string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
}

// TestSamplesCarryWhatProvidersSend holds every preset's sample to the
// headers its provider always sends: an SDK that validates them (Shopify's
// checks topic, shop, API version and webhook id) accepts the sample only
// if none is missing.
func TestSamplesCarryWhatProvidersSend(t *testing.T) {
	now := time.Now()
	for _, p := range verify.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			if len(Sends(p)) == 0 {
				t.Fatal("AlwaysSends is empty: list the headers the provider sends with every event")
			}
			if !hasFold(Sends(p), "Content-Type") {
				t.Error("AlwaysSends lacks Content-Type")
			}
			// What the scheme reads is sent, so it belongs to the list.
			if p.Bespoke.Build == nil {
				for _, name := range []string{p.Spec.Header, p.Spec.IDHeader, p.Spec.TimestampHeader} {
					if name != "" && !hasFold(Sends(p), name) {
						t.Errorf("AlwaysSends lacks %s, which the scheme reads", name)
					}
				}
			}
			_, s := sampleRequest(t, p, now, "https://hooks.example.com/webhooks/"+p.Name)
			for _, name := range Sends(p) {
				if s.Header.Get(name) == "" {
					t.Errorf("sample lacks %s", name)
				}
			}
		})
	}
}

// TestSampleHeadersMatchBody checks that the headers naming the event agree
// with the body they come with, as the provider's do.
func TestSampleHeadersMatchBody(t *testing.T) {
	cases := []struct {
		provider, header, path string
	}{
		{"github", "X-GitHub-Hook-ID", "hook_id"},
		{"github", "X-GitHub-Hook-Installation-Target-ID", "repository.id"},
		{"pagerduty", "X-Webhook-Id", "event.id"},
		{"pagerduty", "X-Webhook-Subscription", "event.agent.id"},
		{"twitch", "Twitch-Eventsub-Subscription-Type", "subscription.type"},
		{"twitch", "Twitch-Eventsub-Subscription-Version", "subscription.version"},
		{"lemonsqueezy", "X-Event-Name", "meta.event_name"},
		{"linear", "Linear-Event", "type"},
	}
	now := time.Now()
	for _, c := range cases {
		p, ok := verify.Lookup(c.provider)
		if !ok {
			t.Fatalf("no preset %s", c.provider)
		}
		_, s := sampleRequest(t, p, now, "https://hooks.example.com/webhooks/"+p.Name)
		got := s.Header.Get(c.header)
		var body any
		d := json.NewDecoder(bytes.NewReader(s.Body))
		d.UseNumber()
		if err := d.Decode(&body); err != nil {
			t.Fatal(err)
		}
		v := body
		for _, k := range strings.Split(c.path, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		want, _ := v.(string)
		if n, ok := v.(json.Number); ok {
			want = n.String()
		}
		if got != want {
			t.Errorf("%s: %s = %q, body %s = %q", c.provider, c.header, got, c.path, want)
		}
	}
	// The topic WooCommerce sends is its resource and event.
	p, _ := verify.Lookup("woocommerce")
	_, s := sampleRequest(t, p, now, "https://hooks.example.com/webhooks/woocommerce")
	if topic := s.Header.Get("X-WC-Webhook-Resource") + "." + s.Header.Get("X-WC-Webhook-Event"); topic != s.Header.Get("X-WC-Webhook-Topic") {
		t.Errorf("woocommerce: topic %q, resource.event %q", s.Header.Get("X-WC-Webhook-Topic"), topic)
	}
}

// TestWriteSDKSamples writes every preset's sample, as `hookgate send`
// sends it, for internal/verify/testdata/sdk/check-samples.mjs to feed through the
// providers' SDKs. It runs only when HOOKGATE_SAMPLES_OUT names the file:
//
//	HOOKGATE_SAMPLES_OUT=$PWD/internal/verify/testdata/sdk/samples.json go test -run TestWriteSDKSamples ./internal/samples/
func TestWriteSDKSamples(t *testing.T) {
	out := os.Getenv("HOOKGATE_SAMPLES_OUT")
	if out == "" {
		t.Skip("HOOKGATE_SAMPLES_OUT not set")
	}
	type sample struct {
		Provider    string            `json:"provider"`
		Secret      string            `json:"secret"`
		Method      string            `json:"method"`
		URL         string            `json:"url"`
		Headers     map[string]string `json:"headers"`
		Body        string            `json:"body_base64"`
		Timestamp   int64             `json:"timestamp"`
		AlwaysSends []string          `json:"always_sends"`
	}
	now := time.Now()
	var all []sample
	for _, p := range verify.Presets() {
		target := "https://hooks.example.com/webhooks/" + p.Name + "?tenant=1"
		secret, s := sampleRequest(t, p, now, target)
		if p.Name == "contentful" {
			// node-apps-toolkit accepts only 64-character secrets, the
			// length Contentful issues.
			secret = randomHex(32)
			s = signedRequest(t, p, secret, now, target)
		}
		h := map[string]string{}
		for k := range s.Header {
			h[strings.ToLower(k)] = s.Header.Get(k)
		}
		all = append(all, sample{Provider: p.Name, Secret: secret, Method: http.MethodPost, URL: target, Headers: h,
			Body: base64.StdEncoding.EncodeToString(s.Body), Timestamp: now.Unix(), AlwaysSends: Sends(p)})
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
