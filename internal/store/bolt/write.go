package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
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
	// event, when set, is an ingested event: it is logged in the
	// write-ahead log first, done is answered once it is, and fn applies
	// it to bbolt later. claim is released then.
	event *loggedEvent
	claim *claim
}

var writeOpPool = sync.Pool{New: func() any { return &writeOp{done: make(chan error, 1)} }}

// update runs fn in a write transaction shared with other concurrent
// writers and returns once that transaction is on disk.
func (s *Store) update(ctx context.Context, fn func(*bbolt.Tx) error) error {
	return s.write(ctx, nil, false, func(tx *bbolt.Tx, _ bodyRef) error { return fn(tx) })
}

func (s *Store) write(ctx context.Context, body []byte, hasBody bool, fn func(*bbolt.Tx, bodyRef) error) error {
	op := writeOpPool.Get().(*writeOp)
	op.fn, op.body, op.hasBody, op.framed = fn, body, hasBody, false
	if err := s.send(ctx, op); err != nil {
		return err
	}
	// Once queued, the op is always answered; wait for it even if ctx ends,
	// so the caller never reports failure for a write that landed.
	err := <-op.done
	op.fn, op.body = nil, nil
	writeOpPool.Put(op)
	return err
}

// logEvent queues an ingested event and returns once it is in the
// write-ahead log: on disk, and applied to bbolt later, in order.
func (s *Store) logEvent(ctx context.Context, ev *loggedEvent, c *claim) error {
	// Not pooled: the op lives on after its answer, until it is applied.
	op := &writeOp{fn: ev.apply, body: ev.body, hasBody: true, done: make(chan error, 1), event: ev, claim: c}
	if err := s.send(ctx, op); err != nil {
		return err
	}
	return <-op.done
}

