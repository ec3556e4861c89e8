package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// stripeServer answers GET /v1/events as Stripe's API does: newest first,
// `limit` a page, starting_after and created[gte], has_more; the first
// request is refused 429 with Retry-After.
func stripeServer(t *testing.T, key string, events int, first time.Time) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var throttled atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/events" {
			http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"type":"authentication_error"}}`, http.StatusUnauthorized)
			return
		}
		if throttled.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"type":"rate_limit_error"}}`, http.StatusTooManyRequests)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		gte, _ := strconv.ParseInt(q.Get("created[gte]"), 10, 64)
		if limit < 1 || limit > 100 {
			http.Error(w, `{"error":{"type":"invalid_request_error","param":"limit"}}`, http.StatusBadRequest)
			return
		}
		var all []map[string]any
		for i := events - 1; i >= 0; i-- { // newest first
			created := first.Add(time.Duration(i) * time.Minute).Unix()
			if created >= gte {
				all = append(all, map[string]any{"id": fmt.Sprintf("evt_%04d", i), "object": "event", "created": created, "type": "invoice.paid", "data": map[string]any{"object": map[string]any{"id": "in_1"}}})
			}
		}
		start := 0
		if after := q.Get("starting_after"); after != "" {
			for i, e := range all {
				if e["id"] == after {
					start = i + 1
				}
			}
		}
		end := min(start+limit, len(all))
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "url": "/v1/events", "data": all[start:end], "has_more": end < len(all)})
	}))
	t.Cleanup(srv.Close)
	return srv, &throttled
}

