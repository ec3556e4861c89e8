// Package bolt is the embedded store: events, their dedup keys, the delivery
// queue and the attempts in one bbolt file, and the events' bodies in a log
// of segment files beside it (bodylog.go).
package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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
	bucketSegs    = []byte("segments")
)

// schemaVersion 2 keeps bodies in the body log and records in codec.go's
// encoding; Open upgrades a version 1 file (bodies in the B+tree, records
// in JSON) in place.
const schemaVersion = 2

// maxBatch bounds how many writes share one commit.
const maxBatch = 256

// Options configure a Store.
type Options struct {
	// OpenTimeout bounds the wait for the file lock held by another process.
	OpenTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logf, when set, is told of an upgrade of the file's format at open.
	Logf func(format string, args ...any)
	// SegmentSize is the size past which the body log starts a new
	// segment; 0 means 64 MiB. Tests make it small to exercise removal.
	SegmentSize int64
}

// Store is the embedded store: one bbolt file, writes group-committed.
type Store struct {
	db     *bbolt.DB
	path   string
	now    func() time.Time
	ids    store.IDSource
	bodies *bodyLog

	// The writer's reused buffers for a group's bodies.
	bodyBatch [][]byte
	frameBuf  []byte
	refBuf    []bodyRef

	// Writes whose bodies are on disk, waiting for the committer; readySignal
	// tells it there are some.
	readyMu     sync.Mutex
	ready       []*writeOp
	readySignal chan struct{}

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

type writeOp struct {
	fn func(tx *bbolt.Tx, body bodyRef) error
	// body, when hasBody, is appended to the body log before the commit
	// that runs fn, and ref says where it is once framed.
	body    []byte
	hasBody bool
	framed  bool
	ref     bodyRef
	done    chan error
}

var writeOpPool = sync.Pool{New: func() any { return &writeOp{done: make(chan error, 1)} }}

// Open opens or creates the store file at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.OpenTimeout == 0 {
		opts.OpenTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// The first existing folder above the file: the folders below it are
	// created here, and their names, like the file's, are durable only
	// once the folder holding each is fsynced.
	top := filepath.Dir(path)
	for {
		if _, err := os.Stat(top); err == nil || top == filepath.Dir(top) {
			break
		}
		top = filepath.Dir(top)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening store %s: creating its folder: %w", path, err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      opts.OpenTimeout,
		FreelistType: bbolt.FreelistMapType,
		// A read transaction held open (a Backup) blocks writers whenever
		// a growing file must be mapped again; mapping the first GiB at
		// once avoids that below 1 GiB, as bbolt's DB.Begin advises.
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
	var lastID store.ID
	version := uint64(schemaVersion)
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketEvents, bucketBodies, bucketDedup, bucketDeliveries, bucketAttempts, bucketQueue, bucketMeta, bucketLearned, bucketOrder, bucketDBodies, bucketPauses, bucketSegs} {
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
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	bodies, err := openBodyLog(bodyLogDir(path), opts.SegmentSize)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	// The file and the body log's folder may be new: make their names, and
	// those of the folders made for them, durable before anything is ACKed.
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if err := SyncDir(dir); err != nil {
			bodies.close()
			db.Close()
			return nil, fmt.Errorf("opening store %s: syncing %s: %w", path, dir, err)
		}
		if dir == top || dir == filepath.Dir(dir) {
			break
		}
	}
	s := &Store{
		bodies:      bodies,
		db:          db,
		path:        path,
		now:         opts.Now,
		writes:      make(chan *writeOp, maxBatch),
		readySignal: make(chan struct{}, 1),
		closing:     make(chan struct{}),
		writerEnd:   make(chan struct{}),
		leased:      map[store.DeliveryKey]struct{}{},
	}
	bodies.inUse = s.segmentsInUse
	s.ids.Continue(lastID)
	fail := func(what string, err error) (*Store, error) {
		bodies.close()
		db.Close()
		return nil, fmt.Errorf("opening store %s: %s: %w", path, what, err)
	}
	if version == 1 {
		if err := s.upgrade(opts.Logf); err != nil {
			return fail("upgrading its format", err)
		}
	}
	if err := s.removeUnreferencedSegments(); err != nil {
		return fail("removing body segments no event refers to", err)
	}
	if s.pauses, err = loadPauses(db); err != nil {
		return fail("reading paused upstreams", err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			s.pending.Add(int64(tx.Bucket(bucketQueue).Bucket(name).Stats().KeyN))
			return nil
		})
	})
	if err != nil {
		return fail("counting pending deliveries", err)
	}
	go s.writer()
	go s.releaseMappedPages()
	return s, nil
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
		s.closeErr = errors.Join(s.db.Close(), s.bodies.close())
	})
	return s.closeErr
}

