package bolt

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hookgate/hookgate/internal/store"
)

// DiskUsage is what the store takes on disk, and what its file system has
// left: the blocks of the bbolt file and of the body log's segments (as du
// counts them: bbolt grows its file sparsely, ahead of its data) and of
// the write-ahead log's, and the
// file system's free and total bytes (statfs, as df shows them to a
// non-root user).
func (s *Store) DiskUsage() (store.DiskUsage, error) {
	var u store.DiskUsage
	db, err := allocated(s.path)
	if err != nil {
		return u, err
	}
	u.DB = db
	if u.Bodies, err = allocatedIn(bodyLogDir(s.path)); err != nil {
		return u, err
	}
	if u.Log, err = allocatedIn(walDir(s.path)); err != nil {
		return u, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(s.path, &fs); err != nil {
		return u, err
	}
	u.Free = int64(fs.Bavail) * int64(fs.Bsize)
	u.Size = int64(fs.Blocks) * int64(fs.Bsize)
	return u, nil
}

// allocatedIn is the bytes of the blocks the files in dir take.
func allocatedIn(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if e.Type().IsRegular() {
			if n, err := allocated(filepath.Join(dir, e.Name())); err == nil {
				total += n
			}
		}
	}
	return total, nil
}

// allocated is the bytes of the blocks a file takes.
func allocated(path string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks) * 512, nil
}

// sizeCheckEvery is how often the store measures itself against its cap
// while far from it; between two measures it counts what it writes, and
// within writeAheadMax of the cap it measures at every event, so a burst
// passes the cap by no more than the writes in flight.
const sizeCheckEvery = 250 * time.Millisecond

// writeAheadMax bounds what the body log and the write-ahead log may write
// ahead of their frames: a chunk of zeros being written and the one before
// it (zeroChunk, walZeroAhead).
const writeAheadMax = 2*(8<<20) + 2*walZeroAhead

// writeOverhead is what an event's record and indexes add to its body, as
// counted between two measures.
const writeOverhead = 512

// sizeCap is the store's max_size, its last measure, and what it wrote
// since.
type sizeCap struct {
	max      atomic.Int64
	used     atomic.Int64
	since    atomic.Int64
	measured atomic.Int64 // unix nanoseconds
}

// wrote counts an event's bytes against the cap until the next measure.
func (c *sizeCap) wrote(n int) {
	if c.max.Load() > 0 {
		c.since.Add(int64(n) + writeOverhead)
	}
}

// SetMaxSize caps the bytes the store takes on disk (its file and its body
// segments): past it, Ingest refuses new events with store.ErrUnavailable,
// so the provider is answered 503 and retries, until retention frees room
// or the cap is raised. 0 lifts the cap.
func (s *Store) SetMaxSize(n int64) { s.sizeCap.max.Store(max(n, 0)) }

// MaxSize is the cap SetMaxSize set; 0 when there is none.
func (s *Store) MaxSize() int64 { return s.sizeCap.max.Load() }

// full reports whether the store is at its cap, measuring itself at most
// every sizeCheckEvery.
func (s *Store) full() error {
	limit := s.sizeCap.max.Load()
	if limit == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	// Within the body log's write-ahead of the cap every event measures:
	// the log writes zeros up to two chunks ahead of its frames, which
	// counting alone would miss. Further off, a measure every quarter
	// second is enough, and the request path does no file system calls.
	near := s.sizeCap.used.Load()+s.sizeCap.since.Load() >= limit-writeAheadMax
	if near || now-s.sizeCap.measured.Load() >= int64(sizeCheckEvery) {
		if u, err := s.DiskUsage(); err == nil {
			s.sizeCap.used.Store(u.DB + u.Bodies + u.Log)
			s.sizeCap.since.Store(0)
		}
		s.sizeCap.measured.Store(now)
	}
	if used := s.sizeCap.used.Load() + s.sizeCap.since.Load(); used >= limit {
		return fmt.Errorf("%w: the store takes %d bytes, its max_size is %d", store.ErrUnavailable, used, limit)
	}
	return nil
}
