package verify

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// keySource finds the public key a token names by kid: configured keys,
// a provider's JSON Web Key Set, or Plaid's key endpoint. A key it cannot
// fetch yet is ErrKeyUnavailable; one the provider does not have is a
// forgery.
type keySource interface {
	key(ctx context.Context, kid string) (any, error)
}

// jwk is one JSON Web Key: EC (P-256, P-384), RSA or OKP (Ed25519).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	D   string `json:"d,omitempty"`
}

func b64urlField(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// publicKey is the key as crypto/* takes it.
func (k *jwk) publicKey() (any, error) {
	switch k.Kty {
	case "EC":
		curve, size := elliptic.P256(), 32
		switch k.Crv {
		case "P-256":
		case "P-384":
			curve, size = elliptic.P384(), 48
		default:
			return nil, fmt.Errorf("JWK curve %q is not P-256 or P-384", k.Crv)
		}
		x, err1 := b64urlField(k.X)
		y, err2 := b64urlField(k.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, fmt.Errorf("JWK x and y must be %d-byte base64url values", size)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("JWK point is not on %s", k.Crv)
		}
		return pub, nil
	case "RSA":
		n, err1 := b64urlField(k.N)
		e, err2 := b64urlField(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("JWK n and e must be base64url values")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.E < 3 {
			return nil, errors.New("JWK RSA key is under 2048 bits")
		}
		return pub, nil
	case "OKP":
		x, err := b64urlField(k.X)
		if k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("JWK OKP key must be a 32-byte Ed25519 key")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, fmt.Errorf("JWK type %q is not EC, RSA or OKP", k.Kty)
}

// EnvTestJWKSURL is a base URL (such as http://127.0.0.1:9000) that
// replaces the scheme and host of every JWKS URL a preset fetches, so tests
// and `hookgate send` can serve keys locally. Nothing in production sets
// it.
const EnvTestJWKSURL = "HOOKGATE_TEST_JWKS_URL"

// jwksKeys fetches a provider's JSON Web Key Set from a fixed HTTPS URL. An
// unknown kid fetches the set again within the source's budget (the
// provider rotated), a kid still missing is remembered for a minute, and
// keys in use are fetched again hourly in the background.
type jwksKeys struct {
	url    string
	cache  *remoteCache[any]
	budget *fetchLimiter
}

// jwksKid is the shape of a kid worth fetching for: a flood of made-up
// kids of any other shape spends nothing.
var jwksKid = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{1,128}$`)

func newJWKS(rawURL string) *jwksKeys {
	if test := testBase(EnvTestJWKSURL); test != "" {
		if u, err := url.Parse(rawURL); err == nil {
			rawURL = test + u.Path
		}
	}
	return &jwksKeys{url: rawURL, cache: newRemoteCache[any](64, time.Hour, time.Minute), budget: newFetchLimiter(5, 12*time.Second)}
}

func (k *jwksKeys) key(ctx context.Context, kid string) (any, error) {
	if !jwksKid.MatchString(kid) {
		return nil, ErrInvalidSignature
	}
	return k.cache.get(kid, time.Now(), k.budget, func() (any, error) { return k.fetch(ctx, kid) })
}

// fetch reads the whole set, files every key in it, and returns kid's.
func (k *jwksKeys) fetch(ctx context.Context, kid string) (any, error) {
	req, err := http.NewRequest(http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	status, body, err := fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError(status) // the set itself is never "gone"
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, errors.New("answer is not a key set")
	}
	var found any
	now := time.Now()
	for _, j := range set.Keys {
		if j.Kid == "" || (j.Use != "" && j.Use != "sig") {
			continue
		}
		pub, err := j.publicKey()
		if err != nil {
			continue
		}
		if j.Kid == kid {
			found = pub
			continue
		}
		k.cache.put(j.Kid, pub, now)
	}
	if found == nil {
		return nil, gone{fmt.Errorf("kid %s is not in the key set", kid)}
	}
	return found, nil
}

// staticKeys are keys configured by kid.
type staticKeys map[string]any

func (s staticKeys) key(_ context.Context, kid string) (any, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return nil, ErrInvalidSignature
}

// chainedKeys tries configured keys first, then a fetched source.
type chainedKeys struct {
	static  staticKeys
	fetched keySource
}

func (c chainedKeys) key(ctx context.Context, kid string) (any, error) {
	if k, ok := c.static[kid]; ok {
		return k, nil
	}
	if c.fetched == nil {
		return nil, ErrInvalidSignature
	}
	return c.fetched.key(ctx, kid)
}
