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
			scheme, req := signedSample(t, p, now, target)
			if _, err := scheme.Verify(req); err != nil {
				t.Fatalf("own sample rejected: %v\nheaders %v\nbody %s", err, req.Header, req.Body)
			}
			body := req.Body
			req.Body = []byte(tamper(string(body)))
			if _, err := scheme.Verify(req); err == nil && !p.BodyUnsigned {
				t.Fatalf("tampered sample accepted: %s", req.Body)
			}
			other, _, _ := GenerateKeys(p)
			if otherScheme, err := p.Compile([]string{other}, Options{}); err != nil {
				t.Fatal(err)
			} else if _, err := otherScheme.Verify(&Request{Body: body, Header: req.Header, Method: "POST", URL: target, Now: now}); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("another key: got %v, want ErrInvalidSignature", err)
			}
		})
	}
}
