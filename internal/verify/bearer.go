package verify

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"
)

// bearerJWT verifies a JWT a provider sends in a header: HS256 made with
// the source's secrets, or RS256/ES256 made with a key its JWKS publishes.
// The algorithm is the scheme's, never the token's choice. Claims are
// checked as the provider's SDK checks them: issuer, audience, expiry,
// issue time, and where the provider signs the body, a claim with its
// SHA-256; where it does not, the preset is body-unsigned.
type bearerJWT struct {
	bearerConfig
	hmacKeys  [][]byte
	keyIDs    []string // KEY of each KEY:SECRET, with issuerIsKey
	keys      keySource
	opts      Options
	secrets   []string
	tenants   map[string]keySource
	audiences []string
	tolerance time.Duration
}

// bearerConfig is what a preset fixes of a bearer JWT scheme.
type bearerConfig struct {
	// header carries the token, after prefix ("Bearer ").
	header, prefix string
	// alg is the one algorithm accepted.
	alg string
	// jwksURL publishes the keys of an asymmetric alg.
	jwksURL string
	// issuers are the accepted iss values; none accepts any.
	issuers []string
	// audienceOption names the provider_options key whose value the aud
	// claim must hold; audienceFromURL falls back to the request URL.
	audienceOption  string
	audienceFromURL bool
	// bodyClaim holds the body's SHA-256 in bodyEncoding (hex, base64,
	// base64url); empty when the token does not cover the body.
	bodyClaim, bodyEncoding string
	// subjectIsURL requires sub to be the request URL (QStash).
	subjectIsURL bool
	// requireExp refuses a token without exp; maxAge bounds iat when the
	// provider sends no exp.
	requireExp bool
	maxAge     time.Duration
	// maxExpiry bounds how far ahead exp may be, as Google's verifier
	// does (a day): a token minted to last for ever is refused.
	maxExpiry time.Duration
	// issuerIsKey requires iss to be the key id of a KEY:SECRET secret (LiveKit).
	issuerIsKey bool
	// check is the preset's own claims rule (Google's email), given the
	// source's secrets and options.
	check func(claims map[string]any, secrets []string, opts Options) error
	// perSecret makes each secret a tenant with keys and issuers of its
	// own (Entra ID): tenantClaim names the token's tenant, jwksFor and
	// issuersFor what a tenant's tokens are checked against.
	tenantClaim string
	jwksFor     func(tenant string) string
	issuersFor  func(tenant string) []string
	// sign makes the claims of a sample token; nil for a scheme the gateway
	// cannot sign.
	sign func(msg Message, keyID string) map[string]any
}

// leeway is the clock skew allowed on exp and nbf, as the SDKs allow.
const leeway = time.Minute

func (c bearerConfig) build(secrets []string, opts Options) (Scheme, error) {
	b := &bearerJWT{bearerConfig: c, tolerance: c.maxAge, opts: opts, secrets: secrets}
	if opts.Tolerance > 0 && c.maxAge > 0 {
		b.tolerance = opts.Tolerance
	}
	if c.audienceOption != "" {
		if aud := opts.ProviderOptions[c.audienceOption]; aud != "" {
			b.audiences = strings.Split(aud, ",")
		} else if !c.audienceFromURL {
			return nil, fmt.Errorf("provider_options: %s is required", c.audienceOption)
		}
	}
	if strings.HasPrefix(c.alg, "HS") {
		if len(secrets) == 0 {
			return nil, errors.New("no secrets")
		}
		for i, s := range secrets {
			id, _, split := strings.Cut(s, ":")
			if c.issuerIsKey && !split {
				return nil, fmt.Errorf("secret %d must be API_KEY:API_SECRET", i+1)
			}
			b.hmacKeys = append(b.hmacKeys, []byte(keySecret(s, c.issuerIsKey)))
			b.keyIDs = append(b.keyIDs, id)
		}
		return b, nil
	}
	static := staticKeys{}
	if set := opts.ProviderOptions["keys"]; set != "" {
		var parsed struct {
			Keys []jwk `json:"keys"`
		}
		if err := json.Unmarshal([]byte(set), &parsed); err != nil || len(parsed.Keys) == 0 {
			return nil, errors.New("provider_options: keys must be a JWKS ({\"keys\": [...]})")
		}
		for _, j := range parsed.Keys {
			pub, err := j.publicKey()
			if err != nil || j.Kid == "" {
				return nil, fmt.Errorf("provider_options: keys: key %q: %v", j.Kid, err)
			}
			static[j.Kid] = pub
		}
	}
	// Configured keys replace the provider's: nothing is fetched.
	source := func(jwksURL string) keySource {
		if len(static) > 0 {
			return static
		}
		return newJWKS(jwksURL)
	}
	if c.tenantClaim != "" {
		if len(secrets) == 0 {
			return nil, errors.New("no secrets (tenant ids)")
		}
		b.tenants = map[string]keySource{}
		for _, tenant := range secrets {
			b.tenants[tenant] = source(c.jwksFor(tenant))
		}
		return b, nil
	}
	b.keys = source(c.jwksURL)
	return b, nil
}

