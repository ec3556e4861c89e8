package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/verify"
)

// snsStandIn plays SNS for a gateway started after it (through the
// test-only HOOKGATE_TEST_SNS_URL): certificates encoded in their path, and
// subscription confirmations, counted.
func snsStandIn(t *testing.T) (base string, confirms *atomic.Int32) {
	t.Helper()
	confirms = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") == "ConfirmSubscription" {
			confirms.Add(1)
			fmt.Fprintf(w, `<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>%s:e2e-sub</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`, r.URL.Query().Get("TopicArn"))
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/SimpleNotificationService-"), ".pem")
		der, err := hex.DecodeString(name)
		if err != nil {
			der, err = base64.RawURLEncoding.DecodeString(name) // as gateways before 2026-12 named them
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(verify.EnvTestSNSURL, srv.URL)
	return srv.URL, confirms
}

func adminGet(t *testing.T, g *gateway, path string, v any) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", g.adminPort, path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, v) != nil {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
}

// TestSNSSubscriptionAndNotification: the real binary confirms a signed
// SubscriptionConfirmation by visiting SubscribeURL, keeps it as a marked
// record that the admin API lists and nothing delivers, refuses a forged
// one without visiting anything, and delivers a notification once.
func TestSNSSubscriptionAndNotification(t *testing.T) {
	base, confirms := snsStandIn(t)
	p, _ := verify.Lookup("aws-sns")
	topic, key, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	up := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  sns:\n    path: /hooks/sns\n    provider: aws-sns\n    secrets: [%q]\n    default: [legacy]\n", up.addr, topic), up.addr)
	g := startGateway(t, dir, port, admin)
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	confirmation, err := verify.SignSNSMessage(key, map[string]string{"Type": "SubscriptionConfirmation", "MessageId": "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11", "TopicArn": topic, "Token": "tok-1",
		"Message": "You have chosen to subscribe", "SubscribeURL": base + "/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=tok-1", "Timestamp": ts}, "1")
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(confirmation), `"Token":"tok-1"`, `"Token":"tok-2"`, 1)
	if status, _, _ := g.post("/hooks/sns", nil, []byte(forged)); status != 401 || confirms.Load() != 0 {
		t.Fatalf("forged confirmation: %d, %d confirmations", status, confirms.Load())
	}
	status, hdr, body := g.post("/hooks/sns", nil, confirmation)
	if status != 200 || body != "subscription confirmed" || confirms.Load() != 1 {
		t.Fatalf("confirmation: %d %q, %d confirmations", status, body, confirms.Load())
	}
	var event struct {
		Handshake string `json:"handshake"`
		Status    string `json:"status"`
		Body      string `json:"body"`
	}
	adminGet(t, g, "/hookgate/events/"+hdr.Get("Hookgate-Event-Id"), &event)
	if event.Handshake != "aws-sns SubscriptionConfirmation for "+topic || strings.Contains(event.Body, "tok-1") {
		t.Fatalf("record: %+v", event)
	}
	var list struct {
		Events []struct {
			Handshake string `json:"handshake"`
		} `json:"events"`
	}
	adminGet(t, g, "/hookgate/events?source=sns", &list)
	if len(list.Events) != 1 || list.Events[0].Handshake == "" {
		t.Fatalf("listing: %+v", list)
	}
	notification, err := verify.SignSNSMessage(key, map[string]string{"Type": "Notification", "MessageId": "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a12", "TopicArn": topic, "Subject": "s", "Message": "hello", "Timestamp": ts}, "2")
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := g.post("/hooks/sns", nil, notification); status != 200 {
		t.Fatalf("notification: %d", status)
	}
	if _, hdr, _ := g.post("/hooks/sns", nil, notification); hdr.Get("Hookgate-Duplicate") != "true" {
		t.Fatal("retried notification not a duplicate")
	}
	waitFor(t, "the notification delivered", 10*time.Second, func() bool { return len(up.all()) >= 1 })
	time.Sleep(300 * time.Millisecond)
	if all := up.all(); len(all) != 1 || !strings.Contains(string(all[0].Body), "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a12") {
		t.Fatalf("upstream got %d requests", len(all))
	}
}

