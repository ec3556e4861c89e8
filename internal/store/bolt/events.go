package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

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
	s.caughtUp()
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
	s.caughtUp()
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
