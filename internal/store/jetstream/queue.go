package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// startDispatch begins turning stored events into work; it runs on every
// instance once delivery is live there.
func (s *Store) startDispatch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dispatch != nil {
		return nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	cons, err := s.events.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "dispatch", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
		MaxDeliver: -1, FilterSubject: s.subject + ".ev.*", MaxAckPending: 1024,
	})
	if err != nil {
		return err
	}
	s.dispatch, err = cons.Consume(s.dispatchOne)
	return err
}

// dispatchOne queues the deliveries of one stored event as work messages:
// one write each. The work message's id absorbs a repeat within the
// duplicate window, which covers a redelivered dispatch (after 30 s); a
// target from an earlier version of the record (below Dispatched) is
// queued only if it has neither a work message nor a state.
func (s *Store) dispatchOne(msg jetstream.Msg) {
	rec, err := decodeEvent(msg.Data())
	if err != nil {
		_ = msg.Term()
		return
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var queued []string
	for i, t := range rec.Targets {
		k := store.DeliveryKey{Event: rec.Event.ID, Index: uint16(i)}
		if i < rec.Dispatched {
			known, err := s.known(ctx, t.Upstream, k)
			if err != nil {
				_ = msg.NakWithDelay(time.Second)
				return
			}
			if known {
				continue
			}
		}
		if err := s.publishWork(ctx, &workItem{Event: rec.Event, Index: k.Index, Target: t}, stateKey(k)); err != nil {
			_ = msg.NakWithDelay(time.Second)
			return
		}
		queued = append(queued, t.Upstream)
	}
	_ = msg.Ack()
	s.mu.Lock()
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		for _, u := range queued {
			notify(u)
		}
	}
}

// known reports a delivery that is queued or has a state.
func (s *Store) known(ctx context.Context, upstream string, k store.DeliveryKey) (bool, error) {
	if _, err := s.lastForSubject(ctx, s.work, s.workSubject(upstream, k)); err == nil {
		return true, nil
	} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, err
	}
	if _, err := s.state.Get(ctx, stateKey(k)); err == nil {
		return true, nil
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, err
	}
	return false, nil
}

func (s *Store) publishWork(ctx context.Context, item *workItem, msgID string) error {
	data, err := frame(item, item.Event.Body)
	if err != nil {
		return err
	}
	k := store.DeliveryKey{Event: item.Event.ID, Index: item.Index}
	_, err = s.js.Publish(ctx, s.workSubject(item.Target.Upstream, k), data, jetstream.WithMsgID(msgID))
	return err
}

// putState writes a delivery's state; with create set, only if it has none.
func (s *Store) putState(ctx context.Context, k store.DeliveryKey, st *deliveryState, create bool) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if create {
		_, err = s.state.Create(ctx, stateKey(k), data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return nil
		}
		return err
	}
	_, err = s.state.Put(ctx, stateKey(k), data)
	return err
}

// getState reads a delivery's state and its revision.
func (s *Store) getState(ctx context.Context, k store.DeliveryKey) (*deliveryState, uint64, error) {
	entry, err := s.state.Get(ctx, stateKey(k))
	if err != nil {
		return nil, 0, err
	}
	st := &deliveryState{}
	if err := json.Unmarshal(entry.Value(), st); err != nil {
		return nil, 0, err
	}
	st.Key = k
	return st, entry.Revision(), nil
}

// isConflict reports a compare-and-set that lost: the key or subject moved
// on since it was read. Replicated streams report it with another code.
func isConflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// casRetries bounds the retries of a compare-and-set. Reads may be served
// by a replica a few milliseconds behind, so a retry waits a little longer
// each time.
const casRetries = 20

func casPause(try int) { time.Sleep(time.Duration(try+1) * 5 * time.Millisecond) }

// updateState changes a delivery's state with a compare-and-set, so two
// instances never overwrite each other's attempts.
func (s *Store) updateState(ctx context.Context, k store.DeliveryKey, change func(*deliveryState)) error {
	return casJSON(ctx, s.state, stateKey(k), func(st *deliveryState) {
		st.Key = k
		change(st)
	})
}