// keySecret is the part of a secret a token is made with: the whole, or
// SECRET of KEY:SECRET.
func keySecret(s string, split bool) string {
	if split {
		if _, secret, ok := strings.Cut(s, ":"); ok {
			return secret
		}
	}
	return s
}

func (b *bearerJWT) Verify(r *Request) (Result, error) {
	raw := r.Header.Get(b.header)
	if raw == "" {
		return Result{}, ErrMissingSignature
	}
	token, ok := strings.CutPrefix(raw, b.prefix)
	if !ok && b.prefix != "" {
		// Schemes that say "Bearer" accept it in any case.
		if len(raw) > len(b.prefix) && strings.EqualFold(raw[:len(b.prefix)], b.prefix) {
			token = raw[len(b.prefix):]
		} else {
			return Result{}, ErrMalformedSignature
		}
	}
	t, err := parseJWS(strings.TrimSpace(token))
	if err != nil || t.header.Alg != b.alg {
		return Result{}, ErrMalformedSignature
	}
	claims, err := decodeClaims(t.payload)
	if err != nil {
		return Result{}, ErrMalformedSignature
	}
	// Time and issuer are checked before a key is fetched for the token.
	if err := b.checkTime(claims, r.Now); err != nil {
		return Result{}, err
	}
	if len(b.issuers) > 0 && !slices.Contains(b.issuers, claimString(claims, "iss")) {
		return Result{}, fmt.Errorf("%w: issuer", ErrInvalidSignature)
	}
	if b.tenants != nil {
		tenant := claimString(claims, b.tenantClaim)
		if _, ok := b.tenants[tenant]; !ok || !slices.Contains(b.issuersFor(tenant), claimString(claims, "iss")) {
			return Result{}, fmt.Errorf("%w: tenant or issuer", ErrInvalidSignature)
		}
	}
	if err := b.checkSignature(r, t, claims); err != nil {
		return Result{}, err
	}
	if err := b.checkClaims(r, claims); err != nil {
		return Result{}, err
	}
	return Result{}, nil
}

func (b *bearerJWT) checkSignature(r *Request, t *jws, claims map[string]any) error {
	if b.hmacKeys != nil {
		for i, k := range b.hmacKeys {
			if b.issuerIsKey {
				// The key id names which KEY:SECRET made it.
				if b.keyIDs[i] != claimString(claims, "iss") {
					continue
				}
			}
			if t.verify(k) == nil {
				return nil
			}
		}
		return ErrInvalidSignature
	}
	keys := b.keys
	if b.tenants != nil {
		keys = b.tenants[claimString(claims, b.tenantClaim)]
	}
	key, err := keys.key(r.context(), t.header.Kid)
	if err != nil {
		return err
	}
	return t.verify(key)
}

// checkTime applies exp and nbf with leeway, and iat within maxAge.
func (b *bearerJWT) checkTime(claims map[string]any, now time.Time) error {
	exp, hasExp := claimTime(claims, "exp")
	switch {
	case hasExp && now.After(exp.Add(leeway)):
		return fmt.Errorf("%w: token expired", ErrStaleTimestamp)
	case !hasExp && b.requireExp:
		return ErrMissingTimestamp
	case hasExp && b.maxExpiry > 0 && exp.Sub(now) > b.maxExpiry+leeway:
		return fmt.Errorf("%w: token lives too long", ErrMalformedSignature)
	}
	if nbf, ok := claimTime(claims, "nbf"); ok && now.Add(leeway).Before(nbf) {
		return fmt.Errorf("%w: token not valid yet", ErrStaleTimestamp)
	}
	if b.tolerance > 0 {
		iat, ok := claimTime(claims, "iat")
		if !ok {
			return ErrMissingTimestamp
		}
		return CheckTolerance(iat, now, b.tolerance)
	}
	return nil
}

func (b *bearerJWT) checkClaims(r *Request, claims map[string]any) error {
	if b.audienceOption != "" {
		want := b.audiences
		if len(want) == 0 {
			want = []string{r.URL}
		}
		if !audienceMatches(claims["aud"], want) {
			return fmt.Errorf("%w: audience", ErrInvalidSignature)
		}
	}
	if b.subjectIsURL && claimString(claims, "sub") != r.URL {
		return fmt.Errorf("%w: the token is for another URL", ErrInvalidSignature)
	}
	if b.bodyClaim != "" {
		got := claimString(claims, b.bodyClaim)
		if subtle.ConstantTimeCompare([]byte(strings.TrimRight(got, "=")), []byte(bodyDigest(r.Body, b.bodyEncoding))) != 1 {
			return fmt.Errorf("%w: body digest", ErrInvalidSignature)
		}
	}
	if b.check != nil {
		if err := b.check(claims, b.secrets, b.opts); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidSignature, err)
		}
	}
	return nil
}

