package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	"github.com/hookgate/hookgate/test/e2e/powerfs"
)

// sweepSegmentSize makes the body log start a segment every dozen events,
// so that sweeps remove segments all the time, and the write-ahead log
// recycle its segments all the time.
const sweepSegmentSize = 32 << 10

// TestPowerLossDuringSweep cuts the power while the store sweeps. A child
// process (this test binary) runs the bbolt store on powerfs as the
// gateway does, with a retention of zero: four writers ingest events with
// dedup keys (in turns of 300 ms, unrouted ones, which a sweep may delete
// as soon as they are stored), a deliverer retries each delivery once and then settles it
// delivered, and a sweeper deletes every finished event, over and over,
// removing body segments as they empty. After a random 0.3-2 s (every
// other time, then once a sweep has begun) the child is killed and the
// power cut (tearing each file's last unsynced write).
// What the disk kept is then checked on a copy:
//   - it passes bbolt's consistency check and opens as a store;
//   - every event ACKed with a delivery not (maybe) settled delivered is there;
//   - every event there reads back, body and all (an event whose body
//     segment a sweep removed would not), with the body it was ACKed with;
//   - a sample of the ACKed events still there are duplicates when sent again.
//
// HOOKGATE_SWEEP_POWERCUTS sets the number of cuts (default 8);
// HOOKGATE_SWEEP_POWERCUTS_SEED fixes the random choices (not the timing).
func TestPowerLossDuringSweep(t *testing.T) {
	cuts := envCount(t, "HOOKGATE_SWEEP_POWERCUTS", 8)
	seed := envSeed(t, "HOOKGATE_SWEEP_POWERCUTS_SEED")
	rng := rand.New(rand.NewPCG(seed, 5))
	dir := t.TempDir()
	disk, mnt := filepath.Join(dir, "disk"), filepath.Join(dir, "data")
	for _, d := range []string{disk, mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h := &sweepHistory{acked: map[string]ackedEvent{}, settling: map[string]bool{}, delivered: map[string]bool{}}
	var duringSweep, torn, sweeps, checked, dupsChecked int
	start := time.Now()
	for cycle := 1; cycle <= cuts; cycle++ {
		fsys, err := powerfs.Mount(mnt, disk, nil)
		if err != nil {
			t.Fatalf("%v\nTestPowerLossDuringSweep mounts a FUSE file system: it needs root and /dev/fuse (scripts/test.sh runs as root)", err)
		}
		t.Cleanup(func() { fsys.Cut(powerfs.CutOptions{}) })
		// Every other cut waits, after its random time, for a sweep to begin.
		run := h.runChild(t, filepath.Join(mnt, "hookgate.db"), time.Duration(300+rng.IntN(1700))*time.Millisecond, cycle%2 == 0)
		report, err := fsys.Cut(powerfs.CutOptions{Tear: true, Rand: rng})
		if err != nil {
			t.Fatalf("cutting the power: %v", err)
		}
		if report.Note != "" {
			t.Log(report.Note)
		}
		torn += len(report.Torn)
		if run.inSweep {
			duringSweep++
		}
		sweeps += run.sweeps
		n, d := h.check(t, disk, fmt.Sprintf("cut %d", cycle), report, rng)
		checked += n
		dupsChecked += d
		if cuts <= 20 || cycle%50 == 0 {
			t.Logf("cut %d: %d ACKed, %d settled delivered so far; %d sweeps this run, cut during one: %v; %d events on disk",
				cycle, h.ackedTotal, h.deliveredTotal, run.sweeps, run.inSweep, n)
		}
	}
	if duringSweep == 0 {
		t.Fatalf("none of the %d cuts came during a sweep: the test did not test what it is for", cuts)
	}
	if sweeps == 0 || h.deliveredTotal == 0 {
		t.Fatalf("%d sweeps and %d deliveries settled: the child did not run", sweeps, h.deliveredTotal)
	}
	t.Logf("%d power cuts (%d during a sweep) in %s: %d events ACKed, 0 lost, %d settled delivered, %d sweeps; "+
		"%d events read back after the cuts, %d sent again and answered as duplicates; %d writes torn",
		cuts, duringSweep, time.Since(start).Round(time.Second), h.ackedTotal, h.deliveredTotal, sweeps, checked, dupsChecked, torn)
	if h.readErrors > 0 {
		t.Logf("%d due events did not read in the children and did when tried again; the last: %s", h.readErrors, h.lastReadError)
	}
}

type ackedEvent struct {
	key string
	sum [sha256.Size]byte
	// unrouted: finished when stored, so a sweep may delete it at once.
	unrouted bool
}

// sweepHistory is what the children reported, across cuts.
type sweepHistory struct {
	acked map[string]ackedEvent
	// settling holds deliveries whose settle as delivered began: once it
	// commits, a sweep may delete the event before the child says so.
	settling  map[string]bool
	delivered map[string]bool
	// Totals over the run; the maps forget events swept.
	ackedTotal, deliveredTotal int
	// Due events that did not read in a child and were tried again, and
	// the last error.
	readErrors    int
	lastReadError string
}

type sweepRun struct {
	sweeps  int
	inSweep bool // the last sweep had begun and not ended at the kill
}

// runChild runs the sweeper child on the store at path for d (and then, if
// inSweep, until it says a sweep began), kills it and records what it
// reported.
func (h *sweepHistory) runChild(t *testing.T, path string, d time.Duration, inSweep bool) sweepRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOOKGATE_E2E_CHILD=sweeper", "HOOKGATE_E2E_STORE="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var run sweepRun
	var sweeping atomic.Bool
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			switch {
			case len(f) == 5 && f[0] == "A":
				var e ackedEvent
				sum, err := hex.DecodeString(f[3])
				if err != nil || len(sum) != sha256.Size {
					bad = append(bad, lines.Text())
					continue
				}
				e.key, e.unrouted = f[2], f[4] == "true"
				copy(e.sum[:], sum)
				h.acked[f[1]] = e
				h.ackedTotal++
			case len(f) == 2 && f[0] == "d":
				h.settling[f[1]] = true
			case len(f) == 2 && f[0] == "D":
				h.delivered[f[1]] = true
				h.deliveredTotal++
			case len(f) == 1 && f[0] == "s":
				run.inSweep = true
				sweeping.Store(true)
			case len(f) == 2 && f[0] == "S":
				run.inSweep = false
				sweeping.Store(false)
				run.sweeps++
			case len(f) > 1 && f[0] == "R":
				h.readErrors++
				h.lastReadError = strings.TrimPrefix(lines.Text(), "R ")
			default:
				bad = append(bad, lines.Text())
			}
		}
	}()
	exited := make(chan error, 1)
	go func() {
		<-done
		exited <- cmd.Wait()
	}()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) || (inSweep && !sweeping.Load() && time.Now().Before(deadline.Add(5*time.Second))) {
		select {
		case err := <-exited:
			t.Fatalf("the sweeper child ended by itself (%v): %s", err, stderr.String())
		case <-time.After(time.Millisecond):
		}
	}
	// Kill first, then cut: no write arrives after the power is gone.
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	if len(bad) > 0 {
		t.Fatalf("the sweeper child said %q\n%s", bad, stderr.String())
	}
	return run
}

