package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The body log keeps event bodies out of the B+tree: bodies are appended
// to segment files in a folder beside the store file, and each event
// record holds its body's segment, offset and length. The writer appends a
// batch's bodies with one write and one fdatasync before the bbolt commit
// that refers to them, so a record never points at bytes that are not on
// disk. Events are stored in time order, so retention empties segments
// from the oldest, and a segment is deleted whole once no event refers to
// it.
//
// Each body is framed as length(4) ‖ crc32c(length ‖ body)(4) ‖ body. At
// open, the newest segment is read frame by frame and cut at the first
// frame that does not check: a tail torn by a crash, which no record
// refers to.
//
// Appending to a file changes its size, and fdatasync then waits for a
// journal commit as well as the data: about 1.7 ms against 0.7 ms for an
// overwrite on the machine this was measured on. So a segment is filled
// with zeros ahead of the writes, in the background, and a batch's sync
// is an overwrite's. A zero frame never checks, so the zeros end a scan.

// frameHeader is the length and checksum before each body.
const frameHeader = 8

// defaultSegmentSize is the size past which the next batch starts a new
// segment: large enough that a segment file is opened rarely, small
// enough that retention gives space back soon.
const defaultSegmentSize int64 = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// bodyRef says where a body is: its frame's segment and offset, and the
// body's length.
type bodyRef struct {
	segment uint64
	offset  int64
	length  int
}

// bodyLogDir is the folder of a store file's body segments.
func bodyLogDir(storePath string) string { return storePath + ".bodies" }

func segmentName(n uint64) string { return fmt.Sprintf("%016x.seg", n) }

// bodyLog is the folder of segments. The writer goroutine alone appends;
// readers read any segment concurrently.
type bodyLog struct {
	dir         string
	segmentSize int64
	// zeroMax, when positive, caps how far ahead of the writes zeros go;
	// when negative, no zeros are written ahead.
	zeroMax int64
	// inUse returns those of segs that a committed event refers to.
	inUse func(segs []uint64) ([]uint64, error)
	// recycle, for the write-ahead log, keeps one emptied segment (as
	// reuseName) to become a next one: its blocks are allocated already, so
	// the log writes no zeros ahead into it. Its old frames are all applied
	// when it is retired, so recovery, reading past a new tail into them,
	// finds nothing to apply there.
	recycle bool

	// Appending (the store's writer goroutine only).
	active     *os.File
	activeSeg  uint64
	size       int64 // bytes known to be framed and written in the active segment
	mustRotate bool  // a failed write left the active segment's tail unknown
	zeroed     int64 // the active segment is zeros from size to here
	// zeroing, while zeros are being written from zeroFrom, answers with
	// where they end, or an error.
	zeroing  chan zeroResult
	zeroFrom int64
	// spare, once the active segment is half full, brings the next one,
	// created and its name made durable ahead, so that starting it (on an
	// ACK's path, for the write-ahead log) opens no file.
	spare chan spareResult

	mu    sync.Mutex
	files map[uint64]*os.File // open segments, for reading
	// holds counts copies in progress (backups); while there are any,
	// segments to remove wait in deferred.
	holds    int
	deferred []uint64
	reuse    bool  // a retired segment waits as reuseName
	synced   int64 // size as of the last write that synced: what a copy may read
	// unsettled counts, per segment, bodies appended whose commits have
	// not ended: a record may yet refer to them.
	unsettled map[uint64]int
}

// openBodyLog opens the folder of segments, creating it if needed, and
// cuts a torn tail off the newest segment.
func openBodyLog(dir string, segmentSize, zeroMax int64) (*bodyLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the body log %s: %w", dir, err)
	}
	if segmentSize <= 0 {
		segmentSize = defaultSegmentSize
	}
	l := &bodyLog{dir: dir, segmentSize: segmentSize, zeroMax: zeroMax, files: map[uint64]*os.File{}, unsettled: map[uint64]int{}}
	segs, err := l.segments()
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		if err := l.create(1); err != nil {
			return nil, err
		}
		return l, nil
	}
	// A spare made ahead and never started is empty: the segment before it
	// is the one to check and go on with.
	for len(segs) > 1 {
		st, err := os.Stat(filepath.Join(dir, segmentName(segs[len(segs)-1])))
		if err != nil || st.Size() > 0 {
			break
		}
		if err := os.Remove(filepath.Join(dir, segmentName(segs[len(segs)-1]))); err != nil {
			return nil, fmt.Errorf("removing an unused body segment: %w", err)
		}
		if err := SyncDir(dir); err != nil {
			return nil, err
		}
		segs = segs[:len(segs)-1]
	}
	last := segs[len(segs)-1]
	f, err := os.OpenFile(filepath.Join(dir, segmentName(last)), os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening body segment: %w", err)
	}
	good, err := checkedLength(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading body segment %s: %w", f.Name(), err)
	}
	if st, err := f.Stat(); err == nil && st.Size() != good {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, fmt.Errorf("cutting the torn tail of %s: %w", f.Name(), err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("cutting the torn tail of %s: %w", f.Name(), err)
		}
	}
	l.active, l.activeSeg, l.size, l.synced, l.zeroed = f, last, good, good, good
	l.files[last] = f
	l.zeroAhead()
	return l, nil
}