// update runs fn in a write transaction shared with other concurrent
// writers and returns once that transaction is on disk.
func (s *Store) update(ctx context.Context, fn func(*bbolt.Tx) error) error {
	return s.write(ctx, nil, false, func(tx *bbolt.Tx, _ bodyRef) error { return fn(tx) })
}

// updateWithBody is update for a write that stores a body: the body is
// appended to the body log and synced before the transaction commits, and
// fn is told where it is.
func (s *Store) updateWithBody(ctx context.Context, body []byte, fn func(*bbolt.Tx, bodyRef) error) error {
	return s.write(ctx, body, true, fn)
}

func (s *Store) write(ctx context.Context, body []byte, hasBody bool, fn func(*bbolt.Tx, bodyRef) error) error {
	op := writeOpPool.Get().(*writeOp)
	op.fn, op.body, op.hasBody, op.framed = fn, body, hasBody, false
	s.sendMu.RLock()
	if s.closed {
		s.sendMu.RUnlock()
		return fmt.Errorf("%w: closed", store.ErrUnavailable)
	}
	select {
	case s.writes <- op:
		s.sendMu.RUnlock()
	case <-ctx.Done():
		s.sendMu.RUnlock()
		return ctx.Err()
	}
	// Once queued, the op is always answered; wait for it even if ctx ends,
	// so the caller never reports failure for a write that landed.
	err := <-op.done
	op.fn, op.body = nil, nil
	writeOpPool.Put(op)
	return err
}

// writer and committer are the two stages of a write. The writer takes
// whatever writes are queued, appends their bodies to the body log with
// one write and one fdatasync, and hands them to the committer; the
// committer takes every write handed over when its last commit finishes
// and commits them in one bbolt transaction. So a write's body is synced
// while the commit before it runs, the batch size follows the load, and
// an idle store commits a lone write at once; and a commit never refers
// to a body that is not on disk.
func (s *Store) writer() {
	bodiesEnd, committerEnd := make(chan struct{}), make(chan struct{})
	go s.committer(bodiesEnd, committerEnd)
	defer func() {
		close(bodiesEnd)
		<-committerEnd
		close(s.writerEnd)
	}()
	group := make([]*writeOp, 0, maxBatch)
	for {
		select {
		case op := <-s.writes:
			group = append(group[:0], op)
		case <-s.closing:
			s.refuseQueued()
			return
		}
	fill:
		for len(group) < maxBatch {
			select {
			case op := <-s.writes:
				group = append(group, op)
			default:
				break fill
			}
		}
		if err := s.appendBodies(group); err != nil {
			for _, op := range group {
				op.done <- fmt.Errorf("%w: %v", store.ErrUnavailable, err)
			}
			continue
		}
		s.readyMu.Lock()
		s.ready = append(s.ready, group...)
		s.readyMu.Unlock()
		select {
		case s.readySignal <- struct{}{}:
		default:
		}
	}
}

// committer commits what the writer hands over until the writer ends, then
// what is left.
func (s *Store) committer(bodiesEnd, end chan struct{}) {
	defer close(end)
	batch := make([]*writeOp, 0, maxBatch)
	for {
		select {
		case <-s.readySignal:
		case <-bodiesEnd:
			for s.takeReady(&batch) {
				s.commit(batch)
			}
			return
		}
		for s.takeReady(&batch) {
			s.commit(batch)
		}
	}
}

// takeReady moves up to maxBatch handed-over writes into batch.
func (s *Store) takeReady(batch *[]*writeOp) bool {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	n := min(len(s.ready), maxBatch)
	*batch = append((*batch)[:0], s.ready[:n]...)
	rest := copy(s.ready, s.ready[n:])
	clear(s.ready[rest:])
	s.ready = s.ready[:rest]
	return n > 0
}

func (s *Store) refuseQueued() {
	for {
		select {
		case op := <-s.writes:
			op.done <- fmt.Errorf("%w: closed", store.ErrUnavailable)
		default:
			return
		}
	}
}

