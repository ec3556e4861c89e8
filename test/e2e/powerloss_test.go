package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	"github.com/hookgate/hookgate/test/e2e/powerfs"
)

// TestPowerLoss runs the gateway with its storage folder on powerfs, a file
// system that keeps only what was fsynced when the power is cut, under
// signed load from 8 senders. Each cycle runs for 0.3-3 s, then kills the
// gateway with SIGKILL and cuts the power (tearing each file's last unsynced
// write), and checks the disk: every event ACKed so far is in the store
// file, which passes bbolt's consistency check. Every fourth cycle first
// compacts the store offline (hookgate compact), half the time cutting the
// power in the middle. After each cut, a few events ACKed before it are
// sent again with the same delivery id: each must be answered as a
// duplicate of the same event. At the end every ACKed event is delivered,
// with the body it was ACKed with.
//
// HOOKGATE_POWERLOSS_CUTS sets the number of cuts (default 5);
// HOOKGATE_POWERLOSS_SEED fixes the random choices (not the timing).
func TestPowerLoss(t *testing.T) {
	cuts := envCount(t, "HOOKGATE_POWERLOSS_CUTS", 5)
	seed := envSeed(t, "HOOKGATE_POWERLOSS_SEED")
	up := newRecorder(t, "", nil)
	passthrough := newRecorder(t, "", nil)
	dir, port, admin := newGatewayDir(t, routesFor(up.addr), passthrough.addr)
	pl := &powerLoss{t: t, dir: dir, disk: filepath.Join(dir, "disk"), mnt: filepath.Join(dir, "data"),
		rng: rand.New(rand.NewPCG(seed, 3)), checked: map[string]bool{}, sums: map[string][sha256.Size]byte{}}
	for _, d := range []string{pl.disk, pl.mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	sender := newLoadSender(t)
	sender.onACK = pl.sample
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					// While the gateway is down, wait a little between
					// refused requests: spinning would slow its restart.
					failed := sender.errors.Load()
					sender.send(base, 1)
					if sender.errors.Load() != failed {
						time.Sleep(10 * time.Millisecond)
					}
				}
			}
		}()
	}

	start := time.Now()
	for cycle := 1; cycle <= cuts; cycle++ {
		fsys := pl.mount()
		if cycle%4 == 3 {
			fsys = pl.compact(fsys, sender, cycle)
		}
		resend := pl.pick(4)
		g := startGateway(t, dir, port, admin)
		pl.resend(g, resend)
		time.Sleep(time.Duration(300+pl.rng.IntN(2700)) * time.Millisecond)
		// Kill first, then cut: no write arrives after the power is gone.
		g.kill9()
		report := pl.cut(fsys)
		pl.cuts++
		// bbolt's whole-file check reads every page: on every cut of a
		// short run, every tenth of a long one, whose file grows large.
		pl.full = cuts <= 100 || cycle%10 == 0
		pl.check(sender.ackedIDs(), fmt.Sprintf("cut %d", cycle), report)
		// The cycle passed: a failure later prints only the logs of the
		// gateways that ran since, and a long run does not keep them all.
		g.log.mu.Lock()
		g.log.buf = bytes.Buffer{}
		g.log.mu.Unlock()
		if cuts <= 20 || cycle%50 == 0 {
			t.Logf("cut %d: %d ACKed so far; %d namespace changes and %d files' unsynced writes dropped, %d writes torn",
				cycle, len(sender.ackedIDs()), len(report.Ops), len(report.Files), len(report.Torn))
		}
	}

	// A last run, without a cut: everything ACKed is delivered.
	fsys := pl.mount()
	resend := pl.pick(4)
	g := startGateway(t, dir, port, admin)
	pl.resend(g, resend)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	acked := sender.ackedIDs()
	dups := checkDelivered(t, up, acked, 120*time.Second)
	pl.mu.Lock()
	for id, reqs := range up.byEvent() {
		if sum, ok := pl.sums[id]; ok && sha256.Sum256(reqs[0].Body) != sum {
			t.Errorf("event %s was delivered with another body than the one ACKed", id)
		}
	}
	pl.mu.Unlock()
	g.kill()
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	clear(pl.checked)
	pl.full = true
	pl.check(acked, "the end", powerfs.CutReport{})
	var size int64
	if info, err := os.Stat(filepath.Join(pl.disk, "hookgate.db")); err == nil {
		size = info.Size()
	}
	t.Logf("%d power cuts (%d after a run, %d during hookgate compact; %d compactions completed) in %s: "+
		"%d events ACKed, 0 lost, %d delivered more than once, %d ACKed events sent again after a cut and answered as duplicates, "+
		"%d writes torn, %d requests refused or failed while down; store file %d MiB",
		pl.cuts+pl.compactCuts, pl.cuts, pl.compactCuts, pl.compactions, time.Since(start).Round(time.Second),
		len(acked), dups, pl.resent, pl.torn, sender.errors.Load(), size>>20)
}

