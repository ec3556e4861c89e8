package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestPauseHoldsOnEveryInstanceAndAcrossRestarts pauses an upstream on one
// instance: another instance sharing the stream sees the pause, a new
// instance reads it at open, and a resume on one wakes the other.
func TestPauseHoldsOnEveryInstanceAndAcrossRestarts(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	woken := make(chan string, 4)
	if err := b.Configure(nil, func(u string) { woken <- u }); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := a.SetPaused(ctx, "legacy", true)
	if err != nil || !p.Paused || p.Since.IsZero() {
		t.Fatalf("pause: %+v, %v", p, err)
	}
	if again, _ := a.SetPaused(ctx, "legacy", true); !again.Since.Equal(p.Since) {
		t.Fatalf("pausing twice moved the pause: %v, then %v", p.Since, again.Since)
	}
	waitFor(t, func() bool { return b.PauseOf("legacy").Paused })
	if b.PauseOf("billing").Paused {
		t.Fatal("an upstream never paused reads as paused")
	}

	// A restart: a new connection reads the pause before it delivers.
	a.Close()
	c := open(t, ns)
	if !c.PauseOf("legacy").Paused {
		t.Fatal("the pause was lost when the instance restarted")
	}
	if got := c.Pauses(); len(got) != 1 || !got["legacy"].Paused {
		t.Fatalf("pauses: %+v", got)
	}

	if _, err := c.SetPaused(ctx, "legacy", false); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-woken:
		if u != "legacy" {
			t.Fatalf("woke %q", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a resume on one instance did not wake the other")
	}
	if b.PauseOf("legacy").Paused {
		t.Fatal("still paused on the other instance after the resume")
	}
	if p := c.PauseOf("legacy"); p.Paused || p.Since.IsZero() {
		t.Fatalf("a resumed upstream keeps no resume time: %+v", p)
	}
}

var _ store.Pauses = (*Store)(nil)
