package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// A digest key makes a second event with the same digest a duplicate on
// every instance, whatever its dedup key.
func TestDigestKeyAcrossInstances(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	ctx := context.Background()
	event := func(dedup string) *store.NewEvent {
		return &store.NewEvent{
			Event:    &store.Event{Source: "github", ReceivedAt: time.Now(), Method: "POST", Path: "/h", Body: []byte(`{"n":1}`)},
			DedupKey: dedup, DedupUntil: time.Now().Add(time.Hour), DigestKey: "sha256:abc",
			Targets: []store.Target{{Upstream: "u"}},
		}
	}
	first, err := a.Ingest(ctx, event("delivery-1"))
	if err != nil || first.Duplicate {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := b.Ingest(ctx, event("fresh-id"))
	if err != nil || !again.Duplicate || again.ID != first.ID {
		t.Fatalf("same digest, fresh id, other instance: %+v %v, want a duplicate of %s", again, err, first.ID)
	}
	other := event("fresh-id-2")
	other.DigestKey = "sha256:def"
	if res, err := b.Ingest(ctx, other); err != nil || res.Duplicate {
		t.Fatalf("another digest: %+v %v", res, err)
	}
	// The fresh id's reservation was released with the duplicate: it is free.
	reuse := event("fresh-id")
	reuse.DigestKey = "sha256:ghi"
	if res, err := a.Ingest(ctx, reuse); err != nil || res.Duplicate {
		t.Fatalf("the dedup key a duplicate reserved was not released: %+v %v", res, err)
	}
}
