package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeStripe answers GET /v1/events as Stripe's API does (newest first,
// limit, starting_after, created[gte], has_more), over events created 10
// to 40 minutes ago; it counts requests.
type fakeStripe struct {
	srv      *httptest.Server
	events   []map[string]any // newest first
	requests atomic.Int32
}

func newFakeStripe(t *testing.T, key string, n int) *fakeStripe {
	f := &fakeStripe{}
	now := time.Now()
	for i := n - 1; i >= 0; i-- {
		f.events = append(f.events, map[string]any{"id": fmt.Sprintf("evt_missed_%03d", i), "object": "event", "type": "invoice.paid", "livemode": false,
			"created": now.Add(-40*time.Minute + time.Duration(i)*time.Minute).Unix(), "data": map[string]any{"object": map[string]any{"id": fmt.Sprintf("in_%03d", i)}}})
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.URL.Path != "/v1/events" || r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"type":"authentication_error"}}`, http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		gte, _ := strconv.ParseInt(q.Get("created[gte]"), 10, 64)
		var list []map[string]any
		for _, e := range f.events {
			if e["created"].(int64) >= gte {
				list = append(list, e)
			}
		}
		start := 0
		for i, e := range list {
			if e["id"] == q.Get("starting_after") {
				start = i + 1
			}
		}
		end := min(start+limit, len(list))
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": list[start:end], "has_more": end < len(list)})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// TestReconcileStripeAfterDowntime: Stripe events the gateway never
// received (it was down) reach the upstream once after it starts; the
// webhook of one of them arriving later is a duplicate; an on-demand run
// stores nothing new; a restart resumes from the cursor and lists nothing.
func TestReconcileStripeAfterDowntime(t *testing.T) {
	const key, secret = "rk_test_e2e_reconcile", "whsec_e2e_reconcile_0123456789"
	stripe := newFakeStripe(t, key, 30)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	routes := fmt.Sprintf(`upstreams:
  app:
    url: http://%s
sources:
  stripe:
    path: /hooks/stripe
    provider: stripe
    secrets: [%q]
    default: [app]
    reconcile:
      credentials: %q
      api_base: %s
`, up.addr, secret, key, stripe.srv.URL)
	dir, port, admin := newGatewayDir(t, routes, passthrough.addr)
	g := startGateway(t, dir, port, admin)
	waitFor(t, "the missed events delivered", 30*time.Second, func() bool { return len(up.all()) >= 30 })
	afterStart := int(stripe.requests.Load())

	body, _ := json.Marshal(stripe.events[5])
	mac := hmac.New(sha256.New, []byte(secret))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac.Write([]byte(ts + "." + string(body)))
	status, hdr, _ := g.post("/hooks/stripe", http.Header{"Stripe-Signature": {"t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))}}, body)
	if status != 200 || hdr.Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("the webhook of a reconciled event: %d duplicate=%q", status, hdr.Get("Hookgate-Duplicate"))
	}
	out, err := g.cli("reconcile", "--source", "stripe", "--since", "2h")
	if err != nil || !strings.Contains(out, "listed 30, stored 0, duplicates 30") {
		t.Fatalf("reconcile now: %v\n%s", err, out)
	}
	_, metrics := g.adminRaw("GET", "/metrics")
	for _, want := range []string{`caddy_hookgate_reconciled_total{outcome="stored",source="stripe"} 30`, `caddy_hookgate_reconciled_total{outcome="duplicate",source="stripe"} 30`,
		`caddy_hookgate_reconciled_total{outcome="failed",source="stripe"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	g.kill()
	g = startGateway(t, dir, port, admin)
	out, err = g.cli("reconcile", "--source", "stripe", "--dry-run")
	if err != nil || !strings.Contains(out, "listed 0") {
		t.Fatalf("after a restart, from the cursor: %v\n%s", err, out)
	}
	time.Sleep(300 * time.Millisecond)
	keys := map[string]int{}
	for _, r := range up.all() {
		var e struct{ ID string }
		_ = json.Unmarshal(r.Body, &e)
		keys[e.ID]++
	}
	if len(up.all()) != 30 || len(keys) != 30 {
		t.Fatalf("%d deliveries of %d events, want each of 30 once", len(up.all()), len(keys))
	}
	for _, r := range up.all() {
		if r.Header.Get("Hookgate-Origin") != "reconcile" {
			t.Fatalf("a fetched event delivered with Hookgate-Origin %q", r.Header.Get("Hookgate-Origin"))
		}
	}
	_, stats := g.admin("GET", "/hookgate/stats")
	rec, _ := stats["reconcile"].(map[string]any)["stripe"].(map[string]any)
	if rec["outcome"] != "ok" || rec["last_run"] == nil {
		t.Fatalf("stats reconcile: %v", stats["reconcile"])
	}
	t.Logf("30 missed events: %d requests to Stripe for the first run", afterStart)
}

