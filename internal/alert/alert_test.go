package alert

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// recorder is a store that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	got []*store.NewEvent
}

func (r *recorder) Ingest(_ context.Context, e *store.NewEvent) (store.IngestResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return store.IngestResult{}, nil
}

// alerts waits until the manager has stored everything it queued and
// returns the alerts stored so far.
func (r *recorder) alerts(t *testing.T, m *Manager) []Alert {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(m.queue) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the last one taken is being written
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Alert
	for _, e := range r.got {
		var a Alert
		if err := json.Unmarshal(e.Event.Body, &a); err != nil {
			t.Fatalf("alert body %s: %v", e.Event.Body, err)
		}
		out = append(out, a)
	}
	return out
}

func newManager(t *testing.T, rules ...Rule) (*Manager, *recorder, *clock) {
	t.Helper()
	c := &clock{now: time.Unix(1700000000, 0).UTC()}
	rec := &recorder{}
	m := New(Options{Store: rec, Now: c.Now, CheckEvery: time.Hour})
	t.Cleanup(m.Stop)
	m.Activate("cfg", rules)
	return m, rec, c
}

func TestRepeatSuppression(t *testing.T) {
	m, rec, c := newManager(t, Rule{Name: "ops", Format: FormatJSON, Dead: true, BreakerOpen: true, Repeat: time.Hour})
	ev := &store.Event{Source: "stripe", ID: store.ID{1}}
	m.Dead("legacy", ev, "status 500")
	m.Dead("legacy", ev, "status 500")                   // same kind, source and upstream
	m.Dead("billing", ev, "status 500")                  // another upstream
	m.Dead("legacy", &store.Event{Source: "github"}, "") // another source
	m.BreakerOpened("legacy")                            // another kind
	if got := rec.alerts(t, m); len(got) != 4 {
		t.Fatalf("%d alerts, want 4: %+v", len(got), got)
	}
	c.Add(59 * time.Minute)
	m.Dead("legacy", ev, "status 500")
	if got := rec.alerts(t, m); len(got) != 4 {
		t.Fatalf("repeated within the hour: %+v", got[4:])
	}
	c.Add(time.Minute)
	m.Dead("legacy", ev, "status 500")
	got := rec.alerts(t, m)
	if len(got) != 5 {
		t.Fatalf("%d alerts after the hour, want 5", len(got))
	}
	want := Alert{Kind: KindDead, Source: "stripe", Upstream: "legacy", EventID: ev.ID.String(), At: c.Now(),
		Message: "delivery of event " + ev.ID.String() + " from source stripe to upstream legacy is dead: status 500"}.stamp(StateFiring)
	if got[4] != want {
		t.Errorf("alert %+v\nwant %+v", got[4], want)
	}
}

// TestRepeatIsPerTarget: two targets each hear of the same alert once.
func TestRepeatIsPerTarget(t *testing.T) {
	m, rec, _ := newManager(t,
		Rule{Name: "ops", Format: FormatJSON, Dead: true, Repeat: time.Hour},
		Rule{Name: "chat", Format: FormatSlack, Dead: true, Repeat: time.Hour},
		Rule{Name: "quiet", Format: FormatJSON, BreakerOpen: true, Repeat: time.Hour})
	m.Dead("legacy", &store.Event{Source: "s"}, "x")
	m.Dead("legacy", &store.Event{Source: "s"}, "x")
	rec.alerts(t, m)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) != 2 || rec.got[0].Targets[0].Upstream != "alert:ops" || rec.got[1].Targets[0].Upstream != "alert:chat" {
		t.Fatalf("stored %d alerts: %+v", len(rec.got), rec.got)
	}
}

func TestNoAlertForAnAlertsOwnDelivery(t *testing.T) {
	m, rec, _ := newManager(t, Rule{Name: "ops", Format: FormatJSON, Dead: true, BreakerOpen: true, Repeat: time.Hour})
	m.Dead("alert:ops", &store.Event{Source: Source}, "status 500")
	m.Dead("legacy", &store.Event{Source: Source}, "status 500")
	m.BreakerOpened("alert:ops")
	if got := rec.alerts(t, m); len(got) != 0 {
		t.Fatalf("alerts about alerts: %+v", got)
	}
}

