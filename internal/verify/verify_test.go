package verify

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

type vector struct {
	Provider  string `json:"provider"`
	Source    string `json:"source"`
	Secret    string `json:"secret"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Payload   string `json:"payload"`
	Header    string `json:"header"`
	Signature string `json:"signature"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	data, err := os.ReadFile("testdata/published.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []vector
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	return all
}

func mustScheme(t *testing.T, preset string, secrets ...string) SpecScheme {
	t.Helper()
	p, ok := Lookup(preset)
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	h, err := New(p.Spec, secrets)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// requestFor builds the request a provider would send for a published vector,
// with headers named as the given preset expects them.
func requestFor(v vector, preset Preset) *Request {
	h := http.Header{}
	h.Set(preset.Spec.Header, v.Signature)
	if preset.Spec.IDHeader != "" {
		h.Set(preset.Spec.IDHeader, v.ID)
	}
	if preset.Spec.TimestampHeader != "" {
		h.Set(preset.Spec.TimestampHeader, v.Timestamp)
	}
	now := time.Now()
	if v.Timestamp != "" {
		ts, _ := strconv.ParseInt(v.Timestamp, 10, 64)
		now = time.Unix(ts, 0).Add(30 * time.Second)
	}
	return &Request{Body: []byte(v.Payload), Header: h, Method: "POST", Now: now}
}

func TestPublishedVectors(t *testing.T) {
	// The published vectors for the presets of this package; svix shares the
	// Standard Webhooks vector under its own header names.
	uses := map[string][]string{
		"github":            {"github"},
		"standard-webhooks": {"standard-webhooks", "svix"},
	}
	checked := 0
	for _, v := range loadVectors(t) {
		for _, name := range uses[v.Provider] {
			preset, _ := Lookup(name)
			t.Run(name+"/"+v.Source, func(t *testing.T) {
				scheme := mustScheme(t, name, v.Secret)
				if _, err := scheme.Verify(requestFor(v, preset)); err != nil {
					t.Fatalf("published vector rejected: %v", err)
				}

				tampered := requestFor(v, preset)
				tampered.Body = append([]byte(nil), tampered.Body...)
				tampered.Body[len(tampered.Body)/2] ^= 0x01
				if _, err := scheme.Verify(tampered); !errors.Is(err, ErrInvalidSignature) {
					t.Errorf("tampered body: got %v, want ErrInvalidSignature", err)
				}

				wrongSecret := mustScheme(t, name, flipSecret(v.Secret))
				if _, err := wrongSecret.Verify(requestFor(v, preset)); !errors.Is(err, ErrInvalidSignature) {
					t.Errorf("wrong secret: got %v, want ErrInvalidSignature", err)
				}

				badSig := v
				badSig.Signature = flipLastChar(v.Signature)
				if _, err := scheme.Verify(requestFor(badSig, preset)); !errors.Is(err, ErrInvalidSignature) && !errors.Is(err, ErrMalformedSignature) {
					t.Errorf("altered signature: got %v, want a rejection", err)
				}

				if v.Timestamp != "" {
					stale := requestFor(v, preset)
					stale.Now = stale.Now.Add(time.Hour)
					if _, err := scheme.Verify(stale); !errors.Is(err, ErrStaleTimestamp) {
						t.Errorf("stale timestamp: got %v, want ErrStaleTimestamp", err)
					}
					future := requestFor(v, preset)
					future.Now = future.Now.Add(-time.Hour)
					if _, err := scheme.Verify(future); !errors.Is(err, ErrStaleTimestamp) {
						t.Errorf("future timestamp: got %v, want ErrStaleTimestamp", err)
					}
				}
			})
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("only %d published vectors checked; testdata/published.json lost entries?", checked)
	}
}

// flipSecret changes one character while keeping the secret decodable.
func flipSecret(s string) string {
	b := []byte(s)
	i := len(b) - 3
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func flipLastChar(s string) string {
	b := []byte(s)
	i := len(b) - 2 // before any base64 padding
	if b[i] == '0' {
		b[i] = '1'
	} else {
		b[i] = '0'
	}
	return string(b)
}

func TestHeaderProblems(t *testing.T) {
	scheme := mustScheme(t, "stripe", "whsec_test")
	now := time.Unix(1700000000, 0)
	body := []byte(`{"id":"evt_1"}`)
	good, err := scheme.Sign("whsec_test", Message{Body: body, Time: now})
	if err != nil {
		t.Fatal(err)
	}
	goodValue := good.Get("Stripe-Signature")
	_, sig, _ := strings.Cut(goodValue, ",v1=")
	cases := []struct {
		name   string
		values []string
		want   error
	}{
		{"valid", []string{goodValue}, nil},
		{"missing", nil, ErrMissingSignature},
		{"empty", []string{""}, ErrMissingSignature},
		{"blank", []string{"   "}, ErrMissingSignature},
		{"no pairs", []string{"garbage"}, ErrMalformedSignature},
		{"timestamp only", []string{"t=1700000000"}, ErrMalformedSignature},
		{"signature only", []string{"v1=" + sig}, ErrMissingTimestamp},
		{"truncated", []string{goodValue[:len(goodValue)-4]}, ErrMalformedSignature},
		{"not hex", []string{"t=1700000000,v1=" + strings.Repeat("zz", 32)}, ErrMalformedSignature},
		{"two timestamps", []string{"t=1700000000,t=1700000001,v1=" + sig}, ErrMalformedSignature},
		{"rotation: second v1 matches", []string{"t=1700000000,v1=" + strings.Repeat("ab", 32) + ",v1=" + sig}, nil},
		{"old v0 ignored", []string{"t=1700000000,v0=" + sig}, ErrMalformedSignature},
		{"duplicated header, second good", []string{"t=1700000000,v1=" + strings.Repeat("ab", 32), goodValue}, nil},
		{"huge header", []string{"t=1700000000," + strings.Repeat("v1="+strings.Repeat("ab", 32)+",", 5000) + "v1=" + sig}, ErrInvalidSignature},
		{"garbled timestamp", []string{"t=soon,v1=" + sig}, ErrMissingTimestamp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.values {
				h.Add("Stripe-Signature", v)
			}
			_, err := scheme.Verify(&Request{Body: body, Header: h, Now: now})
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestSecretRotation(t *testing.T) {
	now := time.Unix(1700000000, 0)
	body := []byte(`{"id":"evt_2"}`)
	old := mustScheme(t, "stripe", "whsec_old-0123456789")
	signed, _ := old.Sign("whsec_old-0123456789", Message{Body: body, Time: now})
	both := mustScheme(t, "stripe", "whsec_new-0123456789", "whsec_old-0123456789")
	if _, err := both.Verify(&Request{Body: body, Header: signed, Now: now}); err != nil {
		t.Fatalf("old secret in second slot rejected: %v", err)
	}
	onlyNew := mustScheme(t, "stripe", "whsec_new-0123456789")
	if _, err := onlyNew.Verify(&Request{Body: body, Header: signed, Now: now}); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("retired secret accepted: %v", err)
	}
}

func TestDeclarativeSchemes(t *testing.T) {
	now := time.Unix(1700000000, 0)
	specs := map[string]Spec{
		"sha1 hex, body only":  {Algorithm: "sha1", Header: "X-Sig", Encoding: "hex"},
		"sha512 base64":        {Algorithm: "sha512", Header: "X-Sig", Encoding: "base64", Content: "{method} {url}\n{body}"},
		"timestamp in ms":      {Algorithm: "sha256", Header: "X-Sig", Prefix: "sha256=", Content: "{timestamp}.{body}", TimestampHeader: "X-Ts", TimestampUnit: "ms", Tolerance: time.Minute},
		"hex secret, pairs ;":  {Header: "X-Sig", SignatureKey: "h1", TimestampKey: "ts", PairSeparator: ";", Content: "{timestamp}:{body}", SecretEncoding: "hex"},
		"id and space-list":    {Header: "X-Sig", Separator: " ", Prefix: "v1,", Encoding: "base64", Content: "{id}.{timestamp}.{body}", IDHeader: "X-Id", TimestampHeader: "X-Ts", SecretEncoding: "base64"},
		"literal-only content": {Header: "X-Sig", Content: "static:{body}:end"},
	}
	secret := "0123456789abcdef0123456789abcdef"
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			h, err := New(spec, []string{secret})
			if err != nil {
				t.Fatal(err)
			}
			msg := Message{Body: []byte(`{"a":1}`), Method: "POST", URL: "https://example.com/hook?x=1", ID: "msg_1", Time: now}
			headers, err := h.Sign(secret, msg)
			if err != nil {
				t.Fatal(err)
			}
			req := &Request{Body: msg.Body, Header: headers, Method: msg.Method, URL: msg.URL, Now: now}
			if _, err := h.Verify(req); err != nil {
				t.Fatalf("own signature rejected: %v (headers %v)", err, headers)
			}
			req.Body = []byte(`{"a":2}`)
			if _, err := h.Verify(req); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("changed body: got %v", err)
			}
			if strings.Contains(spec.Content, "{url}") {
				req = &Request{Body: msg.Body, Header: headers, Method: msg.Method, URL: "https://example.com/other", Now: now}
				if _, err := h.Verify(req); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("changed url: got %v", err)
				}
			}
		})
	}
}

func TestSpecErrors(t *testing.T) {
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Algorithm: "md5", Header: "X"}, "unknown algorithm"},
		{Spec{Header: "X", Encoding: "base32"}, "unknown encoding"},
		{Spec{}, "header is required"},
		{Spec{Header: "X", Content: "{nonce}.{body}"}, "unknown variable {nonce}"},
		{Spec{Header: "X", Content: "{body"}, "unclosed"},
		{Spec{Header: "X", Content: "{timestamp}.{body}"}, "neither timestamp_header nor timestamp_key"},
		{Spec{Header: "X", Content: "{id}.{body}"}, "id_header is not set"},
		{Spec{Header: "X", TimestampKey: "t"}, "timestamp_key needs signature_key"},
		{Spec{Header: "X", TimestampHeader: "T", TimestampUnit: "h"}, "unknown timestamp_unit"},
		{Spec{Header: "X", SecretEncoding: "rot13"}, "unknown secret_encoding"},
		{Spec{Header: "X", SecretEncoding: "whsec"}, "not a whsec_ base64 secret"},
	}
	for _, c := range cases {
		secret := "s"
		if c.spec.SecretEncoding == "whsec" {
			secret = "whsec_!!!"
		}
		_, err := New(c.spec, []string{secret})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want error containing %q", c.spec, err, c.want)
		}
	}
	if _, err := New(Spec{Header: "X"}, nil); err == nil {
		t.Error("no secrets accepted")
	}
}

