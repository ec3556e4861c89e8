package verify

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// plaidStandIn plays Plaid's /webhook_verification_key/get: it answers
// the keys it holds to the right credentials, 400 otherwise, counting calls.
type plaidStandIn struct {
	mu    sync.Mutex
	keys  map[string]map[string]any // kid → JWK as Plaid answers it
	calls atomic.Int32
}

func newPlaidStandIn(t *testing.T) *plaidStandIn {
	t.Helper()
	s := &plaidStandIn{keys: map[string]map[string]any{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		var req struct{ ClientID, Secret, KeyID string }
		var raw map[string]string
		json.NewDecoder(r.Body).Decode(&raw)
		req.ClientID, req.Secret, req.KeyID = raw["client_id"], raw["secret"], raw["key_id"]
		s.mu.Lock()
		key, ok := s.keys[req.KeyID]
		s.mu.Unlock()
		if r.URL.Path != "/webhook_verification_key/get" || r.Method != http.MethodPost || req.ClientID != "client-1" || req.Secret != "sandbox-secret" || !ok {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error_type":"INVALID_INPUT","error_code":"INVALID_WEBHOOK_VERIFICATION_KEY_ID"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"key": key, "request_id": "req-1"})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(EnvTestPlaidURL, srv.URL)
	return s
}

// add publishes a fresh key pair and returns the private JWK to sign with.
func (s *plaidStandIn) add(t *testing.T, expired bool) (kid, signingKey string) {
	t.Helper()
	pub, priv, err := plaidKeys()
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	json.Unmarshal([]byte(pub), &k)
	k["alg"], k["use"], k["created_at"], k["expired_at"] = "ES256", "sig", 1560000000, nil
	if expired {
		k["expired_at"] = 1700000000
	}
	s.mu.Lock()
	s.keys[k["kid"].(string)] = k
	s.mu.Unlock()
	return k["kid"].(string), priv
}

func plaidRequest(t *testing.T, signingKey string, now time.Time) *Request {
	t.Helper()
	body := []byte(`{"webhook_type":"TRANSACTIONS","webhook_code":"DEFAULT_UPDATE","item_id":"it-1","environment":"sandbox"}`)
	h, err := (&plaid{}).Sign(signingKey, Message{Body: body, Time: now})
	if err != nil {
		t.Fatal(err)
	}
	return &Request{Body: body, Header: h, Now: now}
}

func plaidWithAPI(t *testing.T, secrets ...string) Scheme {
	t.Helper()
	p, _ := Lookup("plaid")
	s, err := p.Compile(secrets, Options{ProviderOptions: map[string]string{"client_id": "client-1", "secret": "sandbox-secret", "environment": "sandbox"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlaidFetchesKeyByKid(t *testing.T) {
	plaid := newPlaidStandIn(t)
	_, signingKey := plaid.add(t, false)
	s := plaidWithAPI(t)
	now := time.Now()
	for range 3 {
		if _, err := s.Verify(plaidRequest(t, signingKey, now)); err != nil {
			t.Fatalf("key fetched by kid: %v", err)
		}
	}
	if n := plaid.calls.Load(); n != 1 {
		t.Fatalf("%d fetches for one kid, want 1 (cached)", n)
	}
	// A tampered body still fails with the fetched key.
	req := plaidRequest(t, signingKey, now)
	req.Body = []byte(strings.Replace(string(req.Body), "it-1", "it-2", 1))
	if _, err := s.Verify(req); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("tampered: %v", err)
	}
}

func TestPlaidRotationKeepsStaticKeys(t *testing.T) {
	plaid := newPlaidStandIn(t)
	static, staticKey, _ := plaidKeys()
	_, rotated := plaid.add(t, false)
	s := plaidWithAPI(t, static)
	now := time.Now()
	if _, err := s.Verify(plaidRequest(t, staticKey, now)); err != nil || plaid.calls.Load() != 0 {
		t.Fatalf("static key: %v after %d fetches", err, plaid.calls.Load())
	}
	if _, err := s.Verify(plaidRequest(t, rotated, now)); err != nil || plaid.calls.Load() != 1 {
		t.Fatalf("rotated key: %v after %d fetches", err, plaid.calls.Load())
	}
}

func TestPlaidUnknownKid(t *testing.T) {
	plaid := newPlaidStandIn(t)
	_, unknown, _ := plaidKeys() // never published
	s := plaidWithAPI(t)
	now := time.Now()
	for range 5 {
		if _, err := s.Verify(plaidRequest(t, unknown, now)); !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := plaid.calls.Load(); n != 1 {
		t.Fatalf("unknown kid fetched %d times, want 1 (remembered)", n)
	}
	// Forged kids, each new, spend the fetch budget and then cost nothing.
	for range 20 {
		_, forged, _ := plaidKeys()
		s.Verify(plaidRequest(t, forged, now))
	}
	if n := plaid.calls.Load(); n > 6 {
		t.Fatalf("%d fetches for forged kids, want at most the budget", n)
	}
	// Stale tokens are refused before any fetch.
	before := plaid.calls.Load()
	_, other, _ := plaidKeys()
	stale := plaidRequest(t, other, now.Add(-time.Hour))
	stale.Now = now
	if _, err := s.Verify(stale); !errors.Is(err, ErrStaleTimestamp) || plaid.calls.Load() != before {
		t.Fatalf("stale: %v", err)
	}
	// Without API credentials nothing is fetched at all.
	static, _, _ := plaidKeys()
	offline := compilePreset(t, "plaid", static)
	_, published := plaid.add(t, false)
	before = plaid.calls.Load()
	if _, err := offline.Verify(plaidRequest(t, published, now)); !errors.Is(err, ErrInvalidSignature) || plaid.calls.Load() != before {
		t.Fatalf("no credentials: %v, %d fetches", err, plaid.calls.Load()-before)
	}
}

func TestPlaidExpiredKey(t *testing.T) {
	plaid := newPlaidStandIn(t)
	_, expired := plaid.add(t, true)
	if _, err := plaidWithAPI(t).Verify(plaidRequest(t, expired, time.Now())); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("expired key: %v", err)
	}
}

func TestPlaidProviderOptions(t *testing.T) {
	p, _ := Lookup("plaid")
	for _, opts := range []map[string]string{
		{"client_id": "c"},
		{"client_id": "c", "secret": "s", "environment": "development"},
		{},
	} {
		if _, err := p.Compile(nil, Options{ProviderOptions: opts}); err == nil {
			t.Errorf("%v accepted", opts)
		}
	}
	t.Setenv(EnvTestPlaidURL, "")
	s, err := p.Compile(nil, Options{ProviderOptions: map[string]string{"client_id": "c", "secret": "s"}})
	if err != nil || s.(*plaid).keys.fetched.(*plaidKeyFetcher).url != "https://production.plaid.com/webhook_verification_key/get" {
		t.Fatalf("default environment: %v", err)
	}
}