func TestRejectedWindowRatio(t *testing.T) {
	m, rec, c := newManager(t, Rule{Name: "ops", Format: FormatJSON, Repeat: time.Hour,
		Rejected: &Rejected{Ratio: 0.5, Min: 4, Window: time.Minute}})
	// Below min: three requests, one refused, and an hour later nothing counts.
	m.Observe("stripe", "accepted", 0)
	m.Observe("stripe", "accepted", 0)
	m.Observe("stripe", "rejected_signature", 0)
	c.Add(61 * time.Second)
	// The earlier three have left the window: 2 of 3 refused is below min.
	m.Observe("stripe", "rejected_signature", 0)
	m.Observe("stripe", "rejected_signature", 0)
	m.Observe("stripe", "duplicate", 0)
	if got := rec.alerts(t, m); len(got) != 0 {
		t.Fatalf("alert before min within the window: %+v", got)
	}
	// Another source with a low share never alerts.
	for i := range 20 {
		outcome := "accepted"
		if i%4 == 0 {
			outcome = "rejected_signature"
		}
		m.Observe("github", outcome, 0)
	}
	c.Add(time.Second)
	m.Observe("stripe", "rejected_body_too_large", 0) // 3 of 4
	m.Observe("stripe", "rejected_signature", 0)      // suppressed by repeat
	got := rec.alerts(t, m)
	if len(got) != 1 {
		t.Fatalf("%d alerts, want 1: %+v", len(got), got)
	}
	if a := got[0]; a.Kind != KindRejected || a.Source != "stripe" || a.Upstream != "" ||
		a.Message != "source stripe refused 3 of 4 requests (75%) in the last 1m0s" {
		t.Errorf("alert %+v", a)
	}
}

func TestOldestPending(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	rec := &recorder{}
	oldest := map[string]time.Time{
		"legacy":    c.now.Add(-20 * time.Minute),
		"fresh":     c.now.Add(-time.Minute),
		"alert:ops": c.now.Add(-2 * time.Hour),
	}
	m := New(Options{Store: rec, Now: c.Now, CheckEvery: time.Hour, Oldest: func() (map[string]time.Time, error) { return oldest, nil }})
	defer m.Stop()
	m.Activate("cfg", []Rule{{Name: "ops", Format: FormatJSON, OldestPending: 15 * time.Minute, Repeat: time.Hour}})
	m.CheckPending()
	m.CheckPending()
	got := rec.alerts(t, m)
	if len(got) != 1 || got[0].Upstream != "legacy" || got[0].Kind != KindOldestPending ||
		got[0].Message != "the oldest pending delivery to upstream legacy is 20m0s old (alert past 15m0s)" {
		t.Fatalf("alerts %+v", got)
	}
}

// TestReloadKeepsSuppression: a new configuration with the same target does
// not send again what the old one sent; withdrawing it restores the old.
func TestReloadKeepsSuppression(t *testing.T) {
	rule := Rule{Name: "ops", Format: FormatJSON, Dead: true, Repeat: time.Hour}
	m, rec, _ := newManager(t, rule)
	m.Dead("legacy", &store.Event{Source: "s"}, "")
	m.Activate("cfg2", []Rule{rule})
	m.Dead("legacy", &store.Event{Source: "s"}, "")
	m.Deactivate("cfg2")
	m.Deactivate("cfg")
	m.Dead("billing", &store.Event{Source: "s"}, "")
	if got := rec.alerts(t, m); len(got) != 1 {
		t.Fatalf("%d alerts, want 1: %+v", len(got), got)
	}
}

func TestBodies(t *testing.T) {
	a := deadAlert("legacy", "stripe", "0123", "status 500", time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)).stamp(StateFiring)
	if got := string(a.Body(FormatJSON)); got != `{"id":"39ab028220a001e1","alert":"dead","state":"firing","source":"stripe","upstream":"legacy","event_id":"0123",`+
		`"message":"delivery of event 0123 from source stripe to upstream legacy is dead: status 500","at":"2030-01-02T03:04:05Z"}` {
		t.Errorf("json: %s", got)
	}
	if got := string(breakerAlert("legacy", time.Time{}).Body(FormatSlack)); got !=
		`{"text":"Hookgate breaker open: the circuit breaker of upstream legacy opened: its deliveries wait until it recovers"}` {
		t.Errorf("slack: %s", got)
	}
}

