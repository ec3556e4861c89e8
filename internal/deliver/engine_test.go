package deliver

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// TestBackoffScheduleWithClock drives an always-failing upstream with a
// swappable clock: each retry is due exactly when the policy says.
func TestBackoffScheduleWithClock(t *testing.T) {
	var hits atomic.Int32
	up := newUpstream(t, func(n int, w http.ResponseWriter) {
		hits.Add(1)
		if n == 3 {
			w.Header().Set("Retry-After", "100")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	})
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s, err := bolt.Open(t.TempDir()+"/h.db", bolt.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := New(s, Options{Now: clock.Now, Jitter: func() float64 { return 1 }})
	defer e.Stop()
	cfg := up.config("legacy", 6)
	cfg.Retry = RetryPolicy{MaxAttempts: 6, InitialInterval: 10 * time.Second, MaxInterval: 120 * time.Second}
	id := ingest(t, s, "x", "legacy")
	e.Activate("cfg", map[string]Upstream{"legacy": cfg})
	// attempt n fails at T; the next is due at T + min(120s, 10s·2^(n-1)),
	// except after the 429, whose Retry-After (100s) is longer than 40s.
	want := []time.Duration{10 * time.Second, 20 * time.Second, 100 * time.Second, 80 * time.Second, 120 * time.Second}
	for i, gap := range want {
		n := int32(i + 1)
		eventually(t, fmt.Sprintf("attempt %d", n), func() bool { return deliveryState(t, s, id, 0).Attempts == int(n) })
		d := deliveryState(t, s, id, 0)
		if got := d.NextAt.Sub(clock.Now()); got != gap {
			t.Fatalf("after attempt %d the retry is due in %s, want %s", n, got, gap)
		}
		time.Sleep(20 * time.Millisecond)
		if hits.Load() != n {
			t.Fatalf("retried before its time: %d requests after attempt %d", hits.Load(), n)
		}
		clock.Set(d.NextAt)
		e.Notify("legacy")
	}
	eventually(t, "dead after 6 attempts", func() bool { return deliveryState(t, s, id, 0).State == store.StateDead })
	if d := deliveryState(t, s, id, 0); d.Attempts != 6 || !strings.Contains(d.LastError, "gave up after 6 attempts") {
		t.Fatalf("final: %+v", d)
	}
}

func TestMaxAgeAndRetryOn(t *testing.T) {
	up := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusConflict) })
	down := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s, _ := bolt.Open(t.TempDir()+"/h.db", bolt.Options{Now: clock.Now})
	defer s.Close()
	e := New(s, Options{Now: clock.Now, Jitter: func() float64 { return 0 }})
	defer e.Stop()
	conflict := up.config("conflict", 5)
	conflict.Retry.RetryOn, _ = ParseRetryOn([]string{"409"})
	aged := down.config("aged", 50)
	aged.Retry.InitialInterval, aged.Retry.MaxInterval, aged.Retry.MaxAge = time.Hour, time.Hour, 90*time.Minute
	ne := &store.NewEvent{Event: &store.Event{Source: "s", ReceivedAt: clock.Now(), Method: "POST", Path: "/x", Header: http.Header{}, Body: []byte("x")},
		Targets: []store.Target{{Upstream: "conflict"}, {Upstream: "aged"}}}
	res, err := s.Ingest(context.Background(), ne)
	if err != nil {
		t.Fatal(err)
	}
	id := res.ID
	e.Activate("cfg", map[string]Upstream{"conflict": conflict, "aged": aged})
	eventually(t, "409 retried", func() bool {
		if d := deliveryState(t, s, id, 0); d.State == store.StatePending && d.NextAt.After(clock.Now()) && d.NextAt.Sub(clock.Now()) < time.Minute {
			clock.Set(d.NextAt) // the 409 lane's short retry comes due
			e.Notify("conflict")
		}
		return deliveryState(t, s, id, 0).Attempts >= 2
	})
	eventually(t, "aged attempt 1", func() bool { return deliveryState(t, s, id, 1).Attempts == 1 })
	d := deliveryState(t, s, id, 1)
	if d.State != store.StatePending {
		t.Fatalf("first retry within max_age not scheduled: %+v", d)
	}
	clock.Set(d.NextAt) // one hour later: the next retry would land past 90 minutes
	e.Notify("aged")
	eventually(t, "max_age", func() bool { return deliveryState(t, s, id, 1).State == store.StateDead })
	if d := deliveryState(t, s, id, 1); !strings.Contains(d.LastError, "max_age") {
		t.Fatalf("dead for %q, want max_age", d.LastError)
	}
}

