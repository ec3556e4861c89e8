package samples

import (
	"errors"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// TestEverySampleVerifies signs each preset's sample the way `hookgate send`
// does and checks its own preset accepts it, and a tampered copy does not.
func TestEverySampleVerifies(t *testing.T) {
	now := time.Now()
	target := "https://hooks.example.com/webhooks/sample?tenant=1"
	for _, p := range verify.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			scheme, req := signedSample(t, p, now, target)
			if _, err := scheme.Verify(req); err != nil {
				t.Fatalf("own sample rejected: %v\nheaders %v\nbody %s", err, req.Header, req.Body)
			}
			body := req.Body
			req.Body = []byte(changeOneByte(string(body)))
			if _, err := scheme.Verify(req); err == nil && !p.Trust.BodyUnsigned {
				t.Fatalf("tampered sample accepted: %s", req.Body)
			}
			other, otherKey, _ := verify.GenerateKeys(p)
			if otherScheme, err := p.Compile([]string{other}, verify.Options{ProviderOptions: verify.TestKeyOptions(otherKey)}); err != nil {
				t.Fatal(err)
			} else if _, err := otherScheme.Verify(&verify.Request{Body: body, Header: req.Header, Method: "POST", URL: target, Now: now}); !errors.Is(err, verify.ErrInvalidSignature) {
				t.Fatalf("another key: got %v, want verify.ErrInvalidSignature", err)
			}
		})
	}
}

// changeOneByte changes one letter or digit in the second half of s (the
// body's content rather than its framing), or appends one.
func changeOneByte(s string) string {
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