func TestStripeListsEveryEventSinceOnce(t *testing.T) {
	first := time.Unix(1767225600, 0)
	srv, _ := stripeServer(t, "rk_test_hookgate", 250, first)
	s := NewStripe(srv.Client(), srv.URL, "rk_test_hookgate")
	since := first.Add(10 * time.Minute)
	seen := map[string]bool{}
	err := s.List(context.Background(), since, func(f Found) error {
		if seen[f.Key] {
			t.Fatalf("%s listed twice", f.Key)
		}
		seen[f.Key] = true
		var e struct{ ID string }
		if json.Unmarshal(f.Body, &e) != nil || e.ID != f.Key || f.At.Before(since) || f.Redeliver != nil {
			t.Fatalf("event %s: body %s at %s", f.Key, f.Body, f.At)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 240 || seen["evt_0009"] || !seen["evt_0010"] || !seen["evt_0249"] {
		t.Fatalf("listed %d events", len(seen))
	}
	// 3 pages of 100, plus the refused first request.
	if s.Requests != 4 {
		t.Fatalf("%d requests, want 4", s.Requests)
	}
	bad := NewStripe(srv.Client(), srv.URL, "rk_wrong")
	if err := bad.List(context.Background(), since, func(Found) error { return nil }); err == nil {
		t.Fatal("a refused key listed events")
	}
}

func TestStripeGivesUpOnEndlessRateLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	s := NewStripe(srv.Client(), srv.URL, "k")
	if err := s.List(context.Background(), time.Unix(0, 0), func(Found) error { return nil }); err != ErrRateLimited || s.Requests != 6 {
		t.Fatalf("err %v after %d requests, want ErrRateLimited after 6", err, s.Requests)
	}
}

// githubServer answers a hook's deliveries as GitHub's API does: newest
// first, per_page a page, a cursor in the Link header; a delivery that
// failed, then its successful redelivery with the same guid; and counts
// the redeliveries asked for.
func githubServer(t *testing.T, token string, first time.Time) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var redelivered atomic.Int32
	type delivery struct {
		ID          int64     `json:"id"`
		GUID        string    `json:"guid"`
		DeliveredAt time.Time `json:"delivered_at"`
		Redelivery  bool      `json:"redelivery"`
		Status      string    `json:"status"`
		StatusCode  int       `json:"status_code"`
		Event       string    `json:"event"`
	}
	var all []delivery // newest first
	for i := 149; i >= 0; i-- {
		code, status := 200, "OK"
		if i%50 == 7 { // three failed deliveries
			code, status = 503, "Service Unavailable"
		}
		all = append(all, delivery{ID: int64(1000 + i), GUID: fmt.Sprintf("guid-%03d", i), DeliveredAt: first.Add(time.Duration(i) * time.Minute), Status: status, StatusCode: code, Event: "push"})
	}
	// guid-057 failed, then was redelivered successfully.
	all = append([]delivery{{ID: 5000, GUID: "guid-057", DeliveredAt: first.Add(200 * time.Minute), Redelivery: true, Status: "OK", StatusCode: 200, Event: "push"}}, all...)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		const hook = "/repos/acme/app/hooks/123/deliveries"
		if r.Method == http.MethodPost {
			var id int64
			if _, err := fmt.Sscanf(r.URL.Path, hook+"/%d/attempts", &id); err != nil {
				http.NotFound(w, r)
				return
			}
			redelivered.Add(1)
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, "{}")
			return
		}
		if r.URL.Path != hook {
			http.NotFound(w, r)
			return
		}
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		end := min(start+per, len(all))
		if end < len(all) {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=%d&cursor=%d>; rel="next"`, srv.URL, hook, per, end))
		}
		_ = json.NewEncoder(w).Encode(all[start:end])
	}))
	t.Cleanup(srv.Close)
	return srv, &redelivered
}

func TestGitHubListsDeliveriesAndRedelivers(t *testing.T) {
	first := time.Unix(1767225600, 0)
	srv, redelivered := githubServer(t, "ghp_hookgate", first)
	g, err := NewGitHub(srv.Client(), srv.URL, "ghp_hookgate", "repos/acme/app/hooks/123")
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	n := 0
	err = g.List(context.Background(), first.Add(5*time.Minute), func(f Found) error {
		n++
		if f.Body != nil || f.Redeliver == nil {
			t.Fatalf("%s: a GitHub delivery is redelivered, not fetched", f.Key)
		}
		if !f.Delivered {
			failed = append(failed, f.Key)
			return f.Redeliver(context.Background())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 145 guids at or after since, each once; of the three that failed,
	// guid-057 was redelivered successfully since, so two are asked again.
	if n != 145 || fmt.Sprint(failed) != "[guid-107 guid-007]" || redelivered.Load() != 2 {
		t.Fatalf("%d listed, failed %v, %d redeliveries", n, failed, redelivered.Load())
	}
	if _, err := NewGitHub(srv.Client(), srv.URL, "t", "users/x/hooks/1"); err == nil {
		t.Fatal("a hook of another shape accepted")
	}
}

// memorySink stores by key, as the pipeline's dedup does.
type memorySink struct {
	have map[string]bool
	fail map[string]bool
}

func (m *memorySink) Seen(key string) (bool, error) { return m.have[key], nil }

func (m *memorySink) Redelivering(string) {}

func (m *memorySink) Store(_ context.Context, f Found) (bool, error) {
	if m.fail[f.Key] {
		return false, fmt.Errorf("store unavailable")
	}
	if m.have[f.Key] {
		return false, nil
	}
	m.have[f.Key] = true
	return true, nil
}

// TestRunStoresWhatIsMissingOnce: of 250 Stripe events, the 40 the gateway
// has are duplicates and the rest are stored; a second run stores
// nothing; a failed store keeps the cursor where it was.
func TestRunStoresWhatIsMissingOnce(t *testing.T) {
	first := time.Unix(1767225600, 0)
	srv, _ := stripeServer(t, "rk", 250, first)
	s := NewStripe(srv.Client(), srv.URL, "rk")
	sink := &memorySink{have: map[string]bool{}}
	for i := range 40 {
		sink.have[fmt.Sprintf("evt_%04d", i*5)] = true
	}
	rep, err := Run(context.Background(), s, func() int { return s.Requests }, sink, first, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 250 || rep.Stored != 210 || rep.Duplicates != 40 || rep.Failed != 0 || !rep.Through.After(first) {
		t.Fatalf("first run: %+v", rep)
	}
	again, err := Run(context.Background(), s, nil, sink, first, false)
	if err != nil || again.Stored != 0 || again.Duplicates != 250 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	sink.fail = map[string]bool{"evt_0100": true}
	delete(sink.have, "evt_0100")
	failed, err := Run(context.Background(), s, nil, sink, first, false)
	if err != nil || failed.Failed != 1 || !failed.Through.Equal(first) {
		t.Fatalf("a run with a failed store: %+v %v", failed, err)
	}
	dry, err := Run(context.Background(), s, nil, &memorySink{have: map[string]bool{}}, first, true)
	if err != nil || dry.Stored != 0 || dry.Listed != 250 || !dry.Through.Equal(first) {
		t.Fatalf("a dry run: %+v %v", dry, err)
	}
}

// TestRunRedeliversWhatGitHubFailed: only the deliveries GitHub saw fail
// are asked again.
func TestRunRedeliversWhatGitHubFailed(t *testing.T) {
	first := time.Unix(1767225600, 0)
	srv, redelivered := githubServer(t, "ghp", first)
	g, _ := NewGitHub(srv.Client(), srv.URL, "ghp", "repos/acme/app/hooks/123")
	// The gateway has every event GitHub saw delivered but guid-020
	// (something else answered for it).
	sink := &memorySink{have: map[string]bool{}}
	for i := range 150 {
		if i != 20 && i%50 != 7 {
			sink.have[fmt.Sprintf("guid-%03d", i)] = true
		}
	}
	sink.have["guid-057"] = true
	rep, err := Run(context.Background(), g, func() int { return g.Requests }, sink, first, false)
	if err != nil {
		t.Fatal(err)
	}
	// 150 guids over 2 pages; guid-007 and guid-107 failed (guid-057 was
	// redelivered since) and guid-020 is missing: 3 redeliveries asked, 5
	// requests in all.
	if rep.Listed != 150 || rep.Redeliveries != 3 || redelivered.Load() != 3 || rep.Requests != 5 {
		t.Fatalf("%+v, %d redeliveries received", rep, redelivered.Load())
	}
}