// TestBreakerIsolatesADeadUpstream: a failing upstream trips its breaker and
// stops being hammered, while a healthy one keeps delivering.
func TestBreakerIsolatesADeadUpstream(t *testing.T) {
	dead := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	healthy := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	deadCfg := dead.config("dead", 1000)
	deadCfg.Retry.InitialInterval, deadCfg.Retry.MaxInterval = time.Millisecond, 5*time.Millisecond
	deadCfg.Breaker = BreakerPolicy{FailureRatio: 0.5, Window: time.Minute, MinRequests: 5, Cooldown: time.Hour}
	e.Activate("cfg", map[string]Upstream{"dead": deadCfg, "healthy": healthy.config("healthy", 3)})
	var healthyIDs []store.ID
	for i := range 40 {
		ingest(t, s, fmt.Sprint(i), "dead")
		healthyIDs = append(healthyIDs, ingest(t, s, fmt.Sprint(i), "healthy"))
	}
	e.Notify("dead")
	e.Notify("healthy")
	eventually(t, "breaker open", func() bool { return e.BreakerState("dead") == BreakerOpen })
	eventually(t, "healthy deliveries", func() bool { return len(healthy.requests()) == 40 })
	seen := len(dead.requests())
	time.Sleep(100 * time.Millisecond)
	if now := len(dead.requests()); now != seen || now > deadCfg.Concurrency+deadCfg.Breaker.MinRequests {
		t.Fatalf("dead upstream got %d then %d requests with its breaker open", seen, now)
	}
	// The upstream has every request; each outcome is recorded just after
	// its answer, so the states are waited for, not read at once.
	eventually(t, "every healthy delivery recorded as delivered", func() bool {
		for _, id := range healthyIDs {
			if deliveryState(t, s, id, 0).State != store.StateDelivered {
				return false
			}
		}
		return true
	})
}

func TestBreakerProbesAndCloses(t *testing.T) {
	b := newBreaker(BreakerPolicy{FailureRatio: 0.5, Window: time.Minute, MinRequests: 4, Cooldown: 10 * time.Second})
	now := time.Unix(1700000000, 0)
	for range 4 {
		b.record(now, false)
	}
	if b.State() != BreakerOpen {
		t.Fatal("not open after 4/4 failures")
	}
	if n, wait := b.allow(now.Add(5*time.Second), 8); n != 0 || wait != 5*time.Second {
		t.Fatalf("open: allow %d wait %s", n, wait)
	}
	if n, _ := b.allow(now.Add(11*time.Second), 8); n != 1 {
		t.Fatalf("half-open allowed %d probes, want 1", n)
	}
	if n, _ := b.allow(now.Add(11*time.Second), 8); n != 0 {
		t.Fatalf("a second probe allowed while one is out")
	}
	b.record(now.Add(12*time.Second), false)
	if b.State() != BreakerOpen {
		t.Fatal("a failed probe did not reopen")
	}
	b.allow(now.Add(30*time.Second), 8)
	b.record(now.Add(31*time.Second), true)
	if b.State() != BreakerClosed {
		t.Fatal("a good probe did not close")
	}
	if n, _ := b.allow(now.Add(31*time.Second), 8); n != 8 {
		t.Fatalf("closed allows %d", n)
	}
}

