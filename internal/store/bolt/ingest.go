package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// Ingest implements store.Store. It returns once the event is in the
// write-ahead log, on disk; bbolt holds it a moment later.
func (s *Store) Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error) {
	now := s.now()
	var keys [3][]byte
	if e.DedupKey != "" {
		keys[keyDedup] = dedupKey(e.Event.Source, e.DedupKey)
	}
	if e.DigestKey != "" {
		// Separators 0, 1 and 2 keep dedup, token and digest keys apart.
		keys[keyDigest] = append(append([]byte(e.Event.Source), 2), e.DigestKey...)
	}
	if e.ReplayKey != "" {
		keys[keyReplay] = append(append([]byte(e.Event.Source), 1), e.ReplayKey...)
	}
	if err := checkKeySizes(keys, e.Event.Search); err != nil {
		return store.IngestResult{}, err
	}
	for {
		mine, held, kind := s.inflight.claim(keys)
		if held == nil {
			return s.ingestClaimed(ctx, e, now, keys, mine)
		}
		// A copy is being logged or applied: its answer is this one's.
		select {
		case <-held.logged:
		case <-ctx.Done():
			return store.IngestResult{}, ctx.Err()
		}
		if held.err != nil {
			continue // it was not stored: look again
		}
		if kind == keyReplay {
			return store.IngestResult{Replayed: true}, nil
		}
		return store.IngestResult{ID: held.id, Duplicate: true}, nil
	}
}

// ingestClaimed stores an event whose keys it holds in the in-flight
// index, unless bbolt has seen one of them.
func (s *Store) ingestClaimed(ctx context.Context, e *store.NewEvent, now time.Time, keys [3][]byte, mine *claim) (store.IngestResult, error) {
	if id, kind, ok := s.durableSeen(now, keys); ok {
		s.inflight.drop(mine, errNotClaimed)
		if kind == keyReplay {
			return store.IngestResult{Replayed: true}, nil
		}
		return store.IngestResult{ID: id, Duplicate: true}, nil
	}
	if err := s.full(); err != nil {
		s.inflight.drop(mine, err)
		return store.IngestResult{}, err
	}
	s.sizeCap.wrote(len(e.Event.Body))
	e.Event.ID = s.ids.Next(now)
	ev := &loggedEvent{
		id: e.Event.ID, now: now,
		dedupKey: keys[keyDedup], digestKey: keys[keyDigest], replayKey: keys[keyReplay],
		dedupUntil: e.DedupUntil, replayUntil: e.ReplayUntil,
		meta: encodeEvent(e.Event), search: e.Event.Search, body: e.Event.Body, targets: e.Targets,
	}
	if mine != nil {
		mine.id = e.Event.ID
	}
	if err := s.logEvent(ctx, ev, mine); err != nil {
		s.inflight.drop(mine, err)
		return store.IngestResult{}, err
	}
	if mine != nil {
		close(mine.logged)
	}
	return store.IngestResult{ID: e.Event.ID}, nil
}

// checkKeySizes refuses, before anything is logged, keys bbolt could not
// store: a logged event must always apply.
func checkKeySizes(keys [3][]byte, search map[string]string) error {
	for _, k := range keys {
		if len(k) > bbolt.MaxKeySize {
			return fmt.Errorf("dedup key of %d bytes: longer than the store takes (%d)", len(k), bbolt.MaxKeySize)
		}
	}
	for field, value := range search {
		if n := len(field) + len(value) + 2 + len(store.ID{}); n > bbolt.MaxKeySize {
			return fmt.Errorf("search field %s: value of %d bytes, longer than the store indexes", field, len(value))
		}
	}
	return nil
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

// durableSeen looks the keys up in bbolt, in one read transaction; nil
// keys are skipped, and kind says which key was found. Only an applied
// event writes keys, and its claim is released once its commit is on
// disk: so a key found here is on disk, even in a snapshot whose commit is
// still being synced, and a key being committed is still claimed.
func (s *Store) durableSeen(now time.Time, keys [3][]byte) (id store.ID, kind int, ok bool) {
	if keys[0] == nil && keys[1] == nil && keys[2] == nil {
		return store.ID{}, 0, false
	}
	_ = s.db.View(func(tx *bbolt.Tx) error {
		for i, k := range keys {
			if k == nil {
				continue
			}
			if id, ok = seenBefore(tx, k, now); ok {
				kind = i
				return nil
			}
		}
		return nil
	})
	return id, kind, ok
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
