package verify

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// plaid verifies the Plaid-Verification header: a compact ES256 JWT whose
// key is chosen by kid among configured JWKs, or fetched from Plaid's
// /webhook_verification_key/get when the source has API credentials, issued
// within the tolerance, whose request_body_sha256 claim is the hex SHA-256
// of the raw body.
type plaid struct {
	keys      chainedKeys
	tolerance time.Duration
}

func newPlaid(secrets []string, opts Options) (Scheme, error) {
	p := &plaid{keys: chainedKeys{static: staticKeys{}}, tolerance: 5 * time.Minute}
	if opts.Tolerance > 0 {
		p.tolerance = opts.Tolerance
	}
	fetched, err := newPlaidKeys(opts.ProviderOptions)
	if err != nil {
		return nil, err
	}
	if fetched != nil {
		p.keys.fetched = fetched
	}
	if len(secrets) == 0 && fetched == nil {
		return nil, fmt.Errorf("no secrets (Plaid's JWK public keys) and no provider_options client_id and secret to fetch them with")
	}
	for i, s := range secrets {
		var k jwk
		if err := json.Unmarshal([]byte(s), &k); err != nil {
			return nil, fmt.Errorf("secret %d: not a JWK: %v", i+1, err)
		}
		pub, err := plaidKey(&k)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		if k.Kid == "" {
			return nil, fmt.Errorf("secret %d: the JWK has no kid", i+1)
		}
		p.keys.static[k.Kid] = pub
	}
	return p, nil
}

// plaidKey is a JWK as Plaid issues them: EC P-256.
func plaidKey(k *jwk) (*ecdsa.PublicKey, error) {
	if k.Kty != "EC" || k.Crv != "P-256" {
		return nil, fmt.Errorf("JWK must be an EC P-256 key")
	}
	pub, err := k.publicKey()
	if err != nil {
		return nil, err
	}
	return pub.(*ecdsa.PublicKey), nil
}

func (p *plaid) Verify(r *Request) (Result, error) {
	token, err := p.check(r)
	if err != nil {
		return Result{}, err
	}
	// Plaid sends no event id, and one item's webhooks can repeat a body
	// byte for byte (SYNC_UPDATES_AVAILABLE): the signed token, issued for
	// each delivery, is what names one.
	sum := sha256.Sum256([]byte(token))
	return Result{DedupKey: "plaid:" + hex.EncodeToString(sum[:])}, nil
}

// key returns the configured key for kid, or the one Plaid's API gives.
func (p *plaid) key(r *Request, kid string) (any, error) {
	key, err := p.keys.key(r.context(), kid)
	if err != nil && !errors.Is(err, ErrKeyUnavailable) && !errors.Is(err, ErrInvalidSignature) {
		return nil, fmt.Errorf("%w: key %s: %v", ErrInvalidSignature, kid, err)
	}
	return key, err
}

