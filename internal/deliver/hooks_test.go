package deliver

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestOnDeadAndOnBreakerOpen: the engine tells of a dead delivery once,
// after recording it, and of a breaker opening from closed, not of the
// failed probes that keep it open.
func TestOnDeadAndOnBreakerOpen(t *testing.T) {
	down := newUpstream(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	s := openStore(t, "")
	var mu sync.Mutex
	var dead []string
	opened := 0
	e := New(s, Options{
		OnDead: func(upstream string, ev *store.Event, reason string) {
			mu.Lock()
			defer mu.Unlock()
			if deliveryState(t, s, ev.ID, 0).State != store.StateDead {
				t.Error("told of a dead delivery before it was recorded")
			}
			dead = append(dead, upstream+" "+ev.ID.String()+" "+reason)
		},
		OnBreakerOpen: func(upstream string) {
			mu.Lock()
			opened++
			mu.Unlock()
		},
	})
	defer e.Stop()
	cfg := down.config("down", 2)
	cfg.Concurrency = 1
	cfg.Breaker = BreakerPolicy{FailureRatio: 0.5, Window: time.Minute, MinRequests: 2, Cooldown: 10 * time.Millisecond}
	id := ingest(t, s, "x", "down")
	e.Activate("cfg", map[string]Upstream{"down": cfg})
	eventually(t, "dead", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(dead) == 1
	})
	want := "down " + id.String() + " status 502; gave up after 2 attempts"
	ingest(t, s, "y", "down") // failed probes keep the breaker open
	eventually(t, "a probe", func() bool { return len(down.requests()) >= 3 })
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if dead[0] != want {
		t.Errorf("OnDead got %q, want %q", dead[0], want)
	}
	if opened != 1 {
		t.Errorf("OnBreakerOpen called %d times, want 1", opened)
	}
}

// TestExactURL: an alert target's URL is used as it is, without the
// event's path and query.
func TestExactURL(t *testing.T) {
	up := newUpstream(t, nil)
	s := openStore(t, "")
	e := New(s, Options{})
	defer e.Stop()
	cfg := up.config("exact", 1)
	cfg.URL, _ = url.Parse(up.srv.URL + "/services/T0/B0/tok?k=v")
	cfg.ExactURL = true
	ingest(t, s, "x", "exact")
	e.Activate("cfg", map[string]Upstream{"exact": cfg})
	eventually(t, "delivery", func() bool { return len(up.requests()) == 1 })
	if got := up.requests()[0].uri; got != "/services/T0/B0/tok?k=v" {
		t.Errorf("request URI %q", got)
	}
}