// TestThroughTheEngine: a dead delivery raises one alert, stored and
// delivered by the engine to the target's URL as it is; when that delivery
// dies too, nothing more is raised.
func TestThroughTheEngine(t *testing.T) {
	var backend, target atomic.Int32
	var targetURI atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hooks/") {
			target.Add(1)
			targetURI.Store(r.RequestURI)
			w.WriteHeader(http.StatusForbidden) // final: the alert's delivery dies
			return
		}
		backend.Add(1)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "h.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := New(Options{Store: st})
	e := deliver.New(st, deliver.Options{OnDead: m.Dead, OnBreakerOpen: m.BreakerOpened})
	defer e.Stop()
	defer m.Stop()
	backendURL, _ := url.Parse(srv.URL)
	targetURL, _ := url.Parse(srv.URL + "/hooks/T0/secret-path")
	retry := deliver.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond}
	e.Activate("cfg", map[string]deliver.Upstream{
		"legacy":    {Name: "legacy", URL: backendURL, Timeout: time.Second, Concurrency: 1, Retry: retry},
		"alert:ops": {Name: "alert:ops", URL: targetURL, Timeout: time.Second, Concurrency: 1, Retry: retry, ExactURL: true},
	})
	m.Activate("cfg", []Rule{{Name: "ops", Format: FormatJSON, Dead: true, Repeat: time.Nanosecond}})
	res, err := st.Ingest(context.Background(), &store.NewEvent{
		Event:   &store.Event{Source: "stripe", ReceivedAt: time.Now(), Method: "POST", Path: "/webhooks/stripe", Header: http.Header{"Stripe-Signature": {"t=1,v1=abc"}}, Body: []byte(`{"card":"4242"}`)},
		Targets: []store.Target{{Upstream: "legacy"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for target.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // room for an alert about the alert
	if backend.Load() != 1 || target.Load() != 1 {
		t.Fatalf("backend got %d requests, alert target %d; want 1 and 1", backend.Load(), target.Load())
	}
	if uri := targetURI.Load(); uri != "/hooks/T0/secret-path" {
		t.Errorf("alert posted to %v", uri)
	}
	events, _, err := st.List(store.ListFilter{Source: Source})
	if err != nil || len(events) != 1 {
		t.Fatalf("alert events %+v, %v", events, err)
	}
	if d := events[0].Deliveries[0]; d.Upstream != "alert:ops" || d.State != store.StateDead || d.Route != "dead" {
		t.Errorf("alert delivery %+v", d)
	}
	rec, err := st.Event(events[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var a Alert
	if err := json.Unmarshal(rec.Event.Body, &a); err != nil || a.EventID != res.ID.String() || a.Source != "stripe" {
		t.Errorf("alert %s: %v", rec.Event.Body, err)
	}
	if body := string(rec.Event.Body); strings.Contains(body, "4242") || strings.Contains(body, "v1=abc") {
		t.Errorf("the alert carries the event's body or signature: %s", body)
	}
}

func TestMissedAlertForAProviderThatNeverRetries(t *testing.T) {
	m, rec, _ := newManager(t, Rule{Name: "ops", Repeat: time.Hour, Missed: map[string]string{"github": "redeliver from the hook's Recent Deliveries"}})
	m.Observe("github", "accepted", 0)
	m.Observe("stripe", Unavailable, 0) // stripe retries: not in Missed
	m.Observe("github", "rejected_signature", 0)
	if got := rec.alerts(t, m); len(got) != 0 {
		t.Fatalf("alerts without a 503 to github: %+v", got)
	}
	m.Observe("github", Unavailable, 0)
	m.Observe("github", Unavailable, 0) // within repeat
	got := rec.alerts(t, m)
	if len(got) != 1 {
		t.Fatalf("got %d alerts, want 1: %+v", len(got), got)
	}
	a := got[0]
	if a.Kind != KindMissed || a.Source != "github" || !strings.Contains(a.Message, "does not retry") || !strings.Contains(a.Message, "Recent Deliveries") {
		t.Fatalf("alert %+v", a)
	}
}

func TestReconcileFailedAlert(t *testing.T) {
	m, rec, _ := newManager(t, Rule{Name: "ops", Repeat: time.Hour, ReconcileFailed: true}, Rule{Name: "quiet", Repeat: time.Hour, Dead: true})
	m.ReconcileFailed("stripe", "provider answered 401")
	got := rec.alerts(t, m)
	if len(got) != 1 || got[0].Kind != KindReconcileFailed || got[0].Source != "stripe" || !strings.Contains(got[0].Message, "401") {
		t.Fatalf("alerts %+v", got)
	}
	if rec.got[0].Targets[0].Upstream != Upstream("ops") {
		t.Fatalf("sent to %s", rec.got[0].Targets[0].Upstream)
	}
}

// failingStore refuses the first writes, as a full disk does, then takes them.
type failingStore struct {
	recorder
	refuse atomic.Int32
}

func (f *failingStore) Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error) {
	if f.refuse.Add(-1) >= 0 {
		return store.IngestResult{}, store.ErrUnavailable
	}
	return f.recorder.Ingest(ctx, e)
}

func TestAnAlertTheStoreRefusedIsStoredOnceItIsBack(t *testing.T) {
	st := &failingStore{}
	st.refuse.Store(3)
	m := New(Options{Store: st, CheckEvery: time.Hour, RetryStore: 10 * time.Millisecond})
	t.Cleanup(m.Stop)
	m.Activate("cfg", []Rule{{Name: "ops", Repeat: time.Hour, Missed: map[string]string{"github": ""}}})
	m.Observe("github", Unavailable, 0)
	deadline := time.Now().Add(5 * time.Second)
	for st.refuse.Load() >= 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := st.alerts(t, m)
	if len(got) != 1 || got[0].Kind != KindMissed {
		t.Fatalf("after 3 refused writes, stored %+v", got)
	}
}

// TestStoreUnavailableIsSentDirectly: with the store refusing writes, the
// store_unavailable alert reaches its target anyway, sent directly and
// tried again until the target takes it; the same alert within repeat is
// not sent again; once the store is back the alert is recorded, with no
// delivery (it was sent).
func TestStoreUnavailableIsSentDirectly(t *testing.T) {
	var posts atomic.Int32
	var got atomic.Value
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusBadGateway)
			return
		}
		if r.Header.Get("Authorization") != "Bearer alert-token" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		var a Alert
		json.NewDecoder(r.Body).Decode(&a)
		got.Store(a)
	}))
	defer target.Close()
	st := &failingStore{}
	st.refuse.Store(1 << 20)
	m := New(Options{Store: st, CheckEvery: time.Hour, RetryStore: 10 * time.Millisecond, RetryDirect: 10 * time.Millisecond, StoreName: "/var/lib/hookgate/hookgate.db"})
	t.Cleanup(m.Stop)
	m.Activate("cfg", []Rule{{Name: "ops", Format: FormatJSON, Repeat: time.Hour, StoreUnavailable: true, URL: target.URL + "/hook", Headers: map[string]string{"Authorization": "Bearer alert-token"}}})
	m.Observe("github", "accepted", 0)
	m.Observe("github", Unavailable, 0)
	m.Observe("stripe", Unavailable, 0) // the same outage: held back by repeat
	deadline := time.Now().Add(5 * time.Second)
	for got.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	a, _ := got.Load().(Alert)
	if a.Kind != KindStoreUnavailable || !strings.Contains(a.Message, "/var/lib/hookgate/hookgate.db is unavailable") {
		t.Fatalf("after %d posts the target has %+v", posts.Load(), a)
	}
	if len(st.alerts(t, m)) != 0 {
		t.Fatal("an alert was stored while the store refused writes")
	}
	time.Sleep(50 * time.Millisecond)
	if n := posts.Load(); n != 3 {
		t.Fatalf("%d posts, want 3: two refused by the target, one taken, and none for the second source within repeat", n)
	}
	st.refuse.Store(0)
	for time.Now().Before(deadline) && len(st.alerts(t, m)) < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.got) == 0 || len(st.got[0].Targets) != 0 || !st.got[0].Event.Unrouted {
		t.Fatalf("recorded once the store is back: %+v", st.got)
	}
}

