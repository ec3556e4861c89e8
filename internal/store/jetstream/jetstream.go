// Package jetstream is the store on NATS JetStream, shared by every Hookgate
// instance that names the same servers and stream.
//
// Layout, for a stream name S:
//   - stream S, subjects S.ev.<id>: one message per event (metadata,
//     targets and body), the last version per subject kept, MaxAge the
//     retention. The publish acknowledgement, given once a quorum of
//     replicas stored it, is the point at which the provider gets its 2xx.
//   - stream S_WORK, subjects S.work.<upstream>.<id>.<index>: work-queue
//     retention, one self-contained message per pending delivery, worked
//     through a durable pull consumer per upstream shared by all instances.
//   - stream S_DEAD, subjects S.dead.<upstream>.<id>.<index>: dead letters,
//     replayed from there.
//   - key-value buckets S_dedup (create-only keys with a TTL), S_state
//     (delivery states and attempts), S_secrets (learned secrets,
//     create-only keys without a TTL) and S_pauses (paused upstreams,
//     without a TTL, watched by every instance).
//
// A durable consumer "dispatch" on S turns stored events into work
// messages, so an ingest is a single quorum write and an event whose
// instance crashed right after the ACK is still dispatched by another.
package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// Options configures Open.
type Options struct {
	// URL lists the servers, comma-separated.
	URL string
	// Stream is the prefix of every stream and bucket name.
	Stream string
	// Replicas is how many servers hold each stream.
	Replicas int
	// Credentials is a NATS .creds file, or empty.
	Credentials string
	// Retention bounds how long events, states and dead letters are kept:
	// the streams' MaxAge and the buckets' TTL, so they expire by themselves
	// and the store is no store.Sweeper.
	Retention time.Duration
	// ConnectTimeout bounds connecting and creating the streams.
	ConnectTimeout time.Duration
	// AckWaitMargin is added to an upstream's attempt timeout to make its
	// consumer's AckWait: how long a crashed instance's work waits before
	// another instance takes it (default 30s).
	AckWaitMargin time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

const (
	// dupWindow is the streams' message-id window: long enough to absorb a
	// retried publish or a dispatch redelivered after its AckWait.
	dupWindow = 10 * time.Minute
	// reservationGrace is how long a dedup key may point at an event that is
	// not stored yet before it counts as left behind by a failed ingest.
	reservationGrace = 30 * time.Second
	// waitForEarlier bounds how long a copy waits for the first copy's write.
	waitForEarlier = 2 * time.Second
	// pollEvery is how often an idle upstream asks for work.
	pollEvery = 200 * time.Millisecond
	// defaultAckWait applies until Configure names an upstream's timeout.
	defaultAckWait = 2 * time.Minute
	// opTimeout bounds one request to the servers.
	opTimeout = 10 * time.Second
	// pingEvery is how often the connection is checked: one that left two
	// pings unanswered is given up for another server, 10 to 15 s after its
	// server went silent.
	pingEvery = 5 * time.Second
)

// Store is the JetStream store.
type Store struct {
	opts Options
	now  func() time.Time
	ids  store.IDSource
	nc   *nats.Conn
	js   jetstream.JetStream
	// leaderGets reads a stream's message from its leader: the streams
	// allow direct gets, which any replica answers, up to date or not.
	leaderGets nats.JetStreamContext
	events     jetstream.Stream
	work       jetstream.Stream
	dead       jetstream.Stream
	dedup      jetstream.KeyValue
	state      jetstream.KeyValue
	secrets    jetstream.KeyValue
	pauseKV    jetstream.KeyValue
	subject    string // S

	mu        sync.Mutex
	consumers map[string]jetstream.Consumer
	ackWait   map[string]time.Duration
	inflight  map[store.DeliveryKey]jetstream.Msg
	dispatch  jetstream.ConsumeContext
	notify    func(upstream string)

	pauses *store.PauseTable // S_pauses, kept current by a watch

	pendingSeen  atomic.Int64 // the work stream's count at the last refresh
	pendingLocal atomic.Int64 // deliveries ingested here since then
	stop         chan struct{}
	stopped      sync.WaitGroup
	closeOnce    sync.Once
}

var _ store.Backend = (*Store)(nil)

// Open connects, creates or updates the streams and buckets, and returns
// the store. Every instance may call it at once with the same options.
func Open(opts Options) (*Store, error) {
	if opts.Stream == "" {
		opts.Stream = "HOOKGATE"
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.AckWaitMargin == 0 {
		opts.AckWaitMargin = 30 * time.Second
	}
	if opts.Retention == 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	s := &Store{opts: opts, now: opts.Now, subject: opts.Stream, consumers: map[string]jetstream.Consumer{},
		ackWait: map[string]time.Duration{}, inflight: map[store.DeliveryKey]jetstream.Msg{}, stop: make(chan struct{}),
		pauses: store.NewPauseTable(nil)}
	if s.now == nil {
		s.now = time.Now
	}
	// A connection whose server a partition cut off stays open, silent: only
	// pings tell, and a write that fills the socket's buffers blocks every
	// other request on the connection until it fails. NATS's defaults (a
	// ping every 2 minutes, 2 unanswered; a write given a minute) would keep
	// this instance refusing writes for minutes while other servers could
	// take them.
	connOpts := []nats.Option{nats.Name("hookgate"), nats.Timeout(opts.ConnectTimeout), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(false),
		nats.PingInterval(pingEvery), nats.MaxPingsOutstanding(2), nats.FlusherTimeout(opTimeout)}
	if opts.Credentials != "" {
		connOpts = append(connOpts, nats.UserCredentials(opts.Credentials))
	}
	nc, err := nats.Connect(opts.URL, connOpts...)
	if err != nil {
		return nil, fmt.Errorf("jetstream store: connecting to %s: %w", redact(opts.URL), err)
	}
	s.nc = nc
	if err := s.setup(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream store %s at %s: %w", opts.Stream, redact(opts.URL), err)
	}
	if err := s.watchPauses(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("jetstream store %s at %s: paused upstreams: %w", opts.Stream, redact(opts.URL), err)
	}
	s.refreshPending()
	s.stopped.Add(1)
	go s.refresher()
	return s, nil
}

func (s *Store) setup() error {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return err
	}
	s.js = js
	if s.leaderGets, err = s.nc.JetStream(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
	defer cancel()
	S, r := s.opts.Stream, s.opts.Replicas
	if s.events, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: S, Subjects: []string{S + ".ev.*"}, Storage: jetstream.FileStorage, Replicas: r,
		MaxAge: s.opts.Retention, MaxMsgsPerSubject: 1, Duplicates: dupWindow, AllowDirect: true,
		Description: "Hookgate events",
	}); err != nil {
		return fmt.Errorf("events stream: %w", err)
	}
	if s.work, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: S + "_WORK", Subjects: []string{S + ".work.>"}, Storage: jetstream.FileStorage, Replicas: r,
		Retention: jetstream.WorkQueuePolicy, Duplicates: dupWindow, AllowDirect: true,
		Description: "Hookgate pending deliveries",
	}); err != nil {
		return fmt.Errorf("work stream: %w", err)
	}
	if s.dead, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: S + "_DEAD", Subjects: []string{S + ".dead.>"}, Storage: jetstream.FileStorage, Replicas: r,
		MaxAge: s.opts.Retention, MaxMsgsPerSubject: 1, Duplicates: dupWindow, AllowDirect: true,
		Description: "Hookgate dead deliveries",
	}); err != nil {
		return fmt.Errorf("dead-letter stream: %w", err)
	}
	bucket := func(name string, ttl bool) (jetstream.KeyValue, error) {
		cfg := jetstream.KeyValueConfig{Bucket: S + "_" + name, Storage: jetstream.FileStorage, Replicas: r, TTL: s.opts.Retention, History: 1}
		if ttl {
			cfg.LimitMarkerTTL = time.Minute
		}
		kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
		}
		return kv, nil
	}
	if s.dedup, err = bucket("dedup", true); err != nil {
		return err
	}
	if s.state, err = bucket("state", false); err != nil {
		return err
	}
	// Learned secrets never expire: an expired one would let the next
	// handshake, from anyone, establish a new one. (S_meta, which held them
	// with a TTL and keyed by source name alone, is no longer read.)
	s.secrets, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: S + "_secrets",
		Storage: jetstream.FileStorage, Replicas: r, History: 1, Description: "Hookgate learned secrets"})
	if err != nil {
		return fmt.Errorf("bucket %s_secrets: %w", S, err)
	}
	s.pauseKV, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: S + "_pauses",
		Storage: jetstream.FileStorage, Replicas: r, History: 1, Description: "Hookgate paused upstreams"})
	if err != nil {
		return fmt.Errorf("bucket %s_pauses: %w", S, err)
	}
	return nil
}

