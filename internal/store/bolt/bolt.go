// Package bolt is the embedded store: events, their dedup keys, the delivery
// queue and the attempts in one bbolt file, and the events' bodies in a log
// of segment files beside it (bodylog.go).
package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/hookgate/hookgate/internal/store"
)

// Bucket layout. Keys are fixed-width and big-endian, so cursors walk them in
// time order:
//
//	events      id(16)                      → event metadata and where its body is (codec.go)
//	bodies      id(16)                      → raw body, in files from before the body log
//	segments    segment(8)                  → how many events' bodies it holds (8)
//	dedup       source 0x00 key             → id(16) ‖ expiresUnixNano(8)
//	deliveries  id(16) ‖ index(2)           → delivery (codec.go)
//	attempts    id(16) ‖ index(2) ‖ n(4)    → attempt (codec.go)
//	queue/<upstream>  dueUnixNano(8) ‖ id(16) ‖ index(2) → empty
//	learned_secrets  scope                  → a secret learned in a handshake (JSON)
//	delivery_bodies  id(16) ‖ index(2)      → a route's transformed body
//	order       upstream 0x00 key 0x00 id(16) ‖ index(2) → empty: ordered deliveries by arrival
//	pauses      upstream                    → its pause (JSON)
//	rejected    source                      → its recent refused requests (JSON)
//	search      field 0x00 value 0x00 id(16) → empty: the events with that search value
var (
	bucketEvents     = []byte("events")
	bucketBodies     = []byte("bodies")
	bucketDedup      = []byte("dedup")
	bucketDeliveries = []byte("deliveries")
	bucketAttempts   = []byte("attempts")
	bucketQueue      = []byte("queue")
	bucketMeta       = []byte("meta")
	// bucketLearned replaces "secrets", whose secrets were keyed by source
	// name alone and may have been planted; that bucket is left unread.
	bucketLearned = []byte("learned_secrets")
	bucketOrder   = []byte("order")
	bucketDBodies = []byte("delivery_bodies")
	bucketPauses  = []byte("pauses")
	// bucketCursors holds each source's reconciliation cursor.
	bucketCursors = []byte("cursors")
	bucketSegs    = []byte("segments")
	// bucketRejected holds each source's log of refused requests.
	bucketRejected = []byte("rejected")
	// bucketSearch indexes the events' search fields.
	bucketSearch = []byte("search")
)

// schemaVersion 2 keeps bodies in the body log and records in codec.go's
// encoding; Open upgrades a version 1 file (bodies in the B+tree, records
// in JSON) in place.
const schemaVersion = 2

// maxBatch bounds how many writes the writer logs in one group.
const maxBatch = 256

// maxApplyBatch bounds how many writes share one bbolt commit: more than a
// group, so that a backlog is applied in fewer, larger commits.
const maxApplyBatch = 1024

// applyBacklog is how many writes may wait for the applier before the
// writer logs no more: it bounds how far bbolt trails the ACKs (so a read
// waits for a commit or two at most) and the memory the waiting events
// hold.
const applyBacklog = 2 * maxApplyBatch

// Options configure a Store.
type Options struct {
	// OpenTimeout bounds the wait for the file lock held by another process.
	OpenTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logf, when set, is told of an upgrade of the file's format at open
	// and of the events applied from the write-ahead log.
	Logf func(format string, args ...any)
	// Warnf, when set, is told of failures to apply logged events.
	Warnf func(format string, args ...any)
	// SegmentSize is the size past which the body log starts a new
	// segment; 0 means 64 MiB. Tests make it small to exercise removal.
	SegmentSize int64
	// WALSegmentSize is the same for the write-ahead log; 0 means 4 MiB.
	WALSegmentSize int64
	// ApplyBacklog is how many writes may wait to be applied to bbolt
	// before the writer logs no more; 0 means 2048. Tests make it small.
	ApplyBacklog int
}

