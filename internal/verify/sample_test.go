package verify

import (
	"errors"
	"testing"
	"time"
)

// TestEverySampleVerifies signs each preset's sample the way `hookgate send`
// does and checks its own preset accepts it, and a tampered copy does not.
func TestEverySampleVerifies(t *testing.T) {
	now := time.Now()
	target := "https://hooks.example.com/webhooks/sample?tenant=1"
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			secret, signingKey, err := GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			sample, err := SampleEvent(p.Name, signingKey, now)
			if err != nil {
				t.Fatal(err)
			}
			headers, err := SignSample(p, signingKey, sample, target, now)
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
			req := &Request{Body: sample.Body, Header: sample.Header, Method: "POST", URL: target, Now: now}
			if err := scheme.Verify(req); err != nil {
				t.Fatalf("own sample rejected: %v\nheaders %v\nbody %s", err, sample.Header, sample.Body)
			}
			req.Body = []byte(tamper(string(sample.Body)))
			if err := scheme.Verify(req); err == nil && !p.BodyUnsigned {
				t.Fatalf("tampered sample accepted: %s", req.Body)
			}
			other, otherKey, _ := GenerateKeys(p)
			_ = otherKey
			if otherScheme, err := p.Compile([]string{other}, Options{}); err != nil {
				t.Fatal(err)
			} else if err := otherScheme.Verify(&Request{Body: sample.Body, Header: sample.Header, Method: "POST", URL: target, Now: now}); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("another key: got %v, want ErrInvalidSignature", err)
			}
		})
	}
}
