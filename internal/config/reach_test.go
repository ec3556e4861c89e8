package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeKeyPair writes a self-signed certificate and its key as PEM files.
func writeKeyPair(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func reachYAML(upstream string) string {
	return "upstreams:\n  u:\n" + upstream + "sources:\n  s:\n    path: /h\n    provider: stripe\n    secrets: [x-0123456789abcdef]\n    default: [u]\n"
}

func TestUpstreamReach(t *testing.T) {
	dir := t.TempDir()
	ca, _ := writeKeyPair(t, dir, "ca")
	cert, key := writeKeyPair(t, dir, "client")
	yaml := reachYAML(`    url: https://backend.internal:8443
    tls:
      ca: ca.pem
      client_cert: client.pem
      client_key: client.key
      server_name: backend.internal
    proxy: http://egress.internal:3128
    headers:
      authorization: "Bearer {env.TOKEN}"
      X-Team: billing
`)
	cfg, err := Parse(filepath.Join(dir, "routes.yaml"), []byte(yaml), expandEnv(map[string]string{"TOKEN": "t0k3n"}))
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Upstreams["u"]
	r := u
	if r.TLS == nil || len(r.TLS.CA) != 1 || r.TLS.CA[0] != ca || string(r.TLS.ClientCert) != cert || string(r.TLS.ClientKey) != key ||
		r.TLS.ServerName != "backend.internal" || r.TLS.InsecureSkipVerify || r.Proxy != "http://egress.internal:3128" || r.Transport != nil {
		t.Errorf("reach: %+v %+v", r, r.TLS)
	}
	if u.Headers["Authorization"] != "Bearer t0k3n" || u.Headers["X-Team"] != "billing" || len(u.Headers) != 2 {
		t.Errorf("headers: %v", u.Headers)
	}

	whole, err := Parse("routes.yaml", []byte(reachYAML("    url: https://b\n    transport:\n      dial_timeout: 2s\n      versions: [\"1.1\"]\n")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(whole.Upstreams["u"].Transport); got != `{"dial_timeout":"2s","versions":["1.1"]}` {
		t.Errorf("transport: %s", got)
	}
}

func TestUpstreamReachErrors(t *testing.T) {
	dir := t.TempDir()
	writeKeyPair(t, dir, "ca")
	if err := os.WriteFile(filepath.Join(dir, "empty.pem"), []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"    url: http://b\n    tls:\n      ca: ca.pem\n":                                     "routes.yaml:4:5: upstream u: tls applies to an https:// url, not http",
		"    url: https://b\n    tls:\n      ca: missing.pem\n":                               "routes.yaml:5:11: upstream u.tls.ca: open",
		"    url: https://b\n    tls:\n      ca: [ca.pem, empty.pem]\n":                       "routes.yaml:5:20: upstream u.tls.ca: " + filepath.Join(dir, "empty.pem") + " holds no PEM certificate",
		"    url: https://b\n    tls:\n      client_cert: ca.pem\n":                           "routes.yaml:5:7: upstream u.tls: client_cert and client_key go together",
		"    url: https://b\n    tls:\n      client_cert: ca.pem\n      client_key: ca.pem\n": "routes.yaml:5:20: upstream u.tls: client certificate:",
		"    url: https://b\n    tls:\n      ca: ca.pem\n      insecure_skip_verify: true\n":  "insecure_skip_verify turns off the check that ca configures",
		"    url: https://b\n    proxy: egress:3128\n":                                        "routes.yaml:4:12: upstream u.proxy must be a proxy URL",
		"    url: https://b\n    proxy: env\n    transport: {}\n":                             "routes.yaml:4:5: upstream u: transport is Caddy's whole HTTP transport",
		"    url: https://b\n    transport: [1]\n":                                            "routes.yaml:4:16: upstream u.transport must be a mapping",
		"    url: https://b\n    headers:\n      Hookgate-Event-Id: x\n":                      "routes.yaml:5:7: upstream u.headers: Hookgate-Event-Id is set by the gateway",
		"    url: https://b\n    headers:\n      \"Bad Name\": x\n":                           `routes.yaml:5:7: upstream u.headers: "Bad Name" is not a header name`,
		"    url: https://b\n    headers:\n      X-A: \"a\\r\\nX-B: b\"\n":                    "routes.yaml:5:12: upstream u.headers.X-A: the value contains a line break",
	}
	for upstream, want := range cases {
		_, err := Parse(filepath.Join(dir, "routes.yaml"), []byte(reachYAML(upstream)), Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", upstream, err, want)
		}
	}
}

// Inlining for Caddy's JSON makes the TLS files absolute, since JSON names
// files relative to the working directory.
func TestInlineMakesTLSFilesAbsolute(t *testing.T) {
	dir := t.TempDir()
	writeKeyPair(t, dir, "ca")
	writeKeyPair(t, dir, "client")
	file := filepath.Join(dir, "routes.yaml")
	data := []byte(reachYAML("    url: https://b\n    tls:\n      ca: [ca.pem]\n      client_cert: client.pem\n      client_key: client.key\n"))
	out, err := Inline(file, data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseJSON("routes", out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tls := cfg.Upstreams["u"].TLS
	if tls.CA[0] != filepath.Join(dir, "ca.pem") || string(tls.ClientCert) != filepath.Join(dir, "client.pem") || string(tls.ClientKey) != filepath.Join(dir, "client.key") {
		t.Errorf("files: %+v", tls)
	}
}