func TestSuggest(t *testing.T) {
	got := Suggest("strpe")
	if len(got) == 0 || got[0] != "stripe" {
		t.Fatalf("Suggest(strpe) = %v, want stripe first", got)
	}
	if got := Suggest("zzzzzzzz"); len(got) != 0 {
		t.Fatalf("Suggest(zzzzzzzz) = %v, want none", got)
	}
}

func FuzzStripeHeader(f *testing.F) {
	f.Add("t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd", []byte(`{"id":"evt_1"}`))
	f.Add("", []byte{})
	f.Add("t=,v1=,,,=", []byte("x"))
	scheme, err := New(presets["stripe"].Spec, []string{"whsec_fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		h := http.Header{}
		h.Set("Stripe-Signature", header)
		if _, err := scheme.Verify(&Request{Body: body, Header: h, Now: now}); err != nil {
			return
		}
		// Whatever verified must carry the signature made with the secret.
		signed, _ := scheme.Sign("whsec_fuzz", Message{Body: body, Time: now})
		_, want, _ := strings.Cut(signed.Get("Stripe-Signature"), "v1=")
		if !strings.Contains(strings.ToLower(header), want) {
			t.Fatalf("header %q verified without the real signature %s", header, want)
		}
	})
}

// Mailgun signs a token, not the body: Verify returns the token as
// single-use for twice the tolerance, and other schemes return none.
func TestVerifyReturnsSingleUseToken(t *testing.T) {
	now := time.Unix(1700000000, 0)
	mg := compilePreset(t, "mailgun", "mailgun-signing-key-0123456789")
	sig := MailgunSignature("mailgun-signing-key-0123456789", "tok-1", now)
	body := `{"signature":{"timestamp":"` + sig["timestamp"] + `","token":"tok-1","signature":"` + sig["signature"] + `"}}`
	req := &Request{Body: []byte(body), Now: now}
	res, err := mg.Verify(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.SingleUseToken != "tok-1" || res.SingleUseWindow != 10*time.Minute {
		t.Fatalf("result %+v, want tok-1 for 10m", res)
	}
	if res, err := mg.Verify(&Request{Body: []byte(body), Now: now.Add(time.Hour)}); err == nil || res != (Result{}) {
		t.Fatalf("stale: %+v, %v", res, err)
	}
	gh := compilePreset(t, "github", "s")
	h, _ := gh.(SpecScheme).Sign("s", Message{Body: []byte("{}")})
	if res, err := gh.Verify(&Request{Body: []byte("{}"), Header: h, Now: now}); err != nil || res != (Result{}) {
		t.Fatalf("github: %+v, %v", res, err)
	}
}

// TestRSASignatures: rsa-sha256 is one registered algorithm: a declared
// scheme with it verifies what its private key signed, and nothing else.
func TestRSASignatures(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	privDER, _ := x509.MarshalPKCS8PrivateKey(priv)
	spec := Spec{Algorithm: "rsa-sha256", Header: "X-Signature", Encoding: "base64", Content: "{timestamp}.{body}", TimestampHeader: "X-Timestamp", Tolerance: 5 * time.Minute}
	now := time.Now()
	for _, secret := range []string{pubPEM, base64.StdEncoding.EncodeToString(pubDER)} {
		s, err := New(Spec{Algorithm: spec.Algorithm, Header: spec.Header, Encoding: spec.Encoding, Content: spec.Content, TimestampHeader: spec.TimestampHeader,
			Tolerance: spec.Tolerance, SecretEncoding: "der-base64"}, []string{secret})
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"id":"evt_1"}`)
		h, err := s.Sign(base64.StdEncoding.EncodeToString(privDER), Message{Body: body, Time: now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Verify(&Request{Body: body, Header: h, Now: now}); err != nil {
			t.Fatalf("own signature: %v", err)
		}
		if _, err := s.Verify(&Request{Body: []byte(`{"id":"evt_2"}`), Header: h, Now: now}); !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("changed body: %v", err)
		}
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallDER, _ := x509.MarshalPKIXPublicKey(&small.PublicKey)
	if _, err := New(Spec{Algorithm: "rsa-sha256", Header: "X-Signature", SecretEncoding: "der-base64"}, []string{base64.StdEncoding.EncodeToString(smallDER)}); err == nil {
		t.Fatal("a 1024-bit key accepted")
	}
}

// TestEd25519ph verifies RFC 8032's Ed25519ph vector (TEST abc), the
// variant KMS-held keys sign pre-hashed content with, and keeps the two
// variants apart: a pure Ed25519 signature of the same content by the same
// key is refused by ed25519ph, and the other way round.
func TestEd25519ph(t *testing.T) {
	const pub = "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf"
	const seed = "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42"
	const sig = "98a70222f0b8121aa9d30f813d683f809e462b469c7ff87639499bb94e6dae4131f85042463c2a355a2003d062adf5aaa10b8c61e636062aaad11c2a26083406"
	spec := func(alg string) Spec {
		return Spec{Algorithm: alg, Header: "X-Signature", Encoding: "hex", SecretEncoding: "hex"}
	}
	req := func(s string) *Request {
		return &Request{Body: []byte("abc"), Header: http.Header{"X-Signature": {s}}, Method: "POST", Now: time.Now()}
	}
	ph, err := New(spec("ed25519ph"), []string{pub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ph.Verify(req(sig)); err != nil {
		t.Fatalf("RFC 8032 Ed25519ph vector refused: %v", err)
	}
	pure, err := New(spec("ed25519"), []string{pub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pure.Verify(req(sig)); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("an Ed25519ph signature passed as pure Ed25519: %v", err)
	}
	pureSig, err := pure.Sign(seed, Message{Body: []byte("abc"), Method: "POST", Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ph.Verify(req(pureSig.Get("X-Signature"))); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("a pure Ed25519 signature passed as Ed25519ph: %v", err)
	}
	phSig, err := ph.Sign(seed, Message{Body: []byte("abc"), Method: "POST", Time: time.Now()})
	if err != nil || phSig.Get("X-Signature") != sig {
		t.Fatalf("Ed25519ph signing gave %q (%v), want the RFC's", phSig.Get("X-Signature"), err)
	}
}

// TestBearerTokenClaims holds the Pub/Sub push token to what Google's
// verifier checks, on tokens signed with a test key: each broken claim
// refuses a token whose signature is good.
func TestBearerTokenClaims(t *testing.T) {
	p, _ := Lookup("google-pubsub")
	secret, key, err := GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := p.Compile([]string{secret}, Options{ProviderOptions: TestKeyOptions(key)})
	if err != nil {
		t.Fatal(err)
	}
	var k rsaTestKey
	if err := json.Unmarshal([]byte(key), &k); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	const url = "https://hooks.example.com/hooks/pubsub"
	good := map[string]any{"iss": "https://accounts.google.com", "aud": url, "email": secret, "email_verified": true, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	try := func(change func(map[string]any)) error {
		claims := map[string]any{}
		for k, v := range good {
			claims[k] = v
		}
		change(claims)
		token, err := signRS256(k, claims)
		if err != nil {
			t.Fatal(err)
		}
		_, err = scheme.Verify(&Request{Body: []byte(`{}`), Header: http.Header{"Authorization": {"Bearer " + token}}, Method: "POST", URL: url, Now: now})
		return err
	}
	if err := try(func(map[string]any) {}); err != nil {
		t.Fatalf("a good token: %v", err)
	}
	for name, change := range map[string]func(map[string]any){
		"another issuer":       func(c map[string]any) { c["iss"] = "googleapis.com" },
		"another audience":     func(c map[string]any) { c["aud"] = "https://elsewhere.example/hook" },
		"another account":      func(c map[string]any) { c["email"] = "intruder@example.iam.gserviceaccount.com" },
		"unverified e-mail":    func(c map[string]any) { c["email_verified"] = false },
		"expired":              func(c map[string]any) { c["exp"] = now.Add(-2 * time.Minute).Unix() },
		"no expiry":            func(c map[string]any) { delete(c, "exp") },
		"a year long":          func(c map[string]any) { c["exp"] = now.Add(365 * 24 * time.Hour).Unix() },
		"not valid before now": func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() },
	} {
		if err := try(change); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The same claims under HS256 with the public key as the secret never
	// verify: the algorithm is the preset's.
	hs, _ := signHS256([]byte(k.JWKS), map[string]any{"kid": k.Kid}, good)
	if _, err := scheme.Verify(&Request{Body: []byte(`{}`), Header: http.Header{"Authorization": {"Bearer " + hs}}, Method: "POST", URL: url, Now: now}); err == nil {
		t.Error("an HS256 token accepted by an RS256 scheme")
	}
}