// check opens a copy of what the disk kept and checks it against what the
// children reported. It returns how many events the store holds and how
// many were sent again as duplicates.
func (h *sweepHistory) check(t *testing.T, disk, when string, report powerfs.CutReport, rng *rand.Rand) (events, dups int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\nwhat the cut dropped: %s\nthe disk holds: %s", when, fmt.Sprintf(format, args...), report, listTree(disk))
	}
	// A copy: opening the store cuts a torn tail and removes segments no
	// event refers to, which the next run must do itself, on powerfs.
	cp := filepath.Join(t.TempDir(), "copy")
	if err := copyTree(disk, cp); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cp, "hookgate.db")
	// Opened once first, as the next run would: events ACKed but still in
	// the write-ahead log are applied to the file.
	recovered, err := bolt.Open(path, bolt.Options{SegmentSize: sweepSegmentSize, WALSegmentSize: sweepSegmentSize})
	if err != nil {
		fail("the store does not open: %v", err)
	}
	recovered.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		fail("the store file does not open: %v", err)
	}
	var ids []string
	err = db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		return tx.Bucket([]byte("events")).ForEach(func(k, _ []byte) error {
			var id store.ID
			copy(id[:], k)
			ids = append(ids, id.String())
			return nil
		})
	})
	db.Close()
	if err != nil {
		fail("%v", err)
	}
	s, err := bolt.Open(path, bolt.Options{SegmentSize: sweepSegmentSize, WALSegmentSize: sweepSegmentSize})
	if err != nil {
		fail("the store does not open: %v", err)
	}
	defer s.Close()
	present := map[string]bool{}
	for _, id := range ids {
		parsed, err := store.ParseID(id)
		if err != nil {
			fail("event id %q: %v", id, err)
		}
		rec, err := s.Event(parsed)
		if err != nil {
			fail("event %s is in the store but does not read back: %v", id, err)
		}
		if e, ok := h.acked[id]; ok && sha256.Sum256(rec.Event.Body) != e.sum {
			fail("event %s reads back with another body than the one ACKed", id)
		}
		present[id] = true
	}
	var lost []string
	for id, e := range h.acked {
		if !present[id] && !e.unrouted && !h.delivered[id] && !h.settling[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		fail("%d of the %d events ACKed with a delivery not yet settled are not in the store, e.g. %v", len(lost), len(h.acked), lost[:min(5, len(lost))])
	}
	// Those settled delivered and gone: forget them, or the history grows
	// with every cut.
	for id := range h.acked {
		if !present[id] {
			delete(h.acked, id)
		}
	}
	for _, m := range []map[string]bool{h.settling, h.delivered} {
		for id := range m {
			if !present[id] {
				delete(m, id)
			}
		}
	}
	for _, i := range rng.Perm(len(ids)) {
		e, ok := h.acked[ids[i]]
		if !ok {
			continue
		}
		res, err := s.Ingest(context.Background(), sweeperEvent(e.key, []byte("sent again"), false))
		if err != nil || !res.Duplicate || res.ID.String() != ids[i] {
			fail("event %s (dedup key %s), ACKed and still in the store, sent again: duplicate=%v id=%s %v", ids[i], e.key, res.Duplicate, res.ID, err)
		}
		if dups++; dups == 4 {
			break
		}
	}
	return len(ids), dups
}

