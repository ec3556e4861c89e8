package powerfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// renameNoReplace is renameat2's RENAME_NOREPLACE.
const renameNoReplace = 0x1

// fileNode is a regular file: its durable content is its backing file (its
// object), and what was written since the last fsync is held in pages.
type fileNode struct {
	node
	obj *os.File
	// size is the current size; durSize the backing file's.
	size, durSize int64
	// low is where the durable content stops showing through: a shrink
	// since the last fsync hides the backing bytes past it, which read as
	// zeros until written again.
	low int64
	// dirty holds the pages written since the last fsync, by page number.
	dirty map[int64][]byte
	// last is the last write since the last fsync, the one Cut can tear.
	last *lastWrite
}

type lastWrite struct {
	off  int64
	data []byte
}

var (
	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeReader    = (*fileNode)(nil)
	_ fs.NodeWriter    = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeSetattrer = (*fileNode)(nil)
	_ fs.NodeFsyncer   = (*fileNode)(nil)
	_ fs.NodeFlusher   = (*fileNode)(nil)
	_ fs.NodeStatfser  = (*fileNode)(nil)
)

func (f *fileNode) getattr(out *fuse.Attr) {
	f.attr(out, syscall.S_IFREG)
	out.Size = uint64(f.size)
	out.Blocks = (uint64(f.size) + 511) / 512
	out.Nlink = 1
}

// unsynced says whether the file has changes an fsync would make durable.
func (f *fileNode) unsynced() bool {
	return len(f.dirty) > 0 || f.size != f.durSize || f.low != f.durSize
}

// Open implements fs.NodeOpener. No FOPEN_DIRECT_IO (mmap must work) and
// no FOPEN_KEEP_CACHE: every open starts from what Read answers.
func (f *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return nil, 0, syscall.EIO
	}
	return nil, 0, 0
}

// Flush implements fs.NodeFlusher: close(2) makes nothing durable.
func (f *fileNode) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno { return 0 }

// Getattr implements fs.NodeGetattrer.
func (f *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return syscall.EIO
	}
	f.getattr(&out.Attr)
	return 0
}

// Setattr implements fs.NodeSetattrer: a size change is held like a write;
// mode and times are kept, not made durable.
func (f *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return syscall.EIO
	}
	if size, ok := in.GetSize(); ok {
		f.truncate(int64(size))
		f.mtime = time.Now()
	}
	if mode, ok := in.GetMode(); ok {
		f.perm = mode & 0o7777
	}
	if mtime, ok := in.GetMTime(); ok {
		f.mtime = mtime
	}
	f.getattr(&out.Attr)
	return 0
}

func (f *fileNode) truncate(size int64) {
	if size < f.size {
		for pg := range f.dirty {
			if pg*pageSize >= size {
				delete(f.dirty, pg)
			}
		}
		if page, ok := f.dirty[size/pageSize]; ok {
			clear(page[size%pageSize:])
		}
		f.low = min(f.low, size)
	}
	f.size = size
}

// Read implements fs.NodeReader: the latest content, synced or not.
func (f *fileNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return nil, syscall.EIO
	}
	if off >= f.size {
		return fuse.ReadResultData(nil), 0
	}
	buf := dest[:min(int64(len(dest)), f.size-off)]
	if err := f.readAt(buf, off); err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(buf), 0
}

// readAt fills buf with the current content at off, which is below size.
func (f *fileNode) readAt(buf []byte, off int64) error {
	end := off + int64(len(buf))
	clear(buf)
	if off < f.low {
		obj, err := f.object()
		if err != nil {
			return err
		}
		if _, err := obj.ReadAt(buf[:min(end, f.low)-off], off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	for pg := off / pageSize; pg*pageSize < end; pg++ {
		page, ok := f.dirty[pg]
		if !ok {
			continue
		}
		start := pg * pageSize
		lo, hi := max(off, start), min(end, start+pageSize)
		copy(buf[lo-off:hi-off], page[lo-start:hi-start])
	}
	return nil
}

// Write implements fs.NodeWriter: the data goes to pages held in memory.
func (f *fileNode) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return 0, syscall.EIO
	}
	end := off + int64(len(data))
	for pg := off / pageSize; pg*pageSize < end; pg++ {
		start := pg * pageSize
		page, ok := f.dirty[pg]
		if !ok {
			page = make([]byte, pageSize)
			// A page written in part starts as what it holds now.
			if (off > start || end < start+pageSize) && start < f.size {
				if err := f.readAt(page[:min(pageSize, f.size-start)], start); err != nil {
					return 0, fs.ToErrno(err)
				}
			}
			f.dirty[pg] = page
		}
		lo, hi := max(off, start), min(end, start+pageSize)
		copy(page[lo-start:hi-start], data[lo-off:hi-off])
	}
	f.size = max(f.size, end)
	f.mtime = time.Now()
	f.last = &lastWrite{off: off, data: bytes.Clone(data)}
	return uint32(len(data)), 0
}