// fakeGitHub lists a hook's deliveries as GitHub's API does, and answers a
// redelivery by sending the delivery, signed, to the gateway.
func fakeGitHub(t *testing.T, token, secret string, gateway func() string, failed map[int]bool) (*httptest.Server, *atomic.Int32) {
	var redeliveries atomic.Int32
	type delivery struct {
		ID          int64     `json:"id"`
		GUID        string    `json:"guid"`
		DeliveredAt time.Time `json:"delivered_at"`
		StatusCode  int       `json:"status_code"`
	}
	var mu sync.Mutex
	var list []delivery
	now := time.Now()
	for i := 9; i >= 0; i-- {
		code := 200
		if failed[i] {
			code = 502
		}
		list = append(list, delivery{ID: int64(100 + i), GUID: fmt.Sprintf("0b1e7a00-0000-4000-8000-%012d", i), DeliveredAt: now.Add(-time.Duration(10-i) * time.Minute), StatusCode: code})
	}
	const hook = "/repos/acme/app/hooks/123/deliveries"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			var id int64
			if _, err := fmt.Sscanf(r.URL.Path, hook+"/%d/attempts", &id); err != nil {
				http.NotFound(w, r)
				return
			}
			mu.Lock()
			var guid string
			for _, d := range list {
				if d.ID == id {
					guid = d.GUID
				}
			}
			// A redelivery is a new delivery of the same guid, listed first.
			list = append([]delivery{{ID: int64(1000 + len(list)), GUID: guid, DeliveredAt: time.Now(), StatusCode: 200}}, list...)
			mu.Unlock()
			redeliveries.Add(1)
			w.WriteHeader(http.StatusAccepted)
			go func() {
				body := fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s"}`, guid)
				mac := hmac.New(sha256.New, []byte(secret))
				mac.Write([]byte(body))
				req, _ := http.NewRequest(http.MethodPost, gateway(), strings.NewReader(body))
				req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
				req.Header.Set("X-GitHub-Delivery", guid)
				req.Header.Set("X-GitHub-Event", "push")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			return
		}
		if r.URL.Path != hook {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(list)
	}))
	t.Cleanup(srv.Close)
	return srv, &redeliveries
}

// TestReconcileGitHubRedeliversFailures: GitHub never retries. The
// gateway received 8 of a hook's 10 deliveries; 2 failed while it was
// down. Started again with reconcile, it has GitHub redeliver those 2,
// which arrive signed through the webhook path and reach the upstream
// once; the 8 it has are not asked again.
func TestReconcileGitHubRedeliversFailures(t *testing.T) {
	const token, secret = "ghp_e2e_reconcile", "github-e2e-reconcile-0123456789"
	var gatewayURL atomic.Value
	failed := map[int]bool{3: true, 7: true}
	gh, redeliveries := fakeGitHub(t, token, secret, func() string { return gatewayURL.Load().(string) }, failed)
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	source := fmt.Sprintf(`upstreams:
  app:
    url: http://%s
sources:
  github:
    path: /hooks/github
    provider: github
    secrets: [%q]
    default: [app]
`, up.addr, secret)
	dir, port, admin := newGatewayDir(t, source, passthrough.addr)
	gatewayURL.Store(fmt.Sprintf("http://127.0.0.1:%d/hooks/github", port))
	g := startGateway(t, dir, port, admin)
	for i := range 10 {
		if failed[i] {
			continue
		}
		guid := fmt.Sprintf("0b1e7a00-0000-4000-8000-%012d", i)
		body := fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s"}`, guid)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		if status, _, _ := g.post("/hooks/github", http.Header{"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac.Sum(nil))}, "X-GitHub-Delivery": {guid}, "X-GitHub-Event": {"push"}}, []byte(body)); status != 200 {
			t.Fatalf("delivery %d: %d", i, status)
		}
	}
	waitFor(t, "the 8 deliveries", 30*time.Second, func() bool { return len(up.all()) >= 8 })
	g.kill()
	writeFile(t, filepath.Join(dir, "routes.yaml"), source+fmt.Sprintf(`    reconcile:
      credentials: %q
      hook: repos/acme/app/hooks/123
      api_base: %s
`, token, gh.URL))
	g = startGateway(t, dir, port, admin)
	waitFor(t, "the failed deliveries redelivered", 30*time.Second, func() bool { return len(up.all()) >= 10 })
	time.Sleep(500 * time.Millisecond)
	if n := len(up.all()); n != 10 || redeliveries.Load() != 2 {
		t.Fatalf("%d deliveries, %d redeliveries asked, want 10 and 2", n, redeliveries.Load())
	}
	origins := map[string]int{}
	for _, r := range up.all() {
		origins[r.Header.Get("Hookgate-Origin")]++
	}
	if origins["webhook"] != 8 || origins["redelivery"] != 2 {
		t.Fatalf("deliveries by Hookgate-Origin: %v, want 8 webhook and 2 redelivery", origins)
	}
	// Over the last hour every guid is listed once, and the gateway has
	// each: nothing is asked again.
	out, err := g.cli("reconcile", "--source", "github", "--since", "1h", "--dry-run")
	if err != nil || !strings.Contains(out, "listed 10, stored 0, duplicates 10, redeliveries 0") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
}