// powerLoss is the state of one TestPowerLoss run.
type powerLoss struct {
	t         *testing.T
	dir       string // the gateway's folder
	disk, mnt string // the backing directory and the mount, dir/data
	rng       *rand.Rand
	checked   map[string]bool              // ACKed ids already found on disk
	sums      map[string][sha256.Size]byte // the body of each ACKed event
	full      bool                         // whether check runs bbolt's whole-file check
	mu        sync.Mutex
	recent    []sentEvent // the last ACKed events, to send again
	next      int
	// What happened, for the summary.
	cuts, compactCuts, compactions, torn, resent int
}

type sentEvent struct {
	eventID, deliveryID string
	body                []byte
}

// sample keeps the last 64 ACKed events, and a digest of every ACKed body.
func (pl *powerLoss) sample(eventID, deliveryID string, body []byte) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.sums[eventID] = sha256.Sum256(body)
	e := sentEvent{eventID, deliveryID, body}
	if len(pl.recent) < 64 {
		pl.recent = append(pl.recent, e)
	} else {
		pl.recent[pl.next] = e
		pl.next = (pl.next + 1) % 64
	}
}

// pick returns up to n of the sampled events, all ACKed before now.
func (pl *powerLoss) pick(n int) []sentEvent {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []sentEvent
	for _, i := range pl.rng.Perm(len(pl.recent)) {
		if len(out) == n {
			break
		}
		out = append(out, pl.recent[i])
	}
	return out
}

// resend sends events ACKed before the last cut again, with the same
// delivery id and body: each must be answered as a duplicate of the event
// it was, which is then not delivered again (checkDelivered counts).
func (pl *powerLoss) resend(g *gateway, events []sentEvent) {
	github := newSigner(pl.t, "github", "gh-e2e-secret-0123456789")
	for _, e := range events {
		h := github.sign(pl.t, e.body, "")
		h.Set("X-GitHub-Delivery", e.deliveryID)
		status, hdr, resp := g.post("/webhooks/github", h, e.body)
		if status != 200 || hdr.Get("Hookgate-Duplicate") != "true" || hdr.Get("Hookgate-Event-Id") != e.eventID {
			pl.t.Errorf("event %s (delivery %s), ACKed before cut %d, sent again: %d duplicate=%q id=%q %s",
				e.eventID, e.deliveryID, pl.cuts, status, hdr.Get("Hookgate-Duplicate"), hdr.Get("Hookgate-Event-Id"), resp)
			continue
		}
		pl.resent++
	}
}

// mount mounts powerfs at dir/data over what the disk kept.
func (pl *powerLoss) mount() *powerfs.FS {
	pl.t.Helper()
	fsys, err := powerfs.Mount(pl.mnt, pl.disk, nil)
	if err != nil {
		pl.t.Fatalf("%v\nTestPowerLoss mounts a FUSE file system: it needs root and /dev/fuse (scripts/test.sh runs as root)", err)
	}
	// Cut or closed by then unless the test failed half-way; an error
	// says it was.
	pl.t.Cleanup(func() { fsys.Cut(powerfs.CutOptions{}) })
	return fsys
}

func (pl *powerLoss) cut(fsys *powerfs.FS) powerfs.CutReport {
	pl.t.Helper()
	report, err := fsys.Cut(powerfs.CutOptions{Tear: true, Rand: pl.rng})
	if err != nil {
		pl.t.Fatalf("cutting the power: %v", err)
	}
	pl.torn += len(report.Torn)
	if report.Note != "" {
		pl.t.Log(report.Note)
	}
	return report
}

