package bolt

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// BackupFile is the name of the store file in a backup archive; its body
// segments are under BackupFile+".bodies/".
const BackupFile = "hookgate.db"

// Backup writes a consistent snapshot of the store to w while the store
// keeps running, as a tar archive: the bbolt file as of one read
// transaction (BackupFile), and the body log segments that transaction
// refers to, each cut where that transaction's bodies end. So it holds
// every write committed (and so every event ACKed) before Backup began,
// and nothing half-written; unpacked, BackupFile and its .bodies folder
// open as a store. sized, if not nil, is told the archive's size in bytes
// before its first byte is written (Backup then writes exactly that many,
// or fails), so a receiver can tell a complete copy from a truncated one.
//
// The archive is first written to a temporary file beside the store, at the
// disk's speed, and only then copied to w: a reader that is slow, or
// stalls, holds no read transaction, which would keep bbolt from growing
// its map and stop every write. So a backup needs free space for one more
// copy of the store while it runs; the temporary file has no name (it is
// removed as soon as it is made) and is gone when Backup returns, or the
// process ends.
func (s *Store) Backup(w io.Writer, sized func(size int64)) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".hookgate-backup-*.tar")
	if err != nil {
		return 0, fmt.Errorf("backing up store %s: %w", s.path, err)
	}
	os.Remove(tmp.Name())
	defer tmp.Close()
	size, err := s.snapshot(tmp)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		return 0, fmt.Errorf("backing up store %s: %w", s.path, err)
	}
	if sized != nil {
		sized(size)
	}
	n, err := io.Copy(w, io.LimitReader(tmp, size))
	if err == nil && n != size {
		err = fmt.Errorf("sent %d bytes, announced %d", n, size)
	}
	if err != nil {
		return n, fmt.Errorf("backing up store %s: %w", s.path, err)
	}
	return n, nil
}

// snapshot writes the archive Backup sends, in one read transaction, and
// returns its size.
func (s *Store) snapshot(w io.Writer) (int64, error) {
	s.bodies.hold()
	defer s.bodies.release()
	cw := &countingWriter{w: w}
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		segs, err := s.bodies.copies()
		if err != nil {
			return err
		}
		files := make([]*os.File, len(segs))
		defer func() {
			for _, f := range files {
				if f != nil {
					f.Close()
				}
			}
		}()
		for i, seg := range segs {
			if files[i], err = os.Open(filepath.Join(s.bodies.dir, segmentName(seg.n))); err != nil {
				return err
			}
		}
		size := tarEntrySize(tx.Size())
		for _, seg := range segs {
			size += tarEntrySize(seg.size)
		}
		size += 2 * tarBlock
		tw := tar.NewWriter(cw)
		now := time.Now()
		entry := func(name string, n int64) error {
			return tw.WriteHeader(&tar.Header{Name: name, Size: n, Mode: 0o600, ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatGNU})
		}
		if err := entry(BackupFile, tx.Size()); err != nil {
			return err
		}
		if _, err := tx.WriteTo(tw); err != nil {
			return err
		}
		for i, seg := range segs {
			if err := entry(path.Join(BackupFile+".bodies", segmentName(seg.n)), seg.size); err != nil {
				return err
			}
			if _, err := io.Copy(tw, io.NewSectionReader(files[i], 0, seg.size)); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if cw.n != size {
			return fmt.Errorf("wrote %d bytes, expected %d", cw.n, size)
		}
		return nil
	})
	return cw.n, err
}

const tarBlock = 512

// tarEntrySize is the size of a tar entry of n bytes with a short name in
// GNU format: a header block and the data padded to whole blocks.
func tarEntrySize(n int64) int64 { return tarBlock + (n+tarBlock-1)/tarBlock*tarBlock }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Unpack writes a backup archive read from r as a store at storePath (its
// segments under storePath+".bodies"), syncing every file and folder. It
// refuses an archive with any other entry. Nothing may be at storePath or
// its .bodies folder yet, and no link is followed: unpack into a folder of
// your own (os.MkdirTemp), so that nobody else can have planted a name
// there.
func Unpack(r io.Reader, storePath string) error {
	dir := bodyLogDir(storePath)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("unpacking a backup: %w", err)
	}
	tr := tar.NewReader(r)
	sawStore := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the backup archive: %w", err)
		}
		var to string
		switch name := h.Name; {
		case name == BackupFile && !sawStore:
			to, sawStore = storePath, true
		case strings.HasPrefix(name, BackupFile+".bodies/") && strings.HasSuffix(name, ".seg") && !strings.Contains(name[len(BackupFile)+8:], "/"):
			to = filepath.Join(dir, path.Base(name))
		default:
			return fmt.Errorf("the backup archive holds %q, which is not part of a store", h.Name)
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("the backup archive's %q is not a file", h.Name)
		}
		if err := writeSynced(to, tr); err != nil {
			return err
		}
	}
	if !sawStore {
		return fmt.Errorf("the backup archive holds no %s", BackupFile)
	}
	if err := SyncDir(dir); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(storePath))
}

// writeSynced writes a new file: one that exists, or is a link, is refused
// (a segment named twice in an archive among them).
func writeSynced(to string, r io.Reader) error {
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", to, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing %s: %w", to, err)
	}
	return f.Close()
}

// Check opens the store at path read-only, walks the bbolt file with its
// consistency check, makes sure it is a Hookgate store and reads every
// event's body, checking it against its frame. It returns how many events
// the store holds.
func Check(path string) (events int, err error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return 0, fmt.Errorf("%s does not open as a bbolt file: %w", path, err)
	}
	defer db.Close()
	log := &bodyLog{dir: bodyLogDir(path), files: map[uint64]*os.File{}}
	defer log.close()
	err = db.View(func(tx *bbolt.Tx) error {
		var bad error
		for err := range tx.Check() { // drained: Check's walker sends every error
			if bad == nil {
				bad = fmt.Errorf("%s fails bbolt's check: %w", path, err)
			}
		}
		if bad != nil {
			return bad
		}
		meta, evs := tx.Bucket(bucketMeta), tx.Bucket(bucketEvents)
		if meta == nil || meta.Get([]byte("version")) == nil || evs == nil {
			return fmt.Errorf("%s is a bbolt file but not a Hookgate store", path)
		}
		return evs.ForEach(func(k, v []byte) error {
			events++
			var e store.Event
			ref, ok, err := decodeEvent(v, &e)
			if err != nil {
				return fmt.Errorf("event %x: %w", k, err)
			}
			if ok {
				if _, err := log.read(ref); err != nil {
					return fmt.Errorf("event %x: %w", k, err)
				}
			}
			return nil
		})
	})
	return events, err
}
