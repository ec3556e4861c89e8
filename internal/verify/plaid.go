package verify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// plaid verifies the Plaid-Verification header: a compact ES256 JWT whose
// key is chosen by kid among configured JWKs, issued within the tolerance,
// whose request_body_sha256 claim is the hex SHA-256 of the raw body.
type plaid struct {
	keys      map[string]*ecdsa.PublicKey
	tolerance time.Duration
}

type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d,omitempty"`
}

func (k *jwk) publicKey() (*ecdsa.PublicKey, error) {
	if k.Kty != "EC" || k.Crv != "P-256" {
		return nil, fmt.Errorf("JWK must be an EC P-256 key")
	}
	x, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.X, "="))
	y, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.Y, "="))
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		return nil, fmt.Errorf("JWK x and y must be 32-byte base64url values")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("JWK point is not on P-256")
	}
	return pub, nil
}

func newPlaid(secrets []string, opts Options) (Scheme, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("no secrets (Plaid's JWK public keys)")
	}
	p := &plaid{keys: map[string]*ecdsa.PublicKey{}, tolerance: 5 * time.Minute}
	if opts.Tolerance > 0 {
		p.tolerance = opts.Tolerance
	}
	for i, s := range secrets {
		var k jwk
		if err := json.Unmarshal([]byte(s), &k); err != nil {
			return nil, fmt.Errorf("secret %d: not a JWK: %v", i+1, err)
		}
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		if k.Kid == "" {
			return nil, fmt.Errorf("secret %d: the JWK has no kid", i+1)
		}
		p.keys[k.Kid] = pub
	}
	return p, nil
}

func (p *plaid) Verify(r *Request) (Result, error) { return Result{}, p.check(r) }

func (p *plaid) check(r *Request) error {
	token := r.Header.Get("Plaid-Verification")
	if token == "" {
		return ErrMissingSignature
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ErrMalformedSignature
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(rawHeader, &header) != nil || header.Alg != "ES256" {
		return ErrMalformedSignature
	}
	key := p.keys[header.Kid]
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return ErrMalformedSignature
	}
	if key == nil {
		return ErrInvalidSignature
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	rInt, sInt := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(key, digest[:], rInt, sInt) {
		return ErrInvalidSignature
	}
	var claims struct {
		Iat               int64  `json:"iat"`
		RequestBodySHA256 string `json:"request_body_sha256"`
	}
	rawClaims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(rawClaims, &claims) != nil || claims.Iat == 0 {
		return ErrMissingTimestamp
	}
	if err := CheckTolerance(time.Unix(claims.Iat, 0), r.Now, p.tolerance); err != nil {
		return err
	}
	sum := sha256.Sum256(r.Body)
	if subtle.ConstantTimeCompare([]byte(claims.RequestBodySHA256), []byte(hex.EncodeToString(sum[:]))) != 1 {
		return ErrInvalidSignature
	}
	return nil
}

// Sign makes a Plaid-Verification JWT; key is a private JWK (with "d").
func (p *plaid) Sign(key string, msg Message) (http.Header, error) {
	var k jwk
	if err := json.Unmarshal([]byte(key), &k); err != nil || k.D == "" {
		return nil, fmt.Errorf("plaid signing key must be a private JWK (with d)")
	}
	d, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.D, "="))
	if err != nil {
		return nil, fmt.Errorf("JWK d: %v", err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, fmt.Errorf("JWK d: %v", err)
	}
	sum := sha256.Sum256(msg.Body)
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": k.Kid, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iat": msg.Time.Unix(), "request_body_sha256": hex.EncodeToString(sum[:])})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	rInt, sInt, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	rInt.FillBytes(sig[:32])
	sInt.FillBytes(sig[32:])
	h := http.Header{}
	h.Set("Plaid-Verification", signing+"."+base64.RawURLEncoding.EncodeToString(sig))
	return h, nil
}
