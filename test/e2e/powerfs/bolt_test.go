package powerfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// The tests that touch a mount through mmap run that part in a child
// process (this test binary, started again): a page fault on a FUSE mount
// blocks its thread outside any system call, and if the Go runtime of the
// process that serves the mount stops the world meanwhile, it waits for
// that thread forever. A child process is also what the real gateway is:
// it is killed before the power is cut.
func TestMain(m *testing.M) {
	switch os.Getenv("POWERFS_CHILD") {
	case "":
		os.Exit(m.Run())
	case "mmap":
		err := mmapChild(os.Getenv("POWERFS_PATH"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "bolt":
		from, _ := strconv.Atoi(os.Getenv("POWERFS_FROM"))
		err := boltChild(os.Getenv("POWERFS_PATH"), from, os.Getenv("POWERFS_NOSYNC") != "")
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func child(kind, path string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"POWERFS_CHILD=" + kind, "POWERFS_PATH=" + path}, env...)...)
	return cmd
}

// mmapChild maps a file of two pages of "A" and checks that the mapping
// sees writes made through another descriptor, as bbolt needs.
func mmapChild(path string) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	m, err := syscall.Mmap(int(r.Fd()), 0, 2*pageSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	if m[100] != 'A' || m[pageSize+5] != 'A' {
		return fmt.Errorf("mapped %q %q, want A", m[100], m[pageSize+5])
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	for i, off := range []int64{100, pageSize + 5} {
		if _, err := w.WriteAt([]byte{'B' + byte(i)}, off); err != nil {
			return err
		}
	}
	if m[100] != 'B' || m[pageSize+5] != 'C' {
		return fmt.Errorf("the mapping does not see writes through another descriptor: %q %q", m[100], m[pageSize+5])
	}
	return errors.Join(syscall.Munmap(m), w.Close(), r.Close())
}

func TestMmapSeesWrites(t *testing.T) {
	p, mnt, _ := mount(t, map[string]string{"f": string(bytes.Repeat([]byte("A"), 2*pageSize))})
	if out, err := child("mmap", filepath.Join(mnt, "f")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cut(t, p, CutOptions{})
}

// boltChild commits transactions from, from+1, … to a bbolt file at path
// until it is killed, printing each one's number once Update has returned,
// that is once bbolt has fsynced it.
func boltChild(path string, from int, noSync bool) error {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second, NoSync: noSync, NoGrowSync: noSync})
	if err != nil {
		return err
	}
	// bbolt does not fsync the directory of a file it creates: a careful
	// program does, or its file's name may not survive a power cut.
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return err
	}
	d.Close()
	out := bufio.NewWriter(os.Stdout)
	for n := from; ; n++ {
		err := db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("k"))
			if err != nil {
				return err
			}
			if err := b.Put(boltKey(n), boltValue(n)); err != nil {
				return err
			}
			if n%4 == 0 && n > boltKeep {
				return b.Delete(boltKey(n - boltKeep))
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintln(out, n)
		out.Flush()
	}
}

// Transaction n puts key n and, every fourth, deletes key n-boltKeep, so
// that pages are freed and reused.
const boltKeep = 64

func boltKey(n int) []byte { return []byte(fmt.Sprintf("%08d", n)) }

// boltValue is 100 bytes to 16 KB, so some values span pages.
func boltValue(n int) []byte {
	return bytes.Repeat([]byte(strconv.Itoa(n)+","), (100+n*7919%16000)/(len(strconv.Itoa(n))+1))
}

// boltState is what the file holds after transactions 1…n.
func boltState(n int) map[string][]byte {
	state := map[string][]byte{}
	for k := 1; k <= n; k++ {
		if k%4 == 0 && k+boltKeep <= n {
			continue
		}
		state[string(boltKey(k))] = boltValue(k)
	}
	return state
}

// checkBolt opens the file left on disk and returns how many transactions
// it holds: committed, or one more (the one in flight when the process was
// killed may have reached its fsync). Anything else fails the test.
func checkBolt(t *testing.T, path string, committed int, report CutReport) int {
	t.Helper()
	if _, err := os.Stat(path); os.IsNotExist(err) && committed == 0 {
		return 0
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("opening the file a cut left (%d transactions committed): %v\n%s", committed, err, report)
	}
	defer db.Close()
	got := map[string][]byte{}
	err = db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		b := tx.Bucket([]byte("k"))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			got[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, report)
	}
	for _, n := range []int{committed, committed + 1} {
		if equalState(got, boltState(n)) {
			return n
		}
	}
	t.Fatalf("after %d committed transactions the file holds %d keys, not the state after %d or %d\n%s",
		committed, len(got), committed, committed+1, report)
	return 0
}

func equalState(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// runBolt starts a bolt child on the mount, lets it commit for a while (at
// least minCommits transactions), kills it and returns the last
// transaction it reported committed.
func runBolt(t *testing.T, mnt string, from, minCommits int, runFor time.Duration, env ...string) int {
	t.Helper()
	cmd := child("bolt", filepath.Join(mnt, "db"), append([]string{"POWERFS_FROM=" + strconv.Itoa(from)}, env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last atomic.Int64
	last.Store(int64(from - 1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			n, _ := strconv.Atoi(lines.Text())
			last.Store(int64(n))
		}
	}()
	deadline := time.Now().Add(runFor)
	for time.Now().Before(deadline) || last.Load() < int64(from-1+minCommits) {
		select {
		case <-done:
			cmd.Wait()
			t.Fatalf("the bolt child ended: %s", stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	cmd.Wait()
	return int(last.Load())
}

// TestBoltSurvivesCuts runs bbolt on the mount in a child process, kills it
// and cuts the power at random moments (tearing the last write), and checks
// after every cut that the file opens, passes bbolt's consistency check and
// holds exactly the committed transactions (or one more: the one in flight).
func TestBoltSurvivesCuts(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "disk"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	committed, torn := 0, 0
	const cycles = 12
	for cycle := range cycles {
		p := remount(t, mnt, backing)
		// Every run but the first (which may be cut while bbolt creates the
		// file) commits at least once, so that the test moves on.
		last := runBolt(t, mnt, committed+1, min(cycle, 1), time.Duration(20+rng.IntN(300))*time.Millisecond)
		report := cut(t, p, CutOptions{Tear: true, Rand: rng})
		torn += len(report.Torn)
		committed = checkBolt(t, filepath.Join(backing, "db"), last, report)
	}
	info, _ := os.Stat(filepath.Join(backing, "db"))
	t.Logf("seed %d: %d cuts, %d transactions committed, %d writes torn, file %d bytes", seed, cycles, committed, torn, info.Size())
}

// TestBoltWithoutFsyncLosesCommits is the check of the check: bbolt with
// NoSync and NoGrowSync reports commits it never fsynced, and the cut loses
// them.
func TestBoltWithoutFsyncLosesCommits(t *testing.T) {
	p, mnt, backing := mount(t, nil)
	last := runBolt(t, mnt, 1, 20, 0, "POWERFS_NOSYNC=1")
	report := cut(t, p, CutOptions{})
	db, err := bbolt.Open(filepath.Join(backing, "db"), 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("bbolt's own fsync at creation should have kept an empty file: %v\n%s", err, report)
	}
	defer db.Close()
	var keys int
	db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte("k")); b != nil {
			keys = b.Stats().KeyN
		}
		return nil
	})
	if keys >= last {
		t.Errorf("%d of %d commits made without fsync survived the cut", keys, last)
	}
	t.Logf("%d commits without fsync, %d keys left after the cut", last, keys)
}
