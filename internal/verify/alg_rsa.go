package verify

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// rsaAlgorithm verifies RSASSA-PKCS1-v1_5 signatures over SHA-256 with the
// providers' public keys, given as PEM or base64 DER (secret_encoding
// der-base64).
type rsaAlgorithm struct{ keys []*rsa.PublicKey }

func init() {
	registerAlgorithm(algorithmDef{
		new:           func(string) algorithm { return &rsaAlgorithm{} },
		maxCandidates: maxAsymmetricCandidates,
	}, "rsa-sha256")
}

func (a *rsaAlgorithm) addKey(secret, encoding string) error {
	der := []byte(nil)
	if block, _ := pem.Decode([]byte(secret)); block != nil {
		der = block.Bytes
	} else {
		var err error
		if der, err = DecodeSecret(encoding, secret); err != nil {
			return err
		}
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		if k, err1 := x509.ParsePKCS1PublicKey(der); err1 == nil {
			pub, err = k, nil
		}
	}
	key, ok := pub.(*rsa.PublicKey)
	if err != nil || !ok {
		return fmt.Errorf("not an RSA public key (PEM or DER)")
	}
	if key.N.BitLen() < 2048 {
		return fmt.Errorf("an RSA key of %d bits is too short; 2048 or more are required", key.N.BitLen())
	}
	a.keys = append(a.keys, key)
	return nil
}

func (a *rsaAlgorithm) verify(s *signed) bool {
	s.buf.Reset()
	s.write(&s.buf, nil)
	digest := sha256.Sum256(s.buf.Bytes())
	for _, key := range a.keys {
		for _, c := range s.signatures() {
			if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], c) == nil {
				return true
			}
		}
	}
	return false
}

// sign takes a PEM or base64 DER private key, PKCS#8 or PKCS#1.
func (a *rsaAlgorithm) sign(key, _ string, s *signed) ([]byte, error) {
	der := []byte(nil)
	if block, _ := pem.Decode([]byte(key)); block != nil {
		der = block.Bytes
	} else {
		var err error
		if der, err = decodeBase64(key); err != nil {
			return nil, fmt.Errorf("not a PEM or base64 DER private key")
		}
	}
	var priv *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		priv, _ = k.(*rsa.PrivateKey)
	} else if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		priv = k
	}
	if priv == nil {
		return nil, fmt.Errorf("not an RSA private key")
	}
	s.buf.Reset()
	s.write(&s.buf, nil)
	digest := sha256.Sum256(s.buf.Bytes())
	return rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest[:])
}
