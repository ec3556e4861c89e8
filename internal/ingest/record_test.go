package ingest_test

import (
	"context"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// snsStandIn plays SNS for the pipeline: certificates whose DER their path
// spells in hex, and subscription confirmations, counted.
func snsStandIn(t *testing.T) *atomic.Int32 {
	t.Helper()
	var confirms atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") == "ConfirmSubscription" {
			confirms.Add(1)
			fmt.Fprintf(w, `<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>%s:sub-1</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`, r.URL.Query().Get("TopicArn"))
			return
		}
		der, _ := hex.DecodeString(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/SimpleNotificationService-"), ".pem"))
		pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(verify.EnvTestSNSURL, srv.URL)
	return &confirms
}

// TestSNSConfirmationIsRecorded: a verified SubscriptionConfirmation is
// stored as a marked record that is never delivered (nor rerouted), then
// confirmed, once however often it is sent; a notification after it is an
// ordinary event.
func TestSNSConfirmationIsRecorded(t *testing.T) {
	confirms := snsStandIn(t)
	p, _ := verify.Lookup("aws-sns")
	topic, key, err := verify.GenerateKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := routingHarness(t, fmt.Sprintf(`
upstreams:
  legacy:
    url: http://127.0.0.1:1
sources:
  sns:
    path: /sns
    provider: aws-sns
    secrets: [%q]
    default: [legacy]
`, topic))
	ts := testNow.UTC().Format("2006-01-02T15:04:05.000Z")
	confirmation, err := verify.SignSNSMessage(key, map[string]string{"Type": "SubscriptionConfirmation", "MessageId": "0f6a5b6e-1d4c-4c8e-9a51-7d2f0b7a1e01", "TopicArn": topic,
		"Token": "tok", "Message": "confirm", "SubscribeURL": mustEnv(t) + "/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=tok", "Timestamp": ts}, "1")
	if err != nil {
		t.Fatal(err)
	}
	rec := h.do("POST", "/sns", http.Header{"Content-Type": {"text/plain; charset=UTF-8"}}, confirmation)
	if rec.Code != 200 || rec.Body.String() != "subscription confirmed" || confirms.Load() != 1 {
		t.Fatalf("confirmation: %d %q, %d confirmations", rec.Code, rec.Body.String(), confirms.Load())
	}
	id, err := store.ParseID(rec.Header().Get("Hookgate-Event-Id"))
	if err != nil {
		t.Fatalf("no record: %v", err)
	}
	stored, err := h.store.Event(id)
	if err != nil || stored.Event.Handshake != "aws-sns SubscriptionConfirmation for "+topic || !strings.HasPrefix(stored.Event.DedupKey, "aws-sns:") {
		t.Fatalf("record %+v %v", stored.Event, err)
	}
	// Sent again (a replay of the capture), it is the same record and no
	// second confirmation.
	for range 3 {
		again := h.do("POST", "/sns", http.Header{"Content-Type": {"text/plain; charset=UTF-8"}}, confirmation)
		if again.Code != 200 || again.Header().Get("Hookgate-Event-Id") != id.String() {
			t.Fatalf("again: %d %q", again.Code, again.Header().Get("Hookgate-Event-Id"))
		}
	}
	if confirms.Load() != 1 {
		t.Fatalf("%d confirmations of one token, want 1", confirms.Load())
	}
	if n := len(h.pending(t, "legacy")); n != 0 {
		t.Fatalf("the confirmation queued %d deliveries", n)
	}
	if _, err := h.p.Reroute(context.Background(), id); !errors.Is(err, ingest.ErrHandshakeRecord) {
		t.Fatalf("reroute of a record: %v", err)
	}
	// Forged: the same confirmation with another token is refused unseen.
	forged := strings.Replace(string(confirmation), `"Token":"tok"`, `"Token":"tol"`, 1)
	if rec := h.do("POST", "/sns", nil, []byte(forged)); rec.Code != 401 || confirms.Load() != 1 {
		t.Fatalf("forged confirmation: %d, %d confirmations", rec.Code, confirms.Load())
	}
	notification, err := verify.SignSNSMessage(key, map[string]string{"Type": "Notification", "MessageId": "0f6a5b6e-1d4c-4c8e-9a51-7d2f0b7a1e02", "TopicArn": topic, "Message": "hello", "Timestamp": ts}, "2")
	if err != nil {
		t.Fatal(err)
	}
	if rec := h.do("POST", "/sns", nil, notification); rec.Code != 200 || len(h.pending(t, "legacy")) != 1 {
		t.Fatalf("notification: %d, %d pending", rec.Code, len(h.pending(t, "legacy")))
	}
	if rec := h.do("POST", "/sns", nil, notification); rec.Header().Get("Hookgate-Duplicate") != "true" {
		t.Fatal("a retried notification was not a duplicate")
	}
}

func mustEnv(t *testing.T) string {
	t.Helper()
	v := strings.TrimRight(os.Getenv(verify.EnvTestSNSURL), "/")
	if v == "" {
		t.Fatal("no SNS stand-in")
	}
	return v
}
