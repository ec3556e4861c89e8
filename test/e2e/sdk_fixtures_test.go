package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// sdkFixture is a request the provider's SDK signed or accepted
// (internal/verify/testdata/sdk_fixtures.json).
type sdkFixture struct {
	Provider  string            `json:"provider"`
	SDK       string            `json:"sdk"`
	Secret    string            `json:"secret"`
	Options   map[string]string `json:"provider_options"`
	Payload   string            `json:"payload"`
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Handshake json.RawMessage   `json:"expect_handshake_response"`
	Note      string            `json:"note"`
}

// TestSDKFixturesEndToEnd sends the real binary every SDK-made or
// SDK-accepted request whose signature is still valid today (the schemes
// without a timestamp: fixed test requests of timestamped schemes go stale,
// and are held to their SDKs with a pinned clock in internal/verify; so
// are published vectors whose keys are too short to configure). Each
// must be accepted and reach the upstream; the same request with one byte
// of its body changed must be refused 401 and reach nothing.
func TestSDKFixturesEndToEnd(t *testing.T) {
	data, err := os.ReadFile("../../internal/verify/testdata/sdk_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []sdkFixture
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	var fixtures []sdkFixture
	for _, f := range all {
		p, ok := verify.Lookup(f.Provider)
		if !ok || f.Handshake != nil || f.Method == http.MethodGet || p.SignsURL() || strings.HasPrefix(f.SDK, "node:crypto per") || p.Trust.BodyUnsigned || p.Keys.Learned {
			continue
		}
		if verify.CheckSharedKey(p, f.Secret) != nil {
			continue // a published vector's short key, which the gateway refuses to configure
		}
		scheme, err := p.Compile([]string{f.Secret}, verify.Options{ProviderOptions: f.Options})
		if err != nil {
			t.Fatalf("%s: %v", f.Provider, err)
		}
		if _, err := scheme.Verify(f.request(time.Now())); err != nil {
			if errors.Is(err, verify.ErrStaleTimestamp) || errors.Is(err, verify.ErrInvalidSignature) && strings.Contains(err.Error(), "expired") {
				continue // a fixed request of a timestamped scheme
			}
			t.Fatalf("%s (%s) no longer verifies: %v", f.Provider, f.Note, err)
		}
		fixtures = append(fixtures, f)
	}
	if len(fixtures) < 30 {
		t.Fatalf("only %d SDK fixtures can be sent today", len(fixtures))
	}
	up := newRecorder(t, "", nil)
	var routes strings.Builder
	fmt.Fprintf(&routes, "upstreams:\n  app:\n    url: http://%s\nsources:\n", up.addr)
	for i, f := range fixtures {
		fmt.Fprintf(&routes, "  f%d:\n    path: /f/%d\n    provider: %s\n    secrets: [%q]\n    default: [app]\n", i, i, f.Provider, f.Secret)
		if len(f.Options) > 0 {
			routes.WriteString("    provider_options:\n")
			for k, v := range f.Options {
				fmt.Fprintf(&routes, "      %s: %q\n", k, v)
			}
		}
	}
	dir, port, admin := newGatewayDir(t, routes.String(), up.addr)
	g := startGateway(t, dir, port, admin)
	providers := map[string]bool{}
	for i, f := range fixtures {
		url := fmt.Sprintf("http://127.0.0.1:%d/f/%d", g.port, i)
		if code := f.send(t, url, []byte(f.Payload)); code != http.StatusOK {
			t.Errorf("%s (%s): %d, want 200", f.Provider, f.Note, code)
		}
		tampered := []byte(f.Payload)
		tampered[len(tampered)/2] ^= 0x01
		if code := f.send(t, url, tampered); code != http.StatusUnauthorized {
			t.Errorf("%s (%s) with one byte changed: %d, want 401", f.Provider, f.Note, code)
		}
		providers[f.Provider] = true
	}
	waitFor(t, "the fixtures' deliveries", 30*time.Second, func() bool { return len(up.all()) >= len(fixtures) })
	time.Sleep(200 * time.Millisecond)
	if n := len(up.all()); n > len(fixtures) {
		t.Fatalf("%d deliveries for %d genuine requests: a changed request was delivered", n, len(fixtures))
	}
	t.Logf("%d SDK fixtures of %d providers accepted end to end, each refused with one byte changed", len(fixtures), len(providers))
}

func (f sdkFixture) request(now time.Time) *verify.Request {
	h := http.Header{}
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	return &verify.Request{Body: []byte(f.Payload), Header: h, Method: http.MethodPost, URL: f.URL, Now: now}
}

func (f sdkFixture) send(t *testing.T, url string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range f.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
