package bolt

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

func deliveriesOf(tx *bbolt.Tx, id []byte) ([]store.Delivery, error) {
	var out []store.Delivery
	c := tx.Bucket(bucketDeliveries).Cursor()
	for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
		d := store.Delivery{Key: parseDeliveryKey(k)}
		if err := decodeDelivery(v, &d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// List returns events matching f, newest first, and the id to pass as
// Before for the next page (nil at the end). A search term reads the
// search index instead of every event.
func (s *Store) List(f store.ListFilter) ([]store.EventSummary, *store.ID, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 50
	}
	var out []store.EventSummary
	var next *store.ID
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		events := tx.Bucket(bucketEvents)
		var walk func() (k, v []byte)
		if f.Search != nil {
			walk = searchWalk(tx.Bucket(bucketSearch).Cursor(), events, f)
		} else {
			walk = eventsWalk(events.Cursor(), f)
		}
		for k, v := walk(); k != nil; k, v = walk() {
			var id store.ID
			copy(id[:], k)
			if !f.Since.IsZero() && id.Time().Before(f.Since.Truncate(time.Millisecond)) {
				break
			}
			if len(out) == f.Limit {
				last := out[len(out)-1].ID
				next = &last
				break
			}
			e := &store.Event{ID: id}
			if _, _, err := decodeEvent(v, e); err != nil {
				return err
			}
			if f.Source != "" && e.Source != f.Source {
				continue
			}
			if f.Query != "" && !strings.Contains(e.ID.String(), strings.ToUpper(f.Query)) && !strings.Contains(e.DedupKey, f.Query) {
				continue
			}
			ds, err := deliveriesOf(tx, k)
			if err != nil {
				return err
			}
			status := store.Status(e, ds)
			if f.Status != "" && status != f.Status || !f.Keeps(e, ds) {
				continue
			}
			out = append(out, store.EventSummary{ID: e.ID, Source: e.Source, ReceivedAt: e.ReceivedAt, Status: status,
				DedupKey: e.DedupKey, Deliveries: ds, Quarantined: e.Quarantined, Handshake: e.Handshake, Origin: e.Origin})
		}
		return nil
	})
	return out, next, err
}

// upperBound is the first id a listing leaves out: Before, or the one
// just past Until; nil when neither is set.
func upperBound(f store.ListFilter) []byte {
	switch {
	case f.Before != nil:
		return f.Before[:]
	case !f.Until.IsZero():
		until := idAt(f.Until.Add(time.Millisecond))
		return until[:]
	}
	return nil
}

// eventsWalk walks the events bucket from the newest event below the
// filter's upper bound down.
func eventsWalk(c *bbolt.Cursor, f store.ListFilter) func() ([]byte, []byte) {
	started := false
	return func() ([]byte, []byte) {
		if started {
			return c.Prev()
		}
		started = true
		bound := upperBound(f)
		if bound == nil {
			return c.Last()
		}
		// The first key at or after the bound; the walk starts just below it.
		if k, _ := c.Seek(bound); k != nil {
			return c.Prev()
		}
		return c.Last()
	}
}

// searchWalk walks the index keys of the filter's search term, newest
// event first, below the filter's upper bound, and gives each event's id
// and record.
func searchWalk(c *bbolt.Cursor, events *bbolt.Bucket, f store.ListFilter) func() ([]byte, []byte) {
	prefix := searchPrefix(f.Search.Field, f.Search.Value)
	started := false
	return func() ([]byte, []byte) {
		for {
			var k []byte
			if started {
				k, _ = c.Prev()
			} else {
				started = true
				bound := upperBound(f)
				if bound == nil {
					bound = bytes.Repeat([]byte{0xff}, 16)
				}
				if k, _ = c.Seek(append(bytes.Clone(prefix), bound...)); k != nil {
					k, _ = c.Prev()
				} else {
					k, _ = c.Last()
				}
			}
			if k == nil || !bytes.HasPrefix(k, prefix) {
				return nil, nil
			}
			if len(k) != len(prefix)+16 {
				continue // values hold no NUL, so this is only a damaged key
			}
			id := k[len(prefix):]
			if v := events.Get(id); v != nil {
				return id, v
			}
		}
	}
}

