package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

func finish(t *testing.T, s *Store, id store.ID, idx uint16, state store.State, c *clock) {
	t.Helper()
	err := s.Settle(context.Background(), store.Outcome{Key: store.DeliveryKey{Event: id, Index: idx}, Attempt: store.Attempt{N: 1, At: c.Now(), Status: 500}, Next: state})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPendingCount(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	ctx := context.Background()
	a, _ := s.Ingest(ctx, newEvent("s", "k1", "x", c, "u", "v"))
	s.Ingest(ctx, newEvent("s", "k1", "x", c, "u", "v")) // duplicate: adds nothing
	s.Ingest(ctx, newEvent("s", "k2", "x", c, "u"))
	if got := s.Pending(); got != 3 {
		t.Fatalf("pending %d, want 3", got)
	}
	finish(t, s, a.ID, 0, store.StateDelivered, c)
	finish(t, s, a.ID, 1, store.StateDead, c)
	if got := s.Pending(); got != 1 {
		t.Fatalf("pending %d after two finished, want 1", got)
	}
	s.Close()
	s2 := openTest(t, path, c)
	if got := s2.Pending(); got != 1 {
		t.Fatalf("pending %d after reopen, want 1", got)
	}
}

func TestReplay(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	var ids []store.ID
	for i := range 5 {
		src := "stripe"
		if i == 4 {
			src = "github"
		}
		res, _ := s.Ingest(ctx, newEvent(src, "", "x", c, "u", "v"))
		ids = append(ids, res.ID)
		finish(t, s, res.ID, 0, store.StateDead, c)
		finish(t, s, res.ID, 1, store.StateDelivered, c)
		c.Add(time.Second)
	}
	if s.Pending() != 0 {
		t.Fatalf("pending %d", s.Pending())
	}
	// One event.
	res, err := s.Replay(ctx, store.ReplayFilter{Event: &ids[0]})
	if err != nil || res.Replayed != 1 || res.Next != nil || len(res.Upstreams) != 1 || res.Upstreams[0] != "u" {
		t.Fatalf("replay one: %+v %v", res, err)
	}
	rec, _ := s.Event(ids[0])
	d := rec.Deliveries[0]
	if d.State != store.StatePending || d.RetryBase != 1 || !d.ReplayedAt.Equal(c.Now()) || rec.Deliveries[1].State != store.StateDelivered {
		t.Fatalf("after replay: %+v / %+v", d, rec.Deliveries[1])
	}
	if tasks, _ := s.Due("u", c.Now(), 10); len(tasks) != 1 {
		t.Fatalf("%d due after replay", len(tasks))
	}
	// Bulk, by source, in pages of two, resumable.
	var replayed int
	var after *store.ID
	pages := 0
	for {
		res, err := s.Replay(ctx, store.ReplayFilter{Source: "stripe", Upstream: "u", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		replayed += res.Replayed
		pages++
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	if replayed != 3 || pages < 2 {
		t.Fatalf("bulk replay: %d replayed in %d pages, want 3 (the github event and the one already pending excluded)", replayed, pages)
	}
	if rec, _ := s.Event(ids[4]); rec.Deliveries[0].State != store.StateDead {
		t.Fatal("another source's event replayed")
	}
	// Delivered ones on request, within a time range.
	res, _ = s.Replay(ctx, store.ReplayFilter{States: []store.State{store.StateDelivered}, Since: ids[3].Time(), Until: ids[4].Time()})
	if res.Replayed != 2 {
		t.Fatalf("delivered in range: %d, want 2", res.Replayed)
	}
	if got := s.Pending(); got != 6 {
		t.Fatalf("pending %d, want 6", got)
	}
}

func TestSweep(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	var old []store.ID
	for i := range 7 {
		res, _ := s.Ingest(ctx, newEvent("s", "key-"+string(rune('a'+i)), "payload", c, "u"))
		old = append(old, res.ID)
		if i != 3 {
			finish(t, s, res.ID, 0, store.StateDelivered, c)
		}
	}
	c.Add(48 * time.Hour)
	recent, _ := s.Ingest(ctx, newEvent("s", "key-new", "payload", c, "u"))
	finish(t, s, recent.ID, 0, store.StateDelivered, c)

	n, err := s.Sweep(ctx, c.Now().Add(-24*time.Hour), 2)
	if err != nil || n != 6 {
		t.Fatalf("swept %d, %v; want 6 (old, finished)", n, err)
	}
	for i, id := range old {
		_, err := s.Event(id)
		if i == 3 && err != nil {
			t.Fatal("an event with a pending delivery was swept")
		}
		if i != 3 && err == nil {
			t.Fatalf("old finished event %d kept", i)
		}
	}
	if _, err := s.Event(recent.ID); err != nil {
		t.Fatal("a recent event was swept")
	}
	// Dedup keys (window one hour) are gone, so the old key is new again.
	res, _ := s.Ingest(ctx, newEvent("s", "key-a", "payload", c, "u"))
	if res.Duplicate {
		t.Fatal("expired dedup key still counted")
	}
}

func TestCompact(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	dir := t.TempDir()
	src := filepath.Join(dir, "h.db")
	s, err := Open(src, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 300 {
		res, _ := s.Ingest(ctx, newEvent("s", "", string(make([]byte, 4096)), c, "u"))
		finish(t, s, res.ID, 0, store.StateDelivered, c)
	}
	c.Add(time.Hour)
	if n, err := s.Sweep(ctx, c.Now().Add(-30*time.Minute), 100); err != nil || n != 300 {
		t.Fatalf("swept %d, %v", n, err)
	}
	res, _ := s.Ingest(ctx, newEvent("s", "", "kept", c, "u"))
	keep := res.ID
	s.Close()
	dst := filepath.Join(dir, "compact.db")
	if err := Compact(dst, src); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(src)
	after, _ := os.Stat(dst)
	if after.Size() >= before.Size() {
		t.Fatalf("compacted file %d bytes, original %d", after.Size(), before.Size())
	}
	s2 := openTest(t, dst, c)
	if rec, err := s2.Event(keep); err != nil || string(rec.Event.Body) != "kept" {
		t.Fatalf("compacted store lost data: %v", err)
	}
}

func TestOrderedDeliveriesWaitTheirTurn(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	ingestOrdered := func(key string) store.ID {
		ne := newEvent("s", "", key, c, "u")
		ne.Targets[0].OrderKey = key
		res, err := s.Ingest(ctx, ne)
		if err != nil {
			t.Fatal(err)
		}
		c.Add(time.Millisecond)
		return res.ID
	}
	a1, b1, a2, a3 := ingestOrdered("A"), ingestOrdered("B"), ingestOrdered("A"), ingestOrdered("A")
	dueIDs := func() []store.ID {
		tasks, _ := s.Due("u", c.Now().Add(time.Hour), 10)
		var out []store.ID
		for _, t := range tasks {
			out = append(out, t.Event.ID)
		}
		return out
	}
	if got := dueIDs(); len(got) != 2 || got[0] != a1 || got[1] != b1 {
		t.Fatalf("due %v, want the heads of A and B only", got)
	}
	// The head of A fails and is retried later: A's others still wait.
	s.Settle(ctx, store.Outcome{Key: store.DeliveryKey{Event: a1}, Attempt: store.Attempt{N: 1, At: c.Now(), Status: 503}, Next: store.StatePending, RetryAt: c.Now().Add(time.Minute)})
	if got := dueIDs(); len(got) != 2 || got[0] != b1 || got[1] != a1 {
		t.Fatalf("due after a retry %v, want b1 then a1 (a2, a3 wait)", got)
	}
	claimed, _ := s.Claim(ctx, "u", c.Now(), 10)
	if len(claimed.Tasks) != 1 || claimed.Tasks[0].Event.ID != b1 || !claimed.HasNext || !claimed.Next.Equal(c.Now().Add(time.Minute)) {
		t.Fatalf("claimed %v, next %v %v, want b1 then the retry time of A's head", claimed.Tasks, claimed.Next, claimed.HasNext)
	}
	finish(t, s, a1, 0, store.StateDead, c) // a dead head does not block the line
	if got := dueIDs(); len(got) != 2 || got[1] != a2 {
		t.Fatalf("due after the head died: %v, want a2 next", got)
	}
	finish(t, s, a2, 0, store.StateDelivered, c)
	if got := dueIDs(); len(got) != 2 || got[1] != a3 {
		t.Fatalf("due: %v, want a3", got)
	}
}