// TestOrderedDeliveryUnderConcurrency: deliveries sharing a key go one at a
// time in arrival order, even with failures; other keys stay parallel.
func TestOrderedDeliveryUnderConcurrency(t *testing.T) {
	var mu sync.Mutex
	inflight := map[string]int{}
	order := map[string][]string{}
	violations := 0
	srv := newUpstream(t, nil)
	srv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Key")
		seq := r.Header.Get("X-Seq")
		mu.Lock()
		inflight[key]++
		if inflight[key] > 1 {
			violations++
		}
		mu.Unlock()
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		fail := rand.IntN(4) == 0
		mu.Lock()
		inflight[key]--
		if !fail {
			order[key] = append(order[key], seq)
		}
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	cfg := srv.config("ordered", 100)
	cfg.Concurrency = 8
	cfg.Retry.InitialInterval, cfg.Retry.MaxInterval = time.Millisecond, 2*time.Millisecond
	keys := []string{"cus_A", "cus_B", "cus_C", "cus_D"}
	const perKey = 15
	for i := range perKey {
		for _, k := range keys {
			ne := &store.NewEvent{Event: &store.Event{Source: "stripe", ReceivedAt: time.Now(), Method: "POST", Path: "/x",
				Header: http.Header{"X-Key": {k}, "X-Seq": {fmt.Sprintf("%02d", i)}}, Body: []byte("x")},
				Targets: []store.Target{{Upstream: "ordered", OrderKey: k}}}
			if _, err := s.Ingest(context.Background(), ne); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Activate("cfg", map[string]Upstream{"ordered": cfg})
	eventually(t, "all delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, k := range keys {
			total += len(order[k])
		}
		return total == perKey*len(keys)
	})
	mu.Lock()
	defer mu.Unlock()
	if violations > 0 {
		t.Fatalf("%d times two deliveries of one key were in flight together", violations)
	}
	for _, k := range keys {
		for i, seq := range order[k] {
			if seq != fmt.Sprintf("%02d", i) {
				t.Fatalf("key %s delivered out of order: %v", k, order[k])
			}
		}
	}
	if p := srv.peak.Load(); p < 2 {
		t.Logf("peak concurrency %d (different keys may overlap)", p)
	}
}

func TestReplayDeadDeliveries(t *testing.T) {
	var healthy atomic.Bool
	up := newUpstream(t, func(_ int, w http.ResponseWriter) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 2)})
	var ids []store.ID
	for range 3 {
		ids = append(ids, ingest(t, s, "x", "legacy"))
	}
	e.Notify("legacy")
	for _, id := range ids {
		eventually(t, "dead", func() bool { return deliveryState(t, s, id, 0).State == store.StateDead })
	}
	healthy.Store(true)
	res, err := e.Replay(context.Background(), store.ReplayFilter{Upstream: "legacy"})
	if err != nil || res.Replayed != 3 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	for _, id := range ids {
		eventually(t, "delivered after replay", func() bool { return deliveryState(t, s, id, 0).State == store.StateDelivered })
		if d := deliveryState(t, s, id, 0); d.Attempts != 3 || d.RetryBase != 2 {
			t.Fatalf("after replay: %+v", d)
		}
	}
}

func TestRetentionSweepThroughEngine(t *testing.T) {
	up := newUpstream(t, nil)
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s, _ := bolt.Open(t.TempDir()+"/h.db", bolt.Options{Now: clock.Now})
	defer s.Close()
	e := New(s, Options{Now: clock.Now, Sweeper: s})
	defer e.Stop()
	e.SetRetention(24 * time.Hour)
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	ne := &store.NewEvent{Event: &store.Event{Source: "s", ReceivedAt: clock.Now(), Method: "POST", Path: "/x", Header: http.Header{}, Body: []byte("x")},
		Targets: []store.Target{{Upstream: "legacy"}}}
	res, _ := s.Ingest(context.Background(), ne)
	e.Notify("legacy")
	eventually(t, "delivered", func() bool { return deliveryState(t, s, res.ID, 0).State == store.StateDelivered })
	if n := e.SweepNow(); n != 0 {
		t.Fatalf("swept %d fresh events", n)
	}
	clock.Set(time.UnixMilli(res.ID.Time().UnixMilli()).Add(25 * time.Hour))
	if n := e.SweepNow(); n != 1 {
		t.Fatalf("swept %d, want the one old event", n)
	}
}

// TestStopHandsBackInFlightWork: an attempt still running when the grace
// period ends is canceled and left pending, unrecorded, for the next start.
func TestStopHandsBackInFlightWork(t *testing.T) {
	up := newUpstream(t, nil)
	up.hold = make(chan struct{})
	defer close(up.hold)
	s := openStore(t, "")
	e := New(s, Options{StopGrace: 100 * time.Millisecond})
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	id := ingest(t, s, "x", "legacy")
	e.Notify("legacy")
	eventually(t, "attempt in flight", func() bool { return up.inflight.Load() == 1 })
	stopped := make(chan struct{})
	go func() { e.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return after its grace period")
	}
	d := deliveryState(t, s, id, 0)
	if d.State != store.StatePending || d.Attempts != 0 {
		t.Fatalf("after stop: %+v, want pending with no attempt recorded", d)
	}
	rec, _ := s.Event(id)
	if len(rec.Attempts[0]) != 0 {
		t.Fatalf("a canceled attempt was recorded: %+v", rec.Attempts[0])
	}
	if claimed, err := s.Claim(context.Background(), "legacy", time.Now(), 10); err != nil || len(claimed.Tasks) != 1 {
		t.Fatalf("after stop the delivery is still leased: %d claimed, %v", len(claimed.Tasks), err)
	}
}

