package bolt

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// The write-ahead log puts one fdatasync on an ACK's path. An ingested
// event (its record, keys, deliveries and body) is appended to the log with
// the others of its group, in one frame, and the group is ACKed once that
// frame is synced. bbolt is brought up to date from the groups off the
// ACK's path, by the writer's later stages (write.go), and each commit
// records the sequence number of the last logged event it applied
// (meta/wal_applied). A log segment is removed once every event in it is
// applied. At open, the events logged after that number are applied before
// the store takes a write, so bbolt stays the store of record.
//
// The log is a second bodyLog: segments of checksummed frames, filled with
// zeros ahead of the writes, whose newest segment is cut at the first frame
// that does not check. A group is one frame, so a torn tail is cut at the
// last whole group. Each frame names the store file it belongs to (its
// meta/wal_id), so a log left beside a restored or replaced file is not
// applied to it.

// walDir is the folder of a store file's write-ahead log.
func walDir(storePath string) string { return storePath + ".wal" }

// walSegmentSize is the size past which the log starts a new segment:
// large enough that a segment is created rarely (its creation and name sync
// are on an ACK's path), small enough that an applied one goes soon and
// the log takes little room on a small disk.
const walSegmentSize int64 = 4 << 20

// walZeroAhead is how far ahead of its writes the log is filled with zeros.
const walZeroAhead int64 = 256 << 10

// walRewindAt is the size of the active segment past which, once bbolt has
// applied every event logged, the log writes it again from its start: the
// log then takes about this much room when bbolt keeps up. The frames left
// after the new ones were all applied: at open they are skipped, and a
// scan that meets the torn end of a new frame stops there.
const walRewindAt int64 = 1 << 20

const walFormat = 0x01

var (
	keyWALID      = []byte("wal_id")
	keyWALApplied = []byte("wal_applied")
)

// loggedEvent is an ingested event as the log holds it: everything its
// apply writes to bbolt, decided before it was logged.
type loggedEvent struct {
	seq         uint64
	id          store.ID
	now         time.Time
	dedupKey    []byte // source 0 key, or nil
	digestKey   []byte // source 2 digest, or nil
	replayKey   []byte // source 1 token, or nil
	dedupUntil  time.Time
	replayUntil time.Time
	meta        []byte // encodeEvent's record, without where the body is
	search      map[string]string
	body        []byte
	targets     []store.Target
}

// apply writes the logged event to bbolt, its body being at ref. Every
// decision (dedup, replay) was taken before it was logged: apply only
// writes, so it gives the same store whether it runs live or at recovery.
func (ev *loggedEvent) apply(tx *bbolt.Tx, ref bodyRef) error {
	if ev.replayKey != nil {
		if err := putSeen(tx, ev.replayKey, ev.id, ev.replayUntil); err != nil {
			return err
		}
	}
	if err := putEvent(tx, ev.id, appendBodyRef(ev.meta, ref)); err != nil {
		return err
	}
	if err := putSearch(tx, ev.id, ev.search); err != nil {
		return err
	}
	if err := countSegment(tx, ref.segment, 1); err != nil {
		return err
	}
	for _, k := range [][]byte{ev.dedupKey, ev.digestKey} {
		if k != nil {
			if err := putSeen(tx, k, ev.id, ev.dedupUntil); err != nil {
				return err
			}
		}
	}
	return addDeliveries(tx, ev.id, 0, ev.targets, ev.now)
}

func putBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendGroup encodes a group of logged events, numbered in order, as the
// payload of one frame.
func appendGroup(b []byte, walID uint64, evs []*loggedEvent) []byte {
	b = append(b, walFormat)
	b = binary.BigEndian.AppendUint64(b, walID)
	b = binary.AppendUvarint(b, uint64(len(evs)))
	for _, ev := range evs {
		b = binary.AppendUvarint(b, ev.seq)
		b = append(b, ev.id[:]...)
		b = binary.AppendVarint(b, ev.now.UnixNano())
		b = putBytes(b, ev.dedupKey)
		b = putBytes(b, ev.digestKey)
		b = putBytes(b, ev.replayKey)
		b = binary.AppendVarint(b, ev.dedupUntil.UnixNano())
		b = binary.AppendVarint(b, ev.replayUntil.UnixNano())
		b = putBytes(b, ev.meta)
		b = binary.AppendUvarint(b, uint64(len(ev.search)))
		for k, v := range ev.search {
			b = putBytes(putBytes(b, []byte(k)), []byte(v))
		}
		b = putBytes(b, ev.body)
		b = binary.AppendUvarint(b, uint64(len(ev.targets)))
		for i := range ev.targets {
			t := &ev.targets[i]
			b = putBytes(b, []byte(t.Upstream))
			b = putBytes(b, []byte(t.Route))
			b = putBytes(b, []byte(t.OrderKey))
			b = putBytes(b, []byte(t.Path))
			b = binary.AppendUvarint(b, uint64(len(t.SetHeaders)))
			for k, v := range t.SetHeaders {
				b = putBytes(putBytes(b, []byte(k)), []byte(v))
			}
			b = putStrings(b, t.RemoveHeaders)
			if t.Body == nil {
				b = append(b, 0)
			} else {
				b = putBytes(append(b, 1), t.Body)
			}
		}
	}
	return b
}

