package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// TestSettleAcksWhenTheStateWriteHangs settles a delivered attempt while the
// state bucket takes requests and answers none, as when its leader is cut
// off from the servers this instance reaches: the state write gives up at
// its deadline, and the work message is still acknowledged, so the delivery
// is not made a second time after AckWait. Partitions of the stream leader
// in test/e2e (TestJetStreamPartitions) showed such repeats.
func TestSettleAcksWhenTheStateWriteHangs(t *testing.T) {
	ns := runServer(t)
	s := open(t, ns)
	if err := s.Configure(settings("a"), nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Ingest(ctx, newEvent("stripe", "evt_hang", `{}`, "a")); err != nil {
		t.Fatal(err)
	}
	task := due(t, s, "a", 1)[0]

	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "KV_T_state"); err != nil {
		t.Fatal(err)
	}
	// Reads of the bucket now reach only this subscriber, which never answers.
	if _, err := nc.Subscribe("$JS.API.DIRECT.GET.KV_T_state.>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	settleErr := s.Settle(ctx, store.Outcome{Key: task.Delivery.Key, Next: store.StateDelivered, Attempt: store.Attempt{N: 1, At: time.Now(), Status: 200}})
	if settleErr == nil {
		t.Fatal("the state was written to a bucket that does not answer")
	}
	info, err := s.work.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("the delivered attempt's work message is still queued (Settle: %v): it will be delivered again", settleErr)
	}
}