// Store is the embedded store: one bbolt file, writes group-committed.
type Store struct {
	db      *bbolt.DB
	path    string
	sizeCap sizeCap
	now     func() time.Time
	ids     store.IDSource
	bodies  *bodyLog

	// The writer's reused buffers for a group's bodies.
	bodyBatch [][]byte
	frameBuf  []byte
	refBuf    []bodyRef

	// Writes logged or passed on by the writer, waiting for the applier;
	// at most backlog of them.
	toApply handoff
	backlog int

	wal      *writeAheadLog
	inflight inflight
	walSeq   uint64 // the writer's last sequence number
	// loggedSeq is the last event logged (ACKed), appliedSeq the last one
	// in bbolt; appliedSignal is closed and replaced when appliedSeq moves.
	loggedSeq     atomic.Uint64
	appliedSeq    atomic.Uint64
	appliedMu     sync.Mutex
	appliedSignal chan struct{}
	// applyErr is set while logged events cannot be applied.
	applyErr atomic.Pointer[error]
	logf     func(format string, args ...any)
	warnf    func(format string, args ...any)

	writes    chan *writeOp
	sendMu    sync.RWMutex // senders hold it shared; Close takes it to stop sends
	closed    bool
	closing   chan struct{}
	writerEnd chan struct{}
	closeOnce sync.Once
	closeErr  error

	// durableTx is the id of the last transaction known to be on disk. A
	// reader whose snapshot is newer may see a commit still being synced.
	durableTx atomic.Uint64
	commits   atomic.Uint64
	pending   atomic.Int64

	leaseMu sync.Mutex
	leased  map[store.DeliveryKey]struct{} // claimed and not yet settled or released
	notify  func(upstream string)

	pauseSet sync.Mutex        // held by SetPaused
	pauses   *store.PauseTable // the pauses bucket, read at open
}

var (
	_ store.Backend = (*Store)(nil)
	_ store.Sweeper = (*Store)(nil)
)

// Open opens or creates the store file at path.
func Open(path string, opts Options) (_ *Store, err error) {
	if opts.OpenTimeout == 0 {
		opts.OpenTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	top := existingParent(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening store %s: creating its folder: %w", path, err)
	}
	db, err := openBolt(path, opts.OpenTimeout)
	if err != nil {
		return nil, err
	}
	// One way out on failure: whatever was opened is closed, and the error
	// names the store.
	var bodies *bodyLog
	var wal *writeAheadLog
	defer func() {
		if err != nil {
			if bodies != nil {
				bodies.close()
			}
			if wal != nil {
				wal.close()
			}
			db.Close()
			err = fmt.Errorf("opening store %s: %w", path, err)
		}
	}()
	lastID, version, err := prepareBuckets(db)
	if err != nil {
		return nil, err
	}
	// The body log syncs once per commit, off the ACK's path: zeros ahead
	// would double its writes to save a journal commit there.
	if bodies, err = openBodyLog(bodyLogDir(path), opts.SegmentSize, -1); err != nil {
		return nil, err
	}
	walID, applied, err := walIdentity(db)
	if err != nil {
		return nil, fmt.Errorf("reading the write-ahead log's identity: %w", err)
	}
	wal, unapplied, newest, err := openWAL(path, walID, applied, opts.WALSegmentSize)
	if err != nil {
		return nil, err
	}
	// The file and the body log's folder may be new: make their names, and
	// those of the folders made for them, durable before anything is ACKed.
	if err := syncFoldersUpTo(filepath.Dir(path), top); err != nil {
		return nil, err
	}
	s := &Store{
		bodies:    bodies,
		db:        db,
		path:      path,
		now:       opts.Now,
		writes:    make(chan *writeOp, maxBatch),
		closing:   make(chan struct{}),
		writerEnd: make(chan struct{}),
		leased:    map[store.DeliveryKey]struct{}{},
		wal:       wal,
		walSeq:    newest,
		logf:      opts.Logf,
		warnf:     opts.Warnf,
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if s.warnf == nil {
		s.warnf = s.logf
	}
	s.toApply.signal = make(chan struct{}, 1)
	s.toApply.room = make(chan struct{}, 1)
	s.backlog = applyBacklog
	if opts.ApplyBacklog > 0 {
		s.backlog = opts.ApplyBacklog
	}
	s.appliedSignal = make(chan struct{})
	s.appliedSeq.Store(applied)
	s.loggedSeq.Store(newest)
	bodies.inUse = s.segmentsInUse
	for _, ev := range unapplied {
		if bytes.Compare(ev.id[:], lastID[:]) > 0 {
			lastID = ev.id
		}
	}
	s.ids.Continue(lastID)
	if version == 1 {
		if err := s.upgrade(opts.Logf); err != nil {
			return nil, fmt.Errorf("upgrading its format: %w", err)
		}
	}
	if err := s.removeUnreferencedSegments(); err != nil {
		return nil, fmt.Errorf("removing body segments no event refers to: %w", err)
	}
	if err := s.applyUnapplied(unapplied); err != nil {
		return nil, err
	}
	if s.pauses, err = loadPauses(db); err != nil {
		return nil, fmt.Errorf("reading paused upstreams: %w", err)
	}
	if err := s.countPending(); err != nil {
		return nil, fmt.Errorf("counting pending deliveries: %w", err)
	}
	go s.writer()
	go s.releaseMappedPages()
	return s, nil
}

// existingParent is the first existing folder above path: the folders
// below it are created by Open, and their names, like the file's, are
// durable only once the folder holding each is fsynced.
func existingParent(path string) string {
	top := filepath.Dir(path)
	for {
		if _, err := os.Stat(top); err == nil || top == filepath.Dir(top) {
			return top
		}
		top = filepath.Dir(top)
	}
}

// syncFoldersUpTo fsyncs dir and each folder above it up to top.
func syncFoldersUpTo(dir, top string) error {
	for ; ; dir = filepath.Dir(dir) {
		if err := SyncDir(dir); err != nil {
			return fmt.Errorf("syncing %s: %w", dir, err)
		}
		if dir == top || dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// openBolt opens the bbolt file itself.
func openBolt(path string, timeout time.Duration) (*bbolt.DB, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      timeout,
		FreelistType: bbolt.FreelistMapType,
		// A read transaction held open blocks writers whenever a growing
		// file must be mapped again; mapping the first GiB at once avoids
		// that below 1 GiB, as bbolt's DB.Begin advises.
		InitialMmapSize: initialMmapSize(),
		// The freelist is written with each commit: not writing it saves a
		// little per commit but makes every open scan the whole file (7 s for
		// a million stored events), which delays the first delivery.
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("opening store %s: locked by another process (another hookgate using the same storage path?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	return db, nil
}

// prepareBuckets creates the buckets a new file lacks and reads the newest
// event id and the file's schema version.
func prepareBuckets(db *bbolt.DB) (lastID store.ID, version uint64, err error) {
	version = schemaVersion
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketEvents, bucketBodies, bucketDedup, bucketDeliveries, bucketAttempts, bucketQueue, bucketMeta, bucketLearned, bucketOrder, bucketDBodies, bucketPauses, bucketSegs, bucketCursors, bucketRejected, bucketSearch} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		// New ids continue after the newest stored one, even if the clock went back.
		if k, _ := tx.Bucket(bucketEvents).Cursor().Last(); len(k) == len(store.ID{}) {
			copy(lastID[:], k)
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get([]byte("version")); v != nil {
			version = binary.BigEndian.Uint64(v)
			if version != 1 && version != schemaVersion {
				return fmt.Errorf("file has schema version %d, this build reads 1 and %d", version, schemaVersion)
			}
			return nil
		}
		return meta.Put([]byte("version"), binary.BigEndian.AppendUint64(nil, schemaVersion))
	})
	return lastID, version, err
}

// countPending counts the queued deliveries, for Pending.
func (s *Store) countPending() error {
	return s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			s.pending.Add(int64(tx.Bucket(bucketQueue).Bucket(name).Stats().KeyN))
			return nil
		})
	})
}

