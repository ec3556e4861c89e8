package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// scanLimit bounds the messages one listing or replay call reads.
const scanLimit = 20000

// Event implements store.Store.
func (s *Store) Event(id store.ID) (*store.EventRecord, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rec, _, err := s.record(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &store.EventRecord{Event: rec.Event, Attempts: map[uint16][]store.Attempt{}}
	states, err := s.states(ctx, rec)
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		out.Deliveries = append(out.Deliveries, st.Delivery)
		if len(st.Log) > 0 {
			out.Attempts[st.Key.Index] = st.Log
		}
	}
	return out, nil
}

// states reads the state of each of an event's deliveries; one not yet
// dispatched is pending with no attempts.
func (s *Store) states(ctx context.Context, rec *eventRecord) ([]*deliveryState, error) {
	out := make([]*deliveryState, 0, len(rec.Targets))
	for i, t := range rec.Targets {
		k := store.DeliveryKey{Event: rec.Event.ID, Index: uint16(i)}
		st, _, err := s.getState(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			st = &deliveryState{Delivery: store.Delivery{Key: k, Upstream: t.Upstream, Route: t.Route, State: store.StatePending,
				NextAt: rec.Event.ReceivedAt, UpdatedAt: rec.Event.ReceivedAt, Shaping: t.Shaping, Transformed: t.Body != nil}}
		} else if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func deliveries(states []*deliveryState) []store.Delivery {
	out := make([]store.Delivery, len(states))
	for i, st := range states {
		out[i] = st.Delivery
	}
	return out
}

// List implements store.Inspector, newest write first. It reads at most
// scanLimit messages a call and then says where to resume.
func (s *Store) List(f store.ListFilter) ([]store.EventSummary, *store.ID, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 50
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := s.events.Info(ctx)
	if err != nil {
		return nil, nil, err
	}
	seq := info.State.LastSeq
	if f.Before != nil {
		msg, err := s.events.GetLastMsgForSubject(ctx, s.eventSubject(*f.Before))
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, nil, err
		}
		if err == nil {
			seq = msg.Sequence - 1
		}
	}
	var out []store.EventSummary
	for read := 0; seq >= info.State.FirstSeq && seq > 0; seq-- {
		if read == scanLimit {
			if len(out) > 0 {
				last := out[len(out)-1].ID
				return out, &last, nil
			}
			break
		}
		read++
		msg, err := s.events.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // replaced by a later version, or expired
		}
		if err != nil {
			return nil, nil, err
		}
		rec, err := decodeEvent(msg.Data)
		if err != nil {
			continue
		}
		e := rec.Event
		if f.Before != nil && e.ID.String() >= f.Before.String() ||
			!f.Until.IsZero() && e.ID.Time().After(f.Until) ||
			!f.Since.IsZero() && e.ID.Time().Before(f.Since.Truncate(time.Millisecond)) ||
			f.Source != "" && e.Source != f.Source ||
			f.Query != "" && !strings.Contains(e.ID.String(), strings.ToUpper(f.Query)) && !strings.Contains(e.DedupKey, f.Query) {
			continue
		}
		if len(out) == f.Limit {
			last := out[len(out)-1].ID
			return out, &last, nil
		}
		states, err := s.states(ctx, rec)
		if err != nil {
			return nil, nil, err
		}
		ds := deliveries(states)
		status := store.Status(e, ds)
		if f.Status != "" && status != f.Status || !f.Keeps(e, ds) {
			continue
		}
		out = append(out, store.EventSummary{ID: e.ID, Source: e.Source, ReceivedAt: e.ReceivedAt, Status: status,
			DedupKey: e.DedupKey, Deliveries: ds, Quarantined: e.Quarantined, Handshake: e.Handshake, Origin: e.Origin})
	}
	return out, nil, nil
}

// Cancel implements store.Inspector: pending work messages are purged and
// the deliveries marked canceled.
func (s *Store) Cancel(ctx context.Context, id store.ID) (int, error) {
	rec, _, err := s.record(ctx, id)
	if err != nil {
		return 0, err
	}
	states, err := s.states(ctx, rec)
	if err != nil {
		return 0, err
	}
	n := 0
	now := s.now()
	for _, st := range states {
		if st.State != store.StatePending {
			continue
		}
		err := s.updateState(ctx, st.Key, func(d *deliveryState) {
			if d.Upstream == "" {
				d.Delivery = st.Delivery
			}
			d.State, d.UpdatedAt = store.StateCanceled, now
		})
		if err != nil {
			return n, err
		}
		if err := s.work.Purge(ctx, jetstream.WithPurgeSubject(s.workSubject(st.Upstream, st.Key))); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// eachState calls fn with every delivery state in the bucket.
func (s *Store) eachState(ctx context.Context, fn func(*deliveryState)) error {
	w, err := s.state.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case entry := <-w.Updates():
			if entry == nil {
				return nil // the initial values are all delivered
			}
			st := &deliveryState{}
			if json.Unmarshal(entry.Value(), st) != nil {
				continue
			}
			id, idx, ok := parseStateKey(entry.Key())
			if !ok {
				continue
			}
			st.Key = store.DeliveryKey{Event: id, Index: idx}
			fn(st)
		}
	}
}

