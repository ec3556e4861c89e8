package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// Configure implements store.Queue. The file holds every upstream's queue
// whatever the configuration, so only notify is kept: it is told of work
// that Ingest, AddDeliveries and Replay queue.
func (s *Store) Configure(_ map[string]store.UpstreamSettings, notify func(upstream string)) error {
	s.leaseMu.Lock()
	s.notify = notify
	s.leaseMu.Unlock()
	return nil
}

// queued tells the notify function of Configure about new work.
func (s *Store) queued(upstreams ...string) {
	s.leaseMu.Lock()
	notify := s.notify
	s.leaseMu.Unlock()
	if notify == nil {
		return
	}
	for _, u := range upstreams {
		notify(u)
	}
}

// Claim implements store.Queue. Leases live in memory: the process that
// holds the file lock is the only one delivering from it.
func (s *Store) Claim(_ context.Context, upstream string, now time.Time, limit int) (store.Claimed, error) {
	s.caughtUp() // before the lock: the applier takes it to notify
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	var c store.Claimed
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		c, err = s.due(tx, upstream, now, limit, s.leased)
		return err
	})
	if err != nil {
		return store.Claimed{}, err
	}
	for _, t := range c.Tasks {
		s.leased[t.Delivery.Key] = struct{}{}
	}
	return c, nil
}

// Due lists up to limit deliveries to upstream that are due at now, in due
// order, leased or not, and leases none: what a tool or a test looks at.
func (s *Store) Due(upstream string, now time.Time, limit int) ([]store.Task, error) {
	var c store.Claimed
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		c, err = s.due(tx, upstream, now, limit, nil)
		return err
	})
	return c.Tasks, err
}

// due walks upstream's queue in due order, past the deliveries in skip and
// those waiting behind an earlier one with their order key, taking up to
// limit that are due at now; the first one it does not take gives Next.
func (s *Store) due(tx *bbolt.Tx, upstream string, now time.Time, limit int, skip map[store.DeliveryKey]struct{}) (store.Claimed, error) {
	var c store.Claimed
	q := tx.Bucket(bucketQueue).Bucket([]byte(upstream))
	if q == nil {
		return c, nil
	}
	cur := q.Cursor()
	nowNano := uint64(now.UnixNano())
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		key := parseDeliveryKey(k[8:])
		if _, ok := skip[key]; ok {
			continue
		}
		at := binary.BigEndian.Uint64(k)
		taking := at <= nowNano && len(c.Tasks) < limit
		d, err := getDelivery(tx, key)
		if err != nil {
			if taking {
				return c, err
			}
			continue // only looking for the next due time
		}
		// An ordered delivery behind another waits for it, not for its own time.
		if !isHead(tx, d) {
			continue
		}
		if !taking {
			c.Next, c.HasNext = time.Unix(0, int64(at)), true
			return c, nil
		}
		task := store.Task{Delivery: *d}
		// An event that cannot be read whole does not fail the claim,
		// which would hold up every delivery queued behind it.
		task.Event, task.EventErr = s.readEvent(tx, key.Event)
		if d.Transformed {
			task.Body = bytes.Clone(tx.Bucket(bucketDBodies).Get(deliveryKey(key)))
		}
		c.Tasks = append(c.Tasks, task)
	}
	return c, nil
}

// Release implements store.Queue.
func (s *Store) Release(k store.DeliveryKey) {
	s.leaseMu.Lock()
	delete(s.leased, k)
	s.leaseMu.Unlock()
}

// Settle implements store.Queue. A delivery need not be leased to be
// settled here; one that is keeps its lease when the write fails.
func (s *Store) Settle(ctx context.Context, o store.Outcome) error {
	attempt := encodeAttempt(&o.Attempt)
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		d, err := getDelivery(tx, o.Key)
		if err != nil {
			return err
		}
		if d.State != store.StatePending {
			return fmt.Errorf("delivery %s/%d is %s, not pending", o.Key.Event, o.Key.Index, d.State)
		}
		if q := tx.Bucket(bucketQueue).Bucket([]byte(d.Upstream)); q != nil {
			if err := q.Delete(queueKey(d.NextAt, d.Key)); err != nil {
				return err
			}
		}
		attempts := tx.Bucket(bucketAttempts)
		attempts.FillPercent = appendFill
		if err := attempts.Put(attemptKey(o.Key, o.Attempt.N), attempt); err != nil {
			return err
		}
		d.Attempts = o.Attempt.N
		d.LastStatus = o.Attempt.Status
		d.LastError = o.Attempt.Error
		d.UpdatedAt = o.Attempt.At.Add(o.Attempt.Duration)
		d.State = o.Next
		if o.Next == store.StatePending {
			d.NextAt = o.RetryAt
			if err := enqueue(tx, d); err != nil {
				return err
			}
		} else if d.OrderKey != "" {
			if err := tx.Bucket(bucketOrder).Delete(orderKey(d)); err != nil {
				return err
			}
		}
		return putDelivery(tx, d)
	})
	if err != nil {
		return err
	}
	if o.Next != store.StatePending {
		s.pending.Add(-1)
	}
	s.Release(o.Key)
	return nil
}
