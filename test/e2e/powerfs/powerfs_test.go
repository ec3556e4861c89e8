package powerfs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mount mounts a power-loss file system over a fresh backing directory,
// filled by fill before the mount (what is already on disk).
func mount(t *testing.T, fill map[string]string) (p *FS, mnt, backing string) {
	t.Helper()
	dir := t.TempDir()
	backing, mnt = filepath.Join(dir, "disk"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range fill {
		path := filepath.Join(backing, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return remount(t, mnt, backing), mnt, backing
}

// remount mounts again over what a cut left; the mount is cut at cleanup if
// the test did not cut or close it.
func remount(t *testing.T, mnt, backing string) *FS {
	t.Helper()
	p, err := Mount(mnt, backing, nil)
	if err != nil {
		t.Fatalf("%v\n(these tests need root and /dev/fuse: run them as root, e.g. with scripts/test.sh)", err)
	}
	t.Cleanup(func() {
		p.mu.Lock()
		dead := p.dead
		p.mu.Unlock()
		if !dead {
			p.Cut(CutOptions{})
		}
	})
	return p
}

func cut(t *testing.T, p *FS, opts CutOptions) CutReport {
	t.Helper()
	report, err := p.Cut(opts)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func write(t *testing.T, path string, off int64, data string, fsync bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(data), off); err != nil {
		t.Fatal(err)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func fsyncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// content reads a file, "<absent>" if it does not exist.
func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expect(t *testing.T, path, want string) {
	t.Helper()
	if got := content(t, path); got != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

func TestUnsyncedWriteIsLost(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"f": "durable-content"})
	write(t, filepath.Join(mnt, "f"), 0, "VOLATILE", false)
	write(t, filepath.Join(mnt, "f"), 15, "-and-more", false)
	// Before the cut, readers see the page cache.
	expect(t, filepath.Join(mnt, "f"), "VOLATILEcontent-and-more")
	expect(t, filepath.Join(backing, "f"), "durable-content")
	report := cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "f"), "durable-content")
	if len(report.Files) != 1 {
		t.Errorf("the report names %d files with unsynced writes, want 1: %s", len(report.Files), report)
	}
}

func TestSyncedWriteIsKept(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"f": "durable-content", "g": "other"})
	write(t, filepath.Join(mnt, "f"), 0, "SYNCED", true)
	write(t, filepath.Join(mnt, "f"), 15, "-grown", true)
	// fdatasync counts as fsync.
	g, err := os.OpenFile(filepath.Join(mnt, "g"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt([]byte("OTHER"), 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(g.Fd())); err != nil {
		t.Fatal(err)
	}
	g.Close()
	// A write after the fsync is lost again.
	write(t, filepath.Join(mnt, "f"), 0, "xx", false)
	cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "f"), "SYNCEDe-content-grown")
	expect(t, filepath.Join(backing, "g"), "OTHER")
}

func TestTruncate(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"f": "0123456789", "g": "0123456789"})
	// Shrink then grow: the bytes in between read as zeros, not as the
	// durable bytes that were there.
	if err := os.Truncate(filepath.Join(mnt, "f"), 4); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(mnt, "f"), 8); err != nil {
		t.Fatal(err)
	}
	expect(t, filepath.Join(mnt, "f"), "0123\x00\x00\x00\x00")
	if err := os.Truncate(filepath.Join(mnt, "g"), 3); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mnt, "g"), 5, "x", true)
	cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "f"), "0123456789")
	expect(t, filepath.Join(backing, "g"), "012\x00\x00x")
}

func TestNewFileNeedsItsDirectoryFsynced(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"sub/old": "old"})
	// Directory fsynced, data not: the name stays, the data does not.
	write(t, filepath.Join(mnt, "named"), 0, "data", false)
	fsyncDir(t, mnt)
	// Data fsynced, directory not: after the cut the name is gone.
	write(t, filepath.Join(mnt, "new"), 0, "data", true)
	// Both fsynced.
	write(t, filepath.Join(mnt, "sub", "both"), 0, "data", true)
	fsyncDir(t, filepath.Join(mnt, "sub"))
	// A new directory and a file in it, the file and the new directory
	// fsynced but not its parent: both are gone.
	if err := os.Mkdir(filepath.Join(mnt, "newdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mnt, "newdir", "f"), 0, "data", true)
	fsyncDir(t, filepath.Join(mnt, "newdir"))
	report := cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "new"), "<absent>")
	expect(t, filepath.Join(backing, "named"), "")
	expect(t, filepath.Join(backing, "sub", "both"), "data")
	expect(t, filepath.Join(backing, "sub", "old"), "old")
	if _, err := os.Stat(filepath.Join(backing, "newdir")); !os.IsNotExist(err) {
		t.Errorf("newdir survived without its parent fsynced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(backing, orphans)); !os.IsNotExist(err) {
		t.Errorf("the orphan folder is left: %v", err)
	}
	if len(report.Ops) != 2 {
		t.Errorf("the report names %d dropped changes, want 2 (create /new, mkdir /newdir): %s", len(report.Ops), report)
	}
}