// Fsync implements fs.NodeFsyncer, for fsync and fdatasync alike: the
// file's content and size become durable, its name does not (but with
// Options.JournaledNames, when every pending name change does).
func (f *fileNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	f.pfs.mu.Lock()
	defer f.pfs.mu.Unlock()
	if f.pfs.dead {
		return syscall.EIO
	}
	f.pfs.fileSyncs++
	if err := f.sync(); err != nil {
		return fs.ToErrno(err)
	}
	if f.pfs.journaled {
		if err := f.pfs.commitAll(); err != nil {
			return fs.ToErrno(err)
		}
	}
	return 0
}

// sync writes the held pages and size to the backing file and fsyncs it.
func (f *fileNode) sync() error {
	if !f.unsynced() {
		return nil
	}
	obj, err := f.object()
	if err != nil {
		return err
	}
	if f.low < f.durSize {
		if err := obj.Truncate(f.low); err != nil {
			return err
		}
	}
	pages := make([]int64, 0, len(f.dirty))
	for pg := range f.dirty {
		pages = append(pages, pg)
	}
	slices.Sort(pages)
	for _, pg := range pages {
		start := pg * pageSize
		if _, err := obj.WriteAt(f.dirty[pg][:min(pageSize, f.size-start)], start); err != nil {
			return err
		}
	}
	if err := obj.Truncate(f.size); err != nil {
		return err
	}
	if err := obj.Sync(); err != nil {
		return err
	}
	f.durSize, f.low, f.last = f.size, f.size, nil
	clear(f.dirty)
	return nil
}

// object opens the backing file, creating it in the orphan folder for a
// file whose name is not durable yet.
func (f *fileNode) object() (*os.File, error) {
	if f.obj != nil {
		return f.obj, nil
	}
	flags := os.O_RDWR
	if f.durParent == nil {
		if err := os.MkdirAll(filepath.Join(f.pfs.backing, orphans), 0o700); err != nil {
			return nil, err
		}
		flags |= os.O_CREATE
	}
	obj, err := os.OpenFile(f.objPath(), flags, os.FileMode(f.perm))
	if err != nil {
		return nil, err
	}
	f.obj = obj
	f.pfs.open[f] = struct{}{}
	return obj, nil
}

// tear writes a random prefix of the last unsynced write over the durable
// content, ending on a sector boundary: what reached the platter before the
// power went. Nothing past the durable size is kept.
func (f *fileNode) tear(rng *rand.Rand) (string, error) {
	w := f.last
	if w == nil {
		return "", nil
	}
	end := w.off + int64(len(w.data))
	// The cut point is the write's start or a sector boundary inside it,
	// never its end: the write did not complete.
	cuts := []int64{w.off}
	for c := (w.off/sectorSize + 1) * sectorSize; c < end; c += sectorSize {
		cuts = append(cuts, c)
	}
	keep := min(cuts[rng.IntN(len(cuts))], f.durSize) - w.off
	if keep <= 0 {
		return fmt.Sprintf("kept none of the %d bytes written at offset %d", len(w.data), w.off), nil
	}
	obj, err := f.object()
	if err != nil {
		return "", err
	}
	if _, err := obj.WriteAt(w.data[:keep], w.off); err != nil {
		return "", err
	}
	if err := obj.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("kept %d of the %d bytes written at offset %d", keep, len(w.data), w.off), nil
}
