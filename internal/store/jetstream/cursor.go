package jetstream

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// Reconciliation cursors live in the bucket S_cursors, one key per scope,
// without a TTL.

// Cursor implements store.Cursors.
func (s *Store) Cursor(scope string) (store.Cursor, error) {
	var c store.Cursor
	e, err := s.cursorKV.Get(context.Background(), secretKey(scope))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return c, nil
	case err != nil:
		return c, unavailable(err)
	}
	return c, json.Unmarshal(e.Value(), &c)
}

// SetCursor implements store.Cursors.
func (s *Store) SetCursor(ctx context.Context, scope string, c store.Cursor) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := s.cursorKV.Put(ctx, secretKey(scope), v); err != nil {
		return unavailable(err)
	}
	return nil
}

// Seen implements store.Cursors.
func (s *Store) Seen(source, key string) (bool, error) {
	_, err := s.dedup.Get(context.Background(), dedupBucketKey(source, key))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, unavailable(err)
	}
	return true, nil
}