// commit runs a batch of writes, whose bodies are on disk, in one write
// transaction.
func (s *Store) commit(batch []*writeOp) {
	failed := -1
	var txID uint64
	err := s.db.Update(func(tx *bbolt.Tx) error {
		txID = uint64(tx.ID())
		for i, op := range batch {
			if err := op.fn(tx, op.ref); err != nil {
				failed = i
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.durableTx.Store(txID)
		s.commits.Add(1)
		s.settleBodies(batch)
		for _, op := range batch {
			op.done <- nil
		}
		return
	}
	if failed < 0 || len(batch) == 1 {
		s.settleBodies(batch)
		// The commit itself failed (disk full, I/O error): nothing landed.
		if failed < 0 {
			err = fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		for _, op := range batch {
			op.done <- err
		}
		return
	}
	// One write failed and rolled back the others: run each on its own.
	for _, op := range batch {
		s.commit([]*writeOp{op})
	}
}

// appendBodies appends the bodies of a group of writes to the body log and
// syncs them, and tells each write where its body is.
func (s *Store) appendBodies(batch []*writeOp) error {
	s.bodyBatch = s.bodyBatch[:0]
	for _, op := range batch {
		if op.hasBody && !op.framed {
			s.bodyBatch = append(s.bodyBatch, op.body)
		}
	}
	if len(s.bodyBatch) == 0 {
		return nil
	}
	buf, refs, err := s.bodies.frames(s.frameBuf[:0], s.bodyBatch, s.refBuf[:0])
	clear(s.bodyBatch)
	if err != nil {
		return err
	}
	s.frameBuf, s.refBuf = buf, refs
	if err := s.bodies.write(buf); err != nil {
		return err
	}
	s.bodies.appended(refs)
	for _, op := range batch {
		if op.hasBody && !op.framed {
			op.ref, refs = refs[0], refs[1:]
			op.framed = true
		}
	}
	return nil
}

// settleBodies tells the body log that the commit of batch has ended: its
// bodies are referred to now, or never will be. Called before a write is
// answered, after which its op is reused.
func (s *Store) settleBodies(batch []*writeOp) {
	// A batch's bodies are in one segment, or two across a rotation: one
	// call, one lock, for each run.
	var seg uint64
	n := 0
	for _, op := range batch {
		if !op.hasBody || !op.framed {
			continue
		}
		if n > 0 && op.ref.segment != seg {
			s.bodies.settled(seg, n)
			n = 0
		}
		seg = op.ref.segment
		n++
	}
	if n > 0 {
		s.bodies.settled(seg, n)
	}
}

// segmentsInUse returns those of segs that a committed event refers to.
func (s *Store) segmentsInUse(segs []uint64) ([]uint64, error) {
	var used []uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		counts := tx.Bucket(bucketSegs)
		for _, n := range segs {
			if counts.Get(binary.BigEndian.AppendUint64(nil, n)) != nil {
				used = append(used, n)
			}
		}
		return nil
	})
	return used, err
}

func eventKey(id store.ID) []byte { return id[:] }

func deliveryKey(k store.DeliveryKey) []byte {
	b := make([]byte, 18)
	copy(b, k.Event[:])
	binary.BigEndian.PutUint16(b[16:], k.Index)
	return b
}

func parseDeliveryKey(b []byte) store.DeliveryKey {
	var k store.DeliveryKey
	copy(k.Event[:], b[:16])
	k.Index = binary.BigEndian.Uint16(b[16:18])
	return k
}

func queueKey(due time.Time, k store.DeliveryKey) []byte {
	b := make([]byte, 26)
	binary.BigEndian.PutUint64(b, uint64(due.UnixNano()))
	copy(b[8:], k.Event[:])
	binary.BigEndian.PutUint16(b[24:], k.Index)
	return b
}

func attemptKey(k store.DeliveryKey, n int) []byte {
	b := make([]byte, 22)
	copy(b, deliveryKey(k))
	binary.BigEndian.PutUint32(b[18:], uint32(n))
	return b
}

func dedupKey(source, key string) []byte {
	b := make([]byte, 0, len(source)+1+len(key))
	b = append(b, source...)
	b = append(b, 0)
	return append(b, key...)
}

// putSeen records a dedup or single-use key for an event until a time.
func putSeen(tx *bbolt.Tx, key []byte, id store.ID, until time.Time) error {
	v := make([]byte, 24)
	copy(v, id[:])
	binary.BigEndian.PutUint64(v[16:], uint64(until.UnixNano()))
	b := tx.Bucket(bucketDedup)
	// Provider ids arrive in no order, so pages fill from both sides of a
	// split; left at bbolt's half, a page that takes no more keys stays half
	// empty.
	b.FillPercent = appendFill
	return b.Put(key, v)
}

// seenBefore reads a dedup entry that has not expired.
func seenBefore(tx *bbolt.Tx, key []byte, now time.Time) (store.ID, bool) {
	v := tx.Bucket(bucketDedup).Get(key)
	if len(v) != 24 {
		return store.ID{}, false
	}
	if int64(binary.BigEndian.Uint64(v[16:])) <= now.UnixNano() {
		return store.ID{}, false
	}
	var id store.ID
	copy(id[:], v[:16])
	return id, true
}

// Ingest implements store.Store.
func (s *Store) Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error) {
	now := s.now()
	var dk, gk []byte
	if e.DedupKey != "" {
		dk = dedupKey(e.Event.Source, e.DedupKey)
	}
	if e.DigestKey != "" {
		// Separators 0, 1 and 2 keep dedup, token and digest keys apart.
		gk = append(append([]byte(e.Event.Source), 2), e.DigestKey...)
	}
	// A duplicate found in a snapshot that is already on disk needs no write.
	if id, ok := s.durableDuplicate(now, dk, gk); ok {
		return store.IngestResult{ID: id, Duplicate: true}, nil
	}
	var rk []byte
	if e.ReplayKey != "" {
		// Another byte than a dedup key's separator: the two never collide.
		rk = append(append([]byte(e.Event.Source), 1), e.ReplayKey...)
	}
	e.Event.ID = s.ids.Next(now)
	meta := encodeEvent(e.Event)
	var result store.IngestResult
	err := s.updateWithBody(ctx, e.Event.Body, func(tx *bbolt.Tx, body bodyRef) error {
		result = store.IngestResult{ID: e.Event.ID}
		for _, k := range [][]byte{dk, gk} {
			if k == nil {
				continue
			}
			if id, ok := seenBefore(tx, k, now); ok {
				result = store.IngestResult{ID: id, Duplicate: true}
				return nil
			}
		}
		if rk != nil {
			if _, ok := seenBefore(tx, rk, now); ok {
				result = store.IngestResult{Replayed: true}
				return nil
			}
			if err := putSeen(tx, rk, e.Event.ID, e.ReplayUntil); err != nil {
				return err
			}
		}
		if err := putEvent(tx, e.Event.ID, appendBodyRef(meta, body)); err != nil {
			return err
		}
		if err := countSegment(tx, body.segment, 1); err != nil {
			return err
		}
		for _, k := range [][]byte{dk, gk} {
			if k == nil {
				continue
			}
			if err := putSeen(tx, k, e.Event.ID, e.DedupUntil); err != nil {
				return err
			}
		}
		return addDeliveries(tx, e.Event.ID, 0, e.Targets, now)
	})
	if err != nil {
		return store.IngestResult{}, err
	}
	if !result.Duplicate && !result.Replayed {
		s.pending.Add(int64(len(e.Targets)))
		s.queued(upstreamsOf(e.Targets)...)
	}
	return result, nil
}

// addDeliveries stores and queues deliveries for an event, numbered from first.
func addDeliveries(tx *bbolt.Tx, id store.ID, first int, targets []store.Target, now time.Time) error {
	for i, t := range targets {
		d := store.Delivery{
			Key:         store.DeliveryKey{Event: id, Index: uint16(first + i)},
			Upstream:    t.Upstream,
			Route:       t.Route,
			State:       store.StatePending,
			NextAt:      now,
			UpdatedAt:   now,
			OrderKey:    t.OrderKey,
			Shaping:     t.Shaping,
			Transformed: t.Body != nil,
		}
		if t.Body != nil {
			if err := tx.Bucket(bucketDBodies).Put(deliveryKey(d.Key), t.Body); err != nil {
				return err
			}
		}
		if err := putDelivery(tx, &d); err != nil {
			return err
		}
		if err := enqueue(tx, &d); err != nil {
			return err
		}
	}
	return nil
}

// AddDeliveries implements store.Store.
func (s *Store) AddDeliveries(ctx context.Context, id store.ID, targets []store.Target) error {
	now := s.now()
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		e, body, err := eventMeta(tx, id[:])
		if err != nil {
			return err
		}
		next := 0
		c := tx.Bucket(bucketDeliveries).Cursor()
		for k, _ := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, _ = c.Next() {
			next = int(binary.BigEndian.Uint16(k[16:18])) + 1
		}
		if next+len(targets) > 0xffff {
			return fmt.Errorf("event %s has too many deliveries", id)
		}
		e.Unrouted, e.Quarantined = false, ""
		if err := rewriteEvent(tx, e, body); err != nil {
			return err
		}
		return addDeliveries(tx, id, next, targets, now)
	})
	if err == nil {
		s.pending.Add(int64(len(targets)))
		s.queued(upstreamsOf(targets)...)
	}
	return err
}

