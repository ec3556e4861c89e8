package bolt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// blockApply holds the applier inside a commit until the returned func is
// called: events logged meanwhile are ACKed and in the log only.
func blockApply(t *testing.T, s *Store) (unblock func()) {
	t.Helper()
	release, inCommit := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.update(context.Background(), func(*bbolt.Tx) error { close(inCommit); <-release; return nil })
	}()
	<-inCommit
	var once sync.Once
	unblock = func() {
		once.Do(func() {
			close(release)
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(unblock)
	return unblock
}

// copyStore copies a store file, its body log and its write-ahead log to
// dir, as a crash at this moment would leave them (the bbolt file's last
// commit, the logs' synced frames).
func copyStore(t *testing.T, path, dir string) string {
	t.Helper()
	to := filepath.Join(dir, filepath.Base(path))
	copyFile(t, path, to)
	for _, sub := range []string{bodyLogDir(path), walDir(path)} {
		names, _ := filepath.Glob(filepath.Join(sub, "*"))
		dst := to + strings.TrimPrefix(sub, path)
		if err := os.MkdirAll(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			copyFile(t, name, filepath.Join(dst, filepath.Base(name)))
		}
	}
	return to
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// walSegments lists the log's segment files, oldest first.
func walSegments(t *testing.T, path string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(walDir(path), "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return withData(names)
}

// TestCrashBetweenLogAndApply: events ACKed while bbolt's commit is held
// up are in the log only; a crash then (the files copied as they are)
// loses none of them: the next open applies them, with their deliveries,
// and their dedup keys still find them.
func TestCrashBetweenLogAndApply(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	unblock := blockApply(t, s)
	var ids []store.ID
	for i := range 20 {
		res, err := s.Ingest(context.Background(), newEvent("s", fmt.Sprint("key-", i), fmt.Sprint("body ", i), c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	crashed := copyStore(t, path, t.TempDir())
	unblock()

	// The copy's bbolt file holds none of them.
	db, err := bbolt.Open(crashed, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucketEvents).Stats().KeyN; n != 0 {
			t.Errorf("the bbolt file holds %d events before recovery, want 0 (the test did not crash before the apply)", n)
		}
		return nil
	})
	db.Close()

	var logged []string
	r, err := Open(crashed, Options{Now: c.Now, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, id := range ids {
		rec, err := r.Event(id)
		if err != nil {
			t.Fatalf("event %d after recovery: %v", i, err)
		}
		if string(rec.Event.Body) != fmt.Sprint("body ", i) || len(rec.Deliveries) != 1 || rec.Deliveries[0].State != store.StatePending {
			t.Fatalf("event %d after recovery: body %q, deliveries %+v", i, rec.Event.Body, rec.Deliveries)
		}
	}
	if r.Pending() != 20 {
		t.Fatalf("%d pending after recovery, want 20", r.Pending())
	}
	dup, err := r.Ingest(context.Background(), newEvent("s", "key-7", "body 7", c, "u"))
	if err != nil || !dup.Duplicate || dup.ID != ids[7] {
		t.Fatalf("a copy after recovery: %+v %v, want a duplicate of %s", dup, err, ids[7])
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "applied 20 events from the write-ahead log") {
		t.Fatalf("logged at open: %q", logged)
	}
	// A new event gets an id after the recovered ones.
	next, err := r.Ingest(context.Background(), newEvent("s", "new", "new", c, "u"))
	if err != nil || next.ID.String() <= ids[len(ids)-1].String() {
		t.Fatalf("new event %s after recovered %s: %v", next.ID, ids[len(ids)-1], err)
	}
	r.Close()
	// Opened again, nothing is applied twice.
	logged = nil
	r2, err := Open(crashed, Options{Now: c.Now, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if len(logged) != 0 || r2.Pending() != 21 {
		t.Fatalf("second open: logged %q, %d pending, want nothing and 21", logged, r2.Pending())
	}
}

// TestTornLogTailAtEveryPoint: the last group's frame is cut, or torn
// (its tail overwritten with garbage or zeros), at every byte. Each time
// the open keeps every earlier group and drops the torn one whole, unless
// the cut left it whole.
func TestTornLogTailAtEveryPoint(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	unblock := blockApply(t, s)
	var ids []store.ID
	for i := range 3 {
		// One at a time: each event is a group, a frame of its own.
		res, err := s.Ingest(context.Background(), newEvent("s", fmt.Sprint("key-", i), fmt.Sprint("body ", i), c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	base := copyStore(t, path, t.TempDir())
	unblock()
	seg := walSegments(t, base)
	if len(seg) != 1 {
		t.Fatalf("%d log segments, want 1", len(seg))
	}
	data, err := os.ReadFile(seg[0])
	if err != nil {
		t.Fatal(err)
	}
	var frames []int64 // each frame's start, then the end of the last
	f, _ := os.Open(seg[0])
	if err := eachFrame(f, func(off int64, p []byte) error { frames = append(frames, off); return nil }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if len(frames) != 3 {
		t.Fatalf("%d frames, want 3", len(frames))
	}
	last := frames[2]
	end := last + frameHeader + int64(beUint32(data[last:]))
	db, err := bbolt.Open(base, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var walID uint64
	_ = db.View(func(tx *bbolt.Tx) error { walID = beUint64(tx.Bucket(bucketMeta).Get(keyWALID)); return nil })
	db.Close()

	dir := t.TempDir()
	tries := 0
	for cut := last; cut <= end; cut++ {
		for _, tear := range []string{"cut", "garbage", "zeros"} {
			if tear != "cut" && cut == end {
				continue
			}
			torn := append([]byte(nil), data...)
			switch tear {
			case "cut":
				torn = torn[:cut]
			case "garbage":
				for i := cut; i < end; i++ {
					torn[i] = byte(i*7 + 1)
				}
			case "zeros":
				for i := cut; i < end; i++ {
					torn[i] = 0
				}
			}
			tries++
			trial := filepath.Join(dir, fmt.Sprint(tries))
			if err := os.MkdirAll(walDir(trial), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(walDir(trial), filepath.Base(seg[0])), torn, 0o600); err != nil {
				t.Fatal(err)
			}
			w, unapplied, _, err := openWAL(trial, walID, 0, 0)
			if err != nil {
				t.Fatalf("%s at %d: %v", tear, cut, err)
			}
			w.close()
			// A tear that left the bytes as they were tore nothing.
			whole := bytes.Equal(torn[last:min(int64(len(torn)), end)], data[last:end])
			want := 2
			if whole {
				want = 3
			}
			if len(unapplied) != want {
				t.Fatalf("%s at byte %d of %d..%d: %d events kept, want %d", tear, cut, last, end, len(unapplied), want)
			}
			for i, ev := range unapplied {
				if ev.id != ids[i] || string(ev.body) != fmt.Sprint("body ", i) {
					t.Fatalf("%s at %d: event %d is %s %q", tear, cut, i, ev.id, ev.body)
				}
			}
			os.RemoveAll(walDir(trial))
		}
	}
	t.Logf("%d torn tails, each kept exactly the whole groups", tries)

	// The store itself opens a torn log, applies the whole groups and
	// logs new ones after them.
	data[end-1] ^= 0xff
	if err := os.WriteFile(seg[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, base, c)
	for i, id := range ids {
		if _, err := r.Event(id); (err == nil) != (i < 2) {
			t.Fatalf("event %d after a torn last group: %v", i, err)
		}
	}
	again, err := r.Ingest(context.Background(), newEvent("s", "key-2", "body 2", c, "u"))
	if err != nil || again.Duplicate {
		t.Fatalf("the torn event sent again: %+v %v, want stored anew", again, err)
	}
	r.Close()
	r = openTest(t, base, c)
	if _, err := r.Event(again.ID); err != nil {
		t.Fatalf("an event logged after the cut, at the next open: %v", err)
	}
}

func beUint64(b []byte) uint64 { return uint64(beUint32(b))<<32 | uint64(beUint32(b[4:])) }

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// TestCopiesWhileLogged: 25 copies of one event sent at once while bbolt's
// commit is held up give one event; every copy is told its id.
func TestCopiesWhileLogged(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	unblock := blockApply(t, s)
	var wg sync.WaitGroup
	results := make([]store.IngestResult, 25)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Ingest(context.Background(), newEvent("github", "delivery-1", "same", c, "legacy"))
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	originals := 0
	for _, r := range results {
		if !r.Duplicate {
			originals++
		}
		if r.ID != results[0].ID {
			t.Fatalf("copies told different ids: %s and %s", r.ID, results[0].ID)
		}
	}
	if originals != 1 {
		t.Fatalf("%d copies stored as new events, want 1", originals)
	}
	unblock()
	if tasks, _ := s.Due("legacy", c.Now(), 100); len(tasks) != 1 {
		t.Fatalf("%d deliveries queued, want 1", len(tasks))
	}
	// Once applied, a copy is found in bbolt.
	if res, _ := s.Ingest(context.Background(), newEvent("github", "delivery-1", "same", c, "legacy")); !res.Duplicate || res.ID != results[0].ID {
		t.Fatalf("a copy after the apply: %+v", res)
	}
}

// TestApplyBacklogIsBounded: while bbolt's commit is held up, the log takes
// events only until the backlog is full; the others wait, unanswered, and
// are logged and applied once the commit ends.
func TestApplyBacklogIsBounded(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s, err := Open(filepath.Join(t.TempDir(), "h.db"), Options{Now: c.Now, ApplyBacklog: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // after blockApply's cleanup lets the commit end
	unblock := blockApply(t, s)
	const sent = 30
	var acked atomic.Int32
	var wg sync.WaitGroup
	for i := range sent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Ingest(context.Background(), newEvent("s", fmt.Sprint(i), "x", c, "u")); err != nil {
				t.Error(err)
			}
			acked.Add(1)
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); acked.Load() < 8 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // room for a 9th, were the bound not kept
	if n := acked.Load(); n != 8 {
		t.Fatalf("%d events ACKed while the apply was held up, want the backlog's 8", n)
	}
	if n := s.toApplyCount(); n != 8 {
		t.Fatalf("%d writes wait to be applied, want 8", n)
	}
	unblock()
	wg.Wait()
	if n := acked.Load(); n != sent {
		t.Fatalf("%d of %d events ACKed after the apply went on", n, sent)
	}
	if tasks, _ := s.Due("u", c.Now(), 100); len(tasks) != sent {
		t.Fatalf("%d deliveries queued, want %d", len(tasks), sent)
	}
}

// TestRecycledLogSegments: the log writes its segments again once their
// events are applied, over their old frames. A crash with events logged
// in a recycled segment loses none of them, and a torn tail there, with
// old frames behind it, brings none of those back.
func TestRecycledLogSegments(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	opts := Options{Now: c.Now, WALSegmentSize: 8 << 10}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	body := strings.Repeat("b", 1500)
	ingest := func(s *Store, i int) store.IngestResult {
		t.Helper()
		res, err := s.Ingest(context.Background(), newEvent("s", fmt.Sprintf("key-%04d", i), body, c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Every frame is the same size, so a new tail written over a recycled
	// segment ends where an old frame begins, and the old frames behind it
	// still check: the case recovery must read past without applying them.
	ingest(s, 0)
	s.caughtUp()
	var size int64
	f, err := os.Open(walSegments(t, path)[0])
	if err != nil {
		t.Fatal(err)
	}
	_ = eachFrame(f, func(off int64, p []byte) error { size = frameHeader + int64(len(p)); return nil })
	f.Close()
	perSegment := int((opts.WALSegmentSize + size - 1) / size)
	if perSegment < 4 {
		t.Fatalf("%d frames of %d bytes per segment: too few for the test", perSegment, size)
	}
	// Twelve segments' worth, applied one by one, so that segments retire
	// and come back; then one frame into the next segment.
	applied := 12*perSegment + 1
	for i := 1; i < applied; i++ {
		ingest(s, i)
		s.caughtUp()
	}
	unblock := blockApply(t, s)
	total := applied + 2
	for i := applied; i < total; i++ {
		ingest(s, i)
	}
	crashed := copyStore(t, path, t.TempDir())
	unblock()

	// The segment logged to last is a recycled one: the frames of the
	// events just logged, then older frames, numbered lower, that check.
	type frame struct {
		off, end int64
		seq      uint64
	}
	segs := walSegments(t, crashed)
	var active int
	var frames []frame
	var newestSeq uint64
	for i, seg := range segs {
		var fs []frame
		f, err := os.Open(seg)
		if err != nil {
			t.Fatal(err)
		}
		err = eachFrame(f, func(off int64, p []byte) error {
			_, evs, err := decodeGroup(p)
			if err != nil {
				return err
			}
			fs = append(fs, frame{off, off + frameHeader + int64(len(p)), evs[0].seq})
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range fs {
			if fr.seq > newestSeq {
				newestSeq, active, frames = fr.seq, i, fs
			}
		}
	}
	tail := -1
	for i := 1; i < len(frames); i++ {
		if frames[i].seq < frames[i-1].seq {
			tail = i - 1
			break
		}
	}
	if tail < 0 || frames[tail].seq != newestSeq {
		t.Fatalf("the frames of the segment logged to last are numbered %v: not a recycled segment with old frames behind its tail", frames)
	}

	check := func(name string, path string, want int) {
		t.Helper()
		s2, err := Open(path, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s2.Close()
		st, err := s2.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Events != want {
			t.Fatalf("%s: %d events after the open, want %d", name, st.Events, want)
		}
		if tasks, _ := s2.Due("u", c.Now(), 1000); len(tasks) != want {
			t.Fatalf("%s: %d deliveries queued, want %d", name, len(tasks), want)
		}
		for i := range want {
			if res := ingest(s2, i); !res.Duplicate {
				t.Fatalf("%s: key-%d is not found as a duplicate after the open", name, i)
			}
		}
		if res := ingest(s2, 1000); res.Duplicate {
			t.Fatalf("%s: a new event after the open is taken for a duplicate", name)
		}
	}
	check("crash", copyStore(t, crashed, t.TempDir()), total)

	// The last frame torn in its middle, the old frames behind it intact.
	torn := copyStore(t, crashed, t.TempDir())
	last := frames[tail]
	data, err := os.ReadFile(segs[active])
	if err != nil {
		t.Fatal(err)
	}
	for i := last.off + (last.end-last.off)/2; i < last.end; i++ {
		data[i] = byte(i*7 + 1)
	}
	if err := os.WriteFile(walSegments(t, torn)[active], data, 0o600); err != nil {
		t.Fatal(err)
	}
	check("torn tail", torn, total-1)
}

// TestAppliedLogSegmentsGo: the log keeps only segments with events bbolt
// has not applied, plus the one being written.
func TestAppliedLogSegmentsGo(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(path, Options{Now: c.Now, WALSegmentSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := strings.Repeat("b", 3000)
	for i := range 40 {
		if _, err := s.Ingest(context.Background(), newEvent("s", fmt.Sprint(i), body, c, "u")); err != nil {
			t.Fatal(err)
		}
	}
	s.caughtUp()
	if n := len(walSegments(t, path)); n > 2 {
		t.Fatalf("%d log segments after 120 KB in 8 KB segments, all applied; want at most 2", n)
	}
}

// TestForeignLogIsNotApplied: a log beside a store file it does not belong
// to (a backup restored over the store, another file moved in) is not
// applied to it.
func TestForeignLogIsNotApplied(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	a := filepath.Join(t.TempDir(), "a.db")
	sa := openTest(t, a, c)
	unblock := blockApply(t, sa)
	res, err := sa.Ingest(context.Background(), newEvent("s", "k", "from a", c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	crashedA := copyStore(t, a, t.TempDir())
	unblock()

	b := filepath.Join(t.TempDir(), "b.db")
	sb := openTest(t, b, c)
	sb.Close()
	os.RemoveAll(walDir(b))
	if err := os.Rename(walDir(crashedA), walDir(b)); err != nil {
		t.Fatal(err)
	}
	rb := openTest(t, b, c)
	if _, err := rb.Event(res.ID); err == nil {
		t.Fatal("another store's logged event was applied")
	}
	if rb.Pending() != 0 {
		t.Fatalf("%d pending, want 0", rb.Pending())
	}
}