// segments lists the segment numbers in the folder, oldest first.
func (l *bodyLog) segments() ([]uint64, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("listing the body log %s: %w", l.dir, err)
	}
	var out []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(name, 16, 64); err == nil && len(name) == 16 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// checkedLength reads a segment's frames from the start and returns the
// length of the part whose frames all check.
func checkedLength(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var off int64
	var hdr [frameHeader]byte
	buf := make([]byte, 0, 64<<10)
	for {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return 0, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		if off+frameHeader+n > st.Size() {
			return off, nil
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		body := buf[:n]
		if _, err := f.ReadAt(body, off+frameHeader); err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return 0, err
		}
		if frameSum(hdr[:4], body) != binary.BigEndian.Uint32(hdr[4:]) {
			return off, nil
		}
		off += frameHeader + n
	}
}

func frameSum(length, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(length, castagnoli), castagnoli, body)
}

type spareResult struct {
	n    uint64
	f    *os.File
	size int64 // bytes allocated already: a recycled segment's
	err  error
}

// reuseName is where a retired segment waits to be recycled: not a
// segment's name, so never read as one.
const reuseName = "reuse"

// recycled makes the retired segment segment n, durably, and opens it.
func (l *bodyLog) recycled(n uint64) (*os.File, int64, error) {
	name := filepath.Join(l.dir, segmentName(n))
	if err := os.Rename(filepath.Join(l.dir, reuseName), name); err != nil {
		return nil, 0, err
	}
	if err := SyncDir(l.dir); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0o600)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// createFile creates segment n and makes its name durable.
func (l *bodyLog) createFile(n uint64) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(l.dir, segmentName(n)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating body segment: %w", err)
	}
	if err := SyncDir(l.dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("creating body segment: %w", err)
	}
	return f, nil
}

// prepareSpare starts creating the next segment once the active one is
// half full.
func (l *bodyLog) prepareSpare() {
	if l.spare != nil || l.size < l.segmentSize/2 {
		return
	}
	done := make(chan spareResult, 1)
	l.spare = done
	l.mu.Lock()
	reuse := l.reuse
	l.reuse = false
	l.mu.Unlock()
	go func(n uint64) {
		if reuse {
			if f, size, err := l.recycled(n); err == nil {
				done <- spareResult{n: n, f: f, size: size}
				return
			}
		}
		f, err := l.createFile(n)
		done <- spareResult{n: n, f: f, err: err}
	}(l.activeSeg + 1)
}

