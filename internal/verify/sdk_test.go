package verify

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sdkFixture is a request signed by a provider's official SDK (or, where a
// provider has none, by node:crypto per its docs); see
// testdata/sdk/README.md for the command that regenerates them.
type sdkFixture struct {
	Provider        string            `json:"provider"`
	SDK             string            `json:"sdk"`
	Secret          string            `json:"secret"`
	Payload         string            `json:"payload"`
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers"`
	Timestamp       int64             `json:"timestamp"`
	ExpectHandshake json.RawMessage   `json:"expect_handshake_response"`
	// Certificate is the SNS signing certificate (PEM) the payload names.
	Certificate string `json:"certificate"`
	// Options are the source's provider_options (a pinned root or
	// certificate, a JWKS).
	Options map[string]string `json:"provider_options"`
	Note    string            `json:"note"`
}

func loadSDKFixtures(t *testing.T) []sdkFixture {
	t.Helper()
	data, err := os.ReadFile("testdata/sdk_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []sdkFixture
	if err := json.Unmarshal(data, &fixtures); err != nil {
		t.Fatal(err)
	}
	return fixtures
}

func (f sdkFixture) request() *Request {
	header := http.Header{}
	for k, v := range f.Headers {
		header.Set(k, v)
	}
	method := f.Method
	if method == "" {
		method = http.MethodPost
	}
	now := time.Now()
	if f.Timestamp != 0 {
		now = time.Unix(f.Timestamp, 0).Add(2 * time.Second)
	}
	return &Request{Body: []byte(f.Payload), Header: header, Method: method, URL: f.URL, Now: now}
}

func TestOfficialSDKSignatures(t *testing.T) {
	perProvider := map[string]int{}
	for i, f := range loadSDKFixtures(t) {
		t.Run(f.Provider+"/"+f.SDK, func(t *testing.T) {
			p, _ := Lookup(f.Provider)
			scheme, err := p.Compile([]string{f.Secret}, Options{ProviderOptions: f.Options})
			if err != nil {
				t.Fatalf("%s: %v", f.Provider, err)
			}
			if f.Certificate != "" {
				cacheSNSCert(t, f)
			}
			if f.ExpectHandshake != nil && unsignedHandshake(t, f) {
				checkHandshake(t, f)
				return
			}
			if _, err := scheme.Verify(f.request()); err != nil {
				t.Fatalf("fixture %d (%s) rejected: %v", i, f.Note, err)
			}
			if len(f.Payload) > 0 {
				tampered := f.request()
				tampered.Body = []byte(tamper(f.Payload))
				if _, err := scheme.Verify(tampered); err == nil && !presetBodyUnsigned(f.Provider) {
					t.Errorf("tampered body accepted")
				}
			}
			if f.ExpectHandshake != nil {
				checkHandshake(t, f)
			}
		})
		perProvider[f.Provider]++
	}
	for _, p := range Presets() {
		if perProvider[p.Name] == 0 && !withoutSDKFixture[p.Name] {
			t.Errorf("no SDK fixture for preset %s", p.Name)
		}
	}
}

// withoutSDKFixture lists presets checked by other tests instead: their
// published vectors (vectors_extra.json) or the generic samples.
var withoutSDKFixture = map[string]bool{"basic-auth": true, "asana": true}

func presetBodyUnsigned(name string) bool {
	p, _ := Lookup(name)
	return p.Trust.BodyUnsigned
}

func checkHandshake(t *testing.T, f sdkFixture) {
	t.Helper()
	p, _ := Lookup(f.Provider)
	req := &HandshakeRequest{Method: f.request().Method, Header: f.request().Header, Query: fixtureQuery(f), Body: []byte(f.Payload), Secrets: []string{f.Secret}}
	for _, h := range p.Handshakes {
		resp, ok := h.Answer(req)
		if !ok {
			continue
		}
		var want, got any
		if json.Unmarshal(f.ExpectHandshake, &want) == nil {
			if s, isString := want.(string); isString {
				if string(resp.Body) != s {
					t.Fatalf("handshake answer %q, want %q", resp.Body, s)
				}
				return
			}
		}
		if err := json.Unmarshal(resp.Body, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("handshake answer %s, want %s", resp.Body, strings.TrimSpace(string(f.ExpectHandshake)))
		}
		return
	}
	t.Fatal("no handshake answered the fixture")
}

func fixtureQuery(f sdkFixture) url.Values {
	u, err := url.Parse(f.URL)
	if err != nil {
		return nil
	}
	return u.Query()
}

// unsignedHandshake reports whether one of the preset's unsigned handshakes
// answers the fixture: the provider sends it without a signature (X's CRC).
func unsignedHandshake(t *testing.T, f sdkFixture) bool {
	t.Helper()
	p, _ := Lookup(f.Provider)
	req := &HandshakeRequest{Method: f.request().Method, Header: f.request().Header, Query: fixtureQuery(f), Body: []byte(f.Payload), Secrets: []string{f.Secret}}
	for _, h := range p.Handshakes {
		if _, ok := h.Answer(req); ok && h.Unsigned {
			return true
		}
	}
	return false
}

// cacheSNSCert puts an SNS fixture's certificate in the cache under the
// SigningCertURL its payload names, as a fetch from SNS would.
func cacheSNSCert(t *testing.T, f sdkFixture) {
	t.Helper()
	var m struct{ SigningCertURL string }
	block, _ := pem.Decode([]byte(f.Certificate))
	if json.Unmarshal([]byte(f.Payload), &m) != nil || block == nil {
		t.Fatal("SNS fixture without a certificate URL or PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	snsCerts.put(m.SigningCertURL, cert, time.Now())
}

// TestCheckedNamesTheStrongestEvidence holds each preset's Checked to the
// test data: "sdk: <package>@<version>" when a fixture was signed or
// accepted by that SDK, "vector" when the strongest is a published example,
// "docs" when requests were only signed per the documentation.
func TestCheckedNamesTheStrongestEvidence(t *testing.T) {
	sdks := map[string]map[string]bool{}
	vector := map[string]bool{}
	for _, f := range loadSDKFixtures(t) {
		switch {
		case strings.HasPrefix(f.SDK, "published"):
			vector[f.Provider] = true
		case strings.HasPrefix(f.SDK, "node:crypto per"), strings.HasPrefix(f.SDK, "per docs"):
		default:
			if sdks[f.Provider] == nil {
				sdks[f.Provider] = map[string]bool{}
			}
			sdks[f.Provider][strings.TrimPrefix(f.SDK, "node:crypto checked by ")] = true
		}
	}
	for _, v := range loadRequestVectors(t, "testdata/vectors_extra.json") {
		vector[v.Preset] = true
	}
	for _, v := range publishedAsRequests(t) {
		vector[v.Preset] = true
	}
	for _, p := range Presets() {
		kind, pkg, _ := strings.Cut(p.Checked, ": ")
		switch {
		case len(sdks[p.Name]) > 0:
			if kind != "sdk" || !sdks[p.Name][pkg] {
				t.Errorf("%s: Checked %q, but fixtures were checked by %v", p.Name, p.Checked, sdks[p.Name])
			}
		case vector[p.Name]:
			if p.Checked != "vector" {
				t.Errorf("%s: Checked %q, but its strongest evidence is a published vector", p.Name, p.Checked)
			}
		case p.Checked != "docs":
			t.Errorf("%s: Checked %q, but it is checked against its docs only", p.Name, p.Checked)
		}
	}
}