// copyTree copies the files under src to dst.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// sweeperEvent is an event with one delivery, or an unrouted one, which a
// sweep may delete as soon as it is stored.
func sweeperEvent(key string, body []byte, unrouted bool) *store.NewEvent {
	now := time.Now()
	e := &store.NewEvent{
		Event: &store.Event{Source: "s", ReceivedAt: now, Method: "POST", Path: "/webhooks/s",
			Header: http.Header{"Content-Type": {"application/json"}}, Body: body, Unrouted: unrouted},
		DedupKey: key, DedupUntil: now.Add(time.Hour),
	}
	if !unrouted {
		e.Targets = []store.Target{{Upstream: "u", Route: "r"}}
	}
	return e
}

// sweeperChild runs the bbolt store at path as the gateway does when its
// retention is zero, until it is killed: four writers ingest (unrouted
// events, finished at once, in turns), a deliverer retries each delivery
// once and then settles it delivered, and a sweeper
// deletes every finished event. It reports each step once it is durable,
// one line each on stdout:
//
//	A <id> <dedup key> <sha256 of the body> <unrouted>   an event was ACKed
//	d <id> / D <id>                          settling it delivered began / ended
//	s / S <deleted>                          a sweep began / ended
//	R <error>                                a due event did not read; it is tried again
func sweeperChild(path string) error {
	s, err := bolt.Open(path, bolt.Options{SegmentSize: sweepSegmentSize, WALSegmentSize: sweepSegmentSize})
	if err != nil {
		return err
	}
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
		outMu.Unlock()
	}
	failed := make(chan error, 1)
	fatal := func(err error) {
		select {
		case failed <- err:
		default:
		}
	}
	wake := make(chan struct{}, 1)
	err = s.Configure(map[string]store.UpstreamSettings{"u": {AttemptTimeout: time.Second}}, func(string) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return err
	}
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for w := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
			for n := 0; ; n++ {
				body := make([]byte, 200+rng.IntN(4000))
				for i := range body {
					body[i] = 'a' + byte(rng.IntN(26))
				}
				key := fmt.Sprintf("%s-%d-%d", run, w, n)
				// Unrouted in turns of 300 ms: segments that hold only
				// unrouted events empty as soon as they fill.
				unrouted := time.Now().UnixMilli()/300%2 == 0
				res, err := s.Ingest(ctx, sweeperEvent(key, body, unrouted))
				if err != nil {
					fatal(fmt.Errorf("ingest: %w", err))
					return
				}
				say("A %s %s %x %v", res.ID, key, sha256.Sum256(body), unrouted)
			}
		}()
	}
	go func() {
		// Through FUSE on some kernels a body read can come back as zeros
		// for a moment (docs/durability.md); its frame's checksum makes it
		// a task's EventErr, and the engine, like this loop, tries again.
		// One that lasts is a body really gone.
		failingSince := map[store.DeliveryKey]time.Time{}
		for {
			claimed, err := s.Claim(ctx, "u", time.Now(), 200)
			if err != nil {
				fatal(fmt.Errorf("claim: %w", err))
				return
			}
			readable := claimed.Tasks[:0]
			for _, task := range claimed.Tasks {
				k := task.Delivery.Key
				if task.EventErr == nil {
					delete(failingSince, k)
					readable = append(readable, task)
					continue
				}
				if _, seen := failingSince[k]; !seen {
					failingSince[k] = time.Now()
					say("R %v", task.EventErr)
				}
				if time.Since(failingSince[k]) > 3*time.Second {
					fatal(fmt.Errorf("reading a due event, failing for 3 s: %w", task.EventErr))
					return
				}
				s.Release(k)
			}
			claimed.Tasks = readable
			// Settled together, as the engine's workers do: one commit
			// takes many.
			var settles sync.WaitGroup
			for _, task := range claimed.Tasks {
				settles.Go(func() {
					o := store.Outcome{Key: task.Delivery.Key, Attempt: store.Attempt{N: task.Delivery.Attempts + 1, At: time.Now(), Status: 503}}
					if task.Delivery.Attempts == 0 {
						// Pending across a cut or two before it is delivered.
						o.Next, o.RetryAt = store.StatePending, time.Now().Add(300*time.Millisecond)
					} else {
						o.Next, o.Attempt.Status = store.StateDelivered, 200
						say("d %s", task.Event.ID)
					}
					if err := s.Settle(ctx, o); err != nil {
						fatal(fmt.Errorf("settle: %w", err))
						return
					}
					if o.Next == store.StateDelivered {
						say("D %s", task.Event.ID)
					}
				})
			}
			settles.Wait()
			wait := 20 * time.Millisecond
			if claimed.HasNext {
				wait = min(max(time.Until(claimed.Next), 0), wait)
			}
			select {
			case <-wake:
			case <-time.After(wait):
			}
		}
	}()
	go func() {
		for {
			say("s")
			n, err := s.Sweep(ctx, time.Now(), 50)
			if err != nil {
				fatal(fmt.Errorf("sweep: %w", err))
				return
			}
			say("S %d", n)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return <-failed
}
