package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// A digest key makes a second event with the same digest a duplicate,
// whatever its dedup key, and survives a reopen of the file.
func TestDigestKeyIsASecondDedupKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookgate.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	event := func(dedup, digest string) *store.NewEvent {
		return &store.NewEvent{
			Event:    &store.Event{Source: "github", ReceivedAt: time.Now(), Method: "POST", Path: "/h", Body: []byte(`{"n":1}`)},
			DedupKey: dedup, DedupUntil: time.Now().Add(time.Hour), DigestKey: digest,
			Targets: []store.Target{{Upstream: "u"}},
		}
	}
	first, err := s.Ingest(ctx, event("delivery-1", "sha256:abc"))
	if err != nil || first.Duplicate {
		t.Fatalf("first: %+v %v", first, err)
	}
	if res, _ := s.Ingest(ctx, event("fresh-id", "sha256:abc")); !res.Duplicate || res.ID != first.ID {
		t.Fatalf("same digest, fresh id: %+v", res)
	}
	if res, _ := s.Ingest(ctx, event("fresh-id-2", "sha256:def")); res.Duplicate {
		t.Fatalf("another digest: %+v", res)
	}
	// A digest key never collides with a dedup key of the same text.
	if res, _ := s.Ingest(ctx, event("sha256:abc", "sha256:xyz")); res.Duplicate {
		t.Fatalf("a dedup key equal to a digest key's text: %+v", res)
	}
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, _ := s.Ingest(ctx, event("fresh-id-3", "sha256:abc")); !res.Duplicate || res.ID != first.ID {
		t.Fatalf("after a reopen: %+v", res)
	}
	if s.Pending() != 3 {
		t.Fatalf("%d deliveries pending, want 3 (duplicates add none)", s.Pending())
	}
}