// create starts segment n as the active one, the spare made ahead if it is
// that one.
func (l *bodyLog) create(n uint64) error {
	var f *os.File
	var allocated int64
	if l.spare != nil {
		r := <-l.spare
		l.spare = nil
		switch {
		case r.err == nil && r.n == n:
			f, allocated = r.f, r.size
		case r.err == nil:
			r.f.Close()
		}
	}
	if f == nil {
		var err error
		if f, err = l.createFile(n); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.files[n] = f
	l.active, l.activeSeg, l.size, l.synced, l.mustRotate, l.zeroed = f, n, 0, 0, false, allocated
	l.mu.Unlock()
	l.zeroAhead()
	return nil
}

// frames appends the frames of bodies to buf and says where each will be
// once buf is written by write. It starts a new segment first when the
// active one is full or a failed write left its tail unknown.
func (l *bodyLog) frames(buf []byte, bodies [][]byte, refs []bodyRef) ([]byte, []bodyRef, error) {
	if err := l.rotateIfFull(); err != nil {
		return buf, refs, err
	}
	off := l.size
	for _, body := range bodies {
		refs = append(refs, bodyRef{segment: l.activeSeg, offset: off + int64(len(buf)), length: len(body)})
		var hdr [frameHeader]byte
		binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
		binary.BigEndian.PutUint32(hdr[4:], frameSum(hdr[:4], body))
		buf = append(append(buf, hdr[:]...), body...)
	}
	return buf, refs, nil
}

// rotateIfFull starts a new segment when the active one is full or a
// failed write left its tail unknown.
func (l *bodyLog) rotateIfFull() error {
	if !l.mustRotate && l.size < l.segmentSize {
		return nil
	}
	l.waitZeros()
	// The zeros past the last frame are of no use in a full segment.
	_ = l.active.Truncate(l.size)
	return l.create(l.activeSeg + 1)
}

// seal makes buf, a payload after frameHeader bytes left for it, one
// frame for write, and says which segment it goes to: a frame built in
// place, with no copy of its payload.
func (l *bodyLog) seal(buf []byte) (segment uint64, err error) {
	if err := l.rotateIfFull(); err != nil {
		return 0, err
	}
	binary.BigEndian.PutUint32(buf[:4], uint32(len(buf)-frameHeader))
	binary.BigEndian.PutUint32(buf[4:frameHeader], frameSum(buf[:4], buf[frameHeader:]))
	return l.activeSeg, nil
}

// write appends the frames built by frames to the active segment and
// syncs them. On failure nothing it wrote may be referred to, and the next
// batch goes to a new segment.
func (l *bodyLog) write(buf []byte) error {
	if l.zeroing != nil && l.size+int64(len(buf)) > l.zeroFrom {
		l.waitZeros() // never write where zeros are being written
	}
	if _, err := l.active.WriteAt(buf, l.size); err != nil {
		l.mustRotate = true
		return fmt.Errorf("writing bodies: %w", err)
	}
	if err := fdatasync(l.active); err != nil {
		l.mustRotate = true
		return fmt.Errorf("syncing bodies: %w", err)
	}
	l.size += int64(len(buf))
	l.mu.Lock()
	l.synced = l.size
	l.mu.Unlock()
	l.zeroAhead()
	l.prepareSpare()
	return nil
}

type zeroResult struct {
	end int64
	err error
}

// zeroChunk is how far ahead of the writes zeros are written: small for a
// new segment (a store that takes a few events stays small), larger once
// it fills.
func zeroChunk(size int64) int64 {
	if size < 4<<20 {
		return 1 << 20
	}
	return 8 << 20
}

var zeros = make([]byte, 1<<20)

// zeroAhead starts writing zeros past the active segment's zeroed part
// when fewer than half a chunk are left, unless that is under way.
func (l *bodyLog) zeroAhead() {
	if l.zeroMax < 0 {
		return
	}
	if l.zeroing != nil {
		select {
		case r := <-l.zeroing:
			l.zeroing = nil
			if r.err == nil {
				l.zeroed = r.end
			}
		default:
			return
		}
	}
	chunk := zeroChunk(l.size)
	if l.zeroMax > 0 {
		chunk = min(chunk, l.zeroMax)
	}
	if l.zeroed-l.size > chunk/2 || l.size >= l.segmentSize {
		return
	}
	from := max(l.zeroed, l.size)
	// Past the segment's size only its last group goes, and a recycled
	// segment is allocated up to there already.
	if chunk = min(chunk, l.segmentSize-from); chunk <= 0 {
		return
	}
	done := make(chan zeroResult, 1)
	l.zeroing, l.zeroFrom = done, from
	go func(f *os.File) {
		for off := from; off < from+chunk; off += int64(len(zeros)) {
			if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), from+chunk-off)], off); err != nil {
				done <- zeroResult{err: err}
				return
			}
		}
		done <- zeroResult{end: from + chunk, err: fdatasync(f)}
	}(l.active)
}

// waitZeros waits for the zeros under way, if any.
func (l *bodyLog) waitZeros() {
	if l.zeroing == nil {
		return
	}
	if r := <-l.zeroing; r.err == nil {
		l.zeroed = r.end
	}
	l.zeroing = nil
}

// read returns a copy of the body at ref, checked against its frame.
func (l *bodyLog) read(ref bodyRef) ([]byte, error) {
	f, err := l.file(ref.segment)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, frameHeader+ref.length)
	if _, err := f.ReadAt(buf, ref.offset); err != nil {
		return nil, fmt.Errorf("reading body at %s:%d: %w", segmentName(ref.segment), ref.offset, err)
	}
	if int(binary.BigEndian.Uint32(buf[:4])) != ref.length || frameSum(buf[:4], buf[frameHeader:]) != binary.BigEndian.Uint32(buf[4:8]) {
		return nil, fmt.Errorf("body at %s:%d fails its checksum", segmentName(ref.segment), ref.offset)
	}
	return buf[frameHeader:], nil
}