// TestXCRC: the real binary answers X's CRC GET with the response_token
// and verifies signed events.
func TestXCRC(t *testing.T) {
	up := newRecorder(t, "", nil)
	secret := "x-consumer-secret-0123456789abcdef"
	dir, port, admin := newGatewayDir(t, fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  x:\n    path: /hooks/x\n    provider: x\n    secrets: [%q]\n    default: [legacy]\n", up.addr, secret), up.addr)
	g := startGateway(t, dir, port, admin)
	resp, err := http.Get(g.url("/hooks/x?crc_token=crc-e2e-token&nonce=abc"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("crc-e2e-token"))
	want := `{"response_token":"sha256=` + base64.StdEncoding.EncodeToString(mac.Sum(nil)) + `"}`
	if resp.StatusCode != 200 || string(b) != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("CRC: %d %s %q, want %s", resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
	}
	body := []byte(`{"for_user_id":"2244994945","favorite_events":[{"id":"e2e"}]}`)
	mac = hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	sig := "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if status, _, _ := g.post("/hooks/x", http.Header{"X-Twitter-Webhooks-Signature": {sig}}, append(body, ' ')); status != 401 {
		t.Fatalf("tampered event: %d", status)
	}
	if status, _, _ := g.post("/hooks/x", http.Header{"X-Twitter-Webhooks-Signature": {sig}}, body); status != 200 {
		t.Fatalf("signed event: %d", status)
	}
}

// TestPlaidKeyRotation: a gateway with Plaid API credentials verifies a
// webhook signed with a key it was never given, fetched by kid from a
// stand-in for /webhook_verification_key/get once, and refuses a kid
// Plaid does not know.
func TestPlaidKeyRotation(t *testing.T) {
	var mu sync.Mutex
	published := map[string]map[string]any{}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req map[string]string
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		key, ok := published[req["key_id"]]
		mu.Unlock()
		if !ok || req["client_id"] != "e2e-client" || req["secret"] != "e2e-secret" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"key": key, "request_id": "r"})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(verify.EnvTestPlaidURL, srv.URL)
	p, _ := verify.Lookup("plaid")
	newKey := func(publish bool) string {
		pub, priv, err := verify.GenerateKeys(p)
		if err != nil {
			t.Fatal(err)
		}
		var k map[string]any
		json.Unmarshal([]byte(pub), &k)
		k["alg"], k["expired_at"] = "ES256", nil
		if publish {
			mu.Lock()
			published[k["kid"].(string)] = k
			mu.Unlock()
		}
		return priv
	}
	static, staticKey, _ := verify.GenerateKeys(p)
	rotated, unknown := newKey(true), newKey(false)
	up := newRecorder(t, "", nil)
	routes := fmt.Sprintf("upstreams:\n  legacy:\n    url: http://%s\nsources:\n  plaid:\n    path: /hooks/plaid\n    provider: plaid\n    secrets: [%q]\n    provider_options:\n      client_id: e2e-client\n      secret: \"{env.E2E_PLAID_SECRET}\"\n      environment: sandbox\n    default: [legacy]\n", up.addr, static)
	t.Setenv("E2E_PLAID_SECRET", "e2e-secret")
	dir, port, admin := newGatewayDir(t, routes, up.addr)
	g := startGateway(t, dir, port, admin)
	send := func(key, item string) int {
		body := []byte(`{"webhook_type":"TRANSACTIONS","webhook_code":"DEFAULT_UPDATE","item_id":"` + item + `","environment":"sandbox"}`)
		signed, err := samples.Sign(p, key, samples.Sample{Body: body, Header: http.Header{}}, g.url("/hooks/plaid"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		status, _, _ := g.post("/hooks/plaid", signed, body)
		return status
	}
	if s := send(staticKey, "static"); s != 200 || calls.Load() != 0 {
		t.Fatalf("static key: %d, %d fetches", s, calls.Load())
	}
	if s := send(rotated, "rotated-1"); s != 200 || calls.Load() != 1 {
		t.Fatalf("rotated key: %d, %d fetches", s, calls.Load())
	}
	if s := send(rotated, "rotated-2"); s != 200 || calls.Load() != 1 {
		t.Fatalf("rotated key again: %d, %d fetches (want cached)", s, calls.Load())
	}
	if s := send(unknown, "unknown"); s != 401 {
		t.Fatalf("unknown kid: %d", s)
	}
	if strings.Contains(g.log.String(), "e2e-secret") {
		t.Fatal("the Plaid API secret reached the log")
	}
}
