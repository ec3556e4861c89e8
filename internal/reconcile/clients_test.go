package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/reconcile/providertest"
)

// TestGitLabResendsWhatFailedOrIsMissing: 45 events over three pages of
// 20 (GitLab's most); three failed, one of which GitLab resent since with
// success; the gateway lacks one GitLab saw delivered. Two resends.
func TestGitLabResendsWhatFailedOrIsMissing(t *testing.T) {
	fake := providertest.NewGitLab(t, "glpat-reconcile", "projects/acme%2Fapp/hooks/7", "gl-secret")
	now := time.Now()
	sink := &memorySink{have: map[string]bool{}}
	for i := range 45 {
		key := fmt.Sprintf("idem-%02d", i)
		status := 200
		if i%20 == 3 {
			status = 0 // the gateway was down
		} else if i != 30 {
			sink.have[key] = true
		}
		fake.Attempt(key, []byte(`{"object_kind":"push","n":`+fmt.Sprint(i)+`}`), now.Add(time.Duration(i-60)*time.Minute), status)
	}
	fake.Attempt("idem-23", []byte(`{"object_kind":"push","n":23}`), now.Add(-10*time.Minute), 200) // resent by hand since
	sink.have["idem-23"] = true
	fake.Attempt("idem-old", []byte(`{}`), now.Add(-3*time.Hour), 500) // before since

	g, err := NewGitLab(fake.Server.Client(), fake.URL(), "glpat-reconcile", "projects/acme%2Fapp/hooks/7")
	if err != nil {
		t.Fatal(err)
	}
	g.resends.interval = 0 // GitLab's 5 a minute is the fake's too; two resends fit
	rep, err := Run(context.Background(), g, g.Count, sink, now.Add(-2*time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	// idem-03 and idem-43 failed; idem-30 is missing; idem-23 failed but
	// was resent with success and the gateway has it.
	if rep.Listed != 45 || rep.Redeliveries != 3 || fake.Resent != 3 || rep.Duplicates != 42 {
		t.Fatalf("%+v, %d resent", rep, fake.Resent)
	}
	if rep.Requests != 3+3 {
		t.Fatalf("%d requests, want 3 pages and 3 resends", rep.Requests)
	}
	if _, err := NewGitLab(nil, "", "t", "repos/a/b/hooks/1"); err == nil {
		t.Fatal("a GitHub-shaped hook accepted for GitLab")
	}
	bad, _ := NewGitLab(fake.Server.Client(), fake.URL(), "wrong", "projects/acme%2Fapp/hooks/7")
	if err := bad.List(context.Background(), now.Add(-time.Hour), func(Found) error { return nil }); err == nil {
		t.Fatal("a wrong token listed")
	}
}

// TestPaddleReplaysFailedAndLeavesRetriesToPaddle: 250 notifications
// over two pages of 200; Paddle gave up on two, still retries one; the
// gateway lacks one Paddle delivered. Three replays, of the original notifications, and the cursor
// stays before the one Paddle still retries.
func TestPaddleReplaysFailedAndLeavesRetriesToPaddle(t *testing.T) {
	const destination = "ntfset_01hv6scjn6ex5bej5bdy4w9ax3"
	fake := providertest.NewPaddle(t, "pdl_apikey_01", destination, "pdl_ntfset_secret")
	now := time.Now()
	sink := &memorySink{have: map[string]bool{}}
	var pendingAt time.Time
	for i := range 250 {
		id := fmt.Sprintf("evt_%026d", i)
		at := now.Add(time.Duration(i-300) * time.Minute)
		status := "delivered"
		switch i {
		case 10, 200:
			status = "failed"
		case 120:
			status, pendingAt = "needs_retry", at
		case 77:
		default:
			sink.have[id] = true
		}
		fake.Notify(id, "transaction.completed", []byte(`{"id":"txn_`+fmt.Sprint(i)+`"}`), at, status)
	}
	fake.Deliver = func(providertest.Delivery) int { return 200 } // the gateway takes the replays
	p, err := NewPaddle(fake.Server.Client(), fake.URL(), "pdl_apikey_01", destination)
	if err != nil {
		t.Fatal(err)
	}
	since := now.Add(-6 * time.Hour)
	rep, err := Run(context.Background(), p, p.Count, sink, since, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 250 || rep.Redeliveries != 3 || fake.Replayed != 3 || rep.Pending != 1 || rep.Requests != 2+3 {
		t.Fatalf("%+v, %d replayed", rep, fake.Replayed)
	}
	if rep.Through.After(pendingAt) {
		t.Fatalf("the cursor moves to %s, past the notification Paddle still retries (%s)", rep.Through, pendingAt)
	}
	// A second run replays nothing again: the replays are Paddle's new
	// notifications, and the gateway now has their events.
	for _, id := range []string{"evt_00000000000000000000000010", "evt_00000000000000000000000200", "evt_00000000000000000000000077"} {
		sink.have[id] = true
	}
	again, err := Run(context.Background(), p, nil, sink, since, false)
	if err != nil || again.Redeliveries != 0 || fake.Replayed != 3 {
		t.Fatalf("second run: %+v %v", again, err)
	}
}

// TestPayPalResendsWhatTheGatewayLacks: 130 events over two pages of 100
// (the next link on api.paypal.com, & escaped, is asked of the configured
// API); one access token for the run; the three events the gateway lacks
// are resent to the configured webhook.
func TestPayPalResendsWhatTheGatewayLacks(t *testing.T) {
	fake := providertest.NewPayPal(t, "AbCdClient", "s3cr3t")
	fake.Sign = func([]byte) http.Header { return http.Header{} }
	now := time.Now().Truncate(time.Second)
	sink := &memorySink{have: map[string]bool{}}
	for i := range 130 {
		id := fmt.Sprintf("WH-%04dAAAA-0NR76654JE622505K", i)
		fake.Event(id, "PAYMENT.CAPTURE.COMPLETED", now.Add(time.Duration(i-200)*time.Minute))
		if i%50 != 9 {
			sink.have[id] = true
		}
	}
	p, err := NewPayPal(fake.Server.Client(), fake.URL(), "AbCdClient:s3cr3t", "8PT597110X687430LKGECATA")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), p, p.Count, sink, now.Add(-4*time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 130 || rep.Redeliveries != 3 || fake.Resent != 3 || fake.Tokens != 1 || rep.Requests != 1+2+3 {
		t.Fatalf("%+v: %d resent, %d tokens", rep, fake.Resent, fake.Tokens)
	}
	if !reflect.DeepEqual(fake.ResentTo, []string{"8PT597110X687430LKGECATA"}) {
		t.Fatalf("resent to %v", fake.ResentTo)
	}
	if _, err := NewPayPal(nil, "", "no-colon", ""); err == nil {
		t.Fatal("credentials without a secret accepted")
	}
	wrong, _ := NewPayPal(fake.Server.Client(), fake.URL(), "AbCdClient:wrong", "")
	if err := wrong.List(context.Background(), now.Add(-time.Hour), func(Found) error { return nil }); err == nil {
		t.Fatal("a wrong secret got a token")
	}
}

// TestSquareFetchesEventsAsTheirWebhooks: 230 events over three pages of
// 100, oldest first, the cursor used with its own query; the first
// request is refused 429 and waited out; each body is the webhook's.
func TestSquareFetchesEventsAsTheirWebhooks(t *testing.T) {
	fake := providertest.NewSquare(t, "EAAAl-token")
	now := time.Now().Truncate(time.Second)
	webhooks := map[string][]byte{}
	for i := range 230 {
		id := fmt.Sprintf("%08d-0aba-424f-b862-583d44efe7c8", i)
		webhooks[id] = fake.Event(id, "payment.updated", now.Add(time.Duration(i-300)*time.Minute))
	}
	fake.Throttle(1)
	s := NewSquare(fake.Server.Client(), fake.URL(), "EAAAl-token")
	var prev time.Time
	n := 0
	err := s.List(context.Background(), now.Add(-300*time.Minute), func(f Found) error {
		n++
		var got, want any
		if json.Unmarshal(f.Body, &got) != nil || json.Unmarshal(webhooks[f.Key], &want) != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("event %s: %s, want its webhook %s", f.Key, f.Body, webhooks[f.Key])
		}
		if f.At.Before(prev) {
			t.Fatalf("event %s out of order", f.Key)
		}
		prev = f.At
		return nil
	})
	if err != nil || n != 230 || s.Requests != 1+3 || fake.Requests() != 4 {
		t.Fatalf("%d listed in %d requests (%d answered): %v", n, s.Requests, fake.Requests(), err)
	}
}