// bodyDigest is the body's SHA-256 as a claim carries it (base64 without
// padding, as the claim is compared with its padding trimmed).
func bodyDigest(body []byte, encoding string) string {
	sum := sha256.Sum256(body)
	switch encoding {
	case "base64":
		return strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
	case "base64url":
		return base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return hex.EncodeToString(sum[:])
}

func decodeClaims(payload []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var claims map[string]any
	if err := dec.Decode(&claims); err != nil || claims == nil || dec.More() {
		return nil, ErrMalformedSignature
	}
	return claims, nil
}

func claimString(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

func claimTime(claims map[string]any, name string) (time.Time, bool) {
	n, ok := claims[name].(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

func audienceMatches(aud any, want []string) bool {
	switch a := aud.(type) {
	case string:
		return slices.Contains(want, a)
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && slices.Contains(want, s) {
				return true
			}
		}
	}
	return false
}

// Sign makes the preset's token for a sample: with an HS256 key, or for
// an RS256 scheme with a key from GenerateKeys (rsaTestKey).
func (b *bearerJWT) Sign(key string, msg Message) (http.Header, error) {
	if b.sign == nil {
		return nil, fmt.Errorf("the gateway cannot sign this provider's tokens")
	}
	var token string
	var err error
	if strings.HasPrefix(b.alg, "HS") {
		keyID, _, _ := strings.Cut(key, ":")
		token, err = signHS256([]byte(keySecret(key, b.issuerIsKey)), nil, b.sign(msg, keyID))
	} else {
		var k rsaTestKey
		if json.Unmarshal([]byte(key), &k) != nil || k.PrivateKey == "" {
			return nil, errors.New("signing key must be the JSON `hookgate keys new` prints for this provider")
		}
		token, err = signRS256(k, b.sign(msg, k.Subject))
	}
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(b.header, b.prefix+token)
	return h, nil
}

// rsaTestKey is a test key for an RS256 token scheme: the private key, its
// kid, the public JWKS a source configures as provider_options keys, and
// the subject (a service account, a tenant) the secret names.
type rsaTestKey struct {
	Kid        string `json:"kid"`
	PrivateKey string `json:"private_key"`
	JWKS       string `json:"jwks"`
	Subject    string `json:"subject"`
	// Audience is the audience its tokens name, when the scheme's is not
	// the request URL.
	Audience string `json:"audience,omitempty"`
}

func newRSATestKey(subject, audience string) (secret, signingKey string, err error) {
	priv, keyPEM, err := newRSAKey()
	if err != nil {
		return "", "", err
	}
	kid := randomHex(8)
	e := big.NewInt(int64(priv.E)).Bytes()
	pub := jwk{Kty: "RSA", Kid: kid, Use: "sig", Alg: "RS256", N: base64.RawURLEncoding.EncodeToString(priv.N.Bytes()), E: base64.RawURLEncoding.EncodeToString(e)}
	k := rsaTestKey{Kid: kid, PrivateKey: keyPEM,
		JWKS: string(mustJSON(map[string][]jwk{"keys": {pub}})), Subject: subject, Audience: audience}
	return subject, string(mustJSON(k)), nil
}

func signRS256(k rsaTestKey, claims any) (string, error) {
	priv, err := parseRSAKey(k.PrivateKey, "signing key")
	if err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": k.Kid, "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// TestKeyOptions are the provider_options a source needs to verify what a
// test key from GenerateKeys signs: the JWKS of an RS256 token scheme (and
// the audience its samples name), the root of an x5c chain, the
// certificate of PayPal's scheme; nil for other keys.
func TestKeyOptions(signingKey string) map[string]string {
	var k struct {
		JWKS        string `json:"jwks"`
		Audience    string `json:"audience"`
		Root        string `json:"root"`
		WebhookID   string `json:"webhook_id"`
		Certificate string `json:"certificate"`
	}
	if json.Unmarshal([]byte(signingKey), &k) != nil {
		return nil
	}
	switch {
	case k.JWKS != "" && k.Audience != "":
		return map[string]string{"keys": k.JWKS, "audience": k.Audience}
	case k.JWKS != "":
		return map[string]string{"keys": k.JWKS}
	case k.Root != "":
		return map[string]string{"root": k.Root}
	case k.WebhookID != "" && k.Certificate != "":
		return map[string]string{"certificate": k.Certificate}
	}
	return nil
}

// testAudience is the audience test tokens of schemes with a fixed
// audience name.
const testAudience = "api://hookgate"
