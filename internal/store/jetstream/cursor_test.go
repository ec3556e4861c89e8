package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestCursorsAcrossInstances: a cursor one instance sets, another reads,
// per scope.
func TestCursorsAcrossInstances(t *testing.T) {
	ns := runServer(t)
	a, b := open(t, ns), open(t, ns)
	if c, err := b.Cursor("stripe /hooks/stripe"); err != nil || !c.Through.IsZero() {
		t.Fatalf("a new store's cursor: %+v %v", c, err)
	}
	want := store.Cursor{Through: time.Unix(1767225600, 0).UTC(), LastRun: time.Unix(1767225700, 0).UTC(), Outcome: "stored 3"}
	if err := a.SetCursor(context.Background(), "stripe /hooks/stripe", want); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Cursor("stripe /hooks/stripe"); err != nil || got != want {
		t.Fatalf("read by another instance: %+v %v, want %+v", got, err, want)
	}
	if got, _ := b.Cursor("github /hooks/github"); !got.Through.IsZero() {
		t.Fatalf("another scope: %+v", got)
	}
}