// redact drops credentials from server URLs so they can be shown and logged.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.Host != "" {
			parts[i] = u.Host
		}
	}
	return strings.Join(parts, ",")
}

// Path names the store for the admin API and metrics.
func (s *Store) Path() string { return "jetstream:" + s.opts.Stream + "@" + redact(s.opts.URL) }

// Close stops dispatching, hands in-flight deliveries back and disconnects.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.mu.Lock()
		if s.dispatch != nil {
			s.dispatch.Stop()
		}
		for k, m := range s.inflight {
			_ = m.Nak() // another instance may take it at once
			delete(s.inflight, k)
		}
		s.mu.Unlock()
		s.stopped.Wait()
		_ = s.nc.Drain()
	})
	return nil
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

func (s *Store) eventSubject(id store.ID) string { return s.subject + ".ev." + id.String() }

func (s *Store) workSubject(upstream string, k store.DeliveryKey) string {
	return fmt.Sprintf("%s.work.%s.%s.%d", s.subject, upstream, k.Event, k.Index)
}

func (s *Store) deadSubject(upstream string, k store.DeliveryKey) string {
	return fmt.Sprintf("%s.dead.%s.%s.%d", s.subject, upstream, k.Event, k.Index)
}

func stateKey(k store.DeliveryKey) string { return k.Event.String() + "." + strconv.Itoa(int(k.Index)) }

// unavailable marks errors that mean the servers cannot take a write now.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
}

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
