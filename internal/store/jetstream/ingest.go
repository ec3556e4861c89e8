package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// Ingest implements store.Store: it reserves the dedup key, then publishes
// the event and returns once JetStream acknowledged it.
func (s *Store) Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error) {
	now := s.now()
	e.Event.ID = s.ids.Next(now)
	// The write is not abandoned when the provider hangs up mid-publish.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	var release func()
	if e.DedupKey != "" {
		earlier, dup, rel, err := s.reserve(ctx, e.Event.Source, e.DedupKey, e.Event.ID, e.DedupUntil.Sub(now))
		if err != nil {
			return store.IngestResult{}, err
		}
		if dup {
			return store.IngestResult{ID: earlier, Duplicate: true}, nil
		}
		release = rel
	}
	if e.DigestKey != "" {
		earlier, dup, rel, err := s.reserve(ctx, e.Event.Source+"\x02digest", e.DigestKey, e.Event.ID, e.DedupUntil.Sub(now))
		if err != nil || dup {
			if release != nil {
				release()
			}
			if err != nil {
				return store.IngestResult{}, err
			}
			return store.IngestResult{ID: earlier, Duplicate: true}, nil
		}
		if release == nil {
			release = rel
		} else {
			first := release
			release = func() { first(); rel() }
		}
	}
	if e.ReplayKey != "" {
		// A single-use token: create-only, like a dedup key, so it is used
		// once across every instance.
		id := e.Event.ID
		_, err := s.dedup.Create(ctx, dedupBucketKey(e.Event.Source+"\x01token", e.ReplayKey), id[:], jetstream.KeyTTL(max(e.ReplayUntil.Sub(now), time.Second)))
		if err != nil {
			if release != nil {
				release()
			}
			if errors.Is(err, jetstream.ErrKeyExists) {
				return store.IngestResult{Replayed: true}, nil
			}
			return store.IngestResult{}, unavailable(err)
		}
	}
	if err := s.publishEvent(ctx, &eventRecord{Event: e.Event, Targets: e.Targets}, 0, false); err != nil {
		// A write the servers refused left nothing: the keys go, for the
		// provider's retry. One that got no answer may be stored all the
		// same (its acknowledgement lost in a partition, or sent when the
		// connection comes back): the keys stay, so a retry finds that
		// event, or takes them over after reservationGrace if it never
		// appears, as after a crash between the two writes.
		if release != nil && refused(err) {
			release()
		}
		return store.IngestResult{}, unavailable(err)
	}
	s.pendingLocal.Add(int64(len(e.Targets)))
	return store.IngestResult{ID: e.Event.ID}, nil
}

// refused reports a publish the servers answered with a refusal (no stream
// took the subject, or the stream said no), as opposed to one left without
// an answer, which may have been stored.
func refused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) || errors.As(err, &apiErr)
}

// publishEvent writes an event's message. With expect set, the write only
// succeeds if the subject's last message is still at lastSeq.
func (s *Store) publishEvent(ctx context.Context, rec *eventRecord, lastSeq uint64, expect bool) error {
	data, err := frame(rec, rec.Event.Body)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(s.eventSubject(rec.Event.ID))
	msg.Data = data
	msg.Header.Set("Hookgate-Source", rec.Event.Source)
	switch {
	case rec.Event.Quarantined != "":
		msg.Header.Set("Hookgate-Status", string(store.StateQuarantined))
	case rec.Event.Unrouted || len(rec.Targets) == 0:
		msg.Header.Set("Hookgate-Status", string(store.StateUnrouted))
	}
	opts := []jetstream.PublishOpt{}
	if expect {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(lastSeq))
	} else {
		// A publish retried after a lost acknowledgement is stored once.
		opts = append(opts, jetstream.WithMsgID(rec.Event.ID.String()))
	}
	_, err = s.js.PublishMsg(ctx, msg, opts...)
	return err
}

// dedupBucketKey hashes a source's dedup key into the bucket's key alphabet.
func dedupBucketKey(source, key string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + key))
	return hex.EncodeToString(sum[:20])
}

