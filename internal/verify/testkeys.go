package verify

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"time"
)

// Test keys of the RSA schemes (SNS, PayPal, JWKS tokens), made by
// GenerateKeys for `hookgate send` and the tests: never used to verify
// anything real.

// newRSAKey makes a 2048-bit RSA key, as PKCS#8 PEM.
func newRSAKey() (*rsa.PrivateKey, string, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, "", err
	}
	return priv, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// newRSACertificate makes an RSA key and a self-signed certificate issued
// to name, valid for a year, both as PEM.
func newRSACertificate(name string) (keyPEM, certPEM string, err error) {
	priv, keyPEM, err := newRSAKey()
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return "", "", err
	}
	return keyPEM, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// parseRSAKey reads a PKCS#8 RSA private key in PEM; what names the key in
// errors.
func parseRSAKey(text, what string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New(what + ": bad PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv, ok := parsed.(*rsa.PrivateKey)
	if err != nil || !ok {
		return nil, errors.New(what + ": not an RSA PKCS#8 key")
	}
	return priv, nil
}
