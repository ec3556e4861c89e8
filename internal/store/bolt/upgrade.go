package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// upgradeBatch bounds the events, and the bytes of their bodies, that one
// upgrade transaction moves.
// Variables for tests, as is afterUpgradeBatch, which a test uses to stop
// an upgrade part-way.
var (
	upgradeBatch      = 1000
	upgradeBatchBytes = 16 << 20
	afterUpgradeBatch = func() error { return nil }
)

// upgrade brings a version 1 file forward: each event's body moves from
// the bodies bucket to the body log, and its event, delivery and attempt
// records are written again in codec.go's encoding. It runs at open,
// before the writer starts, a batch of events per transaction; each batch's
// bodies are synced before the transaction that refers to them. Readers
// take both layouts, so a crash part-way leaves a store that works and
// whose next open carries on.
func (s *Store) upgrade(logf func(string, ...any)) error {
	started := time.Now()
	moved := 0
	var resume []byte
	for {
		ids, bodies, next, err := s.legacyBatch(resume)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			buf, refs, err := s.bodies.frames(nil, bodies, nil)
			if err != nil {
				return err
			}
			if err := s.bodies.write(buf); err != nil {
				return err
			}
			err = s.db.Update(func(tx *bbolt.Tx) error {
				for i, id := range ids {
					if err := upgradeEvent(tx, id, refs[i]); err != nil {
						return fmt.Errorf("event %s: %w", id, err)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			moved += len(ids)
			if err := afterUpgradeBatch(); err != nil {
				return err
			}
		}
		if next == nil {
			break
		}
		resume = next
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, schemaVersion))
	})
	if err != nil {
		return err
	}
	if logf != nil {
		logf("upgraded store %s to format %d in %s: %d events' bodies moved to %s; the space they held in the file is reused by new writes, and `hookgate compact` gives it back to the disk",
			s.path, schemaVersion, time.Since(started).Round(time.Millisecond), moved, s.bodies.dir)
	}
	return nil
}

// legacyBatch reads the next events from resume on whose records are
// still JSON, with their bodies; next is where to go on, nil at the end.
func (s *Store) legacyBatch(resume []byte) (ids []store.ID, bodies [][]byte, next []byte, err error) {
	err = s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		k, v := c.First()
		if resume != nil {
			k, v = c.Seek(resume)
		}
		size := 0
		for ; k != nil; k, v = c.Next() {
			if len(v) > 0 && v[0] == recordFormat {
				continue
			}
			if len(ids) == upgradeBatch || size > upgradeBatchBytes {
				next = bytes.Clone(k)
				return nil
			}
			var id store.ID
			copy(id[:], k)
			body := bytes.Clone(tx.Bucket(bucketBodies).Get(k))
			ids, bodies = append(ids, id), append(bodies, body)
			size += len(body)
		}
		return nil
	})
	return ids, bodies, next, err
}

// upgradeEvent writes one event's records in the current encoding, its
// body where ref says, and drops the body from the bodies bucket.
func upgradeEvent(tx *bbolt.Tx, id store.ID, ref bodyRef) error {
	e, _, err := eventMeta(tx, id[:])
	if err != nil {
		return err
	}
	if err := rewriteEvent(tx, e, &ref); err != nil {
		return err
	}
	if err := countSegment(tx, ref.segment, 1); err != nil {
		return err
	}
	if err := tx.Bucket(bucketBodies).Delete(id[:]); err != nil {
		return err
	}
	return reencode(tx, id, bucketDeliveries, bucketAttempts)
}

// reencode writes an event's JSON records in the named buckets again in the
// current encoding.
func reencode(tx *bbolt.Tx, id store.ID, buckets ...[]byte) error {
	for _, name := range buckets {
		b := tx.Bucket(name)
		var keys, values [][]byte
		c := b.Cursor()
		for k, v := c.Seek(id[:]); k != nil && bytes.HasPrefix(k, id[:]); k, v = c.Next() {
			if len(v) > 0 && v[0] == recordFormat {
				continue
			}
			var out []byte
			if bytes.Equal(name, bucketDeliveries) {
				var d store.Delivery
				if err := decodeDelivery(v, &d); err != nil {
					return err
				}
				out = encodeDelivery(&d)
			} else {
				var a store.Attempt
				if err := decodeAttempt(v, &a); err != nil {
					return err
				}
				out = encodeAttempt(&a)
			}
			keys, values = append(keys, bytes.Clone(k)), append(values, out)
		}
		for i, k := range keys {
			if err := b.Put(k, values[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeUnreferencedSegments deletes body segments, but the newest, that no
// event refers to: emptied by a retention sweep that stopped before it
// removed them, or holding only bodies whose writes were refused.
func (s *Store) removeUnreferencedSegments() error {
	segs, err := s.bodies.segments()
	if err != nil || len(segs) < 2 {
		return err
	}
	var unused []uint64
	err = s.db.View(func(tx *bbolt.Tx) error {
		counts := tx.Bucket(bucketSegs)
		for _, n := range segs[:len(segs)-1] {
			if counts.Get(binary.BigEndian.AppendUint64(nil, n)) == nil {
				unused = append(unused, n)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.bodies.remove(unused...)
}
