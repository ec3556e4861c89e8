package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestPauseSurvivesReopen pauses an upstream, closes the file and opens it
// again: the pause is still there, and a resume tells notify.
func TestPauseSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := s.SetPaused(ctx, "legacy", true)
	if err != nil || !p.Paused || p.Since.IsZero() {
		t.Fatalf("pause: %+v, %v", p, err)
	}
	if again, _ := s.SetPaused(ctx, "legacy", true); !again.Since.Equal(p.Since) {
		t.Fatalf("pausing twice moved the pause: %v, then %v", p.Since, again.Since)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.PauseOf("legacy"); !got.Paused || !got.Since.Equal(p.Since) {
		t.Fatalf("after reopening: %+v, want %+v", got, p)
	}
	if s.PauseOf("billing").Paused {
		t.Fatal("an upstream never paused reads as paused")
	}
	woken := make(chan string, 1)
	if err := s.Configure(nil, func(u string) { woken <- u }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPaused(ctx, "legacy", false); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-woken:
		if u != "legacy" {
			t.Fatalf("woke %q", u)
		}
	case <-time.After(time.Second):
		t.Fatal("a resume did not notify")
	}
	if got := s.Pauses(); len(got) != 1 || got["legacy"].Paused {
		t.Fatalf("pauses after the resume: %+v", got)
	}
}