// send queues op for the writer.
func (s *Store) send(ctx context.Context, op *writeOp) error {
	s.sendMu.RLock()
	defer s.sendMu.RUnlock()
	if s.closed {
		return fmt.Errorf("%w: closed", store.ErrUnavailable)
	}
	select {
	case s.writes <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handoff passes ops from one stage of the writer to the next, in order.
// signal tells the applier ops were put; room tells the writer ops were
// taken.
type handoff struct {
	mu     sync.Mutex
	ops    []*writeOp
	signal chan struct{}
	room   chan struct{}
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (h *handoff) put(ops []*writeOp) {
	if len(ops) == 0 {
		return
	}
	h.mu.Lock()
	h.ops = append(h.ops, ops...)
	h.mu.Unlock()
	wake(h.signal)
}

// take moves up to maxApplyBatch ops into batch.
func (h *handoff) take(batch *[]*writeOp) bool {
	h.mu.Lock()
	n := min(len(h.ops), maxApplyBatch)
	*batch = append((*batch)[:0], h.ops[:n]...)
	rest := copy(h.ops, h.ops[n:])
	clear(h.ops[rest:])
	h.ops = h.ops[:rest]
	h.mu.Unlock()
	if n > 0 {
		wake(h.room)
	}
	return n > 0
}

func (h *handoff) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// roomToLog waits until fewer than the backlog's writes wait for the
// applier and says how many more may join them. While bbolt cannot apply,
// it does not wait: logGroup refuses new events then, with 503s instead of
// a hung request. ok is false once the store closes.
func (s *Store) roomToLog() (room int, ok bool) {
	for {
		if s.applyErr.Load() != nil {
			return maxBatch, true
		}
		if n := s.toApply.waiting(); n < s.backlog {
			return s.backlog - n, true
		}
		select {
		case <-s.toApply.room:
		case <-s.closing:
			return 0, false
		}
	}
}

// writer and applier are the two stages of a write. The writer takes
// whatever writes are queued, logs the ingested events among them in the
// write-ahead log with one write and one fdatasync, answers those, and
// hands every write to the applier; the applier takes every write handed
// over when its last commit finishes, appends their bodies to the body
// log (one write, one fdatasync) and commits them in one bbolt
// transaction. So an ingested event waits for one fdatasync, the next
// group gathers while one syncs, batch sizes follow the load, and a
// commit never refers to a body that is not on disk. When bbolt falls
// behind, the writer stops logging at the backlog's bound (roomToLog), so
// the requests wait instead of bbolt trailing the ACKs without limit.
func (s *Store) writer() {
	writerDone, applierEnd := make(chan struct{}), make(chan struct{})
	go s.applier(writerDone, applierEnd)
	defer func() {
		close(writerDone)
		<-applierEnd
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
		room, ok := s.roomToLog()
		if !ok {
			group[0].done <- fmt.Errorf("%w: closed", store.ErrUnavailable)
			s.refuseQueued()
			return
		}
	fill:
		for len(group) < min(maxBatch, room) {
			select {
			case op := <-s.writes:
				group = append(group, op)
			default:
				break fill
			}
		}
		s.toApply.put(s.logGroup(group))
	}
}

// logGroup logs the ingested events of a group in one frame and answers
// them, and returns the ops left to apply: all but the events the log
// refused.
func (s *Store) logGroup(group []*writeOp) []*writeOp {
	evs := s.wal.group[:0]
	allApplied := s.appliedSeq.Load() == s.walSeq
	for _, op := range group {
		if op.event != nil {
			s.walSeq++
			op.event.seq = s.walSeq
			evs = append(evs, op.event)
		}
	}
	if len(evs) == 0 {
		return group
	}
	var err error
	if stuck := s.applyErr.Load(); stuck != nil {
		// Logging more than bbolt can take would only grow the log.
		err = fmt.Errorf("%w: the store cannot apply the events it logged: %v", store.ErrUnavailable, *stuck)
	} else if err = s.wal.append(evs, allApplied); err != nil {
		err = fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	} else {
		s.loggedSeq.Store(evs[len(evs)-1].seq)
		for _, ev := range evs {
			s.pending.Add(int64(len(ev.targets)))
		}
	}
	clear(evs)
	s.wal.group = evs
	kept := group[:0]
	for _, op := range group {
		if op.event != nil {
			op.done <- err
			if err != nil {
				continue
			}
		}
		kept = append(kept, op)
	}
	return kept
}

// applier applies what the writer hands over until the writer ends, then
// what is left.
func (s *Store) applier(writerDone, end chan struct{}) {
	defer close(end)
	batch := make([]*writeOp, 0, maxApplyBatch)
	for {
		select {
		case <-s.toApply.signal:
		case <-writerDone:
			for s.toApply.take(&batch) {
				s.apply(batch)
			}
			return
		}
		for s.toApply.take(&batch) {
			s.apply(batch)
		}
	}
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

// apply appends a batch's bodies to the body log, then commits it.
func (s *Store) apply(batch []*writeOp) {
	if err := s.appendBodies(batch); err != nil {
		s.refused(batch, fmt.Errorf("%w: %v", store.ErrUnavailable, err))
		return
	}
	s.commit(batch)
}

// commit runs a batch of writes, whose bodies are on disk, in one write
// transaction.
func (s *Store) commit(batch []*writeOp) {
	failed, err := s.tryCommit(batch)
	if err == nil {
		s.committed(batch)
		return
	}
	if failed >= 0 && len(batch) > 1 {
		// One write failed and rolled back the others: run each on its own.
		for _, op := range batch {
			s.commit([]*writeOp{op})
		}
		return
	}
	if failed < 0 {
		// The commit itself failed (disk full, I/O error): nothing landed.
		err = fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	s.refused(batch, err)
}

// tryCommit runs a batch in one transaction that also records the last
// logged event it applies. failed is the index of the write that failed,
// or -1 when the commit did.
func (s *Store) tryCommit(batch []*writeOp) (failed int, err error) {
	failed = -1
	var txID, applied uint64
	err = s.db.Update(func(tx *bbolt.Tx) error {
		txID = uint64(tx.ID())
		for i, op := range batch {
			if err := op.fn(tx, op.ref); err != nil {
				failed = i
				return err
			}
			if op.event != nil {
				applied = op.event.seq
			}
		}
		if applied == 0 {
			return nil
		}
		return tx.Bucket(bucketMeta).Put(keyWALApplied, binary.BigEndian.AppendUint64(nil, applied))
	})
	if err == nil {
		s.durableTx.Store(txID)
		s.commits.Add(1)
		if applied > 0 {
			s.appliedTo(applied)
		}
	}
	return failed, err
}

// committed answers a committed batch's writes, and lets the events among
// them be seen: their keys leave the in-flight index and their upstreams
// are told (their deliveries were counted as pending once logged).
func (s *Store) committed(batch []*writeOp) {
	s.settleBodies(batch)
	var upstreams []string
	for _, op := range batch {
		if op.event == nil {
			op.done <- nil
			continue
		}
		s.inflight.release(op.claim)
		for _, t := range op.event.targets {
			if !slices.Contains(upstreams, t.Upstream) {
				upstreams = append(upstreams, t.Upstream)
			}
		}
	}
	if len(upstreams) > 0 {
		s.queued(upstreams...)
	}
}

// refused answers the writes of a batch that did not land with err. The
// logged events among them were ACKed: they are applied again until they
// land or the store closes (the log keeps them for the next open), and
// meanwhile no new event is logged.
func (s *Store) refused(batch []*writeOp, err error) {
	var logged []*writeOp
	for _, op := range batch {
		if op.event != nil {
			logged = append(logged, op)
			continue
		}
		s.settleBodies([]*writeOp{op})
		op.done <- err
	}
	if len(logged) == 0 {
		return
	}
	wait := 50 * time.Millisecond
	for {
		s.applyErr.Store(&err)
		wake(s.toApply.room)
		s.warnf("applying %d logged events to the store failed (retrying in %s): %v", len(logged), wait, err)
		select {
		case <-s.closing:
			s.settleBodies(logged)
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
		if err = s.appendBodies(logged); err != nil {
			continue
		}
		if _, err = s.tryCommit(logged); err == nil {
			s.applyErr.Store(nil)
			s.committed(logged)
			return
		}
	}
}

// appliedTo records that every logged event up to seq is in bbolt, wakes
// the reads waiting for it, and removes the log segments it empties.
func (s *Store) appliedTo(seq uint64) {
	s.appliedMu.Lock()
	s.appliedSeq.Store(seq)
	close(s.appliedSignal)
	s.appliedSignal = make(chan struct{})
	s.appliedMu.Unlock()
	if err := s.wal.trim(seq); err != nil {
		s.warnf("removing applied write-ahead log segments: %v", err)
	}
}

// caughtUp waits, for a read, until bbolt holds every event ACKed before
// the call (a few milliseconds at most), so a read after an ACK finds its
// event. While the store cannot apply them it waits a second, then reads
// what bbolt has.
func (s *Store) caughtUp() {
	target := s.loggedSeq.Load()
	if s.appliedSeq.Load() >= target {
		return // the usual case: no lock
	}
	var timeout <-chan time.Time
	for {
		s.appliedMu.Lock()
		signal := s.appliedSignal
		s.appliedMu.Unlock()
		if s.appliedSeq.Load() >= target {
			return
		}
		if timeout == nil {
			timeout = time.After(time.Second)
		}
		select {
		case <-signal:
		case <-timeout:
			return
		case <-s.closing:
			return
		}
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
