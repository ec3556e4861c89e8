package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	"github.com/hookgate/hookgate/internal/verify"
)

const routesYAML = `
max_body: 4KiB
upstreams:
  legacy:
    url: http://127.0.0.1:1
  billing:
    url: http://127.0.0.1:2
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-secret-0123456789]
    default: [legacy]
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: [whsec_new-0123456789, whsec_old-0123456789]
    default: [legacy]
    routes:
      - name: payments
        when: 'body.type startsWith "payment_intent."'
        to: [billing]
      - name: big
        when: 'body.data.amount > 1000'
        to: [billing, legacy]
  crm:
    path: /webhooks/crm
    verify:
      header: X-Crm-Signature
      prefix: "sha256="
      content: "{timestamp}.{body}"
      timestamp_header: X-Crm-Timestamp
    secrets: [crm-secret-0123456789]
    dedup:
      key: 'headers["x-crm-delivery"]'
    response:
      status: 202
      body: "ok"
    default: [legacy]
`

var testNow = time.Unix(1700000000, 0)

type harness struct {
	p        *ingest.Pipeline
	store    *bolt.Store
	notified atomic.Int32
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := routingHarnessAt(t, routesYAML, filepath.Join(t.TempDir(), "hookgate.db"))
	if err := h.store.Configure(nil, func(string) { h.notified.Add(1) }); err != nil {
		t.Fatal(err)
	}
	return h
}

