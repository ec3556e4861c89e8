package verify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
)

// ecdsaAlgorithm verifies ECDSA P-256 signatures over SHA-256, ASN.1
// encoded, with the providers' DER public keys (SendGrid).
type ecdsaAlgorithm struct{ keys []*ecdsa.PublicKey }

func init() {
	registerAlgorithm(algorithmDef{
		new:           func(string) algorithm { return &ecdsaAlgorithm{} },
		maxCandidates: maxAsymmetricCandidates,
	}, "ecdsa-p256-sha256")
}

func (a *ecdsaAlgorithm) addKey(secret, encoding string) error {
	der, err := DecodeSecret(encoding, secret)
	if err != nil {
		return err
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return fmt.Errorf("not a DER public key: %v", err)
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return fmt.Errorf("not an ECDSA public key")
	}
	a.keys = append(a.keys, ec)
	return nil
}

func (a *ecdsaAlgorithm) verify(s *signed) bool {
	s.buf.Reset()
	s.write(&s.buf, nil)
	digest := sha256.Sum256(s.buf.Bytes())
	for _, key := range a.keys {
		for _, c := range s.signatures() {
			if ecdsa.VerifyASN1(key, digest[:], c) {
				return true
			}
		}
	}
	return false
}

// sign takes a base64 PKCS#8 or SEC 1 DER private key.
func (a *ecdsaAlgorithm) sign(key, _ string, s *signed) ([]byte, error) {
	priv, err := ecdsaPrivateKey(key)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	s.write(&buf, nil)
	digest := sha256.Sum256(buf.Bytes())
	return ecdsa.SignASN1(nil, priv, digest[:])
}

// ecdsaPrivateKey reads a base64 PKCS#8 or SEC 1 DER key.
func ecdsaPrivateKey(s string) (*ecdsa.PrivateKey, error) {
	der, err := decodeBase64(s)
	if err != nil {
		return nil, fmt.Errorf("not a base64 DER private key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if ec, ok := k.(*ecdsa.PrivateKey); ok {
			return ec, nil
		}
	}
	return x509.ParseECPrivateKey(der)
}
