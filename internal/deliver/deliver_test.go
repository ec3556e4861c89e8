package deliver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
)

func TestBackoffSchedule(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, InitialInterval: 5 * time.Second, MaxInterval: time.Minute}
	// With the jitter at its top the schedule is the exponential ceiling.
	wantTop := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i, want := range wantTop {
		if got := Backoff(p, i+1, 0, 1); got != want {
			t.Errorf("attempt %d, top jitter: %s, want %s", i+1, got, want)
		}
		if got := Backoff(p, i+1, 0, 0); got != p.InitialInterval {
			t.Errorf("attempt %d, no jitter: %s, want the initial interval", i+1, got)
		}
	}
	if got := Backoff(p, 3, 0, 0.5); got != 12500*time.Millisecond {
		t.Errorf("attempt 3, half jitter: %s, want 12.5s", got)
	}
	if got := Backoff(p, 1, 30*time.Second, 0); got != 30*time.Second {
		t.Errorf("Retry-After 30s not honoured: %s", got)
	}
	if got := Backoff(p, 1, time.Hour, 0); got != time.Minute {
		t.Errorf("Retry-After beyond max_interval: %s, want capped at 1m", got)
	}
	if got := Backoff(p, 200, 0, 1); got != time.Minute {
		t.Errorf("attempt 200 overflowed: %s", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		"-5":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:01:00 GMT": time.Minute,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

type received struct {
	method, uri, host string
	header            http.Header
	body              []byte
}

type upstream struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []received
	respond  func(n int, w http.ResponseWriter)
	inflight atomic.Int32
	peak     atomic.Int32
	hold     chan struct{}
}

func newUpstream(t *testing.T, respond func(n int, w http.ResponseWriter)) *upstream {
	u := &upstream{respond: respond}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := u.inflight.Add(1)
		defer u.inflight.Add(-1)
		for {
			p := u.peak.Load()
			if cur <= p || u.peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if u.hold != nil {
			<-u.hold
		}
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, received{r.Method, r.RequestURI, r.Host, r.Header.Clone(), body})
		n := len(u.got)
		u.mu.Unlock()
		if u.respond != nil {
			u.respond(n, w)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.got...)
}

func (u *upstream) config(name string, attempts int) Upstream {
	base, _ := url.Parse(u.srv.URL + "/base")
	return Upstream{
		Name: name, URL: base, Timeout: 5 * time.Second, Concurrency: 4,
		Retry: RetryPolicy{MaxAttempts: attempts, InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond},
	}
}

func openStore(t *testing.T, path string) *bolt.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "hookgate.db")
	}
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ingest(t *testing.T, s store.Store, body string, upstreams ...string) store.ID {
	t.Helper()
	ne := &store.NewEvent{Event: &store.Event{
		Source: "stripe", ReceivedAt: time.Now(), Method: "POST", Path: "/webhooks/stripe", RawQuery: "x=1",
		Host: "hooks.example.com", RemoteAddr: "203.0.113.9:5555", Proto: "https",
		Header: http.Header{
			"Stripe-Signature": {"t=1,v1=abc"}, "Content-Type": {"application/json"},
			"Connection": {"keep-alive, X-Hop"}, "X-Hop": {"1"}, "Keep-Alive": {"timeout=5"},
		},
		Body: []byte(body),
	}}
	for _, u := range upstreams {
		ne.Targets = append(ne.Targets, store.Target{Upstream: u})
	}
	res, err := s.Ingest(context.Background(), ne)
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func deliveryState(t *testing.T, s store.Store, id store.ID, idx int) store.Delivery {
	rec, err := s.Event(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Deliveries[idx]
}

func TestDeliversByteExactWithHeaders(t *testing.T) {
	up := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	body := "{\"id\":\"evt_1\",\"raw\":\"\\u00e9 \xc3\xa9\"}\r\n"
	id := ingest(t, s, body, "legacy")
	e.Notify("legacy")
	eventually(t, "delivery", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
	reqs := up.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if string(r.body) != body || r.method != "POST" || r.uri != "/base/webhooks/stripe?x=1" || r.host != "hooks.example.com" {
		t.Fatalf("request: %s %s host %s body %q", r.method, r.uri, r.host, r.body)
	}
	checks := map[string]string{
		"Stripe-Signature":  "t=1,v1=abc",
		"Content-Type":      "application/json",
		"Hookgate-Event-Id": id.String(),
		"Idempotency-Key":   id.String(),
		"Hookgate-Attempt":  "1",
		"Hookgate-Source":   "stripe",
		"X-Forwarded-For":   "203.0.113.9",
		"X-Forwarded-Proto": "https",
		"X-Forwarded-Host":  "hooks.example.com",
		"X-Hop":             "",
		"Keep-Alive":        "",
		"Accept-Encoding":   "",
	}
	for k, want := range checks {
		if got := r.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	up := newUpstream(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy")
		}
	})
	s := openStore(t, "")
	core, logs := observer.New(zap.DebugLevel)
	e := New(s, Options{Logger: zap.New(core)})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 5)})
	id := ingest(t, s, "payload", "legacy")
	e.Notify("legacy")
	eventually(t, "delivery after retries", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
	// One INFO line for the delivery's outcome; the retried attempts at DEBUG.
	if info, debug := logs.FilterLevelExact(zap.InfoLevel).FilterMessage("delivered").Len(), logs.FilterMessage("delivery attempt failed; will retry").FilterLevelExact(zap.DebugLevel).Len(); info != 1 || debug != 2 {
		t.Fatalf("%d INFO delivered lines and %d DEBUG retry lines, want 1 and 2", info, debug)
	}
	rec, _ := s.Event(id)
	attempts := rec.Attempts[0]
	if len(attempts) != 3 || attempts[0].Status != 503 || attempts[0].Response != "busy" || attempts[2].Status != 200 {
		t.Fatalf("attempts: %+v", attempts)
	}
	reqs := up.requests()
	for i, r := range reqs {
		if r.header.Get("Hookgate-Attempt") != string(rune('1'+i)) || string(r.body) != "payload" {
			t.Fatalf("request %d: attempt header %q body %q", i, r.header.Get("Hookgate-Attempt"), r.body)
		}
	}
}

