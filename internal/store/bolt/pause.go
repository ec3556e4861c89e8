package bolt

import (
	"context"
	"encoding/json"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// loadPauses reads the pauses bucket. The process that holds the file lock
// is the only writer, so memory stays the truth from here on.
func loadPauses(db *bbolt.DB) (*store.PauseTable, error) {
	out := map[string]store.Pause{}
	err := db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketPauses).ForEach(func(k, v []byte) error {
			var p store.Pause
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			out[string(k)] = p
			return nil
		})
	})
	return store.NewPauseTable(out), err
}

// SetPaused implements store.Pauses: the record is on disk before memory
// (and so the engine) sees it.
func (s *Store) SetPaused(ctx context.Context, upstream string, paused bool) (store.Pause, error) {
	// Writers take turns; readers (the engine, before each claim) wait
	// only for the map, never for the write's fsync.
	s.pauseSet.Lock()
	defer s.pauseSet.Unlock()
	prior := s.PauseOf(upstream)
	if prior.Paused == paused {
		return prior, nil
	}
	p := store.Pause{Paused: paused, Since: s.now().UTC()}
	v, err := json.Marshal(p)
	if err == nil {
		err = s.update(ctx, func(tx *bbolt.Tx) error { return tx.Bucket(bucketPauses).Put([]byte(upstream), v) })
	}
	if err != nil {
		return prior, err
	}
	s.pauses.Set(upstream, p)
	if !paused {
		s.queued(upstream)
	}
	return p, nil
}

// PauseOf implements store.Pauses.
func (s *Store) PauseOf(upstream string) store.Pause {
	return s.pauses.Of(upstream)
}

// Pauses implements store.Pauses.
func (s *Store) Pauses() map[string]store.Pause {
	return s.pauses.All()
}
