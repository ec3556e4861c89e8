package verify

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// A request stuffed with public-key signatures is judged on the first few
// only: each try hashes the whole body again.
func TestAsymmetricCandidatesAreBounded(t *testing.T) {
	p, _ := Lookup("discord")
	pub, priv, err := GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	scheme := mustScheme(t, "discord", pub)
	now := time.Unix(1700000000, 0)
	body := []byte(`{"type":1}`)
	good, err := scheme.Sign(priv, Message{Body: body, Time: now})
	if err != nil {
		t.Fatal(err)
	}
	_, otherPriv, _ := GenerateKeys(p)
	bad, _ := scheme.Sign(otherPriv, Message{Body: body, Time: now})
	withGoodAt := func(at, total int) http.Header {
		h := good.Clone()
		h.Del("X-Signature-Ed25519")
		for i := range total {
			if i == at {
				h.Add("X-Signature-Ed25519", good.Get("X-Signature-Ed25519"))
			} else {
				h.Add("X-Signature-Ed25519", bad.Get("X-Signature-Ed25519"))
			}
		}
		return h
	}
	for at := range maxAsymmetricCandidates {
		if _, err := scheme.Verify(&Request{Body: body, Header: withGoodAt(at, 16), Now: now}); err != nil {
			t.Errorf("valid signature at position %d of 16 refused: %v", at+1, err)
		}
	}
	_, err = scheme.Verify(&Request{Body: body, Header: withGoodAt(maxAsymmetricCandidates, 16), Now: now})
	if !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("signature past the first %d candidates was tried: %v", maxAsymmetricCandidates, err)
	}
}

// Discord signs its timestamp: an old capture is refused, not only a
// tampered one.
func TestDiscordTimestampTolerance(t *testing.T) {
	for _, name := range []string{"discord", "discord-events"} {
		p, _ := Lookup(name)
		pub, priv, err := GenerateKeys(p)
		if err != nil {
			t.Fatal(err)
		}
		scheme := mustScheme(t, name, pub)
		now := time.Unix(1700000000, 0)
		body := []byte(`{"type":2}`)
		old, _ := scheme.Sign(priv, Message{Body: body, Time: now.Add(-10 * time.Minute)})
		if _, err := scheme.Verify(&Request{Body: body, Header: old, Now: now}); !errors.Is(err, ErrStaleTimestamp) {
			t.Errorf("%s: a 10-minute-old signature: %v, want stale", name, err)
		}
		fresh, _ := scheme.Sign(priv, Message{Body: body, Time: now.Add(-time.Minute)})
		if _, err := scheme.Verify(&Request{Body: body, Header: fresh, Now: now}); err != nil {
			t.Errorf("%s: a minute-old signature: %v", name, err)
		}
	}
}