// decodeGroup reads a frame's payload. Its slices point into p.
func decodeGroup(p []byte) (walID uint64, evs []*loggedEvent, err error) {
	if len(p) < 9 || p[0] != walFormat {
		return 0, nil, errors.New("not a log group (written by a newer hookgate?)")
	}
	walID = binary.BigEndian.Uint64(p[1:9])
	r := reader{b: p[9:]}
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		return 0, nil, errTruncated
	}
	for range n {
		ev := &loggedEvent{seq: r.uvarint()}
		if len(r.b) < len(ev.id) {
			return 0, nil, errTruncated
		}
		copy(ev.id[:], r.b)
		r.b = r.b[len(ev.id):]
		ev.now = time.Unix(0, r.varint())
		ev.dedupKey, ev.digestKey, ev.replayKey = r.bytes(), r.bytes(), r.bytes()
		ev.dedupUntil, ev.replayUntil = time.Unix(0, r.varint()), time.Unix(0, r.varint())
		ev.meta = r.bytes()
		if ns := r.uvarint(); ns > 0 && ns <= uint64(len(r.b)) {
			ev.search = make(map[string]string, ns)
			for range ns {
				k := r.bytes()
				ev.search[string(k)] = string(r.bytes())
			}
		}
		ev.body = r.bytes()
		if ev.body == nil {
			ev.body = []byte{}
		}
		nt := r.uvarint()
		if nt > uint64(len(r.b)) {
			return 0, nil, errTruncated
		}
		ev.targets = make([]store.Target, nt)
		for i := range ev.targets {
			t := &ev.targets[i]
			t.Upstream, t.Route, t.OrderKey, t.Path = string(r.bytes()), string(r.bytes()), string(r.bytes()), string(r.bytes())
			if nh := r.uvarint(); nh > 0 && nh <= uint64(len(r.b)) {
				t.SetHeaders = make(map[string]string, nh)
				for range nh {
					k := r.bytes()
					t.SetHeaders[string(k)] = string(r.bytes())
				}
			}
			if rh := r.strings(); len(rh) > 0 {
				t.RemoveHeaders = rh
			}
			if r.byte() == 1 {
				if t.Body = r.bytes(); t.Body == nil {
					t.Body = []byte{}
				}
			}
		}
		if r.err != nil {
			return 0, nil, r.err
		}
		evs = append(evs, ev)
	}
	if r.err != nil {
		return 0, nil, r.err
	}
	return walID, evs, nil
}

// bytes reads a uvarint length and that many bytes; nil for none.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return nil
	}
	if n == 0 {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// writeAheadLog is the log and what is known of its segments.
type writeAheadLog struct {
	log *bodyLog
	id  uint64 // the store file's meta/wal_id

	// Appending (the writer's first stage only): the frame being built,
	// reused.
	frame []byte
	group []*loggedEvent

	mu sync.Mutex
	// last is the sequence number of the newest event in each segment.
	last map[uint64]uint64
}

// walIdentity reads the store file's log id, making one for a file that
// has none, and the sequence number of the last logged event it applied.
func walIdentity(db *bbolt.DB) (id, applied uint64, err error) {
	err = db.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyWALApplied); len(v) == 8 {
			applied = binary.BigEndian.Uint64(v)
		}
		if v := meta.Get(keyWALID); len(v) == 8 {
			id = binary.BigEndian.Uint64(v)
			return nil
		}
		var b [8]byte
		if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
			return err
		}
		id = binary.BigEndian.Uint64(b[:])
		return meta.Put(keyWALID, b[:])
	})
	return id, applied, err
}

