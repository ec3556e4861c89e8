package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// TestBackupWhileWriting takes a snapshot while a writer keeps ingesting,
// and holds the copy open until the writer has committed more events: the
// snapshot unpacks as a store, passes bbolt's consistency check and every
// body's checksum, holds every
// event committed before the backup began with its body and deliveries, and
// none of the events whose writes began after it (a copy of the live file
// would have them, or be torn).
func TestBackupWhileWriting(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	body := func(n int) string { return fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("x", 700)) }
	ingest := func(n int) (store.ID, error) {
		res, err := s.Ingest(ctx, newEvent("github", fmt.Sprint("delivery-", n), body(n), c, "legacy"))
		return res.ID, err
	}
	committed := map[store.ID]int{} // ACKed before the backup was called
	for n := range 300 {
		id, err := ingest(n)
		if err != nil {
			t.Fatal(err)
		}
		committed[id] = n
	}

	var calling, began atomic.Bool
	var mu sync.Mutex
	var later []store.ID // writes that began once the snapshot had begun
	fiveLater := make(chan struct{})
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for n := 1000; ; n++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			startedAfter := began.Load()
			id, err := ingest(n)
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			switch {
			case startedAfter:
				if later = append(later, id); len(later) == 5 {
					close(fiveLater)
				}
			case !calling.Load():
				committed[id] = n
			}
			mu.Unlock()
		}
	}()
	time.Sleep(20 * time.Millisecond) // the writer is busy before the backup too
	mu.Lock()
	calling.Store(true)
	mu.Unlock()

	var buf bytes.Buffer
	var announced int64 = -1
	n, err := s.Backup(&buf, func(size int64) {
		announced = size
		began.Store(true)
		select {
		case <-fiveLater:
		case <-time.After(10 * time.Second):
			t.Error("no write committed while the backup was open")
		}
	})
	close(stop)
	if werr := <-done; werr != nil {
		t.Fatalf("a write failed during the backup: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != announced || n != int64(buf.Len()) {
		t.Fatalf("backup wrote %d bytes, announced %d, buffer holds %d", n, announced, buf.Len())
	}

	path := filepath.Join(t.TempDir(), "backup.db")
	if err := Unpack(bytes.NewReader(buf.Bytes()), path); err != nil {
		t.Fatal(err)
	}
	if events, err := Check(path); err != nil || events < len(committed) {
		t.Fatalf("the unpacked snapshot fails its check (%d events): %v", events, err)
	}

	restored := openTest(t, path, c)
	for id, n := range committed {
		rec, err := restored.Event(id)
		if err != nil {
			t.Fatalf("event %d, committed before the backup: %v", n, err)
		}
		if string(rec.Event.Body) != body(n) || len(rec.Deliveries) != 1 || rec.Deliveries[0].State != store.StatePending {
			t.Fatalf("event %d restored differs: body %.40q, deliveries %+v", n, rec.Event.Body, rec.Deliveries)
		}
	}
	for _, id := range later {
		if _, err := restored.Event(id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("event %s, written after the snapshot began, is in it (%v)", id, err)
		}
	}
	st, err := restored.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// Each event has one pending delivery, and the queue counted at open agrees.
	if st.Events < len(committed) || st.Pending != st.Events || restored.Pending() != int64(st.Pending) {
		t.Fatalf("restored: %d events, %d pending (%d queued); %d committed before the backup", st.Events, st.Pending, restored.Pending(), len(committed))
	}
	// The live store still takes writes once the backup is over.
	if _, err := ingest(99999); err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot of %d bytes holds %d events committed before it; %d written during it are not in it", n, len(committed), len(later))
}

// TestBackupOfClosedStore fails instead of writing a partial file.
func TestBackupOfClosedStore(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	s.Close()
	var buf bytes.Buffer
	if n, err := s.Backup(&buf, nil); err == nil || n != 0 || buf.Len() != 0 {
		t.Fatalf("backup of a closed store: %d bytes, %v", n, err)
	}
}
