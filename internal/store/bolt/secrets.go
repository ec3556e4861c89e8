package bolt

import (
	"context"
	"encoding/json"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

// LearnedSecret implements store.Store.
func (s *Store) LearnedSecret(scope string) (*store.LearnedSecret, error) {
	var out *store.LearnedSecret
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketLearned).Get([]byte(scope))
		if v == nil {
			return nil
		}
		out = new(store.LearnedSecret)
		return json.Unmarshal(v, out)
	})
	return out, err
}

// LearnSecret implements store.Store: the check and the write share one write
// transaction, which bbolt runs one at a time.
func (s *Store) LearnSecret(ctx context.Context, ls store.LearnedSecret) (bool, error) {
	v, err := json.Marshal(ls)
	if err != nil {
		return false, err
	}
	var won bool
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		won = false // the function runs again if its batch is retried
		b := tx.Bucket(bucketLearned)
		if b.Get([]byte(ls.Scope)) != nil {
			return nil
		}
		won = true
		return b.Put([]byte(ls.Scope), v)
	})
	return won && err == nil, err
}

// LearnedSecrets implements store.Store.
func (s *Store) LearnedSecrets() ([]store.LearnedSecret, error) {
	var out []store.LearnedSecret
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketLearned).ForEach(func(_, v []byte) error {
			var ls store.LearnedSecret
			if err := json.Unmarshal(v, &ls); err != nil {
				return err
			}
			out = append(out, ls)
			return nil
		})
	})
	return out, err
}

// RevokeSecret implements store.Store.
func (s *Store) RevokeSecret(ctx context.Context, scope string) (bool, error) {
	var found bool
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLearned)
		found = b.Get([]byte(scope)) != nil
		return b.Delete([]byte(scope))
	})
	return found && err == nil, err
}
