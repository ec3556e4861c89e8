package samples

import (
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// signedSample returns a preset's sample signed at the given time, with
// the secret that verifies it.
func signedSample(t *testing.T, p verify.Preset, at time.Time, target string) (verify.Scheme, *verify.Request) {
	t.Helper()
	secret, signingKey, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	sample, err := Event(p, signingKey, at)
	if err != nil {
		t.Fatal(err)
	}
	headers, err := Sign(p, signingKey, sample, target, at)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		sample.Header[k] = v
	}
	scheme, err := p.Compile([]string{secret}, verify.Options{ProviderOptions: verify.TestKeyOptions(signingKey)})
	if err != nil {
		t.Fatal(err)
	}
	return scheme, &verify.Request{Body: sample.Body, Header: sample.Header, Method: "POST", URL: target, Now: time.Now()}
}

// TestEveryPresetRefusesMalformedHeaders damages each header a preset reads:
// empty, truncated, duplicated with garbage, and huge. Each must be refused
// (the gateway answers 401), and nothing may panic.
func TestEveryPresetRefusesMalformedHeaders(t *testing.T) {
	target := "https://hooks.example.com/webhooks/x"
	for _, p := range verify.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			scheme, good := signedSample(t, p, time.Now(), target)
			if _, err := scheme.Verify(good); err != nil {
				t.Fatalf("sample rejected: %v", err)
			}
			signatureHeaders := 0
			for _, name := range p.Headers() {
				if good.Header.Get(name) == "" || name == "X-Hook-Secret" {
					continue
				}
				signatureHeaders++
				value := good.Header.Get(name)
				variants := map[string][]string{
					"empty":      {""},
					"truncated":  {value[:len(value)/2]},
					"duplicated": {"garbage", value + "x"},
					"huge":       {strings.Repeat("a", 64<<10)},
				}
				for what, values := range variants {
					bad := *good
					bad.Header = good.Header.Clone()
					bad.Header.Del(name)
					for _, v := range values {
						bad.Header.Add(name, v)
					}
					if _, err := scheme.Verify(&bad); err == nil {
						t.Errorf("%s %s header accepted", what, name)
					}
				}
			}
			if signatureHeaders == 0 {
				// The signature travels in the body: damage that instead.
				bad := *good
				bad.Body = good.Body[:len(good.Body)/2]
				if _, err := scheme.Verify(&bad); err == nil {
					t.Errorf("truncated body accepted")
				}
			}
		})
	}
}

// TestEveryTimestampedPresetRefusesStaleEvents signs each sample an hour
// ago: every preset that signs a time must refuse it.
func TestEveryTimestampedPresetRefusesStaleEvents(t *testing.T) {
	target := "https://hooks.example.com/webhooks/x"
	timestamped := map[string]bool{"linear": true, "mailgun": true, "plaid": true, "contentful": true}
	checked := 0
	for _, p := range verify.Presets() {
		if !timestamped[p.Name] && p.Spec.Tolerance == 0 {
			continue
		}
		checked++
		t.Run(p.Name, func(t *testing.T) {
			scheme, stale := signedSample(t, p, time.Now().Add(-time.Hour), target)
			if _, err := scheme.Verify(stale); err == nil {
				t.Fatal("an hour-old event accepted")
			}
			_, future := signedSample(t, p, time.Now().Add(time.Hour), target)
			if _, err := scheme.Verify(future); err == nil {
				t.Fatal("an event from an hour ahead accepted")
			}
		})
	}
	if checked < 15 {
		t.Fatalf("only %d presets with timestamps checked", checked)
	}
}
