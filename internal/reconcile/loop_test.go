package reconcile

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store/bolt"
)

// TestLoopResumesFromItsCursor: a run stores what is missing and moves the
// cursor in the store; a later run, on a store opened again, lists only
// from there; a run whose store failed leaves the cursor, so its events
// are listed again.
func TestLoopResumesFromItsCursor(t *testing.T) {
	first := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	srv, _ := stripeServer(t, "rk", 120, first)
	path := filepath.Join(t.TempDir(), "h.db")
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := NewStripe(srv.Client(), srv.URL, "rk")
	sched := Schedule{Source: "stripe", Scope: "stripe /hooks/stripe", Client: s, Requests: func() int { return s.Requests }, Every: time.Hour, Lookback: 72 * time.Hour, Window: 30 * 24 * time.Hour}
	sink := &memorySink{have: map[string]bool{}, fail: map[string]bool{"evt_0050": true}}
	loop := NewLoop(sched, sink, st, nil)
	rep, err := loop.RunNow(context.Background(), 0, false)
	if err != nil || rep.Listed != 120 || rep.Stored != 119 || rep.Failed != 1 {
		t.Fatalf("a run with a failed store: %+v %v", rep, err)
	}
	// The cursor stays at the run's horizon: the failed event is listed again.
	if c, _ := st.Cursor(sched.Scope); !c.Through.Equal(rep.Since) || c.Outcome != "incomplete" {
		t.Fatalf("cursor after a failed store: %+v, want through %s", c, rep.Since)
	}
	delete(sink.fail, "evt_0050")
	rep, err = loop.RunNow(context.Background(), 0, false)
	if err != nil || rep.Stored != 1 || rep.Duplicates != 119 {
		t.Fatalf("the run after: %+v %v", rep, err)
	}
	c, _ := st.Cursor(sched.Scope)
	if c.Through.Before(time.Now().Add(-10*time.Minute)) || c.Outcome != "ok" {
		t.Fatalf("cursor after a complete run: %+v", c)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	loop = NewLoop(sched, sink, st, nil)
	rep, err = loop.RunNow(context.Background(), 0, false)
	if err != nil || rep.Listed != 0 {
		t.Fatalf("after reopening, from the cursor: %+v %v", rep, err)
	}
	// Asked for the last 47 h less 30 s (events 61 to 119, half a minute
	// from either edge), a dry run lists those again and stores none.
	rep, err = loop.RunNow(context.Background(), 47*time.Hour-30*time.Second, true)
	if err != nil || rep.Listed != 59 || rep.Stored != 0 || !rep.DryRun {
		t.Fatalf("a dry run over 47 h less 30 s: %+v %v", rep, err)
	}
}

// TestSoonRunsOnceAfterItsDelay: nudges coalesce into one run, which
// starts only Soon after the first, besides the run at start.
func TestSoonRunsOnceAfterItsDelay(t *testing.T) {
	srv, _ := stripeServer(t, "rk", 3, time.Now().Add(-time.Hour))
	st, err := bolt.Open(filepath.Join(t.TempDir(), "h.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := NewStripe(srv.Client(), srv.URL, "rk")
	runs := make(chan time.Time, 10)
	sched := Schedule{Source: "stripe", Scope: "stripe /s", Client: s, Every: time.Hour, Lookback: 2 * time.Hour, SoonDelay: 300 * time.Millisecond}
	loop := NewLoop(sched, &memorySink{have: map[string]bool{}}, st, func(Report, error) { runs <- time.Now() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loop.Start(ctx)
	<-runs // the run at start
	asked := time.Now()
	for range 5 {
		loop.Soon()
	}
	ran := <-runs
	if waited := ran.Sub(asked); waited < sched.SoonDelay {
		t.Fatalf("the run came %s after Soon, before its delay of %s", waited, sched.SoonDelay)
	}
	select {
	case <-runs:
		t.Fatal("five nudges ran twice")
	case <-time.After(3 * sched.SoonDelay):
	}
}