// openWAL opens the log beside the store file and returns, in order, the
// events it holds that bbolt has not applied (those numbered after
// applied), and the newest sequence number it holds.
func openWAL(storePath string, id, applied uint64, segmentSize int64) (*writeAheadLog, []*loggedEvent, uint64, error) {
	if segmentSize <= 0 {
		segmentSize = walSegmentSize
	}
	log, err := openBodyLog(walDir(storePath), segmentSize, walZeroAhead)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("opening the write-ahead log: %w", err)
	}
	log.recycle = true
	if _, err := os.Stat(filepath.Join(log.dir, reuseName)); err == nil {
		log.reuse = true
	}
	w := &writeAheadLog{log: log, id: id, last: map[uint64]uint64{}}
	log.inUse = w.unapplied(applied)
	segs, err := log.segments()
	if err != nil {
		log.close()
		return nil, nil, 0, err
	}
	var pending []*loggedEvent
	newest := applied
	for _, n := range segs {
		w.last[n] = 0 // so that trim removes a segment of another file's log too
		f, err := log.file(n)
		if err != nil {
			log.close()
			return nil, nil, 0, err
		}
		err = eachFrame(f, func(off int64, payload []byte) error {
			gid, evs, err := decodeGroup(payload)
			if err != nil {
				return fmt.Errorf("%s at %d: %w", f.Name(), off, err)
			}
			if gid != id {
				return nil // a log left by another store file
			}
			for _, ev := range evs {
				w.last[n] = max(w.last[n], ev.seq)
				newest = max(newest, ev.seq)
				if ev.seq > applied {
					pending = append(pending, ev)
				}
			}
			return nil
		})
		if err != nil {
			log.close()
			return nil, nil, 0, fmt.Errorf("reading the write-ahead log: %w", err)
		}
	}
	return w, pending, newest, nil
}

// eachFrame calls fn with each frame's offset and a copy of its payload,
// up to the first frame that does not check.
func eachFrame(f *os.File, fn func(off int64, payload []byte) error) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var off int64
	var hdr [frameHeader]byte
	for {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		if n == 0 || off+frameHeader+n > st.Size() {
			return nil
		}
		payload := make([]byte, n)
		if _, err := f.ReadAt(payload, off+frameHeader); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if frameSum(hdr[:4], payload) != binary.BigEndian.Uint32(hdr[4:]) {
			return nil
		}
		if err := fn(off, payload); err != nil {
			return err
		}
		off += frameHeader + n
	}
}

// append logs a group of events in one frame and syncs it. allApplied
// says bbolt holds every event logged before.
func (w *writeAheadLog) append(evs []*loggedEvent, allApplied bool) error {
	if allApplied && w.log.size >= walRewindAt && !w.log.mustRotate {
		w.log.waitZeros()
		w.log.size = 0
	}
	var header [frameHeader]byte
	w.frame = appendGroup(append(w.frame[:0], header[:]...), w.id, evs)
	seg, err := w.log.seal(w.frame)
	if err != nil {
		return err
	}
	if err := w.log.write(w.frame); err != nil {
		return err
	}
	w.mu.Lock()
	w.last[seg] = max(w.last[seg], evs[len(evs)-1].seq)
	w.mu.Unlock()
	return nil
}

// unapplied returns the log's inUse: the segments holding an event
// numbered after applied.
func (w *writeAheadLog) unapplied(applied uint64) func([]uint64) ([]uint64, error) {
	return func(segs []uint64) ([]uint64, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		var used []uint64
		for _, n := range segs {
			if w.last[n] > applied {
				used = append(used, n)
			}
		}
		return used, nil
	}
}

// trim removes the segments whose events are all applied, but the one
// being appended to.
func (w *writeAheadLog) trim(applied uint64) error {
	w.mu.Lock()
	if len(w.last) < 2 {
		w.mu.Unlock()
		return nil // the active segment stays
	}
	var done []uint64
	for n, last := range w.last {
		if last <= applied {
			done = append(done, n)
		}
	}
	w.mu.Unlock()
	if len(done) == 0 {
		return nil
	}
	w.log.inUse = w.unapplied(applied)
	if err := w.log.remove(done...); err != nil {
		return err
	}
	w.mu.Lock()
	for _, n := range done {
		if _, err := os.Stat(filepath.Join(w.log.dir, segmentName(n))); errors.Is(err, os.ErrNotExist) {
			delete(w.last, n)
		}
	}
	w.mu.Unlock()
	return nil
}

func (w *writeAheadLog) close() error { return w.log.close() }
