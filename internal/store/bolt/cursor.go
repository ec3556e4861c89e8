package bolt

import (
	"context"
	"encoding/json"

	"go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// Cursor implements store.Cursors.
func (s *Store) Cursor(scope string) (store.Cursor, error) {
	var c store.Cursor
	err := s.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketCursors).Get([]byte(scope)); v != nil {
			return json.Unmarshal(v, &c)
		}
		return nil
	})
	return c, err
}

// SetCursor implements store.Cursors.
func (s *Store) SetCursor(ctx context.Context, scope string, c store.Cursor) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bbolt.Tx) error { return tx.Bucket(bucketCursors).Put([]byte(scope), v) })
}

// Seen implements store.Cursors.
func (s *Store) Seen(source, key string) (bool, error) {
	var seen bool
	s.caughtUp()
	err := s.db.View(func(tx *bbolt.Tx) error {
		_, seen = seenBefore(tx, dedupKey(source, key), s.now())
		return nil
	})
	return seen, err
}
