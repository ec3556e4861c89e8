package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

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
}

var writeOpPool = sync.Pool{New: func() any { return &writeOp{done: make(chan error, 1)} }}

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