// TestRateLimit: at 1 attempt/s with a burst of 2, only the burst goes out
// at once even though the concurrency would allow ten.
func TestRateLimit(t *testing.T) {
	up := newUpstream(t, nil)
	up.hold = make(chan struct{})
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	cfg := up.config("limited", 3)
	cfg.Concurrency, cfg.Rate, cfg.Burst = 10, 1, 2
	for range 6 {
		ingest(t, s, "x", "limited")
	}
	e.Activate("cfg", map[string]Upstream{"limited": cfg})
	eventually(t, "the burst", func() bool { return up.inflight.Load() == 2 })
	time.Sleep(200 * time.Millisecond) // the next token is a second away
	if n := up.inflight.Load(); n != 2 {
		t.Fatalf("%d attempts in flight with a burst of 2 at 1/s", n)
	}
	close(up.hold)
}

// TestUnreadableEventIsRetriedAlone: an event whose stored body was
// damaged on disk is attempted without a request, retried (whatever
// retry_on says) and dead after max_attempts, without opening the breaker;
// the deliveries queued behind it are delivered meanwhile.
func TestUnreadableEventIsRetriedAlone(t *testing.T) {
	var mu sync.Mutex
	up := newUpstream(t, nil)
	path := filepath.Join(t.TempDir(), "hookgate.db")
	s := openStore(t, path)
	damaged := ingest(t, s, "damaged body", "legacy")
	for n := range 5 {
		ingest(t, s, fmt.Sprintf("good body %d", n), "legacy")
	}
	// A read waits for the events to be applied: their bodies are then in
	// the body log.
	if _, err := s.Event(damaged); err != nil {
		t.Fatal(err)
	}
	damageBody(t, path, "damaged body")
	var outcomes []string
	var dead []string
	e := New(s, Options{
		OnAttempt: func(_, outcome string, _ time.Duration) { mu.Lock(); outcomes = append(outcomes, outcome); mu.Unlock() },
		OnDead: func(_ string, ev *store.Event, reason string) {
			mu.Lock()
			dead = append(dead, ev.ID.String()+": "+reason)
			mu.Unlock()
		},
	})
	defer e.Stop()
	cfg := up.config("legacy", 3)
	cfg.Retry.RetryOn = RetryOn{Class5xx: true} // no network errors: the damaged event is retried all the same
	cfg.Breaker = BreakerPolicy{FailureRatio: 0.3, MinRequests: 2, Window: time.Minute, Cooldown: time.Hour}
	e.Activate("cfg", map[string]Upstream{"legacy": cfg})
	eventually(t, "the damaged event dead and the others delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(dead) == 1 && len(up.requests()) >= 5
	})
	mu.Lock()
	defer mu.Unlock()
	received := map[string]int{}
	for _, r := range up.requests() {
		received[string(r.body)]++
	}
	for n := range 5 {
		if received[fmt.Sprintf("good body %d", n)] != 1 {
			t.Fatalf("good body %d received %d times", n, received[fmt.Sprintf("good body %d", n)])
		}
	}
	if len(received) != 5 {
		t.Fatalf("the upstream received %v", received)
	}
	if !strings.HasPrefix(dead[0], damaged.String()+": reading the stored event: ") || !strings.Contains(dead[0], "fails its checksum") ||
		!strings.Contains(dead[0], "gave up after 3 attempts") {
		t.Fatalf("dead: %s", dead[0])
	}
	retries := 0
	for _, o := range outcomes {
		if o == "retry" {
			retries++
		}
	}
	if retries != 2 {
		t.Fatalf("outcomes %v, want 2 retries of the damaged event", outcomes)
	}
	if st := e.BreakerState("legacy"); st != BreakerClosed {
		t.Fatalf("the breaker is %s: the upstream was never asked about the damaged event", st)
	}
}

// damageBody overwrites a byte of body inside the store's body log, as a
// disk that rotted would.
func damageBody(t *testing.T, storePath, body string) {
	t.Helper()
	names, err := filepath.Glob(storePath + ".bodies/*.seg")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, []byte(body)); i >= 0 {
			// One byte, in place: the store may be appending to the file.
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{data[i] ^ 0xff}, int64(i)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%q is in no segment", body)
}
