package bolt

import (
	"context"
	"testing"
	"time"
)

// TestOldestPendingByUpstream: each upstream's oldest pending event, and
// none for an upstream whose deliveries are all settled.
func TestOldestPendingByUpstream(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	first := c.Now()
	if _, err := s.Ingest(ctx, newEvent("a", "", "1", c, "legacy", "billing")); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if _, err := s.Ingest(ctx, newEvent("a", "", "2", c, "billing", "crm")); err != nil {
		t.Fatal(err)
	}
	got, err := s.OldestPendingByUpstream()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{"legacy": first, "billing": first, "crm": first.Add(time.Minute)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for up, at := range want {
		if !got[up].Equal(at) {
			t.Errorf("%s: %v, want %v", up, got[up], at)
		}
	}
}
