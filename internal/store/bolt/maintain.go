package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// idAt returns the smallest id of a millisecond, for seeking by time.
func idAt(t time.Time) store.ID {
	var id store.ID
	ms := uint64(t.UnixMilli())
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i))
	}
	return id
}

// eventMeta reads an event's metadata without its body, and where its body
// is in the body log: nil for an event that keeps it in the bodies bucket.
func eventMeta(tx *bbolt.Tx, id []byte) (*store.Event, *bodyRef, error) {
	v := tx.Bucket(bucketEvents).Get(id)
	if v == nil {
		return nil, nil, store.ErrNotFound
	}
	e := &store.Event{}
	ref, ok, err := decodeEvent(v, e)
	if err != nil {
		return nil, nil, err
	}
	copy(e.ID[:], id)
	if !ok {
		return e, nil, nil
	}
	return e, &ref, nil
}

// Replay implements store.Queue.
func (s *Store) Replay(ctx context.Context, f store.ReplayFilter) (store.ReplayResult, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	if len(f.States) == 0 {
		f.States = []store.State{store.StateDead}
	}
	now := s.now()
	var res store.ReplayResult
	scan := func(tx *bbolt.Tx) error {
		res = store.ReplayResult{}
		upstreams := map[string]bool{}
		sources := sourceCache{tx: tx}
		c := tx.Bucket(bucketDeliveries).Cursor()
		var k, v []byte
		if start := replayStart(f); start == nil {
			k, v = c.First()
		} else {
			k, v = c.Seek(start)
		}
		for ; k != nil; k, v = c.Next() {
			key := parseDeliveryKey(k)
			if f.Event != nil && key.Event != *f.Event {
				break
			}
			if !f.Until.IsZero() && key.Event.Time().After(f.Until) {
				break
			}
			// The limit falls between events, so an event is replayed whole.
			if res.Replayed >= f.Limit && (res.Next == nil || key.Event != *res.Next) {
				break
			}
			d := &store.Delivery{Key: key}
			if err := decodeDelivery(v, d); err != nil {
				return err
			}
			if !slices.Contains(f.States, d.State) || (f.Upstream != "" && d.Upstream != f.Upstream) {
				continue
			}
			if f.Source != "" {
				source, err := sources.of(key.Event)
				if err != nil {
					return err
				}
				if source != f.Source {
					continue
				}
			}
			wasPending := d.State == store.StatePending
			if !f.DryRun {
				if err := requeue(tx, d, now); err != nil {
					return err
				}
			}
			if !wasPending {
				res.Count(key.Event, d.Upstream)
			}
			upstreams[d.Upstream] = true
			id := key.Event
			res.Next = &id
		}
		if k == nil || f.Event != nil {
			res.Next = nil
		}
		res.Upstreams = slices.Sorted(maps.Keys(upstreams))
		return nil
	}
	if f.DryRun {
		s.caughtUp()
		err := s.db.View(scan)
		return res, err
	}
	if err := s.update(ctx, scan); err != nil {
		return store.ReplayResult{}, err
	}
	s.pending.Add(int64(res.Replayed))
	s.queued(res.Upstreams...)
	return res, nil
}

// replayStart is the deliveries key a replay's scan starts at; nil for the
// first.
func replayStart(f store.ReplayFilter) []byte {
	switch {
	case f.Event != nil:
		return f.Event[:]
	case f.After != nil:
		after := deliveryKey(store.DeliveryKey{Event: *f.After, Index: 0xffff})
		return append(after, 0)
	case !f.Since.IsZero():
		id := idAt(f.Since)
		return id[:]
	}
	return nil
}

// sourceCache reads the source of the event a replay's scan is in, once
// per event: an event's deliveries are adjacent.
type sourceCache struct {
	tx     *bbolt.Tx
	id     store.ID
	source string
	ok     bool
}

func (c *sourceCache) of(id store.ID) (string, error) {
	if c.ok && c.id == id {
		return c.source, nil
	}
	e, _, err := eventMeta(c.tx, id[:])
	if err != nil {
		return "", err
	}
	c.id, c.source, c.ok = id, e.Source, true
	return c.source, nil
}

// requeue makes a delivery pending again, due now, with a fresh retry budget.
func requeue(tx *bbolt.Tx, d *store.Delivery, now time.Time) error {
	if d.State == store.StatePending {
		if q := tx.Bucket(bucketQueue).Bucket([]byte(d.Upstream)); q != nil {
			if err := q.Delete(queueKey(d.NextAt, d.Key)); err != nil {
				return err
			}
		}
	}
	d.State, d.RetryBase, d.ReplayedAt, d.NextAt, d.UpdatedAt = store.StatePending, d.Attempts, now, now, now
	if err := putDelivery(tx, d); err != nil {
		return err
	}
	return enqueue(tx, d)
}

// Sweep implements store.Store.
func (s *Store) Sweep(ctx context.Context, cutoff time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = 500
	}
	deleted := 0
	var resume []byte
	for {
		n, next, err := s.sweepEvents(ctx, cutoff, batch, resume)
		if err != nil {
			return deleted, err
		}
		deleted += n
		if next == nil {
			break
		}
		resume = next
	}
	for {
		n, err := s.sweepDedup(ctx, batch)
		if err != nil || n < batch {
			return deleted, err
		}
	}
}