// upstreamsOf names the targets' upstreams.
func upstreamsOf(targets []store.Target) []string {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		if !slices.Contains(out, t.Upstream) {
			out = append(out, t.Upstream)
		}
	}
	return out
}

// durableDuplicate looks the keys up, in one read transaction, in a
// snapshot that is on disk; nil keys are skipped.
func (s *Store) durableDuplicate(now time.Time, dk, gk []byte) (store.ID, bool) {
	if dk == nil && gk == nil {
		return store.ID{}, false
	}
	var id store.ID
	var ok bool
	_ = s.db.View(func(tx *bbolt.Tx) error {
		if uint64(tx.ID()) > s.durableTx.Load() {
			return nil
		}
		if dk != nil {
			if id, ok = seenBefore(tx, dk, now); ok {
				return nil
			}
		}
		if gk != nil {
			id, ok = seenBefore(tx, gk, now)
		}
		return nil
	})
	return id, ok
}

func putDelivery(tx *bbolt.Tx, d *store.Delivery) error {
	b := tx.Bucket(bucketDeliveries)
	b.FillPercent = appendFill
	return b.Put(deliveryKey(d.Key), encodeDelivery(d))
}

// appendFill is how full a page of a bucket whose keys grow with time is
// left when it splits: such pages are rarely written again, and bbolt's
// default (half) would leave half of each empty for good.
const appendFill = 0.9