// Cancel ends an event's pending deliveries: they are not retried and stay
// visible as canceled. It returns how many it canceled.
func (s *Store) Cancel(ctx context.Context, id store.ID) (int, error) {
	n := 0
	now := s.now()
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		if tx.Bucket(bucketEvents).Get(id[:]) == nil {
			return store.ErrNotFound
		}
		ds, err := deliveriesOf(tx, id[:])
		if err != nil {
			return err
		}
		for i := range ds {
			d := &ds[i]
			if d.State != store.StatePending {
				continue
			}
			if q := tx.Bucket(bucketQueue).Bucket([]byte(d.Upstream)); q != nil {
				if err := q.Delete(queueKey(d.NextAt, d.Key)); err != nil {
					return err
				}
			}
			if d.OrderKey != "" {
				if err := tx.Bucket(bucketOrder).Delete(orderKey(d)); err != nil {
					return err
				}
			}
			d.State, d.UpdatedAt, d.LastError = store.StateCanceled, now, "canceled by an operator"
			if err := putDelivery(tx, d); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err == nil {
		s.pending.Add(-int64(n))
	}
	return n, err
}

// Stats implements an operator's overview.
func (s *Store) Stats() (store.Stats, error) {
	st := store.Stats{Upstreams: map[string]store.UpstreamStats{}}
	now := s.now()
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		st.Events = tx.Bucket(bucketEvents).Stats().KeyN
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var e store.Event
			ref, hasBody, err := decodeEvent(v, &e)
			if err != nil {
				return err
			}
			body := int64(ref.length)
			if !hasBody { // a record from before the body log keeps it in a bucket
				body = int64(len(tx.Bucket(bucketBodies).Get(k)))
			}
			st.AddEvent(e.Source, int64(len(k)+len(v)), body)
			if e.Unrouted {
				st.Unrouted++
			}
			if e.Quarantined != "" {
				st.Quarantined++
			}
		}
		dc := tx.Bucket(bucketDeliveries).Cursor()
		for k, v := dc.First(); k != nil; k, v = dc.Next() {
			var d store.Delivery
			if err := decodeDelivery(v, &d); err != nil {
				return err
			}
			st.Count(d.Upstream, d.State, 1)
		}
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			oldest, ok := oldestQueued(tx.Bucket(bucketQueue).Bucket(name))
			if !ok {
				return nil
			}
			age := max(now.Sub(oldest).Seconds(), 0)
			u := st.Upstreams[string(name)]
			u.OldestPendingSeconds = age
			st.Upstreams[string(name)] = u
			st.Oldest = max(st.Oldest, age)
			return nil
		})
	})
	return st, err
}

// oldestQueued scans a queue's keys for the earliest-received event: the
// queue is in due order, and a retried delivery is due later than newer ones.
func oldestQueued(q *bbolt.Bucket) (time.Time, bool) {
	var oldest store.ID
	found := false
	c := q.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		var id store.ID
		copy(id[:], k[8:24])
		if !found || bytes.Compare(id[:], oldest[:]) < 0 {
			oldest, found = id, true
		}
	}
	return oldest.Time(), found
}

// OldestPending returns the receive time of the oldest event with a
// pending delivery, cheaply, for metrics.
func (s *Store) OldestPending() (time.Time, bool) {
	var oldest time.Time
	found := false
	s.caughtUp()
	_ = s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			if t, ok := oldestQueued(tx.Bucket(bucketQueue).Bucket(name)); ok && (!found || t.Before(oldest)) {
				oldest, found = t, true
			}
			return nil
		})
	})
	return oldest, found
}

// timelineLimit bounds the events one timeline reads.
const timelineLimit = 200000

// Timeline counts received events and delivery attempts per minute since
// since; truncated reports that it stopped at timelineLimit events.
func (s *Store) Timeline(since time.Time) (points []store.TimelinePoint, truncated bool, err error) {
	start := since.Truncate(time.Minute)
	now := s.now()
	n := int(now.Sub(start)/time.Minute) + 1
	if n < 1 || n > 24*60 {
		return nil, false, errors.New("timeline: since must be within the last 24 hours")
	}
	points = make([]store.TimelinePoint, n)
	for i := range points {
		points[i].Minute = start.Add(time.Duration(i) * time.Minute)
	}
	slot := func(t time.Time) int {
		i := int(t.Sub(start) / time.Minute)
		if i < 0 || i >= n {
			return -1
		}
		return i
	}
	s.caughtUp()
	err = s.db.View(func(tx *bbolt.Tx) error {
		from := idAt(start)
		c := tx.Bucket(bucketEvents).Cursor()
		seen := 0
		for k, _ := c.Seek(from[:]); k != nil; k, _ = c.Next() {
			if seen == timelineLimit {
				truncated = true
				break
			}
			seen++
			var id store.ID
			copy(id[:], k)
			if i := slot(id.Time()); i >= 0 {
				points[i].Received++
			}
		}
		ac := tx.Bucket(bucketAttempts).Cursor()
		seen = 0
		for k, v := ac.Seek(from[:]); k != nil; k, v = ac.Next() {
			if seen == timelineLimit {
				truncated = true
				break
			}
			seen++
			var a store.Attempt
			if decodeAttempt(v, &a) != nil {
				continue
			}
			i := slot(a.At)
			if i < 0 {
				continue
			}
			if a.Status >= 200 && a.Status < 300 {
				points[i].Delivered++
			} else {
				points[i].Failed++
			}
		}
		return nil
	})
	return points, truncated, err
}
