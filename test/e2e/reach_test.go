package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCA issues certificates for the tests' TLS servers and clients.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate for name, as a server's (DNS name) or a
// client's, with its PEM files.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, certPEM, keyPEM
}

// tlsBackend is an HTTPS upstream that records what reached it.
type tlsBackend struct {
	mu       sync.Mutex
	requests []*http.Request
	srv      *httptest.Server
}

func newTLSBackend(t *testing.T, cfg *tls.Config) *tlsBackend {
	t.Helper()
	b := &tlsBackend{}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		b.mu.Lock()
		b.requests = append(b.requests, r)
		b.mu.Unlock()
	}))
	b.srv.TLS = cfg
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *tlsBackend) received() []*http.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*http.Request(nil), b.requests...)
}

// forwardProxy is an HTTP forward proxy that records the URLs it was asked for.
type forwardProxy struct {
	mu   sync.Mutex
	urls []string
	addr string
}

func newForwardProxy(t *testing.T) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.urls = append(p.urls, r.RequestURI)
		p.mu.Unlock()
		out, _ := http.NewRequest(r.Method, r.RequestURI, r.Body)
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.addr = srv.Listener.Addr().String()
	return p
}

func (p *forwardProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// TestUpstreamReach delivers one event to an HTTPS upstream with a private
// CA (and static headers), to one that requires a client certificate, to
// the same without a certificate (a recorded, retried TLS failure), and to
// one behind a forward proxy.
func TestUpstreamReach(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "hookgate test server CA"), newTestCA(t, "hookgate test client CA")
	serverCert, _, _ := serverCA.issue(t, "backend.test", x509.ExtKeyUsageServerAuth)
	_, clientCertPEM, clientKeyPEM := clientCA.issue(t, "hookgate-client", x509.ExtKeyUsageClientAuth)
	clientPool := x509.NewCertPool()
	clientPool.AddCert(clientCA.cert)

	private := newTLSBackend(t, &tls.Config{Certificates: []tls.Certificate{serverCert}})
	mutual := newTLSBackend(t, &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientPool})
	plain := newRecorder(t, "", nil)
	proxy := newForwardProxy(t)

	const token = "upstream-token-s3cret"
	t.Setenv("HOOKGATE_E2E_UPSTREAM_TOKEN", token)
	routes := fmt.Sprintf(`
upstreams:
  private:
    url: https://%s
    tls:
      ca: certs/server-ca.pem
      server_name: backend.test
    headers:
      Authorization: "Bearer {env.HOOKGATE_E2E_UPSTREAM_TOKEN}"
  mutual:
    url: https://%s
    tls:
      ca: certs/server-ca.pem
      server_name: backend.test
      client_cert: certs/client.pem
      client_key: certs/client.key
  nocert:
    url: https://%s
    retry: {max_attempts: 3, initial_interval: 100ms, max_interval: 200ms}
    tls:
      ca: certs/server-ca.pem
      server_name: backend.test
  proxied:
    url: http://%s
    proxy: http://%s
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: ["gh-e2e-secret-0123456789"]
    default: [private, mutual, nocert, proxied]
`, private.srv.Listener.Addr(), mutual.srv.Listener.Addr(), mutual.srv.Listener.Addr(), plain.addr, proxy.addr)
	dir, port, admin := newGatewayDir(t, routes, "127.0.0.1:1")
	if err := os.MkdirAll(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "certs", "server-ca.pem"), string(serverCA.pem))
	writeFile(t, filepath.Join(dir, "certs", "client.pem"), string(clientCertPEM))
	writeFile(t, filepath.Join(dir, "certs", "client.key"), string(clientKeyPEM))
	g := startGateway(t, dir, port, admin)

	body := []byte(`{"action":"opened"}`)
	hdr := newSigner(t, "github", "gh-e2e-secret-0123456789").sign(t, body, "")
	hdr.Set("X-GitHub-Delivery", "reach-1")
	status, respHeader, _ := g.post("/webhooks/github", hdr, body)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	id := respHeader.Get("Hookgate-Event-Id")

	waitFor(t, "deliveries over TLS, mutual TLS and the proxy", 20*time.Second, func() bool {
		return len(private.received()) == 1 && len(mutual.received()) == 1 && len(plain.all()) == 1
	})
	if got := private.received()[0].Header.Get("Authorization"); got != "Bearer "+token {
		t.Errorf("static header: %q", got)
	}
	if peer := mutual.received()[0].TLS.PeerCertificates; len(peer) == 0 || peer[0].Subject.CommonName != "hookgate-client" {
		t.Errorf("the mutual-TLS upstream saw no client certificate: %v", peer)
	}
	if seen := proxy.seen(); len(seen) != 1 || !strings.HasPrefix(seen[0], "http://"+plain.addr+"/webhooks/github") {
		t.Errorf("proxy saw %v", seen)
	}
	if got := plain.all()[0].Header.Get("Hookgate-Event-Id"); got != id {
		t.Errorf("proxied delivery of %q, want %q", got, id)
	}

	// Without a client certificate the handshake fails: each attempt is
	// recorded with the TLS error and retried until the budget is spent.
	var history []any
	waitFor(t, "the certificate-less upstream to give up", 20*time.Second, func() bool {
		_, ev := g.admin("GET", "/hookgate/events/"+id)
		deliveries, _ := ev["deliveries"].([]any)
		for _, d := range deliveries {
			d := d.(map[string]any)
			if d["upstream"] == "nocert" && d["state"] == "dead" {
				history, _ = d["history"].([]any)
				return true
			}
		}
		return false
	})
	if len(history) != 3 {
		t.Fatalf("attempts to the certificate-less upstream: %v", history)
	}
	for _, a := range history {
		if msg, _ := a.(map[string]any)["error"].(string); !strings.Contains(msg, "tls") && !strings.Contains(msg, "certificate") {
			t.Errorf("attempt error %q names no TLS failure", msg)
		}
	}
	if strings.Contains(g.log.String(), token) {
		t.Error("the log carries the upstream's static header value")
	}
}