func parseStateKey(key string) (store.ID, uint16, bool) {
	idPart, idxPart, ok := strings.Cut(key, ".")
	if !ok {
		return store.ID{}, 0, false
	}
	id, err := store.ParseID(idPart)
	if err != nil {
		return store.ID{}, 0, false
	}
	var idx int
	for _, c := range idxPart {
		if c < '0' || c > '9' {
			return store.ID{}, 0, false
		}
		idx = idx*10 + int(c-'0')
	}
	return id, uint16(idx), idx < 1<<16
}

// eachEventHeader calls fn with the subject and headers of every event
// message stored at or after since, reading headers only.
func (s *Store) eachEventHeader(ctx context.Context, since time.Time, fn func(id store.ID, h nats.Header)) error {
	info, err := s.events.Info(ctx)
	if err != nil || info.State.Msgs == 0 || info.State.LastTime.Before(since) {
		return err
	}
	// The scan ends at the last message stored when it began: a consumer's
	// own idea of what is left lags behind under load.
	last := info.State.LastSeq
	cfg := jetstream.OrderedConsumerConfig{HeadersOnly: true}
	if !since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	c, err := s.events.OrderedConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	for {
		batch, err := c.Fetch(500, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			if md.Sequence.Stream > last {
				return nil
			}
			if id, err := store.ParseID(strings.TrimPrefix(msg.Subject(), s.subject+".ev.")); err == nil {
				fn(id, msg.Headers())
			}
			if md.Sequence.Stream == last {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// Stats implements store.Inspector.
func (s *Store) Stats() (store.Stats, error) {
	st := store.Stats{Upstreams: map[string]store.UpstreamStats{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.eachEventHeader(ctx, time.Time{}, func(_ store.ID, h nats.Header) {
		st.Events++
		// A headers-only message gives its payload's size (the record and
		// the body, in one message) in Nats-Msg-Size.
		size, _ := strconv.ParseInt(h.Get(nats.MsgSize), 10, 64)
		st.AddEvent(h.Get("Hookgate-Source"), size, 0)
		switch h.Get("Hookgate-Status") {
		case string(store.StateUnrouted):
			st.Unrouted++
		case string(store.StateQuarantined):
			st.Quarantined++
		}
	})
	if err != nil {
		return st, unavailable(err)
	}
	// Pending deliveries are the work stream's messages; the states count
	// the finished ones.
	info, err := s.work.Info(ctx, jetstream.WithSubjectFilter(s.subject+".work.>"))
	if err != nil {
		return st, unavailable(err)
	}
	for subj, n := range info.State.Subjects {
		name := strings.Split(subj, ".")[2]
		st.Count(name, store.StatePending, int(n))
	}
	err = s.eachState(ctx, func(d *deliveryState) {
		if d.State != store.StatePending { // pending ones are counted from the work streams above
			st.Count(d.Upstream, d.State, 1)
		}
	})
	if err != nil {
		return st, unavailable(err)
	}
	now := s.now()
	for name, u := range st.Upstreams {
		if u.Pending == 0 {
			continue
		}
		if t, ok := s.oldestQueued(ctx, s.subject+".work."+name+".>"); ok {
			u.OldestPendingSeconds = max(now.Sub(t).Seconds(), 0)
			st.Upstreams[name] = u
			st.Oldest = max(st.Oldest, u.OldestPendingSeconds)
		}
	}
	return st, nil
}

// oldestQueued returns the receive time of the first queued work message on
// subject: work is queued in arrival order, and retries keep their place.
func (s *Store) oldestQueued(ctx context.Context, subject string) (time.Time, bool) {
	msg, err := s.work.GetMsg(ctx, 0, jetstream.WithGetMsgSubject(subject))
	if err != nil {
		return time.Time{}, false
	}
	parts := strings.Split(msg.Subject, ".")
	if len(parts) < 5 {
		return time.Time{}, false
	}
	id, err := store.ParseID(parts[3])
	if err != nil {
		return time.Time{}, false
	}
	return id.Time(), true
}

// OldestPending implements store.Inspector.
func (s *Store) OldestPending() (time.Time, bool) {
	ctx, cancel := s.ctx()
	defer cancel()
	return s.oldestQueued(ctx, s.subject+".work.>")
}

// Timeline implements store.Inspector.
func (s *Store) Timeline(since time.Time) ([]store.TimelinePoint, bool, error) {
	start := since.Truncate(time.Minute)
	n := int(s.now().Sub(start)/time.Minute) + 1
	if n < 1 || n > 24*60 {
		return nil, false, errors.New("timeline: since must be within the last 24 hours")
	}
	points := make([]store.TimelinePoint, n)
	for i := range points {
		points[i].Minute = start.Add(time.Duration(i) * time.Minute)
	}
	slot := func(t time.Time) int {
		if i := int(t.Sub(start) / time.Minute); t.After(start) && i < n {
			return i
		}
		return -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.eachEventHeader(ctx, start, func(id store.ID, _ nats.Header) {
		if i := slot(id.Time()); i >= 0 {
			points[i].Received++
		}
	})
	if err != nil {
		return nil, false, err
	}
	err = s.eachState(ctx, func(d *deliveryState) {
		for _, a := range d.Log {
			i := slot(a.At)
			switch {
			case i < 0:
			case a.Status >= 200 && a.Status < 300:
				points[i].Delivered++
			default:
				points[i].Failed++
			}
		}
	})
	return points, false, err
}

// Replay implements store.Store. Dead deliveries come back from the
// dead-letter stream; other states are found through the events.
func (s *Store) Replay(ctx context.Context, f store.ReplayFilter) (store.ReplayResult, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	states := f.States
	if len(states) == 0 {
		states = []store.State{store.StateDead}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	r := &replayer{s: s, f: f, states: states, upstreams: map[string]bool{}}
	var err error
	switch {
	case f.Event != nil:
		_, err = r.event(ctx, *f.Event)
	case len(states) == 1 && states[0] == store.StateDead:
		err = r.deadLetters(ctx)
	default:
		err = r.events(ctx)
	}
	for u := range r.upstreams {
		r.res.Upstreams = append(r.res.Upstreams, u)
	}
	slices.Sort(r.res.Upstreams)
	return r.res, err
}

type replayer struct {
	s         *Store
	f         store.ReplayFilter
	states    []store.State
	upstreams map[string]bool
	res       store.ReplayResult
}

func (r *replayer) matches(e *store.Event) bool {
	f := r.f
	return (f.Source == "" || e.Source == f.Source) &&
		(f.Since.IsZero() || !e.ID.Time().Before(f.Since.Truncate(time.Millisecond))) &&
		(f.Until.IsZero() || !e.ID.Time().After(f.Until))
}

// event replays the matching deliveries of one event; it reports false when
// the limit stopped it.
func (r *replayer) event(ctx context.Context, id store.ID) (bool, error) {
	rec, _, err := r.s.record(ctx, id)
	if err != nil {
		return true, err
	}
	if !r.matches(rec.Event) {
		return true, nil
	}
	states, err := r.s.states(ctx, rec)
	if err != nil {
		return true, err
	}
	for _, st := range states {
		if !slices.Contains(r.states, st.State) || r.f.Upstream != "" && st.Upstream != r.f.Upstream {
			continue
		}
		if r.res.Replayed == r.f.Limit {
			r.res.Next = &id
			return false, nil
		}
		if !r.f.DryRun {
			if err := r.s.requeue(ctx, rec.Event, rec.Targets[st.Key.Index], st); err != nil {
				return true, err
			}
		}
		r.res.Count(id, st.Upstream)
		r.upstreams[st.Upstream] = true
	}
	return true, nil
}

// deadLetters replays from the dead-letter stream. Replayed letters leave
// the stream, so a call that stops at the limit resumes where it was.
func (r *replayer) deadLetters(ctx context.Context) error {
	subject := r.s.subject + ".dead.>"
	if r.f.Upstream != "" {
		subject = r.s.subject + ".dead." + r.f.Upstream + ".>"
	}
	for seq, read := uint64(0), 0; read < scanLimit; read++ {
		msg, err := r.s.dead.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		seq = msg.Sequence + 1
		item, err := decodeWork(msg.Data)
		if err != nil || !r.matches(item.Event) {
			continue
		}
		if r.res.Replayed == r.f.Limit {
			next := item.Event.ID
			r.res.Next = &next
			return nil
		}
		k := store.DeliveryKey{Event: item.Event.ID, Index: item.Index}
		st, _, err := r.s.getState(ctx, k)
		if err != nil {
			return err
		}
		if st.State != store.StateDead {
			continue
		}
		if !r.f.DryRun {
			if err := r.s.requeue(ctx, item.Event, item.Target, st); err != nil {
				return err
			}
		}
		r.res.Count(item.Event.ID, item.Target.Upstream)
		r.upstreams[item.Target.Upstream] = true
	}
	return nil
}

// events replays deliveries in other states, in event order from f.After or
// f.Since.
func (r *replayer) events(ctx context.Context) error {
	info, err := r.s.events.Info(ctx)
	if err != nil {
		return err
	}
	for seq, read := info.State.FirstSeq, 0; seq <= info.State.LastSeq && read < scanLimit; seq, read = seq+1, read+1 {
		msg, err := r.s.events.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		id, err := store.ParseID(strings.TrimPrefix(msg.Subject, r.s.subject+".ev."))
		if err != nil || r.f.After != nil && id.String() <= r.f.After.String() {
			continue
		}
		if more, err := r.event(ctx, id); err != nil || !more {
			return err
		}
	}
	return nil
}

// requeue makes a finished delivery pending again with a fresh retry
// budget. The work message gets a new id: the old one may still be inside
// the duplicate window.
func (s *Store) requeue(ctx context.Context, ev *store.Event, t store.Target, st *deliveryState) error {
	now := s.now()
	item := &workItem{Event: ev, Index: st.Key.Index, Target: t, RetryBase: st.Attempts}
	if err := s.publishWork(ctx, item, stateKey(st.Key)+".replay."+now.Format(time.RFC3339Nano)); err != nil {
		return err
	}
	err := s.updateState(ctx, st.Key, func(d *deliveryState) {
		if d.Upstream == "" {
			d.Delivery = st.Delivery
		}
		d.State, d.NextAt, d.UpdatedAt, d.RetryBase, d.ReplayedAt = store.StatePending, now, now, st.Attempts, now
	})
	if err != nil {
		return err
	}
	if st.State == store.StateDead {
		_ = s.dead.Purge(ctx, jetstream.WithPurgeSubject(s.deadSubject(t.Upstream, st.Key)))
	}
	s.pendingLocal.Add(1)
	return nil
}

// Import stores an event from another store with its deliveries as they
// were: finished ones keep their state and attempts, pending ones are
// queued with a fresh retry budget, and its dedup key is kept. An event already here is left alone,
// so an interrupted migration can be run again.
func (s *Store) Import(ctx context.Context, rec *store.EventRecord, bodies map[uint16][]byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if found, err := s.eventExists(ctx, rec.Event.ID); err != nil || found {
		return false, err
	}
	targets := make([]store.Target, len(rec.Deliveries))
	for _, d := range rec.Deliveries {
		if int(d.Key.Index) >= len(targets) {
			return false, errors.New("import: delivery indexes are not dense")
		}
		t := store.Target{Upstream: d.Upstream, Route: d.Route, OrderKey: d.OrderKey,
			Shaping: d.Shaping, Body: bodies[d.Key.Index]}
		targets[d.Key.Index] = t
		st := &deliveryState{Delivery: d, Log: rec.Attempts[d.Key.Index]}
		if err := s.putState(ctx, d.Key, st, false); err != nil {
			return false, err
		}
		if d.State == store.StatePending {
			item := &workItem{Event: rec.Event, Index: d.Key.Index, Target: t, RetryBase: d.Attempts}
			if err := s.publishWork(ctx, item, stateKey(d.Key)); err != nil {
				return false, err
			}
		}
	}
	// Every target is already queued or finished: the dispatcher checks them.
	if err := s.publishEvent(ctx, &eventRecord{Event: rec.Event, Targets: targets, Dispatched: len(targets)}, 0, false); err != nil {
		return false, err
	}
	// The dedup key comes along, so a provider's retry after the move is
	// still recognised; it lives out the rest of the retention.
	if dk := rec.Event.DedupKey; dk != "" {
		if ttl := s.opts.Retention - s.now().Sub(rec.Event.ReceivedAt); ttl > time.Second {
			id := rec.Event.ID
			_, err := s.dedup.Create(ctx, dedupBucketKey(rec.Event.Source, dk), id[:], jetstream.KeyTTL(ttl))
			if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
				return true, err
			}
		}
	}
	return true, nil
}
