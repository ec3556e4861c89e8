package verify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
)

// ed25519Algorithm verifies Ed25519 signatures with the providers' public
// keys (Discord, Standard Webhooks' v1a).
type ed25519Algorithm struct{ keys []ed25519.PublicKey }

func init() {
	registerAlgorithm(algorithmDef{
		new:     func(string) algorithm { return &ed25519Algorithm{} },
		sigSize: ed25519.SignatureSize, maxCandidates: maxAsymmetricCandidates,
	}, "ed25519")
}

func (a *ed25519Algorithm) addKey(secret, encoding string) error {
	key, err := DecodeSecret(encoding, secret)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PublicKeySize {
		return fmt.Errorf("an Ed25519 public key has %d bytes, got %d", ed25519.PublicKeySize, len(key))
	}
	a.keys = append(a.keys, ed25519.PublicKey(key))
	return nil
}

func (a *ed25519Algorithm) verify(s *signed) bool {
	s.buf.Reset()
	s.write(&s.buf, nil)
	for _, key := range a.keys {
		for _, c := range s.signatures() {
			if ed25519.Verify(key, s.buf.Bytes(), c) {
				return true
			}
		}
	}
	return false
}

// sign takes a 32-byte seed or 64-byte key, as hex, base64 or whsk_ base64.
func (a *ed25519Algorithm) sign(key, _ string, s *signed) ([]byte, error) {
	priv, err := ed25519PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	s.write(&buf, nil)
	return ed25519.Sign(priv, buf.Bytes()), nil
}

// ed25519PrivateKey reads a 32-byte seed or 64-byte key, as hex, base64 or
// whsk_ base64.
func ed25519PrivateKey(s string) (ed25519.PrivateKey, error) {
	var raw []byte
	if b, err := hex.DecodeString(s); err == nil {
		raw = b
	} else if b, err := decodeBase64(strings.TrimPrefix(s, "whsk_")); err == nil {
		raw = b
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		return ed25519.PrivateKey(raw), nil
	}
	return nil, fmt.Errorf("not an Ed25519 private key (a 32-byte seed or 64-byte key, hex or base64)")
}
