package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestCursorsSurviveReopening: a cursor set is read back, after the file is
// closed and opened again, per scope.
func TestCursorsSurviveReopening(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookgate.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Cursor("stripe /hooks/stripe"); err != nil || !c.Through.IsZero() {
		t.Fatalf("a new store's cursor: %+v %v", c, err)
	}
	want := store.Cursor{Through: time.Unix(1767225600, 0).UTC(), LastRun: time.Unix(1767225700, 0).UTC(), Outcome: "stored 3"}
	if err := s.SetCursor(context.Background(), "stripe /hooks/stripe", want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Cursor("stripe /hooks/stripe"); err != nil || got != want {
		t.Fatalf("after reopening: %+v %v, want %+v", got, err, want)
	}
	if got, _ := s.Cursor("github /hooks/github"); !got.Through.IsZero() {
		t.Fatalf("another scope: %+v", got)
	}
}
