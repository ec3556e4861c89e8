package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// secretKey names a scope's entry in S_secrets; scopes hold characters
// keys may not.
func secretKey(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return "s." + hex.EncodeToString(sum[:])
}

// LearnedSecret implements store.Store.
func (s *Store) LearnedSecret(scope string) (*store.LearnedSecret, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	entry, err := s.secrets.Get(ctx, secretKey(scope))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	var ls store.LearnedSecret
	return &ls, json.Unmarshal(entry.Value(), &ls)
}

// LearnSecret implements store.Store with the bucket's Create, which fails
// if the key exists: every instance races on the same key.
func (s *Store) LearnSecret(ctx context.Context, ls store.LearnedSecret) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	data, err := json.Marshal(ls)
	if err != nil {
		return false, err
	}
	_, err = s.secrets.Create(ctx, secretKey(ls.Scope), data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	return err == nil, unavailable(err)
}

// LearnedSecrets implements store.Store.
func (s *Store) LearnedSecrets() ([]store.LearnedSecret, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	keys, err := s.secrets.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	var out []store.LearnedSecret
	for _, k := range keys {
		entry, err := s.secrets.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // revoked meanwhile
		}
		if err != nil {
			return nil, unavailable(err)
		}
		var ls store.LearnedSecret
		if err := json.Unmarshal(entry.Value(), &ls); err != nil {
			return nil, fmt.Errorf("learned secret %s: %w", k, err)
		}
		out = append(out, ls)
	}
	slices.SortFunc(out, func(a, b store.LearnedSecret) int { return strings.Compare(a.Scope, b.Scope) })
	return out, nil
}

// RevokeSecret implements store.Store.
func (s *Store) RevokeSecret(ctx context.Context, scope string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	key := secretKey(scope)
	if _, err := s.secrets.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	} else if err != nil {
		return false, unavailable(err)
	}
	return true, unavailable(s.secrets.Delete(ctx, key))
}
