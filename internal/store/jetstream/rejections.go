package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// Rejection logs live in the bucket S_rejected, one key per instance and
// source (r.<instance>.<source in hex>), so instances never overwrite each
// other's; a key no instance writes for a week expires.

// newInstanceID names this process's keys.
func newInstanceID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Store) rejectionKey(source string) string {
	return "r." + s.instance + "." + hex.EncodeToString([]byte(source))
}

// KeepRejections implements store.RejectionKeeper.
func (s *Store) KeepRejections(ctx context.Context, logs map[string]store.RejectionLog) error {
	for source, log := range logs {
		v, err := json.Marshal(log)
		if err != nil {
			return err
		}
		if _, err := s.rejectedKV.Put(ctx, s.rejectionKey(source), v); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// Rejections implements store.RejectionKeeper: every instance's logs of a
// source are merged in time order.
func (s *Store) Rejections(mine bool) (map[string]store.RejectionLog, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	prefix := "r.>"
	if mine {
		prefix = "r." + s.instance + ".>"
	}
	keys, err := s.rejectedKV.ListKeysFiltered(ctx, prefix)
	if err != nil {
		return nil, unavailable(err)
	}
	out := map[string]store.RejectionLog{}
	seen := map[string]bool{} // a listing may name a key twice
	for k := range keys.Keys() {
		if seen[k] {
			continue
		}
		seen[k] = true
		parts := strings.Split(k, ".")
		if len(parts) != 3 {
			continue
		}
		name, err := hex.DecodeString(parts[2])
		if err != nil {
			continue
		}
		entry, err := s.rejectedKV.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, unavailable(err)
		}
		var log store.RejectionLog
		if err := json.Unmarshal(entry.Value(), &log); err != nil {
			return nil, err
		}
		merged := out[string(name)]
		merged.Records = append(merged.Records, log.Records...)
		merged.Dropped += log.Dropped
		out[string(name)] = merged
	}
	for name, log := range out {
		slices.SortStableFunc(log.Records, func(a, b store.Rejection) int { return a.At.Compare(b.At) })
		out[name] = log
	}
	return out, nil
}