// sweepEvents deletes up to batch finished events older than cutoff,
// starting at resume, in one transaction; it returns where to go on, or nil.
func (s *Store) sweepEvents(ctx context.Context, cutoff time.Time, batch int, resume []byte) (int, []byte, error) {
	cutoffID := idAt(cutoff)
	var deleted int
	var next []byte
	var emptied []uint64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		deleted, next, emptied = 0, nil, nil
		events := tx.Bucket(bucketEvents)
		c := events.Cursor()
		var k []byte
		if resume == nil {
			k, _ = c.First()
		} else {
			k, _ = c.Seek(resume)
		}
		var doomed [][]byte
		for ; k != nil && bytes.Compare(k, cutoffID[:]) < 0; k, _ = c.Next() {
			if len(doomed) == batch {
				next = bytes.Clone(k)
				break
			}
			finished, err := allFinished(tx, k)
			if err != nil {
				return err
			}
			if finished {
				doomed = append(doomed, bytes.Clone(k))
			}
		}
		for _, id := range doomed {
			if err := deleteEvent(tx, id, &emptied); err != nil {
				return err
			}
		}
		deleted = len(doomed)
		return nil
	})
	if err == nil && len(emptied) > 0 {
		// Once the deletions are on disk no record refers to these
		// segments; one left behind by a crash here goes at the next open.
		err = s.bodies.remove(emptied...)
	}
	return deleted, next, err
}

func allFinished(tx *bbolt.Tx, id []byte) (bool, error) {
	c := tx.Bucket(bucketDeliveries).Cursor()
	for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
		var d store.Delivery
		if err := decodeDelivery(v, &d); err != nil {
			return false, err
		}
		if d.State == store.StatePending {
			return false, nil
		}
	}
	return true, nil
}

// deleteEvent removes an event with its body, deliveries, attempts and, if
// it still points at this event, its dedup key. A body log segment it
// leaves with no body in use is added to emptied.
func deleteEvent(tx *bbolt.Tx, id []byte, emptied *[]uint64) error {
	e, ref, err := eventMeta(tx, id)
	if err != nil {
		return err
	}
	if e.DedupKey != "" {
		dk := dedupKey(e.Source, e.DedupKey)
		if v := tx.Bucket(bucketDedup).Get(dk); len(v) == 24 && bytes.Equal(v[:16], id) {
			if err := tx.Bucket(bucketDedup).Delete(dk); err != nil {
				return err
			}
		}
	}
	if err := deleteSearch(tx, id, e.Search); err != nil {
		return err
	}
	if ref != nil {
		left, err := addToSegment(tx, ref.segment, -1)
		if err != nil {
			return err
		}
		if left == 0 {
			*emptied = append(*emptied, ref.segment)
		}
	}
	for _, name := range [][]byte{bucketDeliveries, bucketAttempts, bucketDBodies} {
		c := tx.Bucket(name).Cursor()
		for k, _ := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, _ = c.Seek(id) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	if err := tx.Bucket(bucketBodies).Delete(id); err != nil {
		return err
	}
	return tx.Bucket(bucketEvents).Delete(id)
}

// sweepDedup deletes up to batch expired dedup keys.
func (s *Store) sweepDedup(ctx context.Context, batch int) (int, error) {
	now := uint64(s.now().UnixNano())
	n := 0
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		c := tx.Bucket(bucketDedup).Cursor()
		var doomed [][]byte
		for k, v := c.First(); k != nil && len(doomed) < batch; k, v = c.Next() {
			if len(v) == 24 && binary.BigEndian.Uint64(v[16:]) <= now {
				doomed = append(doomed, bytes.Clone(k))
			}
		}
		for _, k := range doomed {
			if err := tx.Bucket(bucketDedup).Delete(k); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	return n, err
}

// Compact copies the store at src into a new file at dst, leaving out free
// pages, with dst's body log linked (or copied) from src's; src must not be
// open elsewhere. Renaming dst over src then leaves src's own body log in
// place, which dst's links duplicate: remove dst's with RemoveBodyLog.
func Compact(dst, src string) error {
	if err := linkBodyLog(bodyLogDir(dst), bodyLogDir(src)); err != nil {
		return err
	}
	from, err := bbolt.Open(src, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := bbolt.Open(dst, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	if err := bbolt.Compact(to, from, 64<<20); err != nil {
		to.Close()
		return err
	}
	return to.Close()
}

// EachPending calls fn, in event order, with every event that has a
// pending delivery, and the transformed bodies of its deliveries.
func (s *Store) EachPending(fn func(rec *store.EventRecord, bodies map[uint16][]byte) error) error {
	var ids []store.ID
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		seen := map[store.ID]bool{}
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			return tx.Bucket(bucketQueue).Bucket(name).ForEach(func(k, _ []byte) error {
				var id store.ID
				copy(id[:], k[8:24])
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
				return nil
			})
		})
	})
	if err != nil {
		return err
	}
	slices.SortFunc(ids, func(a, b store.ID) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range ids {
		rec, err := s.Event(id)
		if err != nil {
			return err
		}
		bodies := map[uint16][]byte{}
		err = s.db.View(func(tx *bbolt.Tx) error {
			for _, d := range rec.Deliveries {
				if b := tx.Bucket(bucketDBodies).Get(deliveryKey(d.Key)); b != nil {
					bodies[d.Key.Index] = bytes.Clone(b)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := fn(rec, bodies); err != nil {
			return err
		}
	}
	return nil
}

// linkBodyLog fills a new body log folder with hard links to the segments
// of another, or copies where links cannot be made.
func linkBodyLog(dst, src string) error {
	entries, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".seg") {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if err := os.Link(from, to); err == nil {
			continue
		}
		in, err := os.Open(from)
		if err != nil {
			return err
		}
		err = writeSynced(to, in)
		in.Close()
		if err != nil {
			return err
		}
	}
	return SyncDir(dst)
}

// RemoveBodyLog removes the body log and write-ahead log folders of a store
// file at path: what goes with the file when it is replaced.
func RemoveBodyLog(path string) error {
	return errors.Join(os.RemoveAll(bodyLogDir(path)), os.RemoveAll(walDir(path)))
}