func sign(t testing.TB, preset, secret string, body []byte) http.Header {
	t.Helper()
	p, _ := verify.Lookup(preset)
	scheme, err := verify.New(p.Spec, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	h, err := scheme.Sign(secret, verify.Message{Body: body, Time: testNow})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) send(path string, header http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	return rec
}

func (h *harness) pending(t testing.TB, upstream string) []store.Task {
	tasks, err := h.store.Due(upstream, testNow.Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func TestAcceptsVerifiedEvent(t *testing.T) {
	h := newHarness(t)
	body := []byte(`{"action":"opened"}`)
	hdr := sign(t, "github", "gh-secret-0123456789", body)
	hdr.Set("X-GitHub-Delivery", "d-1")
	rec := h.send("/webhooks/github", hdr, body)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var resp struct{ Status, ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Status != "accepted" || resp.ID != rec.Header().Get("Hookgate-Event-Id") {
		t.Fatalf("response %q: %+v %v", rec.Body, resp, err)
	}
	tasks := h.pending(t, "legacy")
	if len(tasks) != 1 || !bytes.Equal(tasks[0].Event.Body, body) || tasks[0].Event.DedupKey != "d-1" || tasks[0].Event.ID.String() != resp.ID {
		t.Fatalf("stored: %+v", tasks)
	}
	if h.notified.Load() != 1 {
		t.Fatalf("delivery notified %d times", h.notified.Load())
	}

	again := h.send("/webhooks/github", hdr, body)
	if again.Code != 200 || again.Header().Get("Hookgate-Duplicate") != "true" || again.Header().Get("Hookgate-Event-Id") != resp.ID {
		t.Fatalf("duplicate: %d %v", again.Code, again.Header())
	}
	if n := len(h.pending(t, "legacy")); n != 1 {
		t.Fatalf("duplicate queued another delivery: %d pending", n)
	}
}

func TestRejections(t *testing.T) {
	h := newHarness(t)
	body := []byte(`{"id":"evt_1","type":"customer.created"}`)
	good := sign(t, "stripe", "whsec_new-0123456789", body)
	stale := func() http.Header {
		p, _ := verify.Lookup("stripe")
		s, _ := verify.New(p.Spec, []string{"whsec_new-0123456789"})
		hdr, _ := s.Sign("whsec_new-0123456789", verify.Message{Body: body, Time: testNow.Add(-10 * time.Minute)})
		return hdr
	}()
	future := func() http.Header {
		p, _ := verify.Lookup("stripe")
		s, _ := verify.New(p.Spec, []string{"whsec_new-0123456789"})
		hdr, _ := s.Sign("whsec_new-0123456789", verify.Message{Body: body, Time: testNow.Add(10 * time.Minute)})
		return hdr
	}()
	tampered := append([]byte(nil), body...)
	tampered[10] = 'X'
	cases := []struct {
		name   string
		header http.Header
		body   []byte
		want   int
	}{
		{"no signature", http.Header{}, body, 401},
		{"garbled signature", http.Header{"Stripe-Signature": {"nonsense"}}, body, 401},
		{"wrong secret", sign(t, "stripe", "whsec_other", body), body, 401},
		{"tampered body", good, tampered, 401},
		{"stale timestamp", stale, body, 401},
		{"future timestamp", future, body, 401},
		{"too large", sign(t, "stripe", "whsec_new-0123456789", bytes.Repeat([]byte("a"), 8192)), bytes.Repeat([]byte("a"), 8192), 413},
		{"signed but not JSON", sign(t, "stripe", "whsec_new-0123456789", []byte("id=evt_1")), []byte("id=evt_1"), 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := h.send("/webhooks/stripe", c.header, c.body)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d (%s)", rec.Code, c.want, rec.Body)
			}
			if c.want == 401 && strings.TrimSpace(rec.Body.String()) != "unauthorized" {
				t.Fatalf("401 body %q says more than it should", rec.Body)
			}
		})
	}
	if n := len(h.pending(t, "legacy")) + len(h.pending(t, "billing")); n != 0 {
		t.Fatalf("rejected requests stored %d deliveries", n)
	}
	// The old secret still verifies (rotation), and the real event goes in.
	if rec := h.send("/webhooks/stripe", sign(t, "stripe", "whsec_old-0123456789", body), body); rec.Code != 200 {
		t.Fatalf("old secret: %d", rec.Code)
	}
}

func TestChunkedBodyOverLimit(t *testing.T) {
	h := newHarness(t)
	body := bytes.Repeat([]byte("a"), 8192)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github", io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = -1
	for k, v := range sign(t, "github", "gh-secret-0123456789", body) {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("status %d, want 413", rec.Code)
	}
}

func TestMethodAndUnknownPath(t *testing.T) {
	h := newHarness(t)
	rec := httptest.NewRecorder()
	h.p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/webhooks/github", nil))
	if rec.Code != 405 || rec.Header().Get("Allow") != "POST" {
		t.Fatalf("GET: %d %v", rec.Code, rec.Header())
	}
	rec = httptest.NewRecorder()
	h.p.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks/githubb", nil))
	if rec.Code != 404 {
		t.Fatalf("unknown path under the claimed prefix: %d", rec.Code)
	}
}

func TestRoutingFanOut(t *testing.T) {
	h := newHarness(t)
	events := map[string]struct {
		body    string
		billing bool
		legacy  bool
	}{
		"evt_pay":    {`{"id":"evt_pay","type":"payment_intent.succeeded","data":{"amount":10}}`, true, false},
		"evt_big":    {`{"id":"evt_big","type":"payment_intent.created","data":{"amount":5000}}`, true, true},
		"evt_other":  {`{"id":"evt_other","type":"customer.created"}`, false, true},
		"evt_nodata": {`{"id":"evt_nodata","type":"charge.refunded"}`, false, true},
	}
	for id, ev := range events {
		body := []byte(ev.body)
		if rec := h.send("/webhooks/stripe", sign(t, "stripe", "whsec_new-0123456789", body), body); rec.Code != 200 {
			t.Fatalf("%s: %d %s", id, rec.Code, rec.Body)
		}
	}
	has := func(upstream, id string) bool {
		for _, task := range h.pending(t, upstream) {
			if task.Event.DedupKey == id {
				return true
			}
		}
		return false
	}
	for id, ev := range events {
		if has("billing", id) != ev.billing || has("legacy", id) != ev.legacy {
			t.Errorf("%s: billing %v legacy %v, want %v %v", id, has("billing", id), has("legacy", id), ev.billing, ev.legacy)
		}
	}
}

func TestDeclarativeSourceAndCustomResponse(t *testing.T) {
	h := newHarness(t)
	body := []byte(`{"contact":"x"}`)
	p, err := verify.New(verify.Spec{Header: "X-Crm-Signature", Prefix: "sha256=", Content: "{timestamp}.{body}", TimestampHeader: "X-Crm-Timestamp"}, []string{"crm-secret-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	hdr, _ := p.Sign("crm-secret-0123456789", verify.Message{Body: body, Time: testNow})
	hdr.Set("X-Crm-Delivery", "crm-1")
	rec := h.send("/webhooks/crm", hdr, body)
	if rec.Code != 202 || rec.Body.String() != "ok" {
		t.Fatalf("custom response: %d %q", rec.Code, rec.Body)
	}
	if dup := h.send("/webhooks/crm", hdr, body); dup.Header().Get("Hookgate-Duplicate") != "true" {
		t.Fatal("dedup by header expression failed")
	}
	hdr.Set("X-Crm-Delivery", "crm-2")
	if rec := h.send("/webhooks/crm", hdr, body); rec.Header().Get("Hookgate-Duplicate") != "" {
		t.Fatal("a new delivery id was treated as duplicate")
	}
}

func TestStoreUnavailable(t *testing.T) {
	h := newHarness(t)
	core, logs := observer.New(zapcore.InfoLevel)
	h.p.Attach(h.store, zap.New(core), nil)
	h.store.Close()
	const refused = 500
	for i := range refused {
		body := []byte(fmt.Sprintf(`{"action":"opened","number":%d}`, i))
		rec := h.send("/webhooks/github", sign(t, "github", "gh-secret-0123456789", body), body)
		if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("closed store: %d %v", rec.Code, rec.Header())
		}
	}
	// Logged at ERROR, sampled: the first ten a second, then one in a
	// hundred, not a line per refused request.
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	if len(errs) == 0 || len(errs) > 10+refused/100+1 {
		t.Fatalf("%d error lines for %d requests the store refused", len(errs), refused)
	}
}

func TestCompileErrors(t *testing.T) {
	dir := t.TempDir()
	badSchema := filepath.Join(dir, "bad.json")
	os.WriteFile(badSchema, []byte(`{"type": 12}`), 0o600)
	cases := []struct {
		name, source, want string
	}{
		{"unknown provider", "    provider: strpe\n    secrets: [x-0123456789abcdef]\n", `routes.yaml:7:15: source s: unknown provider "strpe"; did you mean stripe?`},
		{"bad expression", "    provider: github\n    secrets: [x-0123456789abcdef]\n    routes:\n      - when: 'body.type ==='\n        to: [legacy]\n", "routes.yaml:10:15: route line 10: when: invalid expression"},
		{"type error", "    provider: github\n    secrets: [x-0123456789abcdef]\n    routes:\n      - when: 'path > 5'\n        to: [legacy]\n", "when: invalid expression"},
		{"bad dedup key", "    provider: github\n    secrets: [x-0123456789abcdef]\n    dedup:\n      key: 'headers[['\n", "routes.yaml:10:12: source s: dedup.key: invalid expression"},
		{"schema missing", "    provider: github\n    secrets: [x-0123456789abcdef]\n    routes:\n      - schema: ./nope.json\n        to: [legacy]\n", "routes.yaml:10:17: route line 10: schema"},
		{"schema invalid", "    provider: github\n    secrets: [x-0123456789abcdef]\n    routes:\n      - schema: " + badSchema + "\n        to: [legacy]\n", "routes.yaml:10:17"},
		{"no secret for a preset", "    provider: github\n    secrets: [\"{env.UNSET}\"]\n", "routes.yaml:8:5: source s: no secret configured"},
		{"bad whsec secret", "    provider: svix\n    secrets: [\"whsec_***\"]\n", "routes.yaml:8:5: source s: secret 1: not a whsec_ base64 secret"},
		{"bad declarative scheme", "    verify:\n      header: X\n      algorithm: md5\n    secrets: [x-0123456789abcdef]\n", "routes.yaml:7:5: source s: unknown algorithm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			yaml := "upstreams:\n  legacy:\n    url: http://x\nsources:\n  s:\n    path: /h\n" + c.source
			cfg, err := config.Parse(filepath.Join(dir, "routes.yaml"), []byte(yaml), config.Options{Expand: func(s string) (string, error) {
				if strings.HasPrefix(s, "{env.") {
					return "", nil // unset, as Caddy expands it
				}
				return s, nil
			}})
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			_, err = compile(cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// BenchmarkIngest measures the request path: read, verify, dedup key, route,
// durable store and answer, with unique GitHub-signed events sent in parallel.
// Each event has its own body and signature, signed before the timer starts:
// the preset also dedups by the body's digest, so one body sent again would
// measure duplicate answers, with nothing written.
func BenchmarkIngest(b *testing.B) {
	h := newHarness(b)
	p, _ := verify.Lookup("github")
	scheme, err := verify.New(p.Spec, []string{"gh-secret-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	pad := bytes.Repeat([]byte(`{"action":"opened","number":1234,"pad":"xxxxxxxxxxxxxxxx"},`), 32)
	type signed struct {
		body []byte
		hdr  http.Header
	}
	events := make([]signed, b.N)
	for i := range events {
		body := fmt.Appendf(nil, `{"seq":%d,"items":[%s]}`, i, pad[:len(pad)-1])
		hdr, err := scheme.Sign("gh-secret-0123456789", verify.Message{Body: body, Time: testNow})
		if err != nil {
			b.Fatal(err)
		}
		hdr.Set("X-GitHub-Delivery", fmt.Sprint(i))
		events[i] = signed{body, hdr}
	}
	var next atomic.Int64
	written := bytesWritten()
	b.SetBytes(int64(len(events[0].body)))
	b.ReportAllocs()
	// Providers send concurrently; 32 in flight per core lets commits batch.
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ev := events[next.Add(1)-1]
			req := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(ev.body))
			req.Header = ev.hdr
			rec := httptest.NewRecorder()
			h.p.ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") != "" {
				b.Fatalf("status %d, headers %v", rec.Code, rec.Header())
			}
		}
	})
	b.StopTimer()
	if written >= 0 {
		// What the store's files took, per event: write-ahead log, body
		// log and bbolt pages.
		b.ReportMetric(float64(bytesWritten()-written)/float64(b.N), "written-B/event")
	}
	stats, err := h.store.Stats()
	if err != nil {
		b.Fatal(err)
	}
	if stats.Events != b.N {
		b.Fatalf("%d events stored for %d sent", stats.Events, b.N)
	}
	b.ReportMetric(float64(b.N)/float64(max(h.store.Commits(), 1)), "events/commit")
}

// bytesWritten is what this process has passed to write calls (Linux's
// /proc/self/io wchar), or -1 where that is not known.
func bytesWritten() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// BenchmarkVerify measures signature verification alone.
func BenchmarkVerify(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 2048)
	p, _ := verify.Lookup("stripe")
	scheme, _ := verify.New(p.Spec, []string{"whsec_a"})
	hdr, _ := scheme.Sign("whsec_a", verify.Message{Body: body, Time: testNow})
	req := &verify.Request{Body: body, Header: hdr, Now: testNow}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scheme.Verify(req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSlowBodyIsCutOff: a body that trickles in is answered 408 once the
// body deadline passes, instead of holding the connection.
func TestSlowBodyIsCutOff(t *testing.T) {
	h := newHarness(t)
	h.p.SetBodyTimeout(200 * time.Millisecond)
	srv := httptest.NewServer(h.p)
	defer srv.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nX-Hub-Signature-256: sha256=00\r\n\r\n{\"a\":")
	reply, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 408") {
		t.Fatalf("reply %q, want 408", reply)
	}
}

// TestMailgunTokenIsSingleUse: Mailgun's signature covers a token, not the
// event, so a captured signature on another body is refused, while the
// provider's own retry of the same event is still a duplicate.
func TestMailgunTokenIsSingleUse(t *testing.T) {
	h := routingHarnessAt(t, `
upstreams:
  app:
    url: http://127.0.0.1:1
sources:
  mailgun:
    path: /webhooks/mailgun
    provider: mailgun
    secrets: [mg-key-0123456789]
    default: [app]
`, filepath.Join(t.TempDir(), "hookgate.db"))
	signature := verify.MailgunSignature("mg-key-0123456789", "tok-1", testNow)
	event := func(id string) []byte {
		b, _ := json.Marshal(map[string]any{"signature": signature, "event-data": map[string]any{"id": id, "event": "delivered"}})
		return b
	}
	first := h.send("/webhooks/mailgun", nil, event("ev-1"))
	if first.Code != 200 || first.Header().Get("Hookgate-Event-Id") == "" {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	retry := h.send("/webhooks/mailgun", nil, event("ev-1"))
	if retry.Code != 200 || retry.Header().Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("the provider's retry: %d %v", retry.Code, retry.Header())
	}
	forged := h.send("/webhooks/mailgun", nil, event("ev-forged"))
	if forged.Code != 401 {
		t.Fatalf("a captured signature on another event: %d %s", forged.Code, forged.Body)
	}
	other := verify.MailgunSignature("mg-key-0123456789", "tok-2", testNow)
	b, _ := json.Marshal(map[string]any{"signature": other, "event-data": map[string]any{"id": "ev-2"}})
	if rec := h.send("/webhooks/mailgun", nil, b); rec.Code != 200 {
		t.Fatalf("a new token: %d", rec.Code)
	}
	if n := len(h.pending(t, "app")); n != 2 {
		t.Fatalf("%d deliveries queued, want 2", n)
	}
}

// TestPayPalTransmissionIsSingleUse: PayPal signs the body only through
// its CRC-32, so a captured transmission carrying another event is
// refused; PayPal's retry of an event (a new transmission) is a duplicate
// of it, as reconciliation's resend is.
func TestPayPalTransmissionIsSingleUse(t *testing.T) {
	p, _ := verify.Lookup("paypal")
	webhookID, key, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	var opts strings.Builder
	for k, v := range verify.TestKeyOptions(key) {
		fmt.Fprintf(&opts, "      %s: %q\n", k, v)
	}
	h := routingHarnessAt(t, fmt.Sprintf(`
upstreams:
  app:
    url: http://127.0.0.1:1
sources:
  paypal:
    path: /webhooks/paypal
    provider: paypal
    secrets: [%q]
    provider_options:
%s    default: [app]
`, webhookID, opts.String()), filepath.Join(t.TempDir(), "hookgate.db"))
	signer, err := verify.SignerFor(p)
	if err != nil {
		t.Fatal(err)
	}
	send := func(eventID, transmission string) *httptest.ResponseRecorder {
		body := []byte(`{"id":"` + eventID + `","event_type":"PAYMENT.CAPTURE.COMPLETED","resource":{"id":"5O190127TN364715T"}}`)
		hdr, err := signer.Sign(key, verify.Message{Body: body, Time: testNow, Header: http.Header{"Paypal-Transmission-Id": {transmission}}})
		if err != nil {
			t.Fatal(err)
		}
		hdr.Set("Content-Type", "application/json")
		return h.send("/webhooks/paypal", hdr, body)
	}
	if rec := send("WH-1", "0f1e2d3c-0000-4000-8000-000000000001"); rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") == "true" {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	if rec := send("WH-2", "0f1e2d3c-0000-4000-8000-000000000001"); rec.Code != 401 {
		t.Fatalf("the transmission carrying another event: %d %s, want 401", rec.Code, rec.Body)
	}
	if rec := send("WH-1", "0f1e2d3c-0000-4000-8000-000000000002"); rec.Code != 200 || rec.Header().Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("PayPal's retry of the event in a new transmission: %d %v", rec.Code, rec.Header())
	}
	if n := len(h.pending(t, "app")); n != 1 {
		t.Fatalf("%d deliveries queued, want 1", n)
	}
}
