package bolt

import (
	"context"
	"encoding/json"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// KeepRejections implements store.RejectionKeeper: one value per source in
// the rejected bucket.
func (s *Store) KeepRejections(ctx context.Context, logs map[string]store.RejectionLog) error {
	values := make(map[string][]byte, len(logs))
	for source, log := range logs {
		v, err := json.Marshal(log)
		if err != nil {
			return err
		}
		values[source] = v
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRejected)
		for source, v := range values {
			if err := b.Put([]byte(source), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Rejections implements store.RejectionKeeper; a file has one instance.
func (s *Store) Rejections(bool) (map[string]store.RejectionLog, error) {
	out := map[string]store.RejectionLog{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketRejected).ForEach(func(k, v []byte) error {
			var log store.RejectionLog
			if err := json.Unmarshal(v, &log); err != nil {
				return err
			}
			out[string(k)] = log
			return nil
		})
	})
	return out, err
}