func putEvent(tx *bbolt.Tx, id store.ID, record []byte) error {
	b := tx.Bucket(bucketEvents)
	b.FillPercent = appendFill
	return b.Put(eventKey(id), record)
}

// rewriteEvent stores changed metadata of an event, keeping its body where
// it is: in the body log, or, for an event stored before it, in the bodies
// bucket.
func rewriteEvent(tx *bbolt.Tx, e *store.Event, body *bodyRef) error {
	meta := encodeEvent(e)
	if body != nil {
		meta = appendBodyRef(meta, *body)
	}
	return putEvent(tx, e.ID, meta)
}

// countSegment adds delta to the number of events whose bodies are in a
// segment and reports whether none is left.
func countSegment(tx *bbolt.Tx, segment uint64, delta int64) error {
	_, err := addToSegment(tx, segment, delta)
	return err
}

func addToSegment(tx *bbolt.Tx, segment uint64, delta int64) (left int64, err error) {
	b := tx.Bucket(bucketSegs)
	key := binary.BigEndian.AppendUint64(nil, segment)
	if v := b.Get(key); len(v) == 8 {
		left = int64(binary.BigEndian.Uint64(v))
	}
	left = max(left+delta, 0)
	if left == 0 {
		return 0, b.Delete(key)
	}
	return left, b.Put(key, binary.BigEndian.AppendUint64(nil, uint64(left)))
}

// enqueue puts a pending delivery on its upstream's queue and, for ordered
// delivery, in its key's line.
func enqueue(tx *bbolt.Tx, d *store.Delivery) error {
	q, err := tx.Bucket(bucketQueue).CreateBucketIfNotExists([]byte(d.Upstream))
	if err != nil {
		return err
	}
	q.FillPercent = appendFill // new deliveries are due now: they go at the end
	if err := q.Put(queueKey(d.NextAt, d.Key), nil); err != nil {
		return err
	}
	if d.OrderKey != "" {
		return tx.Bucket(bucketOrder).Put(orderKey(d), nil)
	}
	return nil
}

func orderPrefix(d *store.Delivery) []byte {
	b := make([]byte, 0, len(d.Upstream)+len(d.OrderKey)+2+18)
	b = append(b, d.Upstream...)
	b = append(b, 0)
	b = append(b, d.OrderKey...)
	return append(b, 0)
}

func orderKey(d *store.Delivery) []byte { return append(orderPrefix(d), deliveryKey(d.Key)...) }