// TestResolved: a condition that fired sends a resolved message, with the
// same id, when it clears, and only then; a fact (a dead delivery) never
// resolves; a condition firing again after it resolved is sent at once,
// whatever repeat says.
func TestResolved(t *testing.T) {
	m, rec, c := newManager(t, Rule{Name: "ops", Repeat: time.Hour, BreakerOpen: true, Dead: true, ReconcileFailed: true})
	m.BreakerClosed("legacy") // never opened: nothing to resolve
	m.BreakerOpened("legacy")
	c.Add(time.Minute)
	m.BreakerClosed("legacy")
	m.BreakerClosed("legacy") // already resolved
	c.Add(time.Minute)
	m.BreakerOpened("legacy") // within repeat of the first, but after the resolve
	m.ReconcileFailed("stripe", "provider answered 401")
	m.Reconciled("stripe")
	got := rec.alerts(t, m)
	var states []string
	for _, a := range got {
		states = append(states, string(a.Kind)+" "+a.State)
	}
	want := []string{"breaker_open firing", "breaker_open resolved", "breaker_open firing", "reconcile_failed firing", "reconcile_failed resolved"}
	if strings.Join(states, ", ") != strings.Join(want, ", ") {
		t.Fatalf("alerts %v, want %v", states, want)
	}
	if got[0].ID == "" || got[0].ID != got[1].ID || got[0].ID == got[3].ID {
		t.Fatalf("ids %s %s %s: a condition's firing and resolved share one, other conditions differ", got[0].ID, got[1].ID, got[3].ID)
	}
	if !strings.Contains(got[1].Message, "closed") || !strings.Contains(string(got[1].Body(FormatSlack)), "Hookgate resolved, breaker open") {
		t.Fatalf("resolved message %q / %s", got[1].Message, got[1].Body(FormatSlack))
	}
}