func TestRenameNeedsItsDirectoryFsynced(t *testing.T) {
	// The compaction pattern: write a new copy, fsync it, rename it over.
	for _, dirSync := range []bool{false, true} {
		p, mnt, backing := mount(t, map[string]string{"db": "old", "gone": "x"})
		write(t, filepath.Join(mnt, "db.tmp"), 0, "new", true)
		if err := os.Rename(filepath.Join(mnt, "db.tmp"), filepath.Join(mnt, "db")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(mnt, "gone")); err != nil {
			t.Fatal(err)
		}
		expect(t, filepath.Join(mnt, "db"), "new")
		if dirSync {
			fsyncDir(t, mnt)
		}
		// Writes to the renamed file after the rename, fsynced.
		write(t, filepath.Join(mnt, "db"), 3, "+more", true)
		cut(t, p, CutOptions{})
		if dirSync {
			expect(t, filepath.Join(backing, "db"), "new+more")
			expect(t, filepath.Join(backing, "gone"), "<absent>")
		} else {
			expect(t, filepath.Join(backing, "db"), "old")
			expect(t, filepath.Join(backing, "gone"), "x")
		}
		expect(t, filepath.Join(backing, "db.tmp"), "<absent>")
	}
}

func TestRenameAcrossDirectories(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"a/f": "f", "b/keep": "k"})
	if err := os.Rename(filepath.Join(mnt, "a", "f"), filepath.Join(mnt, "b", "f")); err != nil {
		t.Fatal(err)
	}
	// Fsyncing either directory makes the whole rename durable: the name
	// is never in both places or in neither.
	fsyncDir(t, filepath.Join(mnt, "b"))
	cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "a", "f"), "<absent>")
	expect(t, filepath.Join(backing, "b", "f"), "f")
}

func TestTornWrite(t *testing.T) {
	old := bytes.Repeat([]byte("A"), 2*pageSize)
	partial := 0
	for seed := range uint64(16) {
		p, mnt, backing := mount(t, map[string]string{"f": string(old)})
		write(t, filepath.Join(mnt, "f"), 0, string(bytes.Repeat([]byte("B"), 3*pageSize)), false)
		report := cut(t, p, CutOptions{Tear: true, Rand: rand.New(rand.NewPCG(seed, 1))})
		got := []byte(content(t, filepath.Join(backing, "f")))
		kept := bytes.IndexByte(got, 'A')
		if kept < 0 {
			kept = len(got)
		}
		if len(got) != len(old) || !bytes.Equal(got[:kept], bytes.Repeat([]byte("B"), kept)) || !bytes.Equal(got[kept:], old[kept:]) {
			t.Fatalf("seed %d: not a torn write of the old content: %d bytes, B up to %d (%s)", seed, len(got), kept, report)
		}
		if kept%sectorSize != 0 {
			t.Errorf("seed %d: kept %d bytes, not whole sectors", seed, kept)
		}
		if kept > 0 && kept < len(old) {
			partial++
		}
		if len(report.Torn) != 1 {
			t.Errorf("seed %d: report names %d torn writes: %s", seed, len(report.Torn), report)
		}
	}
	if partial == 0 {
		t.Error("no cut kept part of the write")
	}
}

// TestCutWithAFileStillOpen: a process that still has a file open keeps the
// kernel's connection after the unmount; Cut names it, aborts the
// connection and fails rather than hang.
func TestCutWithAFileStillOpen(t *testing.T) {
	p, mnt, backing := mount(t, map[string]string{"f": "durable"})
	f, err := os.Open(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = p.Cut(CutOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Fatalf("Cut with a file open: %v", err)
	}
	expect(t, filepath.Join(backing, "f"), "durable")
}

// TestJournaledNames: with Options.JournaledNames a file's fsync also makes
// the name changes before it durable, the new folder and file under it
// among them, as ext4's journal does; a change made after the fsync is
// still dropped.
func TestJournaledNames(t *testing.T) {
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "disk"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Mount(mnt, backing, &Options{JournaledNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mnt, "newdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mnt, "newdir", "f"), 0, "data", true)
	write(t, filepath.Join(mnt, "later"), 0, "data", false)
	report := cut(t, p, CutOptions{})
	expect(t, filepath.Join(backing, "newdir", "f"), "data")
	expect(t, filepath.Join(backing, "later"), "<absent>")
	if len(report.Ops) != 1 {
		t.Errorf("the report names %d dropped changes, want 1 (create /later): %s", len(report.Ops), report)
	}
}