// isHead reports whether an ordered delivery is the oldest one pending for
// its key; unordered deliveries always are.
func isHead(tx *bbolt.Tx, d *store.Delivery) bool {
	if d.OrderKey == "" {
		return true
	}
	prefix := orderPrefix(d)
	k, _ := tx.Bucket(bucketOrder).Cursor().Seek(prefix)
	return k != nil && bytes.Equal(k, orderKey(d))
}

// Pending implements store.Store.
func (s *Store) Pending() int64 { return s.pending.Load() }

func getDelivery(tx *bbolt.Tx, k store.DeliveryKey) (*store.Delivery, error) {
	v := tx.Bucket(bucketDeliveries).Get(deliveryKey(k))
	if v == nil {
		return nil, store.ErrNotFound
	}
	d := &store.Delivery{Key: k}
	if err := decodeDelivery(v, d); err != nil {
		return nil, err
	}
	return d, nil
}

// readEvent reads an event with its body. On failure it returns what it
// could read, at least the ID, with the error.
func (s *Store) readEvent(tx *bbolt.Tx, id store.ID) (*store.Event, error) {
	e, ref, err := eventMeta(tx, id[:])
	if err != nil {
		return &store.Event{ID: id}, err
	}
	if ref == nil {
		e.Body = bytes.Clone(tx.Bucket(bucketBodies).Get(eventKey(id)))
		return e, nil
	}
	if e.Body, err = s.bodies.read(*ref); err != nil {
		return e, fmt.Errorf("event %s: %w", id, err)
	}
	return e, nil
}

// Event implements store.Store.
func (s *Store) Event(id store.ID) (*store.EventRecord, error) {
	rec := &store.EventRecord{Attempts: map[uint16][]store.Attempt{}}
	err := s.db.View(func(tx *bbolt.Tx) error {
		e, err := s.readEvent(tx, id)
		if err != nil {
			return err
		}
		rec.Event = e
		c := tx.Bucket(bucketDeliveries).Cursor()
		for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
			d := store.Delivery{Key: parseDeliveryKey(k)}
			if err := decodeDelivery(v, &d); err != nil {
				return err
			}
			rec.Deliveries = append(rec.Deliveries, d)
		}
		c = tx.Bucket(bucketAttempts).Cursor()
		for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
			var a store.Attempt
			if err := decodeAttempt(v, &a); err != nil {
				return err
			}
			idx := binary.BigEndian.Uint16(k[16:18])
			rec.Attempts[idx] = append(rec.Attempts[idx], a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// QueuedUpstreams implements store.Store.
func (s *Store) QueuedUpstreams() ([]string, error) {
	var names []string
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			if first, _ := tx.Bucket(bucketQueue).Bucket(name).Cursor().First(); first != nil {
				names = append(names, string(name))
			}
			return nil
		})
	})
	return names, err
}

// LearnedSecret implements store.Store.
func (s *Store) LearnedSecret(scope string) (*store.LearnedSecret, error) {
	var out *store.LearnedSecret
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketLearned).Get([]byte(scope))
		if v == nil {
			return nil
		}
		out = new(store.LearnedSecret)
		return json.Unmarshal(v, out)
	})
	return out, err
}

// LearnSecret implements store.Store: the check and the write share one write
// transaction, which bbolt runs one at a time.
func (s *Store) LearnSecret(ctx context.Context, ls store.LearnedSecret) (bool, error) {
	v, err := json.Marshal(ls)
	if err != nil {
		return false, err
	}
	var won bool
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		won = false // the function runs again if its batch is retried
		b := tx.Bucket(bucketLearned)
		if b.Get([]byte(ls.Scope)) != nil {
			return nil
		}
		won = true
		return b.Put([]byte(ls.Scope), v)
	})
	return won && err == nil, err
}

// LearnedSecrets implements store.Store.
func (s *Store) LearnedSecrets() ([]store.LearnedSecret, error) {
	var out []store.LearnedSecret
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketLearned).ForEach(func(_, v []byte) error {
			var ls store.LearnedSecret
			if err := json.Unmarshal(v, &ls); err != nil {
				return err
			}
			out = append(out, ls)
			return nil
		})
	})
	return out, err
}

// RevokeSecret implements store.Store.
func (s *Store) RevokeSecret(ctx context.Context, scope string) (bool, error) {
	var found bool
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLearned)
		found = b.Get([]byte(scope)) != nil
		return b.Delete([]byte(scope))
	})
	return found && err == nil, err
}
