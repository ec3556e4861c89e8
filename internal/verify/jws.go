package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"hash"
	"math/big"
	"strings"
)

// Compact JWS, as the token schemes carry it (JWT bearer tokens, Apple's
// signed payloads): verified over the exact bytes received, with the
// algorithm fixed by the scheme, never chosen by the token alone.

// maxTokenBytes bounds a token read from a header or body.
const maxTokenBytes = 16 << 10

// jws is a compact JWS split and decoded; nothing in it is trusted until
// verify returns nil.
type jws struct {
	signing string // header.payload, as signed
	header  jwsHeader
	payload []byte
	sig     []byte
}

type jwsHeader struct {
	Alg string   `json:"alg"`
	Kid string   `json:"kid"`
	Typ string   `json:"typ"`
	X5c []string `json:"x5c"`
}

// parseJWS splits a compact JWS. Padding, whitespace and empty parts are
// malformed; so is a token over maxTokenBytes.
func parseJWS(token string) (*jws, error) {
	if len(token) > maxTokenBytes || strings.Count(token, ".") != 2 {
		return nil, ErrMalformedSignature
	}
	parts := strings.SplitN(token, ".", 3)
	rawHeader, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) == 0 {
		return nil, ErrMalformedSignature
	}
	t := &jws{signing: parts[0] + "." + parts[1], payload: payload, sig: sig}
	if json.Unmarshal(rawHeader, &t.header) != nil || t.header.Alg == "" {
		return nil, ErrMalformedSignature
	}
	return t, nil
}

// jwsHash is the hash an algorithm name signs with.
func jwsHash(alg string) (crypto.Hash, bool) {
	switch alg[len(alg)-3:] {
	case "256":
		return crypto.SHA256, true
	case "384":
		return crypto.SHA384, true
	case "512":
		return crypto.SHA512, true
	}
	return 0, false
}

// verify checks the signature with key, which must suit the token's
// algorithm: []byte for HS*, *rsa.PublicKey for RS* and PS*,
// *ecdsa.PublicKey for ES*, ed25519.PublicKey for EdDSA. A key of another
// kind is a forgery (the "alg: HS256 with a public key" confusion), never
// a fallback.
func (t *jws) verify(key any) error {
	alg := t.header.Alg
	if alg == "EdDSA" {
		pub, ok := key.(ed25519.PublicKey)
		if !ok || !ed25519.Verify(pub, []byte(t.signing), t.sig) {
			return ErrInvalidSignature
		}
		return nil
	}
	if len(alg) != 5 {
		return ErrInvalidSignature
	}
	h, ok := jwsHash(alg)
	if !ok {
		return ErrInvalidSignature
	}
	switch alg[:2] {
	case "HS":
		secret, ok := key.([]byte)
		if !ok {
			return ErrInvalidSignature
		}
		mac := hmac.New(newHash(h), secret)
		mac.Write([]byte(t.signing))
		if !hmac.Equal(mac.Sum(nil), t.sig) {
			return ErrInvalidSignature
		}
		return nil
	case "RS", "PS":
		pub, ok := key.(*rsa.PublicKey)
		if !ok || pub.N.BitLen() < 2048 {
			return ErrInvalidSignature
		}
		digest := digestOf(h, t.signing)
		var err error
		if alg[0] == 'R' {
			err = rsa.VerifyPKCS1v15(pub, h, digest, t.sig)
		} else {
			err = rsa.VerifyPSS(pub, h, digest, t.sig, nil)
		}
		if err != nil {
			return ErrInvalidSignature
		}
		return nil
	case "ES":
		pub, ok := key.(*ecdsa.PublicKey)
		if !ok {
			return ErrInvalidSignature
		}
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(t.sig) != 2*size {
			return ErrInvalidSignature
		}
		r, s := new(big.Int).SetBytes(t.sig[:size]), new(big.Int).SetBytes(t.sig[size:])
		if !ecdsa.Verify(pub, digestOf(h, t.signing), r, s) {
			return ErrInvalidSignature
		}
		return nil
	}
	return ErrInvalidSignature
}

func newHash(h crypto.Hash) func() hash.Hash {
	switch h {
	case crypto.SHA384:
		return sha512.New384
	case crypto.SHA512:
		return sha512.New
	}
	return sha256.New
}

func digestOf(h crypto.Hash, s string) []byte {
	w := newHash(h)()
	w.Write([]byte(s))
	return w.Sum(nil)
}

// signHS256 makes a compact HS256 JWS of claims, for samples and re-signing.
func signHS256(secret []byte, header map[string]any, claims any) (string, error) {
	if header == nil {
		header = map[string]any{}
	}
	header["alg"] = "HS256"
	if _, ok := header["typ"]; !ok {
		header["typ"] = "JWT"
	}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}