// file returns segment n, opened for reading.
func (l *bodyLog) file(n uint64) (*os.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.files[n]; ok {
		return f, nil
	}
	f, err := os.Open(filepath.Join(l.dir, segmentName(n)))
	if err != nil {
		return nil, fmt.Errorf("opening body segment: %w", err)
	}
	l.files[n] = f
	return f, nil
}

// remove deletes those of segs that no event refers to or may yet refer
// to: never the active one, nor one with bodies whose commits have not
// ended. While a copy holds the log, they are deleted when it ends.
func (l *bodyLog) remove(segs ...uint64) error {
	l.mu.Lock()
	if l.holds > 0 {
		l.deferred = append(l.deferred, segs...)
		l.mu.Unlock()
		return nil
	}
	// A segment can only gain references through bodies appended to it:
	// never once it is not the active one and every body appended is
	// settled. So what inUse finds below stays true.
	var idle []uint64
	for _, n := range segs {
		if n != l.activeSeg && l.unsettled[n] == 0 {
			idle = append(idle, n)
		}
	}
	l.mu.Unlock()
	if len(idle) == 0 {
		return nil
	}
	// The caller saw these emptied, but a write committed since (in the
	// same transaction as the sweep, or after it) may refer to them again.
	used, err := l.inUse(idle)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, n := range idle {
		if slices.Contains(used, n) {
			continue
		}
		if f, ok := l.files[n]; ok {
			f.Close()
			delete(l.files, n)
		}
		if l.recycle && !l.reuse {
			// No sync: after a crash either name does.
			if err := os.Rename(filepath.Join(l.dir, segmentName(n)), filepath.Join(l.dir, reuseName)); err == nil {
				l.reuse = true
				continue
			}
		}
		if err := os.Remove(filepath.Join(l.dir, segmentName(n))); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// appended counts bodies appended at refs until settled. A group's bodies
// are all in the active segment.
func (l *bodyLog) appended(refs []bodyRef) {
	if len(refs) == 0 {
		return
	}
	l.mu.Lock()
	l.unsettled[refs[0].segment] += len(refs)
	l.mu.Unlock()
}

// settled ends the count of n bodies in segment whose commit has ended,
// committed or not.
func (l *bodyLog) settled(segment uint64, n int) {
	l.mu.Lock()
	if l.unsettled[segment] -= n; l.unsettled[segment] <= 0 {
		delete(l.unsettled, segment)
	}
	l.mu.Unlock()
}

// segmentCopy is a segment as a copy sees it: its first size bytes.
type segmentCopy struct {
	n    uint64
	size int64
}

// hold keeps every segment in place until release.
func (l *bodyLog) hold() {
	l.mu.Lock()
	l.holds++
	l.mu.Unlock()
}

// copies lists the segments with the sizes that hold every body that a
// transaction begun before the call refers to. Call it under a hold.
func (l *bodyLog) copies() ([]segmentCopy, error) {
	l.mu.Lock()
	active, synced := l.activeSeg, l.synced
	l.mu.Unlock()
	segs, err := l.segments()
	if err != nil {
		return nil, err
	}
	var out []segmentCopy
	for _, n := range segs {
		switch {
		case n < active:
			st, err := os.Stat(filepath.Join(l.dir, segmentName(n)))
			if err != nil {
				return nil, err
			}
			out = append(out, segmentCopy{n: n, size: st.Size()})
		case n == active:
			out = append(out, segmentCopy{n: n, size: synced})
		}
	}
	return out, nil
}

// release ends a hold, deleting the segments whose removal it deferred.
func (l *bodyLog) release() {
	l.mu.Lock()
	l.holds--
	var segs []uint64
	if l.holds == 0 {
		segs, l.deferred = l.deferred, nil
	}
	l.mu.Unlock()
	if len(segs) > 0 {
		_ = l.remove(segs...)
	}
}

// close closes every open segment.
func (l *bodyLog) close() error {
	l.waitZeros()
	if l.spare != nil {
		// Left empty: the next open removes it.
		if r := <-l.spare; r.err == nil {
			r.f.Close()
		}
		l.spare = nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for n, f := range l.files {
		errs = append(errs, f.Close())
		delete(l.files, n)
	}
	return errors.Join(errs...)
}

// SyncDir makes the creation, removal or renaming of a name in dir
// durable. Windows cannot sync a folder: there a name is as durable as NTFS
// makes it.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
