package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// TestUnansweredPublishKeepsTheDedupKey covers both ways an event's write
// can fail. A write that got no answer may have been stored, its
// acknowledgement lost (a partition did that in test/e2e's
// TestJetStreamPartitions): the provider's retry must find that event, not
// be stored as a second one. A write the servers refused was not stored:
// the retry is.
func TestUnansweredPublishKeepsTheDedupKey(t *testing.T) {
	ns := runServer(t)
	s := open(t, ns)
	ctx := context.Background()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.events.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// removeEvents takes the events stream away; recreate brings it back.
	removeEvents := func() {
		t.Helper()
		if err := js.DeleteStream(ctx, "T"); err != nil {
			t.Fatal(err)
		}
	}
	recreate := func() {
		t.Helper()
		if _, err := js.CreateStream(ctx, info.Config); err != nil {
			t.Fatal(err)
		}
	}

	// Unanswered: this subscriber takes the write and never answers.
	removeEvents()
	held := make(chan *nats.Msg, 1)
	sub, err := nc.Subscribe("T.ev.*", func(m *nats.Msg) { held <- m })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, newEvent("stripe", "evt_unanswered", `{}`)); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a write without an answer: %v", err)
	}
	// The write was in fact made; only its acknowledgement was lost.
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	recreate()
	m := <-held
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Ingest(ctx, newEvent("stripe", "evt_unanswered", `{}`))
	if err != nil || !res.Duplicate || res.ID.String() != strings.TrimPrefix(m.Subject, "T.ev.") {
		t.Fatalf("the retry of an event stored without an answer: %+v %v (stored as %s)", res, err, m.Subject)
	}

	// Refused: no stream takes the subject.
	removeEvents()
	if _, err := s.Ingest(ctx, newEvent("stripe", "evt_refused", `{}`)); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a refused write: %v", err)
	}
	recreate()
	res, err = s.Ingest(ctx, newEvent("stripe", "evt_refused", `{}`))
	if err != nil || res.Duplicate {
		t.Fatalf("the retry of a refused event: %+v %v", res, err)
	}
}
