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
	if err := s.full(); err != nil {
		return store.IngestResult{}, err
	}
	s.sizeCap.wrote(len(e.Event.Body))
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
		if err := putSearch(tx, e.Event.ID, e.Event.Search); err != nil {
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
