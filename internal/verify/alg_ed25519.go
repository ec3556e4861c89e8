package verify

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"
)

// ed25519Algorithm verifies Ed25519 signatures with the providers' public
// keys (Discord, Standard Webhooks' v1a). With prehashed it is Ed25519ph
// (RFC 8032): the signer signs the SHA-512 of the content, as senders whose
// keys live in a KMS do, and the signature says so by its domain prefix, so
// one can never pass for the other.
type ed25519Algorithm struct {
	keys      []ed25519.PublicKey
	prehashed bool
}

func init() {
	for _, prehashed := range []bool{false, true} {
		name := "ed25519"
		if prehashed {
			name = "ed25519ph"
		}
		registerAlgorithm(algorithmDef{
			new:     func(string) algorithm { return &ed25519Algorithm{prehashed: prehashed} },
			sigSize: ed25519.SignatureSize, maxCandidates: maxAsymmetricCandidates,
		}, name)
	}
}

// options are what ed25519 signs and verifies the content with: the
// content itself, or its SHA-512 under Ed25519ph.
func (a *ed25519Algorithm) message(content []byte) ([]byte, *ed25519.Options) {
	if !a.prehashed {
		return content, &ed25519.Options{}
	}
	sum := sha512.Sum512(content)
	return sum[:], &ed25519.Options{Hash: crypto.SHA512}
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
	msg, opts := a.message(s.buf.Bytes())
	for _, key := range a.keys {
		for _, c := range s.signatures() {
			if ed25519.VerifyWithOptions(key, msg, c, opts) == nil {
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
	msg, opts := a.message(buf.Bytes())
	return priv.Sign(nil, msg, opts)
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
