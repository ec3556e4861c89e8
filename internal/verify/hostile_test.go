package verify

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// signedSample returns a preset's sample signed at the given time, with
// the secret that verifies it.
func signedSample(t *testing.T, p Preset, at time.Time, target string) (Scheme, *Request) {
	t.Helper()
	secret, signingKey, err := GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	sample, err := p.SampleEvent(signingKey, at)
	if err != nil {
		t.Fatal(err)
	}
	headers, err := SignSample(p, signingKey, sample, target, at)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		sample.Header[k] = v
	}
	scheme, err := p.Compile([]string{secret}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return scheme, &Request{Body: sample.Body, Header: sample.Header, Method: "POST", URL: target, Now: time.Now()}
}

// TestEveryPresetRefusesMalformedHeaders damages each header a preset reads:
// empty, truncated, duplicated with garbage, and huge. Each must be refused
// (the gateway answers 401), and nothing may panic.
func TestEveryPresetRefusesMalformedHeaders(t *testing.T) {
	target := "https://hooks.example.com/webhooks/x"
	for _, p := range Presets() {
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
	for _, p := range Presets() {
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

func TestHandshakeRequestsNeverPanic(t *testing.T) {
	inputs := []*HandshakeRequest{
		{Method: "POST", Header: http.Header{}, Body: nil},
		{Method: "POST", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte("%zz")},
		{Method: "POST", Header: http.Header{"Twitch-Eventsub-Message-Type": {"webhook_callback_verification"}}, Body: []byte(`{"challenge":12}`)},
		{Method: "GET", Header: http.Header{}, Body: []byte(`{"type":"url_verification","challenge":` + strings.Repeat(`"x`, 1) + `}`)},
		{Method: "POST", Header: http.Header{}, Body: []byte(`{"event":"endpoint.url_validation","payload":null}`)},
		{Method: "POST", Header: http.Header{}, Body: []byte(`{"type":"url_verification","challenge":"` + strings.Repeat("x", 5000) + `"}`)},
	}
	for _, p := range Presets() {
		for _, h := range p.Handshakes {
			for _, in := range inputs {
				if resp, ok := h.Answer(in); ok && resp.Status == http.StatusOK && len(resp.Body) > maxChallenge+100 {
					t.Errorf("%s reflected %d bytes", h.Name, len(resp.Body))
				}
			}
		}
	}
}
