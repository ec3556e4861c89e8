package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

func segmentFiles(t *testing.T, storePath string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(bodyLogDir(storePath), "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return withData(names)
}

// withData leaves out empty files: the spare segment made ahead.
func withData(names []string) []string {
	var out []string
	for _, name := range names {
		if st, err := os.Stat(name); err == nil && st.Size() > 0 {
			out = append(out, name)
		}
	}
	return out
}

// openSegmented opens a store whose body log starts a new segment past
// size bytes.
func openSegmented(t *testing.T, path string, c *clock, size int64) *Store {
	t.Helper()
	s, err := Open(path, Options{Now: c.Now, SegmentSize: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBodiesLiveInTheLog: a body is in a segment file, not in the bbolt
// file, and reads back byte for byte.
func TestBodiesLiveInTheLog(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	marker := "body-marker-" + strings.Repeat("q", 3000)
	res, err := s.Ingest(context.Background(), newEvent("s", "", marker, c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Event(res.ID)
	if err != nil || string(rec.Event.Body) != marker {
		t.Fatalf("read back %.30q, %v", rec.Event.Body, err)
	}
	s.Close()
	db, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte("body-marker-")) {
		t.Fatal("the body is in the bbolt file")
	}
	segs := segmentFiles(t, path)
	if len(segs) != 1 {
		t.Fatalf("segments: %v", segs)
	}
	seg, _ := os.ReadFile(segs[0])
	if !bytes.Contains(seg, []byte(marker)) {
		t.Fatal("the body is not in the segment")
	}
}

// TestTornTailIsCut: bytes after the last whole frame (a write cut by a
// crash) are cut off at open; every stored body still reads, and new
// bodies go where the torn one began.
func TestTornTailIsCut(t *testing.T) {
	for _, tail := range []struct {
		name  string
		bytes []byte
	}{
		{"half a header", []byte{0, 0, 1}},
		{"a header and part of its body", append([]byte{0, 0, 0, 100, 1, 2, 3, 4}, "partial"...)},
		{"zeros, as a file grown but never written", make([]byte, 4096)},
		{"a whole frame with a wrong checksum", append([]byte{0, 0, 0, 5, 9, 9, 9, 9}, "abcde"...)},
		{"a length far past the end", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}},
	} {
		t.Run(tail.name, func(t *testing.T) {
			c := &clock{now: time.Unix(1700000000, 0)}
			path := filepath.Join(t.TempDir(), "h.db")
			s := openTest(t, path, c)
			ctx := context.Background()
			var ids []store.ID
			for n := range 20 {
				res, err := s.Ingest(ctx, newEvent("s", "", fmt.Sprint("body ", n), c, "u"))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.ID)
			}
			s.Close()
			seg := segmentFiles(t, path)[0]
			raw, _ := os.ReadFile(seg)
			end := len(bytes.TrimRight(raw, "\x00")) // past the last frame are zeros written ahead
			if err := os.WriteFile(seg, append(raw[:end:end], tail.bytes...), 0o600); err != nil {
				t.Fatal(err)
			}

			s = openTest(t, path, c)
			res, err := s.Ingest(ctx, newEvent("s", "", "after the tear", c, "u"))
			if err != nil {
				t.Fatal(err)
			}
			s.caughtUp() // the body reaches the body log once applied
			after, _ := os.ReadFile(seg)
			if !bytes.Equal(after[:end], raw[:end]) || !bytes.HasPrefix(after[end+frameHeader:], []byte("after the tear")) {
				t.Fatalf("the next body is not where the torn bytes began: %q", after[end:min(len(after), end+40)])
			}
			for n, id := range append(ids, res.ID) {
				want := fmt.Sprint("body ", n)
				if n == len(ids) {
					want = "after the tear"
				}
				if rec, err := s.Event(id); err != nil || string(rec.Event.Body) != want {
					t.Fatalf("event %d: %v", n, err)
				}
			}
		})
	}
}

// TestCorruptBodyIsAnError: a body whose bytes changed on disk is reported,
// never handed out.
func TestCorruptBodyIsAnError(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	res, err := s.Ingest(context.Background(), newEvent("s", "", "original body", c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp() // the body reaches the body log once applied
	seg := segmentFiles(t, path)[0]
	raw, _ := os.ReadFile(seg)
	i := bytes.Index(raw, []byte("original"))
	f, _ := os.OpenFile(seg, os.O_WRONLY, 0)
	f.WriteAt([]byte("ORIGINAL"), int64(i))
	f.Close()
	if _, err := s.Event(res.ID); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("reading a changed body: %v", err)
	}
}

// TestRetentionDeletesWholeSegments: once every event in a segment is
// swept, the segment file goes; the segment being written stays, and so
// does one that still holds a pending event.
func TestRetentionDeletesWholeSegments(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openSegmented(t, path, c, 8<<10)
	ctx := context.Background()
	body := strings.Repeat("b", 3000)
	var ids []store.ID
	for range 30 {
		res, err := s.Ingest(ctx, newEvent("s", "", body, c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
		c.Add(time.Millisecond)
		s.caughtUp() // applied one by one: a batch's bodies share a segment
	}
	if n := len(segmentFiles(t, path)); n < 8 {
		t.Fatalf("%d segments for 90 KB of bodies in 8 KB segments", n)
	}
	stuck := ids[12]
	for _, id := range ids {
		if id != stuck {
			finish(t, s, id, 0, store.StateDelivered, c)
		}
	}
	c.Add(time.Hour)
	if n, err := s.Sweep(ctx, c.Now(), 7); err != nil || n != 29 {
		t.Fatalf("swept %d: %v", n, err)
	}
	segs := segmentFiles(t, path)
	if len(segs) != 2 {
		t.Fatalf("after the sweep: %v, want the stuck event's segment and the active one", segs)
	}
	if rec, err := s.Event(stuck); err != nil || string(rec.Event.Body) != body {
		t.Fatalf("the pending event: %v", err)
	}
	// New events go on in the active segment, and a reopen keeps both.
	if _, err := s.Ingest(ctx, newEvent("s", "", "new", c, "u")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openSegmented(t, path, c, 8<<10)
	if rec, err := s.Event(stuck); err != nil || string(rec.Event.Body) != body {
		t.Fatalf("the pending event after reopening: %v", err)
	}
	finish(t, s, stuck, 0, store.StateDelivered, c)
	if _, err := s.Sweep(ctx, c.Now().Add(time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	if segs := segmentFiles(t, path); len(segs) != 1 {
		t.Fatalf("after sweeping everything: %v", segs)
	}
}

// TestUnreferencedSegmentsGoAtOpen: a segment emptied by a sweep whose
// process died before it removed the file is removed at the next open.
func TestUnreferencedSegmentsGoAtOpen(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	if _, err := s.Ingest(context.Background(), newEvent("s", "", "x", c, "u")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Segment 1 holds the event; an older, unreferenced one is left over.
	orphan := filepath.Join(bodyLogDir(path), segmentName(0))
	if err := os.WriteFile(orphan, []byte("left over"), 0o600); err != nil {
		t.Fatal(err)
	}
	openTest(t, path, c)
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unreferenced segment is still there: %v", err)
	}
	if len(segmentFiles(t, path)) != 1 {
		t.Fatal("the referenced segment went too")
	}
}

// TestBackupHoldsSegmentsRetentionEmpties: a segment that a sweep empties
// while a backup copies is in the copy, and is deleted once it ends.
func TestBackupHoldsSegmentsRetentionEmpties(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openSegmented(t, path, c, 4<<10)
	ctx := context.Background()
	var ids []store.ID
	for n := range 10 {
		res, err := s.Ingest(ctx, newEvent("s", "", fmt.Sprintf("%04d%s", n, strings.Repeat("z", 3000)), c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		finish(t, s, res.ID, 0, store.StateDelivered, c)
		ids = append(ids, res.ID)
	}
	c.Add(time.Hour)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.Backup(pw, func(int64) {
			// The snapshot is taken: sweep everything it holds.
			if n, err := s.Sweep(ctx, c.Now(), 100); err != nil || n != 10 {
				done <- fmt.Errorf("swept %d: %v", n, err)
			}
		})
		pw.CloseWithError(err)
		done <- err
	}()
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := Unpack(pr, copyPath); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, path)); n != 1 {
		t.Fatalf("%d segments left after the backup ended, want the active one", n)
	}
	restored := openTest(t, copyPath, c)
	for n, id := range ids {
		rec, err := restored.Event(id)
		if err != nil || !strings.HasPrefix(string(rec.Event.Body), fmt.Sprintf("%04d", n)) {
			t.Fatalf("event %d in the copy: %v", n, err)
		}
	}
}

// TestRecordsRoundTrip: every field of an event, a delivery and an attempt
// comes back from the encoding as it went in; a truncated record is an
// error, not a panic.
func TestRecordsRoundTrip(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	e := store.Event{Source: "src", ReceivedAt: at, Method: "POST", Path: "/p", RawQuery: "a=1", Host: "h",
		RemoteAddr: "1.2.3.4:5", Proto: "https", ViaTrustedProxy: true,
		Header:   http.Header{"A": {"1", "2"}, "Empty": {}, "B": {""}, "Content-Type": {"application/json"}, "X-Slack-Signature": {"v0=1"}},
		DedupKey: "k", Unrouted: true, Quarantined: "q", Handshake: "h", Origin: store.OriginReconcile, Secret: 2, Trace: map[string]string{"traceparent": "x"}}
	ref := bodyRef{segment: 3, offset: 1 << 40, length: 12345}
	rec := appendBodyRef(encodeEvent(&e), ref)
	if bytes.Contains(rec, []byte("Content-Type")) || !bytes.Contains(rec, []byte("Empty")) {
		t.Fatal("a common header name is written out, or an uncommon one is not")
	}
	var got store.Event
	gotRef, ok, err := decodeEvent(rec, &got)
	if err != nil || !ok || gotRef != ref {
		t.Fatalf("ref %+v %v %v", gotRef, ok, err)
	}
	if !got.ReceivedAt.Equal(at) {
		t.Fatalf("time %v", got.ReceivedAt)
	}
	got.ReceivedAt = at
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("event\n got %+v\nwant %+v", got, e)
	}
	d := store.Delivery{Upstream: "u", Route: "r", State: store.StateDead, Attempts: 7, NextAt: at, LastStatus: 503,
		LastError: "e", UpdatedAt: at.Add(time.Second), RetryBase: 2, ReplayedAt: at.Add(time.Minute), OrderKey: "o",
		Shaping: store.Shaping{Path: "/x", SetHeaders: map[string]string{"X": "1"}, RemoveHeaders: []string{"Y"}}, Transformed: true}
	var gd store.Delivery
	if err := decodeDelivery(encodeDelivery(&d), &gd); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*time.Time{&gd.NextAt, &gd.UpdatedAt, &gd.ReplayedAt} {
		*p = p.In(at.Location())
	}
	if !reflect.DeepEqual(gd, d) {
		t.Fatalf("delivery\n got %+v\nwant %+v", gd, d)
	}
	for _, state := range []store.State{store.StatePending, store.StateCanceled, "a state of a newer version"} {
		var got store.Delivery
		if err := decodeDelivery(encodeDelivery(&store.Delivery{State: state}), &got); err != nil || got.State != state {
			t.Fatalf("state %q came back as %q: %v", state, got.State, err)
		}
	}
	a := store.Attempt{N: 3, At: at, Duration: -5, Status: 200, Error: "e", Response: "r"}
	var ga store.Attempt
	if err := decodeAttempt(encodeAttempt(&a), &ga); err != nil || !ga.At.Equal(at) {
		t.Fatal(err)
	}
	ga.At = at
	if ga != a {
		t.Fatalf("attempt %+v", ga)
	}
	for i := 1; i < len(rec); i++ {
		var e store.Event
		// Only a cut between fields can decode; it then lacks later ones.
		if r, ok, err := decodeEvent(rec[:i], &e); err == nil && ok && r == ref {
			t.Fatalf("a record cut at %d of %d decodes whole", i, len(rec))
		}
	}
	if _, _, err := decodeEvent([]byte{recordFormat, 99}, new(store.Event)); err == nil {
		t.Fatal("an unknown field decodes")
	}
}

// copyFixture copies the version 1 store in testdata to a temporary path.
func copyFixture(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hookgate.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fixtureState is what the version 1 fixture holds, read through the
// store: every event with its body, deliveries and attempts, and the
// learned secret.
func fixtureState(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	events, _, err := s.List(store.ListFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		rec, err := s.Event(events[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		e := rec.Event
		fmt.Fprintf(&b, "%s %s %s %s %s %q %s %s %s %v %v %q %v\n", e.ID, e.Source, e.ReceivedAt.UTC(), e.Method, e.Path, e.Body,
			e.RemoteAddr, e.Host, e.Proto, e.Header, e.Trace, e.DedupKey, e.Unrouted)
		for _, d := range rec.Deliveries {
			fmt.Fprintf(&b, "  %d %s %s %s %d %s %s %q %v %v %v\n", d.Key.Index, d.Upstream, d.Route, d.State, d.Attempts,
				d.NextAt.UTC(), d.UpdatedAt.UTC(), d.OrderKey, d.Shaping, d.Transformed, d.LastStatus)
			for _, a := range rec.Attempts[d.Key.Index] {
				fmt.Fprintf(&b, "    %d %s %s %d %q %q\n", a.N, a.At.UTC(), a.Duration, a.Status, a.Error, a.Response)
			}
		}
	}
	secrets, err := s.LearnedSecrets()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "secrets %+v\n", secrets)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "stats %d events, %d pending, %d unrouted, pending count %d\n", st.Events, st.Pending, st.Unrouted, s.Pending())
	return b.String()
}

// legacyState reads the version 1 fixture with bbolt and encoding/json
// alone, as the version that wrote it did.
func legacyState(t *testing.T, path string) (events int, bodies map[store.ID]string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bodies = map[store.ID]string{}
	db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketBodies).ForEach(func(k, v []byte) error {
			var id store.ID
			copy(id[:], k)
			bodies[id] = string(v)
			return nil
		})
	})
	return len(bodies), bodies
}

// TestUpgradeFromVersion1 opens a file written by the version before the
// body log: every event, body, delivery, attempt and learned secret reads
// the same after the upgrade as the old layout held, the bodies are in the
// log and out of the file, and the upgraded file takes new writes.
func TestUpgradeFromVersion1(t *testing.T) {
	path := copyFixture(t)
	n, legacyBodies := legacyState(t, path)
	if n != 61 {
		t.Fatalf("the fixture holds %d bodies", n)
	}
	c := &clock{now: time.Date(2026, 11, 1, 12, 30, 0, 0, time.UTC)} // within the fixture's dedup window
	var logged []string
	s, err := Open(path, Options{Now: c.Now, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "61 events' bodies moved") {
		t.Fatalf("logged %q", logged)
	}
	for id, body := range legacyBodies {
		rec, err := s.Event(id)
		if err != nil || string(rec.Event.Body) != body {
			t.Fatalf("event %s after the upgrade: %.40q, %v", id, rec.Event.Body, err)
		}
	}
	state := fixtureState(t, s)
	for _, want := range []string{"delivered 1", "dead 1", `"HTTP 500" "boom"`, "cus_1", "/t", "X-A", "traceparent", "zoom", "unrouted", "61 events, 75 pending"} {
		if !strings.Contains(state, want) {
			t.Fatalf("the upgraded store lacks %q:\n%s", want, state)
		}
	}
	res, err := s.Ingest(context.Background(), newEvent("stripe", "evt_0", "dup", c, "app"))
	if err != nil || !res.Duplicate {
		t.Fatalf("a dedup key from before the upgrade no longer holds: %+v %v", res, err)
	}
	s.Close()

	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bbolt.Tx) error {
		if k, _ := tx.Bucket(bucketBodies).Cursor().First(); k != nil {
			t.Error("bodies are left in the bodies bucket")
		}
		for _, name := range [][]byte{bucketEvents, bucketDeliveries, bucketAttempts} {
			tx.Bucket(name).ForEach(func(k, v []byte) error {
				if v[0] != recordFormat {
					t.Errorf("%s %x is still JSON", name, k)
				}
				return nil
			})
		}
		return nil
	})
	db.Close()

	// Opening again changes nothing.
	s2 := openTest(t, path, c)
	if again := fixtureState(t, s2); again != state {
		t.Fatalf("a second open reads differently:\n%s\n---\n%s", again, state)
	}
}

// TestUpgradeStoppedPartWay: an upgrade that stops after a batch (the
// process dies) leaves a store that the next open finishes upgrading, with
// nothing lost or doubled.
func TestUpgradeStoppedPartWay(t *testing.T) {
	path := copyFixture(t)
	c := &clock{now: time.Date(2026, 11, 1, 12, 30, 0, 0, time.UTC)} // within the fixture's dedup window
	whole := openTest(t, copyFixture(t), c)
	want := fixtureState(t, whole)

	defer func(batch int) { upgradeBatch, afterUpgradeBatch = batch, func() error { return nil } }(upgradeBatch)
	upgradeBatch = 10
	batches := 0
	afterUpgradeBatch = func() error {
		if batches++; batches == 3 {
			return errors.New("stopped")
		}
		return nil
	}
	if _, err := Open(path, Options{Now: c.Now}); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("open with the upgrade stopped: %v", err)
	}
	afterUpgradeBatch = func() error { return nil }
	s := openTest(t, path, c)
	if got := fixtureState(t, s); got != want {
		t.Fatalf("after a stopped upgrade:\n%s\n---\nwant\n%s", got, want)
	}
}

// uncommitted appends an event's body to the body log as the writer does
// and returns its write, not yet committed: the body is synced, the record
// that refers to it is not. Call it with no other write under way.
func uncommitted(t *testing.T, s *Store, c *clock, body string) (*writeOp, store.ID) {
	t.Helper()
	e := newEvent("s", "", body, c).Event
	e.ID = s.ids.Next(c.Now())
	meta := encodeEvent(e)
	op := &writeOp{body: e.Body, hasBody: true, done: make(chan error, 1)}
	op.fn = func(tx *bbolt.Tx, ref bodyRef) error {
		if err := putEvent(tx, e.ID, appendBodyRef(meta, ref)); err != nil {
			return err
		}
		return countSegment(tx, ref.segment, 1)
	}
	if err := s.appendBodies([]*writeOp{op}); err != nil {
		t.Fatal(err)
	}
	return op, e.ID
}

// emptiedWhileWriting sets up segment 1 holding one finished event, old,
// and two bodies of writes not yet committed, with the writer gone on to
// segment 2.
func emptiedWhileWriting(t *testing.T, s *Store, c *clock) (old store.ID, late []*writeOp, lateIDs []store.ID) {
	t.Helper()
	res, err := s.Ingest(context.Background(), newEvent("s", "", strings.Repeat("o", 3000), c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	finish(t, s, res.ID, 0, store.StateDelivered, c)
	for n := range 3 {
		op, id := uncommitted(t, s, c, fmt.Sprintf("late %d %s", n, strings.Repeat("l", 3000)))
		late, lateIDs = append(late, op), append(lateIDs, id)
	}
	if got := []uint64{late[0].ref.segment, late[1].ref.segment, late[2].ref.segment}; !reflect.DeepEqual(got, []uint64{1, 1, 2}) {
		t.Fatalf("the late bodies are in segments %v, want 1, 1 and 2", got)
	}
	c.Add(time.Hour)
	return res.ID, late, lateIDs
}

func commitNow(t *testing.T, s *Store, ops ...*writeOp) {
	t.Helper()
	s.commit(ops)
	for _, op := range ops {
		if err := <-op.done; err != nil {
			t.Fatal(err)
		}
	}
}

func checkBodies(t *testing.T, s *Store, ids []store.ID, when string) {
	t.Helper()
	for n, id := range ids[:2] {
		rec, err := s.Event(id)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := fmt.Sprintf("late %d %s", n, strings.Repeat("l", 3000)); string(rec.Event.Body) != want {
			t.Fatalf("%s: event %d's body is %.20q", when, n, rec.Event.Body)
		}
	}
}

// TestSweepKeepsSegmentOfUncommittedBodies: a sweep that deletes the last
// committed event of a segment while bodies appended to it wait for their
// commit, the writer having gone on to the next segment, leaves the
// segment; once those events go too, it goes.
func TestSweepKeepsSegmentOfUncommittedBodies(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openSegmented(t, path, c, 8<<10)
	_, late, ids := emptiedWhileWriting(t, s, c)
	if n, err := s.Sweep(context.Background(), c.Now(), 100); err != nil || n != 1 {
		t.Fatalf("swept %d: %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(bodyLogDir(path), segmentName(1))); err != nil {
		t.Fatalf("the sweep removed segment 1, which bodies awaiting their commit are in: %v", err)
	}
	commitNow(t, s, late...)
	checkBodies(t, s, ids, "after the commit")
	c.Add(time.Hour)
	if n, err := s.Sweep(context.Background(), c.Now(), 100); err != nil || n != 3 {
		t.Fatalf("swept %d: %v", n, err)
	}
	if segs := segmentFiles(t, path); len(segs) != 1 || filepath.Base(segs[0]) != segmentName(2) {
		t.Fatalf("after sweeping every event: %v, want the active segment alone", segs)
	}
}

// TestSweepKeepsSegmentReferredToInItsTransaction: when the committer puts
// a sweep and later writes into one transaction, a segment the sweep saw
// emptied may be referred to again by the time the transaction commits.
func TestSweepKeepsSegmentReferredToInItsTransaction(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openSegmented(t, path, c, 8<<10)
	old, late, ids := emptiedWhileWriting(t, s, c)
	var emptied []uint64
	sweep := &writeOp{done: make(chan error, 1), fn: func(tx *bbolt.Tx, _ bodyRef) error {
		return deleteEvent(tx, old[:], &emptied)
	}}
	commitNow(t, s, append([]*writeOp{sweep}, late...)...)
	if !reflect.DeepEqual(emptied, []uint64{1}) {
		t.Fatalf("the sweep emptied segments %v, want 1", emptied)
	}
	// What sweepEvents does once its transaction is on disk.
	if err := s.bodies.remove(emptied...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bodyLogDir(path), segmentName(1))); err != nil {
		t.Fatalf("segment 1 was removed though events committed with the sweep refer to it: %v", err)
	}
	checkBodies(t, s, ids, "after the sweep")
}

// damageBody overwrites a byte of body inside the store's body log, as a
// disk that rotted would.
func damageBody(t *testing.T, storePath, body string) {
	t.Helper()
	for _, name := range segmentFiles(t, storePath) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, []byte(body)); i >= 0 {
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{data[i] ^ 0xff}, int64(i)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%q is in no segment", body)
}

// TestDamagedBodyDoesNotHoldUpTheQueue: a due delivery whose event's body
// fails its checksum comes back with the error and the event's metadata,
// and the deliveries behind it come back as usual.
func TestDamagedBodyDoesNotHoldUpTheQueue(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	ctx := context.Background()
	var ids []store.ID
	for _, body := range []string{"damaged body", "good body 1", "good body 2"} {
		res, err := s.Ingest(ctx, newEvent("s", "", body, c, "u"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
		c.Add(time.Millisecond)
	}
	s.caughtUp() // bodies reach the body log once applied
	damageBody(t, path, "damaged body")
	claimed, err := s.Claim(ctx, "u", c.Now(), 10)
	if err != nil {
		t.Fatalf("one damaged body failed the whole claim: %v", err)
	}
	if len(claimed.Tasks) != 3 {
		t.Fatalf("claimed %d tasks, want 3", len(claimed.Tasks))
	}
	first := claimed.Tasks[0]
	if first.EventErr == nil || !strings.Contains(first.EventErr.Error(), "fails its checksum") {
		t.Fatalf("the damaged event's error: %v", first.EventErr)
	}
	if first.Event == nil || first.Event.ID != ids[0] || first.Event.Source != "s" {
		t.Fatalf("the damaged event's metadata: %+v", first.Event)
	}
	for i, task := range claimed.Tasks[1:] {
		if task.EventErr != nil || string(task.Event.Body) != fmt.Sprintf("good body %d", i+1) {
			t.Fatalf("task %d: %q %v", i+1, task.Event.Body, task.EventErr)
		}
	}
}

// TestSpareSegmentAtACrash: a crash can leave the spare segment made ahead,
// empty, after the active one, whose tail may be torn: the open removes the
// spare and cuts the torn tail of the segment before it.
func TestSpareSegmentAtACrash(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	res, err := s.Ingest(context.Background(), newEvent("s", "", "kept", c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	s.caughtUp()
	s.Close()
	segs := segmentFiles(t, path)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	raw, _ := os.ReadFile(segs[0])
	end := len(bytes.TrimRight(raw, "\x00"))
	torn := append(raw[:end:end], 0, 0, 0, 9, 1, 2, 3, 4, 'x') // a frame cut short
	if err := os.WriteFile(segs[0], torn, 0o600); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(bodyLogDir(path), segmentName(2))
	if err := os.WriteFile(spare, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, c)
	if _, err := os.Stat(spare); !os.IsNotExist(err) {
		t.Fatalf("the empty spare is still there: %v", err)
	}
	if st, _ := os.Stat(segs[0]); st.Size() < int64(end) {
		t.Fatalf("segment cut to %d, below its frames' %d", st.Size(), end)
	}
	next, err := s.Ingest(context.Background(), newEvent("s", "", "after", c, "u"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[store.ID]string{res.ID: "kept", next.ID: "after"} {
		if rec, err := s.Event(id); err != nil || string(rec.Event.Body) != want {
			t.Fatalf("event %s: %v", id, err)
		}
	}
	after, _ := os.ReadFile(segs[0])
	if !bytes.HasPrefix(after[end+frameHeader:], []byte("after")) {
		t.Fatalf("the next body is not where the torn frame began: %q", after[end:end+20])
	}
}