// TestOldestPendingResolves: the backlog alert resolves when the upstream's
// oldest pending delivery is young again or gone.
func TestOldestPendingResolves(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0).UTC()}
	rec := &recorder{}
	var oldest atomic.Value
	oldest.Store(map[string]time.Time{"legacy": c.Now().Add(-time.Hour)})
	m := New(Options{Store: rec, Now: c.Now, CheckEvery: time.Hour, Oldest: func() (map[string]time.Time, error) { return oldest.Load().(map[string]time.Time), nil }})
	t.Cleanup(m.Stop)
	m.Activate("cfg", []Rule{{Name: "ops", Repeat: time.Hour, OldestPending: 15 * time.Minute}})
	m.CheckPending()
	m.CheckPending()
	oldest.Store(map[string]time.Time{})
	m.CheckPending()
	m.CheckPending()
	got := rec.alerts(t, m)
	if len(got) != 2 || got[0].State != StateFiring || got[1].State != StateResolved || got[1].Upstream != "legacy" {
		t.Fatalf("alerts %+v", got)
	}
}

// TestStoreAvailableResolves: once a source's event is stored again, the
// store_unavailable alert resolves (through the store, which takes
// writes again).
func TestStoreAvailableResolves(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer target.Close()
	m, rec, c := newManager(t, Rule{Name: "ops", Repeat: time.Hour, StoreUnavailable: true, URL: target.URL})
	m.Observe("github", "accepted", 0) // nothing open
	m.Observe("github", Unavailable, 0)
	c.Add(time.Second)
	m.Observe("github", "accepted", 0) // a small write that fit between refusals: not yet
	c.Add(time.Second)
	m.Observe("github", Unavailable, 0)
	c.Add(31 * time.Second)
	m.Observe("github", "accepted", 0) // 30 s without a refusal: resolved
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var resolved bool
		for _, a := range rec.alerts(t, m) {
			resolved = resolved || (a.Kind == KindStoreUnavailable && a.State == StateResolved)
		}
		if resolved {
			states := map[string]int{}
			for _, a := range rec.alerts(t, m) {
				states[a.State]++
			}
			// One firing (sent directly, then recorded) and one resolved:
			// the write that fit between refusals resolved nothing.
			if states[StateResolved] != 1 || states[StateFiring] > 1 {
				t.Fatalf("stored alerts by state %v", states)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no resolved store_unavailable alert: %+v", rec.alerts(t, m))
}

// TestServiceFormats: PagerDuty, Opsgenie and Teams get their services'
// payloads, and a resolved alert closes what its firing opened.
func TestServiceFormats(t *testing.T) {
	fired := breakerAlert("legacy", time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)).stamp(StateFiring)
	resolved := breakerClosedAlert("legacy", time.Date(2030, 1, 2, 3, 9, 5, 0, time.UTC)).stamp(StateResolved)
	decode := func(b []byte) map[string]any {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	pd := Rule{Format: FormatPagerDuty, RoutingKey: "R0UT1NG"}
	body, path, _ := fired.For(pd)
	trigger := decode(body)
	payload, _ := trigger["payload"].(map[string]any)
	if path != "" || trigger["event_action"] != "trigger" || trigger["routing_key"] != "R0UT1NG" || trigger["dedup_key"] != fired.ID ||
		payload["severity"] != "error" || payload["source"] != "hookgate" || payload["component"] != "legacy" || payload["timestamp"] != "2030-01-02T03:04:05.000Z" {
		t.Fatalf("pagerduty trigger %s", body)
	}
	body, _, _ = resolved.For(pd)
	if resolve := decode(body); resolve["event_action"] != "resolve" || resolve["dedup_key"] != fired.ID || resolve["payload"] != nil {
		t.Fatalf("pagerduty resolve %s", body)
	}
	og := Rule{Format: FormatOpsgenie}
	body, path, query := fired.For(og)
	if create := decode(body); path != "/v2/alerts" || query != "" || create["alias"] != fired.ID || create["priority"] != "P2" || len(create["message"].(string)) > 130 {
		t.Fatalf("opsgenie create %s %s", path, body)
	}
	if _, path, query = resolved.For(og); path != "/v2/alerts/"+fired.ID+"/close" || query != "identifierType=alias" {
		t.Fatalf("opsgenie close at %s?%s", path, query)
	}
	body, _, _ = resolved.For(Rule{Format: FormatTeams})
	card := decode(body)["attachments"].([]any)[0].(map[string]any)
	content := card["content"].(map[string]any)
	if card["contentType"] != "application/vnd.microsoft.card.adaptive" || content["type"] != "AdaptiveCard" ||
		!strings.Contains(string(body), "Hookgate resolved, breaker open") {
		t.Fatalf("teams %s", body)
	}
}

// TestStoreSize: past the share of max_size a store_size alert fires once
// and resolves when the store is back under; with no cap, nothing.
func TestStoreSize(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0).UTC()}
	rec := &recorder{}
	var used, limit atomic.Int64
	limit.Store(100 << 20)
	used.Store(50 << 20)
	m := New(Options{Store: rec, Now: c.Now, CheckEvery: time.Hour, StoreName: "/data/h.db", Size: func() (int64, int64, error) { return used.Load(), limit.Load(), nil }})
	t.Cleanup(m.Stop)
	m.Activate("cfg", []Rule{{Name: "ops", Repeat: time.Hour, StoreSize: 0.8}})
	m.CheckPending()
	used.Store(85 << 20)
	m.CheckPending()
	m.CheckPending()
	used.Store(60 << 20)
	m.CheckPending()
	limit.Store(0)
	used.Store(500 << 20)
	m.CheckPending()
	got := rec.alerts(t, m)
	if len(got) != 2 || got[0].Kind != KindStoreSize || got[0].State != StateFiring || !strings.Contains(got[0].Message, "85 MiB, 85% of its max_size of 100 MiB") || got[1].State != StateResolved {
		t.Fatalf("alerts %+v", got)
	}
}