// check verifies a request and returns its signed token.
func (p *plaid) check(r *Request) (string, error) {
	token := r.Header.Get("Plaid-Verification")
	if token == "" {
		return "", ErrMissingSignature
	}
	t, err := parseJWS(token)
	if err != nil || t.header.Alg != "ES256" || len(t.sig) != 64 {
		return "", ErrMalformedSignature
	}
	var claims struct {
		Iat               int64  `json:"iat"`
		RequestBodySHA256 string `json:"request_body_sha256"`
	}
	if json.Unmarshal(t.payload, &claims) != nil || claims.Iat == 0 {
		return "", ErrMissingTimestamp
	}
	// A stale token is refused before a key is fetched for it.
	if err := CheckTolerance(time.Unix(claims.Iat, 0), r.Now, p.tolerance); err != nil {
		return "", err
	}
	key, err := p.key(r, t.header.Kid)
	if err != nil {
		return "", err
	}
	if err := t.verify(key); err != nil {
		return "", err
	}
	sum := sha256.Sum256(r.Body)
	if subtle.ConstantTimeCompare([]byte(claims.RequestBodySHA256), []byte(hex.EncodeToString(sum[:]))) != 1 {
		return "", ErrInvalidSignature
	}
	return token, nil
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

// plaidKid is the shape of a kid worth asking Plaid about: a UUID, as
// Plaid's keys have. A kid of another shape is refused without a fetch, so
// made-up kids cannot spend the budget unless they look like Plaid's.
var plaidKid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Plaid's API hosts by environment.
var plaidEnvironments = map[string]string{
	"production": "https://production.plaid.com",
	"sandbox":    "https://sandbox.plaid.com",
}

// plaidKeyFetcher fetches verification keys by kid with the source's API
// credentials. A key is fetched again in the background after
// plaidKeyTTL, serving meanwhile, to learn whether Plaid expired it; a kid
// Plaid does not know is remembered for a minute; and misses spend the
// source's small budget, so forged kids cannot make the gateway hammer
// Plaid, nor push a key in use out of the cache.
type plaidKeyFetcher struct {
	url, clientID, secret string
	cache                 *remoteCache[any]
	budget                *fetchLimiter
}

const plaidKeyTTL = time.Hour

func newPlaidKeys(opts map[string]string) (*plaidKeyFetcher, error) {
	clientID, secret := opts["client_id"], opts["secret"]
	if clientID == "" && secret == "" {
		return nil, nil
	}
	if clientID == "" || secret == "" {
		return nil, fmt.Errorf("provider_options: client_id and secret go together")
	}
	env := opts["environment"]
	if env == "" {
		env = "production"
	}
	base, ok := plaidEnvironments[env]
	if !ok {
		return nil, fmt.Errorf("provider_options: environment must be production or sandbox, got %q", env)
	}
	if test := testBase(EnvTestPlaidURL); test != "" {
		base = test
	}
	return &plaidKeyFetcher{url: base + "/webhook_verification_key/get", clientID: clientID, secret: secret,
		cache: newRemoteCache[any](64, plaidKeyTTL, time.Minute), budget: newFetchLimiter(5, 12*time.Second)}, nil
}

// key finds a key by kid; a kid not shaped like Plaid's is refused
// without a fetch.
func (k *plaidKeyFetcher) key(ctx context.Context, kid string) (any, error) {
	if !plaidKid.MatchString(kid) {
		return nil, ErrInvalidSignature
	}
	return k.cache.get(kid, time.Now(), k.budget, func() (any, error) { return k.fetch(ctx, kid) })
}

// fetch asks Plaid for one key. An expired key is refused, as Plaid's docs
// say; a kid Plaid does not know comes back as an error status.
func (k *plaidKeyFetcher) fetch(ctx context.Context, kid string) (any, error) {
	body, _ := json.Marshal(map[string]string{"client_id": k.clientID, "secret": k.secret, "key_id": kid})
	req, err := http.NewRequest(http.MethodPost, k.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	status, answer, err := fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	switch {
	case status == http.StatusBadRequest:
		return nil, gone{statusError(status)} // INVALID_WEBHOOK_VERIFICATION_KEY_ID
	case status != http.StatusOK:
		// Credentials Plaid refuses are the gateway's problem, not the
		// sender's: retried, never answered as forged.
		return nil, statusError(status)
	}
	var out struct {
		Key struct {
			jwk
			Alg       string `json:"alg"`
			ExpiredAt *int64 `json:"expired_at"`
		} `json:"key"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, errors.New("answer is not a key")
	}
	if out.Key.Kid != kid || (out.Key.Alg != "" && out.Key.Alg != "ES256") {
		return nil, errors.New("answer is another key")
	}
	if out.Key.ExpiredAt != nil {
		return nil, gone{errors.New("key expired")}
	}
	key, err := plaidKey(&out.Key.jwk)
	if err != nil {
		return nil, gone{err}
	}
	return key, nil
}