// casJSON reads a JSON value (the zero value when the key is missing),
// changes it and writes it back with a compare-and-set, again while another
// writer gets there first.
func casJSON[T any](ctx context.Context, kv jetstream.KeyValue, key string, change func(*T)) error {
	for try := range casRetries {
		var v T
		var rev uint64
		entry, err := kv.Get(ctx, key)
		switch {
		case err == nil:
			rev = entry.Revision()
			if err := json.Unmarshal(entry.Value(), &v); err != nil {
				return err
			}
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return err
		}
		change(&v)
		data, err := json.Marshal(&v)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, data)
		} else {
			_, err = kv.Update(ctx, key, data, rev)
		}
		if err == nil || !isConflict(err) {
			return err
		}
		casPause(try)
	}
	return fmt.Errorf("%s changed concurrently", key)
}

// Configure implements store.Queue: an upstream's consumer redelivers a
// message after its attempt timeout plus a margin, so only a crashed
// instance's work moves to another. It also starts this instance's
// dispatcher, which tells notify of the work it queues: delivery is live
// here. Upstreams left out keep their consumers, shared with other
// instances.
func (s *Store) Configure(upstreams map[string]store.UpstreamSettings, notify func(upstream string)) error {
	s.mu.Lock()
	s.notify = notify
	s.mu.Unlock()
	if err := s.startDispatch(); err != nil {
		return fmt.Errorf("starting dispatch: %w", err)
	}
	var errs []error
	for name, up := range upstreams {
		if err := s.configureUpstream(name, up.AttemptTimeout); err != nil {
			errs = append(errs, fmt.Errorf("upstream %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Store) configureUpstream(name string, attemptTimeout time.Duration) error {
	wait := attemptTimeout + s.opts.AckWaitMargin
	s.mu.Lock()
	same := s.ackWait[name] == wait && s.consumers[name] != nil
	s.ackWait[name] = wait
	s.mu.Unlock()
	if same {
		return nil
	}
	_, err := s.consumer(name, true)
	return err
}

func (s *Store) consumer(upstream string, update bool) (jetstream.Consumer, error) {
	s.mu.Lock()
	c, wait := s.consumers[upstream], s.ackWait[upstream]
	s.mu.Unlock()
	if c != nil && !update {
		return c, nil
	}
	if wait == 0 {
		wait = defaultAckWait
	}
	ctx, cancel := s.ctx()
	defer cancel()
	// MaxDeliver stays unlimited: the engine ends a delivery at max_attempts
	// itself. A work-queue message that ran out of deliveries would sit in
	// the stream with only an advisory to say so: a stuck delivery.
	c, err := s.work.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "work_" + upstream, AckPolicy: jetstream.AckExplicitPolicy, AckWait: wait,
		MaxDeliver: -1, FilterSubject: s.subject + ".work." + upstream + ".>", MaxAckPending: 20000,
		MaxWaiting: 512,
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.consumers[upstream] = c
	s.mu.Unlock()
	return c, nil
}

// Claim implements store.Queue: it takes up to limit messages from the
// upstream's shared consumer without waiting. Each stays unacknowledged, and
// so unseen by other instances, until Settle or Release. Retries wait inside
// JetStream, which tells no due times, and other instances queue work
// without telling this one, so Next is the next look, pollEvery away.
func (s *Store) Claim(_ context.Context, upstream string, now time.Time, limit int) (store.Claimed, error) {
	c, err := s.consumer(upstream, false)
	if err != nil {
		return store.Claimed{}, err
	}
	batch, err := c.FetchNoWait(limit)
	if err != nil {
		return store.Claimed{}, err
	}
	claimed := store.Claimed{Next: now.Add(pollEvery), HasNext: true}
	for msg := range batch.Messages() {
		if t, ok := s.lease(upstream, msg); ok {
			claimed.Tasks = append(claimed.Tasks, t)
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && len(claimed.Tasks) == 0 {
		return store.Claimed{}, err
	}
	return claimed, nil
}

// lease keeps a fetched message in flight here and returns its task.
func (s *Store) lease(upstream string, msg jetstream.Msg) (store.Task, bool) {
	item, err := decodeWork(msg.Data())
	if err != nil {
		_ = msg.Term()
		return store.Task{}, false
	}
	md, err := msg.Metadata()
	if err != nil {
		_ = msg.Nak()
		return store.Task{}, false
	}
	k := store.DeliveryKey{Event: item.Event.ID, Index: item.Index}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, held := s.inflight[k]; held {
		return store.Task{}, false // an attempt here still holds it; that attempt settles it
	}
	s.inflight[k] = msg
	t := item.Target
	return store.Task{
		Event: item.Event,
		Body:  t.Body,
		Delivery: store.Delivery{Key: k, Upstream: upstream, Route: t.Route, State: store.StatePending,
			Attempts: item.RetryBase + int(md.NumDelivered) - 1, RetryBase: item.RetryBase,
			Shaping: t.Shaping, Transformed: t.Body != nil},
	}, true
}

// Release implements store.Queue: the message goes back at once, so any
// instance may take it.
func (s *Store) Release(k store.DeliveryKey) {
	s.mu.Lock()
	msg := s.inflight[k]
	delete(s.inflight, k)
	s.mu.Unlock()
	if msg != nil {
		_ = msg.Nak()
	}
}

// Settle implements store.Queue: the attempt goes into the delivery's
// state, then the message is acknowledged, delayed for its retry, or moved
// to the dead-letter stream. The lease ends even when Settle fails.
func (s *Store) Settle(ctx context.Context, o store.Outcome) error {
	s.mu.Lock()
	msg := s.inflight[o.Key]
	delete(s.inflight, o.Key)
	s.mu.Unlock()
	if msg == nil {
		return fmt.Errorf("delivery %s is not in flight here", stateKey(o.Key))
	}
	stateCtx, cancelState := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	now := s.now()
	canceled := false
	item, itemErr := decodeWork(msg.Data())
	err := s.updateState(stateCtx, o.Key, func(st *deliveryState) {
		if st.Upstream == "" && itemErr == nil { // the first attempt: no state yet
			t := item.Target
			st.Upstream, st.Route, st.Path, st.SetHeaders, st.RemoveHeaders, st.Transformed = t.Upstream, t.Route, t.Path, t.SetHeaders, t.RemoveHeaders, t.Body != nil
		}
		st.Log = append(st.Log, o.Attempt)
		if len(st.Log) > maxLoggedAttempts {
			st.Log = st.Log[len(st.Log)-maxLoggedAttempts:]
		}
		st.Attempts, st.LastStatus, st.LastError, st.UpdatedAt = o.Attempt.N, o.Attempt.Status, o.Attempt.Error, now
		if st.State == store.StateCanceled {
			canceled = true
			return
		}
		st.State, st.NextAt = o.Next, o.RetryAt
	})
	cancelState()
	// The message is settled even if the state could not be written: a
	// missing attempt record is better than a second delivery. It has a
	// deadline of its own: a state write that timed out (its bucket's
	// leader cut off) used all of the first.
	stateErr := err
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	switch {
	case canceled || o.Next == store.StateDelivered:
		return errors.Join(stateErr, msg.DoubleAck(ctx))
	case o.Next == store.StatePending:
		return errors.Join(stateErr, msg.NakWithDelay(max(o.RetryAt.Sub(now), 0)))
	default:
		err := itemErr
		if err == nil {
			dead := nats.NewMsg(s.deadSubject(item.Target.Upstream, o.Key))
			dead.Data = msg.Data()
			dead.Header.Set("Hookgate-Dead-Reason", o.Attempt.Error)
			_, err = s.js.PublishMsg(ctx, dead)
		}
		if err != nil {
			_ = msg.NakWithDelay(time.Second)
			return errors.Join(stateErr, err)
		}
		return errors.Join(stateErr, msg.Term())
	}
}

// Pending implements store.Store: the work stream's count, refreshed every
// second, plus what this instance queued since.
func (s *Store) Pending() int64 { return s.pendingSeen.Load() + s.pendingLocal.Load() }

func (s *Store) refresher() {
	defer s.stopped.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.refreshPending()
		}
	}
}

func (s *Store) refreshPending() {
	ctx, cancel := s.ctx()
	defer cancel()
	info, err := s.work.Info(ctx)
	if err != nil {
		return
	}
	s.pendingSeen.Store(int64(info.State.Msgs))
	s.pendingLocal.Store(0)
}

// QueuedUpstreams implements store.Store.
func (s *Store) QueuedUpstreams() ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	info, err := s.work.Info(ctx, jetstream.WithSubjectFilter(s.subject+".work.>"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for subj := range info.State.Subjects {
		if up := strings.Split(subj, ".")[2]; !seen[up] {
			seen[up] = true
			out = append(out, up)
		}
	}
	return out, nil
}
