package verify

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"
)

// FuzzEveryPreset feeds random signature headers and bodies to every
// preset: nothing may panic, and random input must not verify.
func FuzzEveryPreset(f *testing.F) {
	f.Add("t=1700000000,v1=abc", "v1,Zm9v", []byte(`{"id":"evt_1"}`))
	f.Add("", "", []byte{})
	f.Add("sha256="+string(make([]byte, 64)), "eyJhbGciOiJFUzI1NiJ9.e30.sig", []byte("a=1&b=2"))
	type compiled struct {
		p      Preset
		scheme Scheme
	}
	var schemes []compiled
	for _, p := range Presets() {
		secret, key, err := GenerateKeys(p)
		if err != nil {
			f.Fatal(err)
		}
		s, err := p.Compile([]string{secret}, Options{ProviderOptions: TestKeyOptions(key)})
		if err != nil {
			f.Fatal(err)
		}
		schemes = append(schemes, compiled{p, s})
	}
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, sig, other string, body []byte) {
		for _, c := range schemes {
			h := http.Header{}
			for _, name := range c.p.Headers() {
				h.Set(name, sig)
			}
			h.Set("Authorization", other)
			h.Set("Content-Type", "application/json")
			if c.p.Spec.TimestampHeader != "" {
				h.Set(c.p.Spec.TimestampHeader, "1700000000")
			}
			_, err := c.scheme.Verify(&Request{Body: body, Header: h, Method: "POST", URL: "https://x/" + other, Now: now})
			if err == nil {
				t.Fatalf("%s: random input verified: header %q body %q", c.p.Name, sig, body)
			}
		}
	})
}

// FuzzSignatureNeedsTheSecret signs random bodies with every scheme the
// gateway can sign: the signature verifies with the secret that made it,
// and never with another secret or once one bit of the body changes.
func FuzzSignatureNeedsTheSecret(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1"}`), uint(0))
	f.Add([]byte("a=1&b=2&b=3"), uint(7))
	f.Add([]byte{}, uint(0))
	type pair struct {
		p            Preset
		signer       Signer
		key          string
		right, wrong Scheme
	}
	var pairs []pair
	for _, p := range Presets() {
		signer, err := SignerFor(p)
		if err != nil {
			continue
		}
		secret, key, err := GenerateKeys(p)
		if err != nil {
			f.Fatal(err)
		}
		other, otherKey, err := GenerateKeys(p)
		if err != nil {
			f.Fatal(err)
		}
		if other == secret || p.Keys.Describe == "token" {
			continue // a token is the secret itself: nothing is signed
		}
		if key == "" {
			key = secret
		}
		right, err := p.Compile([]string{secret}, Options{ProviderOptions: TestKeyOptions(key)})
		if err != nil {
			f.Fatal(err)
		}
		wrong, err := p.Compile([]string{other}, Options{ProviderOptions: TestKeyOptions(otherKey)})
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, pair{p, signer, key, right, wrong})
	}
	if len(pairs) < 20 {
		f.Fatalf("only %d presets can be signed", len(pairs))
	}
	now := time.Unix(1700000000, 0)
	const url = "https://hooks.example.com/webhooks/x?a=1"
	f.Fuzz(func(t *testing.T, body []byte, flip uint) {
		contentType := "application/json"
		if flip&1 == 1 {
			contentType = "application/x-www-form-urlencoded"
		}
		for _, c := range pairs {
			h, err := c.signer.Sign(c.key, Message{Body: body, Method: "POST", URL: url, ID: "msg_1", Header: http.Header{"Content-Type": {contentType}}, Time: now})
			if err != nil {
				continue // a body this scheme cannot carry (a form scheme given bytes that are not a form)
			}
			h.Set("Content-Type", contentType)
			req := func(b []byte) *Request {
				return &Request{Body: b, Header: h.Clone(), Method: "POST", URL: url, Now: now}
			}
			if _, err := c.right.Verify(req(body)); err != nil {
				t.Fatalf("%s: its own signature of %q failed: %v", c.p.Name, body, err)
			}
			if _, err := c.wrong.Verify(req(body)); err == nil {
				t.Fatalf("%s: verified with another secret: %q", c.p.Name, body)
			}
			if len(body) > 0 && !c.p.Trust.BodyUnsigned {
				tampered := append([]byte(nil), body...)
				tampered[flip%uint(len(tampered))] ^= 1 << (flip % 8)
				if sameForm(contentType, body, tampered) {
					continue // Twilio signs canonical parameters: these bodies are one form
				}
				if _, err := c.right.Verify(req(tampered)); err == nil {
					t.Fatalf("%s: verified a changed body: %q -> %q", c.p.Name, body, tampered)
				}
			}
		}
	})
}

// sameForm reports two form bodies that Twilio's canonical form (keys
// sorted, each key's distinct values sorted, as its SDKs do) cannot tell
// apart: "%4a" and "%4A", or "0&2&0" and "2&2&0".
func sameForm(contentType string, a, b []byte) bool {
	if contentType != "application/x-www-form-urlencoded" {
		return false
	}
	canonical := func(body []byte) (map[string][]string, bool) {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, false
		}
		for k, vs := range form {
			slices.Sort(vs)
			form[k] = slices.Compact(vs)
		}
		return form, true
	}
	pa, okA := canonical(a)
	pb, okB := canonical(b)
	return okA && okB && reflect.DeepEqual(pa, pb)
}