// compact runs hookgate compact on the store, as an operator would with the
// gateway stopped; half the time the power is cut in the middle of it. It
// returns the mount to go on with.
func (pl *powerLoss) compact(fsys *powerfs.FS, sender *loadSender, cycle int) *powerfs.FS {
	pl.t.Helper()
	cmd := exec.Command(binary, "compact", "--store", filepath.Join(pl.mnt, "hookgate.db"))
	cmd.Dir = pl.dir
	cmd.Env = append(os.Environ(), "HOME="+pl.dir, "XDG_DATA_HOME="+pl.dir, "XDG_CONFIG_HOME="+pl.dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		pl.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if pl.rng.IntN(2) == 0 {
		select {
		case err := <-exited:
			// Finished before the cut: the cut then drops its rename
			// unless it made it durable.
			if err != nil {
				pl.t.Fatalf("hookgate compact: %v\n%s", err, out.String())
			}
		case <-time.After(time.Duration(pl.rng.IntN(150)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		}
		report := pl.cut(fsys)
		pl.compactCuts++
		pl.check(sender.ackedIDs(), fmt.Sprintf("cut %d (during hookgate compact)", cycle), report)
		return pl.mount()
	}
	if err := <-exited; err != nil {
		pl.t.Fatalf("hookgate compact: %v\n%s", err, out.String())
	}
	pl.compactions++
	return fsys
}

// check opens a copy of the store the disk kept as the next run would
// (applying what its write-ahead log holds), runs bbolt's consistency
// check (if pl.full) and looks up every ACKed event not yet found in the
// events bucket: a missing one is a lost ACKed event, and the message says
// what the cut dropped.
func (pl *powerLoss) check(acked map[string]bool, when string, report powerfs.CutReport) {
	pl.t.Helper()
	var todo []string
	for id := range acked {
		if !pl.checked[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return
	}
	slices.Sort(todo)
	path := filepath.Join(pl.disk, "hookgate.db")
	lost := func(missing []string, why string) {
		pl.t.Fatalf("%s: %d of the %d events ACKed so far are not on disk (%s), e.g. %v\n"+
			"what the cut dropped: %s\nthe disk holds: %s",
			when, len(missing), len(acked), why, missing[:min(5, len(missing))], report, listTree(pl.disk))
	}
	if _, err := os.Stat(path); err != nil {
		lost(todo, err.Error())
	}
	// On a copy, opened once as the next run would: the events ACKed but
	// still in the write-ahead log are applied to the file. The next run
	// does that itself, on powerfs, from what the disk kept.
	cp := filepath.Join(pl.t.TempDir(), "recovered")
	if err := copyTree(pl.disk, cp); err != nil {
		pl.t.Fatal(err)
	}
	defer os.RemoveAll(cp)
	path = filepath.Join(cp, "hookgate.db")
	recovered, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		pl.t.Fatalf("%s: the store does not open: %v\nwhat the cut dropped: %s\nthe disk holds: %s", when, err, report, listTree(pl.disk))
	}
	recovered.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		pl.t.Fatalf("%s: the store file does not open: %v\nwhat the cut dropped: %s", when, err, report)
	}
	defer db.Close()
	var missing []string
	err = db.View(func(tx *bbolt.Tx) error {
		if pl.full {
			for err := range tx.Check() {
				return fmt.Errorf("bbolt check: %w", err)
			}
		}
		// Only the events bucket: where a body is kept depends on the
		// store's layout; the end compares every delivered body.
		events := tx.Bucket([]byte("events"))
		if events == nil {
			missing = todo
			return nil
		}
		for _, s := range todo {
			id, err := store.ParseID(s)
			if err != nil {
				return fmt.Errorf("event id %q: %w", s, err)
			}
			if events.Get(id[:]) == nil {
				missing = append(missing, s)
			} else {
				pl.checked[s] = true
			}
		}
		return nil
	})
	if err != nil {
		pl.t.Fatalf("%s: %v\nwhat the cut dropped: %s", when, err, report)
	}
	if len(missing) > 0 {
		lost(missing, "not in the store file")
	}
}

// listTree names the files under dir with their sizes.
func listTree(dir string) string {
	var out []string
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, fmt.Sprintf("%s (%d bytes)", rel, info.Size()))
		}
		return nil
	})
	if len(out) == 0 {
		return "nothing"
	}
	return fmt.Sprint(out)
}