// initialMmapSize is the address space mapped at open: 1 GiB on 64-bit
// Unix, where it reserves address space only and the file keeps its size;
// bbolt's default elsewhere (Windows would grow the file to the map's size,
// and 32-bit builds have little address space to spare).
func initialMmapSize() int {
	if runtime.GOOS == "windows" || strconv.IntSize < 64 {
		return 0
	}
	return 1 << 30
}

// Commits returns how many write transactions have been committed.
func (s *Store) Commits() uint64 { return s.commits.Load() }

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

// Close stops the writer after the batch in progress and closes the file.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.sendMu.Lock()
		s.closed = true
		close(s.closing)
		s.sendMu.Unlock()
		<-s.writerEnd
		s.closeErr = errors.Join(s.db.Close(), s.bodies.close(), s.wal.close())
	})
	return s.closeErr
}

// applyUnapplied brings bbolt up to date with the events the log holds
// after the last one it applied (those ACKed before a crash or power cut,
// and maybe the group being logged then), in their order, before the store
// takes a write.
func (s *Store) applyUnapplied(evs []*loggedEvent) error {
	if len(evs) == 0 {
		return nil
	}
	start := time.Now()
	for batch := range slices.Chunk(evs, maxBatch) {
		ops := make([]*writeOp, len(batch))
		for i, ev := range batch {
			ops[i] = &writeOp{fn: ev.apply, body: ev.body, hasBody: true, event: ev}
		}
		if err := s.appendBodies(ops); err != nil {
			return fmt.Errorf("applying %d events from the write-ahead log: %w", len(evs), err)
		}
		_, err := s.tryCommit(ops)
		s.settleBodies(ops)
		if err != nil {
			return fmt.Errorf("applying %d events from the write-ahead log: %w", len(evs), err)
		}
	}
	s.logf("applied %d events from the write-ahead log %s in %s", len(evs), walDir(s.path), time.Since(start).Round(time.Millisecond))
	return nil
}
