package bolt

import (
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

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

// searchPrefix is where the index keys of field's value begin.
func searchPrefix(field, value string) []byte {
	b := make([]byte, 0, len(field)+len(value)+2+16)
	b = append(append(b, field...), 0)
	return append(append(b, value...), 0)
}

// putSearch indexes an event's search values.
func putSearch(tx *bbolt.Tx, id store.ID, values map[string]string) error {
	b := tx.Bucket(bucketSearch)
	for field, value := range values {
		if err := b.Put(append(searchPrefix(field, value), id[:]...), nil); err != nil {
			return err
		}
	}
	return nil
}

// deleteSearch removes an event's index keys.
func deleteSearch(tx *bbolt.Tx, id []byte, values map[string]string) error {
	b := tx.Bucket(bucketSearch)
	for field, value := range values {
		if err := b.Delete(append(searchPrefix(field, value), id...)); err != nil {
			return err
		}
	}
	return nil
}