func TestDeadAfterMaxAttemptsAndFinalStatuses(t *testing.T) {
	always500 := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(500) })
	gone := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	limited := newUpstream(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{
		"broken": always500.config("broken", 3),
		"gone":   gone.config("gone", 5),
		"busy":   limited.config("busy", 5),
	})
	id := ingest(t, s, "x", "broken", "gone", "busy")
	for _, u := range []string{"broken", "gone", "busy"} {
		e.Notify(u)
	}
	eventually(t, "all final", func() bool {
		rec, _ := s.Event(id)
		for _, d := range rec.Deliveries {
			if d.State == store.StatePending {
				return false
			}
		}
		return true
	})
	rec, _ := s.Event(id)
	if d := rec.Deliveries[0]; d.State != store.StateDead || d.Attempts != 3 || len(always500.requests()) != 3 {
		t.Errorf("500s: %+v after %d requests, want dead after 3", d, len(always500.requests()))
	}
	if d := rec.Deliveries[1]; d.State != store.StateDead || d.Attempts != 1 || d.LastError != "final status 410" {
		t.Errorf("410: %+v, want dead after 1", d)
	}
	if d := rec.Deliveries[2]; d.State != store.StateDelivered || d.Attempts != 2 {
		t.Errorf("429 then 200: %+v, want delivered on attempt 2", d)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	up := newUpstream(t, nil)
	up.hold = make(chan struct{})
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	cfg := up.config("legacy", 3)
	cfg.Concurrency = 2
	e.Activate("cfg", map[string]Upstream{"legacy": cfg})
	var ids []store.ID
	for range 6 {
		ids = append(ids, ingest(t, s, "x", "legacy"))
	}
	e.Notify("legacy")
	eventually(t, "two in flight", func() bool { return up.inflight.Load() == 2 })
	time.Sleep(50 * time.Millisecond) // room for a third, which must not come
	if got := up.inflight.Load(); got != 2 {
		t.Fatalf("%d requests in flight, concurrency is 2", got)
	}
	close(up.hold)
	eventually(t, "all delivered", func() bool {
		for _, id := range ids {
			if deliveryState(t, s, id, 0).State != store.StateDelivered {
				return false
			}
		}
		return true
	})
	if p := up.peak.Load(); p > 2 {
		t.Fatalf("peak concurrency %d, limit 2", p)
	}
	if n := len(up.requests()); n != 6 {
		t.Fatalf("%d requests for 6 events", n)
	}
}

func TestActivationGenerations(t *testing.T) {
	up := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	id := ingest(t, s, "x", "legacy")
	e.Notify("legacy")
	time.Sleep(50 * time.Millisecond)
	if n := len(up.requests()); n != 0 {
		t.Fatalf("delivered %d before any configuration was active", n)
	}
	old := up.config("legacy", 3)
	e.Activate("old", map[string]Upstream{"legacy": old})
	eventually(t, "first delivery", func() bool { return len(up.requests()) == 1 })

	// A new configuration without the upstream pauses it; withdrawing the
	// new one (a failed reload) brings the old back.
	e.Activate("new", map[string]Upstream{})
	id2 := ingest(t, s, "y", "legacy")
	e.Notify("legacy")
	time.Sleep(50 * time.Millisecond)
	if n := len(up.requests()); n != 1 {
		t.Fatalf("paused upstream got %d requests", n)
	}
	e.Deactivate("new")
	eventually(t, "delivery after fallback", func() bool { return deliveryState(t, s, id2, 0).State == store.StateDelivered })
	if deliveryState(t, s, id, 0).State != store.StateDelivered {
		t.Fatal("first event not delivered")
	}
}

func TestPendingWorkResumesWithNewEngine(t *testing.T) {
	up := newUpstream(t, nil)
	path := filepath.Join(t.TempDir(), "hookgate.db")
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []store.ID
	for range 5 {
		ids = append(ids, ingest(t, s, "x", "legacy"))
	}
	s.Close()
	s2 := openStore(t, path)
	e := New(s2, Options{})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	eventually(t, "backlog delivered", func() bool { return len(up.requests()) == 5 })
	for _, id := range ids {
		eventually(t, "recorded", func() bool { return deliveryState(t, s2, id, 0).State == store.StateDelivered })
	}
}

func TestJoinPath(t *testing.T) {
	cases := [][3]string{
		{"", "/hook", "/hook"},
		{"/", "/hook", "/hook"},
		{"/base", "/hook", "/base/hook"},
		{"/base/", "/hook", "/base/hook"},
		{"/base", "hook", "/base/hook"},
	}
	for _, c := range cases {
		if got := joinPath(c[0], c[1]); got != c[2] {
			t.Errorf("joinPath(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestWarnsAboutWorkForUnknownUpstreams(t *testing.T) {
	s := openStore(t, "")
	ingest(t, s, "x", "retired")
	core, logs := observer.New(zap.WarnLevel)
	e := New(s, Options{Logger: zap.New(core)})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{})
	found := logs.FilterField(zap.String("upstream", "retired")).Len()
	if found != 1 {
		t.Fatalf("%d warnings about the retired upstream, want 1: %v", found, logs.All())
	}
}
