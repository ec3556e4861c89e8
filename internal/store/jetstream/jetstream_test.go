package jetstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/natstest"
	"github.com/hookgate/hookgate/internal/store"
)

// runServer starts a real single-node NATS server with JetStream on loopback.
func runServer(t testing.TB) *server.Server {
	t.Helper()
	c, err := natstest.Start(1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c.Nodes[0]
}

func open(t testing.TB, ns *server.Server, tweak ...func(*Options)) *Store {
	t.Helper()
	opts := Options{URL: ns.ClientURL(), Stream: "T", AckWaitMargin: time.Second}
	for _, f := range tweak {
		f(&opts)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newEvent(source, dedup string, body string, upstreams ...string) *store.NewEvent {
	e := &store.NewEvent{
		Event: &store.Event{Source: source, ReceivedAt: time.Now(), Method: "POST", Path: "/webhooks/" + source,
			Header: http.Header{"Content-Type": {"application/json"}}, DedupKey: dedup, Body: []byte(body)},
		DedupKey: dedup, DedupUntil: time.Now().Add(time.Hour),
	}
	if len(upstreams) == 0 {
		e.Event.Unrouted = true
	}
	for _, u := range upstreams {
		e.Targets = append(e.Targets, store.Target{Upstream: u})
	}
	return e
}

// due waits until the upstream's consumer hands out n tasks.
func due(t *testing.T, s *Store, upstream string, n int) []store.Task {
	t.Helper()
	var tasks []store.Task
	deadline := time.Now().Add(15 * time.Second)
	for len(tasks) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d tasks for %s", len(tasks), n, upstream)
		}
		claimed, err := s.Claim(context.Background(), upstream, time.Now(), n-len(tasks))
		if err != nil {
			t.Fatal(err)
		}
		got := claimed.Tasks
		tasks = append(tasks, got...)
		if len(got) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return tasks
}

// settings gives each upstream an attempt timeout of a second.
func settings(upstreams ...string) map[string]store.UpstreamSettings {
	out := map[string]store.UpstreamSettings{}
	for _, u := range upstreams {
		out[u] = store.UpstreamSettings{AttemptTimeout: time.Second}
	}
	return out
}

func noneDue(t *testing.T, s *Store, upstream string) {
	t.Helper()
	if got, err := s.Claim(context.Background(), upstream, time.Now(), 10); err != nil || len(got.Tasks) != 0 {
		t.Fatalf("unexpected work for %s: %d tasks, %v", upstream, len(got.Tasks), err)
	}
}

func TestIngestDispatchDeliverRecord(t *testing.T) {
	s := open(t, runServer(t))
	if err := s.Configure(settings("a", "b"), nil); err != nil {
		t.Fatal(err)
	}
	body := "{\"id\":\"evt_1\",\"bytes\":\"\x00\xff\"}"
	res, err := s.Ingest(context.Background(), newEvent("stripe", "evt_1", body, "a", "b"))
	if err != nil || res.Duplicate {
		t.Fatalf("ingest: %+v %v", res, err)
	}
	for _, u := range []string{"a", "b"} {
		task := due(t, s, u, 1)[0]
		if task.Event.ID != res.ID || string(task.Event.Body) != body || task.Delivery.Attempts != 0 || task.Delivery.Upstream != u {
			t.Fatalf("task for %s: %+v body %q", u, task.Delivery, task.Event.Body)
		}
		err := s.Settle(context.Background(), store.Outcome{Key: task.Delivery.Key, Next: store.StateDelivered,
			Attempt: store.Attempt{N: 1, At: time.Now(), Status: 200}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec, err := s.Event(res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Deliveries) != 2 || rec.Deliveries[0].State != store.StateDelivered || rec.Deliveries[1].State != store.StateDelivered ||
		len(rec.Attempts[0]) != 1 || rec.Attempts[1][0].Status != 200 || string(rec.Event.Body) != body {
		t.Fatalf("record: %+v attempts %+v", rec.Deliveries, rec.Attempts)
	}
	noneDue(t, s, "a")
	s.refreshPending()
	if s.Pending() != 0 {
		t.Fatalf("pending after delivery: %d", s.Pending())
	}
}

// TestDedupIsExactAcrossInstances sends 40 copies of one event at once,
// half through each of two stores on the same stream: one is stored, and
// every copy is answered with its id.
func TestDedupIsExactAcrossInstances(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	var mu sync.Mutex
	ids := map[store.ID]int{}
	stored := 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			res, err := s.Ingest(context.Background(), newEvent("github", "delivery-1", `{"n":1}`, "a"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[res.ID]++
			if !res.Duplicate {
				stored++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if stored != 1 || len(ids) != 1 {
		t.Fatalf("%d stored, ids %v", stored, ids)
	}
	// Another source with the same key is another event.
	if res, err := a.Ingest(context.Background(), newEvent("gitlab", "delivery-1", `{}`, "a")); err != nil || res.Duplicate {
		t.Fatalf("other source: %+v %v", res, err)
	}
}

// TestLeftBehindReservation covers an ingest that died between reserving
// its dedup key and storing its event: a copy arriving soon after is told
// to come back (503), one arriving after the grace period is stored.
func TestLeftBehindReservation(t *testing.T) {
	ns := runServer(t)
	s := open(t, ns)
	ctx := context.Background()
	ghost := new(store.IDSource).Next(time.Now())
	if _, err := s.dedup.Create(ctx, dedupBucketKey("github", "d-9"), ghost[:]); err != nil {
		t.Fatal(err)
	}
	_, err := s.Ingest(ctx, newEvent("github", "d-9", `{}`, "a"))
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("copy during the grace period: %v", err)
	}
	later := open(t, ns, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(reservationGrace + time.Second) } })
	res, err := later.Ingest(ctx, newEvent("github", "d-9", `{}`, "a"))
	if err != nil || res.Duplicate || res.ID == ghost {
		t.Fatalf("copy after the grace period: %+v %v", res, err)
	}
	if again, err := s.Ingest(ctx, newEvent("github", "d-9", `{}`, "a")); err != nil || !again.Duplicate || again.ID != res.ID {
		t.Fatalf("copy after the takeover: %+v %v", again, err)
	}
}

func TestRetryDeadReplay(t *testing.T) {
	s := open(t, runServer(t))
	ctx := context.Background()
	s.Configure(settings("a"), nil)
	res, _ := s.Ingest(ctx, newEvent("stripe", "", `{"x":1}`, "a"))
	task := due(t, s, "a", 1)[0]
	retryAt := time.Now().Add(300 * time.Millisecond)
	if err := s.Settle(ctx, store.Outcome{Key: task.Delivery.Key, Next: store.StatePending, RetryAt: retryAt,
		Attempt: store.Attempt{N: 1, At: time.Now(), Status: 503}}); err != nil {
		t.Fatal(err)
	}
	noneDue(t, s, "a") // the retry waits inside JetStream
	task = due(t, s, "a", 1)[0]
	if time.Now().Before(retryAt) || task.Delivery.Attempts != 1 {
		t.Fatalf("retry came back early or with %d attempts", task.Delivery.Attempts)
	}
	if err := s.Settle(ctx, store.Outcome{Key: task.Delivery.Key, Next: store.StateDead,
		Attempt: store.Attempt{N: 2, At: time.Now(), Status: 410, Error: "final status 410"}}); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Event(res.ID)
	if rec.Deliveries[0].State != store.StateDead || len(rec.Attempts[0]) != 2 {
		t.Fatalf("after dead: %+v", rec.Deliveries[0])
	}
	if info, _ := s.dead.Info(ctx); info.State.Msgs != 1 {
		t.Fatalf("%d dead letters", info.State.Msgs)
	}
	st, err := s.Stats()
	if err != nil || st.Dead != 1 || st.Upstreams["a"].Dead != 1 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	out, err := s.Replay(ctx, store.ReplayFilter{})
	if err != nil || out.Replayed != 1 || out.Upstreams[0] != "a" {
		t.Fatalf("replay: %+v %v", out, err)
	}
	task = due(t, s, "a", 1)[0]
	if task.Delivery.RetryBase != 2 || task.Delivery.Attempts != 2 {
		t.Fatalf("replayed delivery: %+v", task.Delivery)
	}
	if info, _ := s.dead.Info(ctx); info.State.Msgs != 0 {
		t.Fatalf("%d dead letters after the replay", info.State.Msgs)
	}
	s.Settle(ctx, store.Outcome{Key: task.Delivery.Key, Next: store.StateDelivered, Attempt: store.Attempt{N: 3, At: time.Now(), Status: 200}})
	rec, _ = s.Event(res.ID)
	if d := rec.Deliveries[0]; d.State != store.StateDelivered || d.ReplayedAt.IsZero() || len(rec.Attempts[0]) != 3 {
		t.Fatalf("after the replay: %+v", d)
	}
	// A delivered one is replayed by event.
	out, err = s.Replay(ctx, store.ReplayFilter{Event: &res.ID, States: []store.State{store.StateDelivered}})
	if err != nil || out.Replayed != 1 {
		t.Fatalf("replay by event: %+v %v", out, err)
	}
	due(t, s, "a", 1)
}

// TestCrashedInstanceWorkMovesOn: an instance takes a delivery and dies
// without settling it; after the AckWait another instance gets it, with
// the lost attempt counted.
func TestCrashedInstanceWorkMovesOn(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	a.Configure(settings("up"), nil)
	b.Configure(settings("up"), nil)
	if _, err := a.Ingest(context.Background(), newEvent("s", "", `{}`, "up")); err != nil {
		t.Fatal(err)
	}
	task := due(t, a, "up", 1)[0]
	a.nc.Close() // no Nak: as kill -9 would leave it
	moved := due(t, b, "up", 1)[0]
	if moved.Delivery.Key != task.Delivery.Key || moved.Delivery.Attempts != 1 {
		t.Fatalf("moved: %+v", moved.Delivery)
	}
}

func TestCancelAndReroute(t *testing.T) {
	s := open(t, runServer(t))
	ctx := context.Background()
	s.Configure(settings("a"), nil)
	res, _ := s.Ingest(ctx, newEvent("s", "", `{}`, "a"))
	waitFor(t, func() bool {
		queued, _ := s.known(ctx, "a", store.DeliveryKey{Event: res.ID})
		return queued
	})
	if n, err := s.Cancel(ctx, res.ID); err != nil || n != 1 {
		t.Fatalf("cancel: %d %v", n, err)
	}
	noneDue(t, s, "a")
	if rec, _ := s.Event(res.ID); rec.Deliveries[0].State != store.StateCanceled {
		t.Fatalf("state after cancel: %s", rec.Deliveries[0].State)
	}
	// An unrouted event gets a delivery later.
	un, _ := s.Ingest(ctx, newEvent("s", "", `{"late":true}`))
	if rec, _ := s.Event(un.ID); store.Status(rec.Event, rec.Deliveries) != store.StateUnrouted {
		t.Fatal("not unrouted")
	}
	if err := s.AddDeliveries(ctx, un.ID, []store.Target{{Upstream: "a"}}); err != nil {
		t.Fatal(err)
	}
	task := due(t, s, "a", 1)[0]
	if task.Event.ID != un.ID || string(task.Event.Body) != `{"late":true}` || task.Event.Unrouted {
		t.Fatalf("rerouted task: %+v", task.Event)
	}
}

func TestListStatsTimelineSecrets(t *testing.T) {
	s := open(t, runServer(t))
	ctx := context.Background()
	s.Configure(settings("a"), nil)
	var ids []store.ID
	for i := range 5 {
		e := newEvent("stripe", fmt.Sprint("evt_", i), `{}`, "a")
		if i == 4 {
			e = newEvent("github", "", `{}`)
		}
		res, err := s.Ingest(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	task := due(t, s, "a", 1)[0]
	s.Settle(ctx, store.Outcome{Key: task.Delivery.Key, Next: store.StateDelivered, Attempt: store.Attempt{N: 1, At: time.Now(), Status: 204}})
	page, next, err := s.List(store.ListFilter{Limit: 3})
	if err != nil || len(page) != 3 || next == nil || page[0].ID != ids[4] || page[0].Status != store.StateUnrouted {
		t.Fatalf("first page: %+v next %v err %v", page, next, err)
	}
	rest, next2, err := s.List(store.ListFilter{Limit: 3, Before: next})
	if err != nil || len(rest) != 2 || next2 != nil || rest[1].ID != ids[0] {
		t.Fatalf("second page: %+v %v %v", rest, next2, err)
	}
	if only, _, _ := s.List(store.ListFilter{Source: "stripe", Status: store.StateDelivered}); len(only) != 1 || only[0].ID != task.Event.ID {
		t.Fatalf("filtered: %+v", only)
	}
	st, err := s.Stats()
	if err != nil || st.Events != 5 || st.Unrouted != 1 || st.Delivered != 1 || st.Pending != 3 || st.Upstreams["a"].Pending != 3 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	// Each source's bytes are its event messages' payloads (record and body).
	if len(st.Sources) != 2 || st.Sources["stripe"].Events != 4 || st.Sources["github"].Events != 1 ||
		st.Sources["github"].Bytes < 10 || st.Sources["stripe"].Bytes < 4*st.Sources["github"].Bytes*3/4 {
		t.Fatalf("sources: %+v", st.Sources)
	}
	if _, ok := s.OldestPending(); !ok {
		t.Fatal("no oldest pending")
	}
	points, _, err := s.Timeline(time.Now().Add(-2 * time.Minute))
	received, delivered := 0, 0
	for _, p := range points {
		received += p.Received
		delivered += p.Delivered
	}
	if err != nil || received != 5 || delivered != 1 {
		t.Fatalf("timeline: %d received %d delivered %v", received, delivered, err)
	}
}

func TestImportKeepsHistoryAndQueuesPending(t *testing.T) {
	s := open(t, runServer(t))
	ctx := context.Background()
	s.Configure(settings("a"), nil)
	id := new(store.IDSource).Next(time.Now())
	rec := &store.EventRecord{
		Event: &store.Event{ID: id, Source: "stripe", ReceivedAt: time.Now(), Method: "POST", Path: "/w", Body: []byte(`{"old":1}`)},
		Deliveries: []store.Delivery{
			{Key: store.DeliveryKey{Event: id, Index: 0}, Upstream: "a", State: store.StateDelivered, Attempts: 1},
			{Key: store.DeliveryKey{Event: id, Index: 1}, Upstream: "a", State: store.StatePending, Attempts: 3},
		},
		Attempts: map[uint16][]store.Attempt{0: {{N: 1, Status: 200}}, 1: {{N: 1, Status: 500}, {N: 2, Status: 500}, {N: 3, Status: 502}}},
	}
	for range 2 { // a second run changes nothing
		if _, err := s.Import(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	tasks := due(t, s, "a", 1)
	time.Sleep(300 * time.Millisecond)
	noneDue(t, s, "a")
	if tasks[0].Delivery.Key.Index != 1 || tasks[0].Delivery.Attempts != 3 || string(tasks[0].Event.Body) != `{"old":1}` {
		t.Fatalf("imported task: %+v", tasks[0].Delivery)
	}
	got, _ := s.Event(id)
	if got.Deliveries[0].State != store.StateDelivered || len(got.Attempts[1]) != 3 {
		t.Fatalf("imported record: %+v", got.Deliveries)
	}
}

// TestEngineDeliversThroughJetStream runs the delivery engine on the
// JetStream store against a real upstream: retried once, delivered once.
func TestEngineDeliversThroughJetStream(t *testing.T) {
	s := open(t, runServer(t))
	var mu sync.Mutex
	var got [][]byte
	calls := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(503)
			return
		}
		got = append(got, b)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	e := deliver.New(s, deliver.Options{})
	defer e.Stop()
	e.Activate(t, map[string]deliver.Upstream{"up": {Name: "up", URL: u, Timeout: 5 * time.Second, Concurrency: 4,
		Retry: deliver.RetryPolicy{MaxAttempts: 5, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second}}})
	res, err := s.Ingest(context.Background(), newEvent("s", "", `{"engine":true}`, "up"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		rec, _ := s.Event(res.ID)
		return rec != nil && len(rec.Deliveries) == 1 && rec.Deliveries[0].State == store.StateDelivered
	})
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 || len(got) != 1 || !bytes.Equal(got[0], []byte(`{"engine":true}`)) {
		t.Fatalf("%d calls, bodies %q", calls, got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSingleUseTokenAcrossInstances: a token is accepted once, whichever
// instance sees it, and a duplicate of the first event is still a duplicate.
func TestSingleUseTokenAcrossInstances(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	ctx := context.Background()
	withToken := func(dedup string) *store.NewEvent {
		e := newEvent("mailgun", dedup, `{}`, "up")
		e.ReplayKey, e.ReplayUntil = "tok-1", time.Now().Add(10*time.Minute)
		return e
	}
	first, err := a.Ingest(ctx, withToken("ev-1"))
	if err != nil || first.Duplicate || first.Replayed {
		t.Fatalf("first: %+v %v", first, err)
	}
	if dup, err := b.Ingest(ctx, withToken("ev-1")); err != nil || !dup.Duplicate || dup.ID != first.ID {
		t.Fatalf("the same event again: %+v %v", dup, err)
	}
	if replay, err := b.Ingest(ctx, withToken("ev-forged")); err != nil || !replay.Replayed {
		t.Fatalf("the token on another event: %+v %v", replay, err)
	}
	// The forged copy's dedup key was released: its real event can come.
	if res, err := a.Ingest(ctx, newEvent("mailgun", "ev-forged", `{}`, "up")); err != nil || res.Duplicate {
		t.Fatalf("dedup key left behind by the refused copy: %+v %v", res, err)
	}
}
