package verify

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestPerSecretSaysWhichSecretVerified: with the old and the new secret of
// a rotation configured, a request signed with either verifies and says
// which; one signed with neither is refused; a stale one is refused as
// stale whichever secret signed it.
func TestPerSecretSaysWhichSecretVerified(t *testing.T) {
	p, _ := Lookup("stripe")
	secrets := []string{"whsec_old-0123456789abcdef", "whsec_new-0123456789abcdef"}
	scheme, err := PerSecret(secrets, func(s []string) (Scheme, error) { return p.Compile(s, Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := SignerFor(p)
	now := time.Now()
	body := []byte(`{"id":"evt_1","object":"event"}`)
	request := func(secret string, at time.Time) *Request {
		h, err := signer.Sign(secret, Message{Body: body, Time: at})
		if err != nil {
			t.Fatal(err)
		}
		return &Request{Body: body, Header: h, Method: http.MethodPost, Now: now}
	}
	for i, secret := range secrets {
		res, err := scheme.Verify(request(secret, now))
		if err != nil || res.Secret != i {
			t.Fatalf("signed with secret %d: %+v %v", i, res, err)
		}
	}
	if _, err := scheme.Verify(request("whsec_other-0123456789abcdef", now)); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("signed with neither: %v", err)
	}
	if _, err := scheme.Verify(request(secrets[1], now.Add(-time.Hour))); err == nil || errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("a stale request signed with the new secret: %v, want the stale reason", err)
	}
	discord, _ := Lookup("discord")
	secret, _, err := GenerateKeys(discord) // the public key, as secrets takes it
	if err != nil {
		t.Fatal(err)
	}
	_, err = PerSecret([]string{secret, "not-a-key"}, func(s []string) (Scheme, error) { return discord.Compile(s, Options{}) })
	if se := (*SecretError)(nil); !errors.As(err, &se) || se.Index != 2 {
		t.Fatalf("a bad second key: %v, want an error naming secret 2", err)
	}
}
