package bolt

import (
	"time"

	"go.etcd.io/bbolt"
)

// OldestPendingByUpstream returns, by upstream, the receive time of the
// oldest event with a pending delivery to it, for alerts; it reads the
// queues only, not every delivery as Stats does.
func (s *Store) OldestPendingByUpstream() (map[string]time.Time, error) {
	out := map[string]time.Time{}
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(name []byte) error {
			if t, ok := oldestQueued(tx.Bucket(bucketQueue).Bucket(name)); ok {
				out[string(name)] = t
			}
			return nil
		})
	})
	return out, err
}
