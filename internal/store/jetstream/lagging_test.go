package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// laggingStream answers direct gets as a replica that has not caught up
// does: every message is missing. A partition makes real ones, but not on
// demand.
type laggingStream struct{ jetstream.Stream }

func (laggingStream) GetLastMsgForSubject(context.Context, string) (*jetstream.RawStreamMsg, error) {
	return nil, jetstream.ErrMsgNotFound
}

// TestLaggingReplicaKeepsDedup: a provider's retry after the reservation
// grace, whose direct get of the first copy's event is answered by a
// replica that has not caught up, is still a duplicate of that event: the
// leader is asked before the key is taken over.
func TestLaggingReplicaKeepsDedup(t *testing.T) {
	ns := runServer(t)
	s := open(t, ns)
	ctx := context.Background()
	first, err := s.Ingest(ctx, newEvent("github", "d-1", `{"n":1}`, "a"))
	if err != nil {
		t.Fatal(err)
	}
	later := open(t, ns, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(reservationGrace + time.Second) } })
	later.events = laggingStream{later.events}
	res, err := later.Ingest(ctx, newEvent("github", "d-1", `{"n":1}`, "a"))
	if err != nil || !res.Duplicate || res.ID != first.ID {
		t.Fatalf("the retry: %+v %v; want a duplicate of %s", res, err, first.ID)
	}
	rec, err := later.Event(first.ID)
	if err != nil || rec.Event.ID != first.ID || string(rec.Event.Body) != `{"n":1}` {
		t.Fatalf("reading the event through the lagging replica: %v", err)
	}
	info, err := s.events.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the events stream holds %d messages, want 1", info.State.Msgs)
	}
}
