package hookgatecmd

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

// verifyingServer answers 200 to requests the scheme accepts and 401 to the
// rest, counting each.
func verifyingServer(t *testing.T, scheme verify.Scheme) (*httptest.Server, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	var ok, refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &verify.Request{Body: body, Header: r.Header, Method: r.Method, URL: "http://" + r.Host + r.URL.RequestURI(), Now: time.Now()}
		if _, err := scheme.Verify(req); err != nil {
			refused.Add(1)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		ok.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv, &ok, &refused
}

// TestSendDeclaredSource: a source with a verify: block gets a signed
// sample, with the secret from routes.yaml, a file or the environment; a
// wrong secret is refused by the same scheme.
func TestSendDeclaredSource(t *testing.T) {
	const secret = "crm-shared-secret-0123456789"
	spec := verify.Spec{Algorithm: "hmac-sha256", Header: "X-CRM-Signature", Prefix: "sha256=", Encoding: "hex",
		Content: "{timestamp}.{body}", TimestampHeader: "X-CRM-Timestamp", Tolerance: 5 * time.Minute}
	scheme, err := verify.New(spec, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	srv, ok, refused := verifyingServer(t, scheme)
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	writeFile(t, routes, `upstreams:
  app: {url: http://127.0.0.1:9}
sources:
  crm:
    path: /hooks/crm
    secrets: ["`+secret+`"]
    verify:
      algorithm: hmac-sha256
      header: X-CRM-Signature
      prefix: "sha256="
      content: "{timestamp}.{body}"
      timestamp_header: X-CRM-Timestamp
    tolerance: 5m
    default: [app]
`)
	secretFile := filepath.Join(dir, "secret")
	writeFile(t, secretFile, secret+"\n")
	t.Setenv("CRM_SECRET", secret)
	base := []string{CommandName, "send", "--routes", routes, "--source", "crm", "--gateway", srv.URL}
	for _, extra := range [][]string{nil, {"--secret-file", secretFile}, {"--secret-env", "CRM_SECRET"}} {
		if r := runCLI(t, append(base, extra...)...); r.code != 0 || !strings.Contains(r.out, "200 OK") {
			t.Fatalf("send %v: code %d, %s%s", extra, r.code, r.out, r.err)
		}
	}
	if r := runCLI(t, append(base, "--secret", "another-secret-0123456789")...); r.code != 1 {
		t.Fatalf("wrong secret: code %d, %s%s", r.code, r.out, r.err)
	}
	if ok.Load() != 3 || refused.Load() != 1 {
		t.Fatalf("gateway accepted %d and refused %d, want 3 and 1", ok.Load(), refused.Load())
	}
	if r := runCLI(t, append(base, "--secret-env", "HOOKGATE_UNSET_VARIABLE")...); r.code != ExitUsage {
		t.Fatalf("unset variable: code %d, %s", r.code, r.err)
	}
}

// TestKeysNewMakesAPairThatVerifies: the public half of `keys new` in
// secrets verifies what the private half signs, for a public-key preset.
func TestKeysNewMakesAPairThatVerifies(t *testing.T) {
	r := runCLI(t, CommandName, "keys", "new", "--provider", "discord", "--json")
	if r.code != 0 {
		t.Fatalf("keys new: %d %s", r.code, r.err)
	}
	var keys struct {
		Secret     string `json:"secret"`
		SigningKey string `json:"signing_key"`
	}
	if err := json.Unmarshal([]byte(r.out), &keys); err != nil || keys.Secret == keys.SigningKey {
		t.Fatalf("keys new printed %q (%v)", r.out, err)
	}
	p, _ := verify.Lookup("discord")
	scheme, err := p.Compile([]string{keys.Secret}, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, ok, _ := verifyingServer(t, scheme)
	if r := runCLI(t, CommandName, "send", "--provider", "discord", "--secret", keys.SigningKey, "--url", srv.URL+"/hooks/discord"); r.code != 0 || ok.Load() != 1 {
		t.Fatalf("send with the private half: code %d, %s%s", r.code, r.out, r.err)
	}
	if r := runCLI(t, CommandName, "keys", "new", "--provider", "discrd"); r.code != ExitNotFound || !strings.Contains(r.err, "discord") {
		t.Fatalf("unknown provider: code %d, %s", r.code, r.err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
