package verify

import (
	"net/http"
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
		secret, _, err := GenerateKeys(p)
		if err != nil {
			f.Fatal(err)
		}
		s, err := p.Compile([]string{secret}, Options{})
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
			err := c.scheme.Verify(&Request{Body: body, Header: h, Method: "POST", URL: "https://x/" + other, Now: now})
			if err == nil {
				t.Fatalf("%s: random input verified: header %q body %q", c.p.Name, sig, body)
			}
		}
	})
}
