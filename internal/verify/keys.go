package verify

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
)

// GenerateKeys makes a fresh key for a preset: the secret that goes in
// routes.yaml and the key `hookgate send` signs with. They are the same
// string for shared-secret schemes; for public-key schemes the first is the
// public key and the second the private one. For tests and trials only: real
// keys come from the provider.
func GenerateKeys(p Preset) (secret, signingKey string, err error) {
	if p.Bespoke.NewKeys != nil {
		return p.Bespoke.NewKeys()
	}
	switch p.Spec.Algorithm {
	case "ed25519", "ed25519ph":
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return "", "", err
		}
		switch p.Spec.SecretEncoding {
		case "whpk":
			return "whpk_" + base64.StdEncoding.EncodeToString(pub), "whsk_" + base64.StdEncoding.EncodeToString(priv), nil
		case "base64":
			return base64.StdEncoding.EncodeToString(pub), base64.StdEncoding.EncodeToString(priv.Seed()), nil
		}
		return hex.EncodeToString(pub), hex.EncodeToString(priv.Seed()), nil
	case "ecdsa-p256-sha256":
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", "", err
		}
		pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
		if err != nil {
			return "", "", err
		}
		privDER, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return "", "", err
		}
		return base64.StdEncoding.EncodeToString(pubDER), base64.StdEncoding.EncodeToString(privDER), nil
	case "basic":
		s := "hookgate:" + randomHex(12)
		return s, s, nil
	}
	switch p.Spec.SecretEncoding {
	case "whsec":
		k := "whsec_" + base64.StdEncoding.EncodeToString([]byte(randomHex(12)))
		return k, k, nil
	case "hex":
		return hexKeys()
	case "base64":
		k := base64.StdEncoding.EncodeToString([]byte(randomHex(16)))
		return k, k, nil
	}
	k := "hg_test_" + randomHex(16)
	return k, k, nil
}

// keyAndSecret makes a KEY:SECRET pair (Pusher's app key and secret,
// LiveKit's API key and secret, Braintree's public and private keys).
func keyAndSecret() (secret, signingKey string, err error) {
	k := "hgkey" + randomHex(6) + ":hg_test_" + randomHex(16)
	return k, k, nil
}

// hexKeys makes a 32-byte shared key, hex encoded.
func hexKeys() (secret, signingKey string, err error) {
	k := randomHex(32)
	return k, k, nil
}

// plaidKeys makes an ES256 key pair as JWKs: the public one to configure,
// the private one (with d) to sign with.
func plaidKeys() (secret, signingKey string, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	point, err := priv.PublicKey.Bytes() // 0x04 ‖ x ‖ y
	if err != nil {
		return "", "", err
	}
	d, err := priv.Bytes()
	if err != nil {
		return "", "", err
	}
	x, y := point[1:33], point[33:]
	pub := jwk{Kty: "EC", Crv: "P-256", Kid: uuid(), X: b64(x), Y: b64(y)}
	full := pub
	full.D = b64(d)
	pubJSON, _ := json.Marshal(pub)
	privJSON, _ := json.Marshal(full)
	return string(pubJSON), string(privJSON), nil
}
