package ingest_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/verify"
)

// TestCatalogDedupProperties holds every preset to what its dedup key
// promises, through the real pipeline and store: two distinct documented
// events about one object are two events, and one event sent again is one.
// A preset added later cannot skip it: every preset must ship samples for
// both steps about one Object.
func TestCatalogDedupProperties(t *testing.T) {
	snsStandIn(t)
	for _, p := range verify.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			secret, key, err := verify.GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = secret
			}
			path := "/hooks/" + p.Name
			public := "https://hooks.example.com" + path
			extra := fmt.Sprintf("    public_url: %s\n", public)
			if opts := verify.TestKeyOptions(key); opts != nil {
				extra += "    provider_options:\n"
				for k, v := range opts {
					extra += fmt.Sprintf("      %s: %q\n", k, v)
				}
			}
			if p.Keys.Learned {
				extra += "    learn_secret: {until: \"" + testNow.Add(time.Hour).UTC().Format(time.RFC3339) + "\"}\n"
			} else {
				extra += fmt.Sprintf("    secrets: [%q]\n", secret)
			}
			h, _ := routingHarness(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://127.0.0.1:1\nsources:\n  s:\n    path: %s\n    provider: %s\n    default: [legacy]\n%s", path, p.Name, extra))
			if hdr, body, ok := samples.LearnRequest(p, key); ok {
				if rec := h.do("POST", path, hdr, body); rec.Code != 200 {
					t.Fatalf("handshake: %d", rec.Code)
				}
			} else if p.Keys.Learned {
				t.Fatal("a learned-secret preset without a Learn handshake in its kit")
			}
			const object = "5e1ec7ed0b1e"
			sample := func(step int, id string, at time.Time) (http.Header, []byte) {
				in := samples.Input{ID: id, Object: object, Step: step, Now: at, Key: key}
				s, err := samples.Of(p, in)
				if err != nil {
					t.Fatal(err)
				}
				signed, err := samples.Sign(p, key, s, public, at)
				if err != nil {
					t.Fatal(err)
				}
				hdr := s.Header.Clone()
				for k, v := range signed {
					hdr[k] = v
				}
				if !mentions(hdr, s.Body, in) {
					t.Fatalf("step %d does not name its object %s (or %d): %s", step, object, in.ObjectNumber(), s.Body)
				}
				return hdr, s.Body
			}
			send := func(what string, hdr http.Header, body []byte) (id string, duplicate bool) {
				t.Helper()
				rec := h.do("POST", path, hdr, body)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
				}
				return rec.Header().Get("Hookgate-Event-Id"), rec.Header().Get("Hookgate-Duplicate") == "true"
			}
			hdr0, body0 := sample(0, "aaaa00000001", testNow)
			first, dup := send("first event", hdr0, body0)
			if dup || first == "" {
				t.Fatalf("first event answered as a duplicate")
			}
			if again, dup := send("the same request again", hdr0, body0); !dup || again != first {
				t.Fatalf("the same request sent again: duplicate %v, id %s, want %s", dup, again, first)
			}
			hdr1, body1 := sample(1, "bbbb00000002", testNow.Add(time.Second))
			if bytes.Equal(body0, body1) && sameHeaders(hdr0, hdr1) {
				t.Fatal("step 1 is the same request as step 0")
			}
			if second, dup := send("a later event about the same object", hdr1, body1); dup || second == first {
				t.Fatalf("a distinct event about object %s answered as a duplicate of %s: its key does not name one event\n%s\n%s", object, first, body0, body1)
			}
		})
	}
}

// mentions reports whether a request names its sample's Object, in the
// body, a header, or what a body carries encoded (a JWS payload, a base64
// form field).
func mentions(hdr http.Header, body []byte, in samples.Input) bool {
	needles := []string{in.Object, strconv.FormatInt(in.ObjectNumber(), 10)}
	for _, part := range regexp.MustCompile(`[A-Za-z0-9+/_%-]{40,}={0,2}`).FindAllString(string(body), -1) {
		part, _ = url.QueryUnescape(part)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			if decoded, err := enc.DecodeString(strings.TrimSpace(part)); err == nil {
				body = append(append(body, ' '), decoded...)
			}
		}
	}
	for _, n := range needles {
		if bytes.Contains(body, []byte(n)) || bytes.Contains(bytes.ReplaceAll(body, []byte("-"), nil), []byte(n)) {
			return true
		}
		for _, vs := range hdr {
			for _, v := range vs {
				if strings.Contains(v, n) {
					return true
				}
			}
		}
	}
	return false
}

func sameHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}