// reserve claims a dedup key for id, exactly, across every instance: the
// bucket's create-only write succeeds for one of any number of copies. A
// copy that loses waits briefly for the winner's event, so every copy is
// answered with the same id. A key whose event never appeared (the ingest
// failed between the two writes) is taken over after reservationGrace.
func (s *Store) reserve(ctx context.Context, source, dk string, id store.ID, ttl time.Duration) (store.ID, bool, func(), error) {
	key := dedupBucketKey(source, dk)
	ttl = max(ttl, time.Second)
	releaser := func(rev uint64) func() {
		return func() {
			ctx, cancel := s.ctx()
			defer cancel()
			_ = s.dedup.Delete(ctx, key, jetstream.LastRevision(rev))
		}
	}
	for range 5 {
		rev, err := s.dedup.Create(ctx, key, id[:], jetstream.KeyTTL(ttl))
		if err == nil {
			return store.ID{}, false, releaser(rev), nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return store.ID{}, false, nil, unavailable(err)
		}
		entry, err := s.dedup.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired or released since: try again
		}
		if err != nil {
			return store.ID{}, false, nil, unavailable(err)
		}
		var earlier store.ID
		if len(entry.Value()) != len(earlier) {
			return store.ID{}, false, nil, unavailable(errors.New("malformed dedup entry"))
		}
		copy(earlier[:], entry.Value())
		deadline := s.now().Add(waitForEarlier)
		for {
			found, err := s.eventExists(ctx, earlier)
			if err != nil {
				return store.ID{}, false, nil, unavailable(err)
			}
			if found {
				return earlier, true, nil, nil
			}
			if s.now().Sub(entry.Created()) > reservationGrace {
				break
			}
			if s.now().After(deadline) {
				return store.ID{}, false, nil, unavailable(errors.New("an earlier copy of this event is still being stored"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Left behind by a failed ingest: take it over, unless another copy
		// does first.
		rev, err = s.dedup.Update(ctx, key, id[:], entry.Revision())
		if err == nil {
			return store.ID{}, false, releaser(rev), nil
		}
		if !isConflict(err) {
			return store.ID{}, false, nil, unavailable(err)
		}
		casPause(0)
	}
	return store.ID{}, false, nil, unavailable(errors.New("dedup key contended"))
}

func (s *Store) eventExists(ctx context.Context, id store.ID) (bool, error) {
	_, err := s.lastForSubject(ctx, s.events, s.eventSubject(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	return err == nil, err
}

// lastForSubject returns the last message on subject in stream. It is read
// with a direct get, which any replica answers; one back from a partition
// may not have caught up, and answer that a stored message is missing. So
// a missing message is looked up again at the stream's leader, which has
// every acknowledged write, before it is reported missing: a dedup key
// whose event seemed missing would be taken over, and the event stored
// twice.
func (s *Store) lastForSubject(ctx context.Context, stream jetstream.Stream, subject string) (*jetstream.RawStreamMsg, error) {
	msg, err := stream.GetLastMsgForSubject(ctx, subject)
	if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return msg, err
	}
	m, err := s.leaderGets.GetLastMsg(stream.CachedInfo().Config.Name, subject, nats.Context(ctx))
	if errors.Is(err, nats.ErrMsgNotFound) {
		return nil, jetstream.ErrMsgNotFound
	}
	if err != nil {
		return nil, err
	}
	return &jetstream.RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Header: m.Header, Data: m.Data, Time: m.Time}, nil
}

// record reads an event's message and its sequence.
func (s *Store) record(ctx context.Context, id store.ID) (*eventRecord, uint64, error) {
	msg, err := s.lastForSubject(ctx, s.events, s.eventSubject(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, store.ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	rec, err := decodeEvent(msg.Data)
	return rec, msg.Sequence, err
}

// AddDeliveries implements store.Store: the event is written again with
// the new targets, and the dispatcher queues those that have no state yet.
func (s *Store) AddDeliveries(ctx context.Context, id store.ID, targets []store.Target) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	for try := range casRetries {
		rec, seq, err := s.record(ctx, id)
		if err != nil {
			return err
		}
		rec.Dispatched = len(rec.Targets)
		rec.Targets = append(rec.Targets, targets...)
		rec.Event.Unrouted, rec.Event.Quarantined = false, ""
		err = s.publishEvent(ctx, rec, seq, true)
		if err == nil {
			s.pendingLocal.Add(int64(len(targets)))
			return nil
		}
		if !isConflict(err) {
			return unavailable(err)
		}
		casPause(try)
	}
	return unavailable(errors.New("event changed concurrently"))
}
