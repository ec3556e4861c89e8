package deliver

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// claimCounter counts the claims a store is asked for, by upstream.
type claimCounter struct {
	store.Queue
	mu     sync.Mutex
	claims map[string]int
}

func (c *claimCounter) Claim(ctx context.Context, upstream string, now time.Time, limit int) (store.Claimed, error) {
	c.mu.Lock()
	c.claims[upstream]++
	c.mu.Unlock()
	return c.Queue.Claim(ctx, upstream, now, limit)
}

func (c *claimCounter) count(upstream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims[upstream]
}

// TestPausedUpstreamIsNotClaimed pauses one of two upstreams: its lane asks
// the store for nothing and its deliveries keep their attempts, while the
// other upstream is served; a resume delivers them at once, long before the
// lane's idle poll would have looked.
func TestPausedUpstreamIsNotClaimed(t *testing.T) {
	paused := newUpstream(t, nil)
	running := newUpstream(t, nil)
	s := openStore(t, "")
	q := &claimCounter{Queue: s, claims: map[string]int{}}
	e := New(q, Options{})
	defer e.Stop()
	if _, err := e.SetPaused(context.Background(), "paused", true); err != nil {
		t.Fatal(err)
	}
	e.Activate("cfg", map[string]Upstream{"paused": paused.config("paused", 3), "running": running.config("running", 3)})
	var ids []store.ID
	for range 3 {
		ids = append(ids, ingest(t, s, `{}`, "paused", "running"))
	}
	eventually(t, "the running upstream served", func() bool { return len(running.requests()) == 3 })
	time.Sleep(100 * time.Millisecond) // time for a wrong claim to happen
	if n := q.count("paused"); n != 0 {
		t.Fatalf("a paused upstream was claimed %d times", n)
	}
	if n := len(paused.requests()); n != 0 {
		t.Fatalf("a paused upstream received %d requests", n)
	}
	for _, id := range ids {
		if d := deliveryState(t, s, id, 0); d.State != store.StatePending || d.Attempts != 0 {
			t.Fatalf("a paused delivery changed: %+v", d)
		}
	}
	start := time.Now()
	if _, err := e.SetPaused(context.Background(), "paused", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delivered after the resume", func() bool { return len(paused.requests()) == 3 })
	if took := time.Since(start); took > idlePoll/2 {
		t.Fatalf("resume took %s: the lane was not woken", took)
	}
}

// TestResumeNotifiesTheLane resumes through the store alone (as another
// instance's resume reaches this one): the store's notify wakes the lane.
func TestResumeNotifiesTheLane(t *testing.T) {
	up := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	if _, err := s.SetPaused(context.Background(), "legacy", true); err != nil {
		t.Fatal(err)
	}
	e.Activate("cfg", map[string]Upstream{"legacy": up.config("legacy", 3)})
	ingest(t, s, `{}`, "legacy")
	time.Sleep(100 * time.Millisecond)
	if len(up.requests()) != 0 {
		t.Fatal("delivered while paused")
	}
	// Let the lane settle into its idle sleep before the resume.
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if _, err := s.SetPaused(context.Background(), "legacy", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delivered after the resume", func() bool { return len(up.requests()) == 1 })
	if took := time.Since(start); took > idlePoll/2 {
		t.Fatalf("resume took %s: the lane was not woken", took)
	}
}

// TestPauseDoesNotCountTowardsMaxAge pauses an upstream for longer than its
// max_age: after the resume a failing attempt is retried, not dead, because
// max_age counts from the resume.
func TestPauseDoesNotCountTowardsMaxAge(t *testing.T) {
	down := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := clockStore(t, clock)
	e := New(s, Options{Now: clock.Now, Jitter: func() float64 { return 0 }})
	defer e.Stop()
	cfg := down.config("aged", 50)
	cfg.Retry.InitialInterval, cfg.Retry.MaxInterval, cfg.Retry.MaxAge = time.Minute, time.Minute, 90*time.Minute
	if _, err := e.SetPaused(context.Background(), "aged", true); err != nil {
		t.Fatal(err)
	}
	id := ingestAt(t, s, clock.Now(), "aged")
	e.Activate("cfg", map[string]Upstream{"aged": cfg})
	clock.Set(clock.Now().Add(3 * time.Hour)) // paused twice as long as max_age
	e.Notify("aged")
	time.Sleep(50 * time.Millisecond)
	if d := deliveryState(t, s, id, 0); d.Attempts != 0 || d.State != store.StatePending {
		t.Fatalf("changed while paused: %+v", d)
	}
	if _, err := e.SetPaused(context.Background(), "aged", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "attempted after the resume", func() bool { return deliveryState(t, s, id, 0).Attempts == 1 })
	if d := deliveryState(t, s, id, 0); d.State != store.StatePending {
		t.Fatalf("after a pause longer than max_age the first failure made it %s (%s), want a retry", d.State, d.LastError)
	}
}
