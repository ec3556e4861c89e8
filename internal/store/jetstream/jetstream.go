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
	"fmt"
	"net/url"
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
	cursorKV   jetstream.KeyValue
	rejectedKV jetstream.KeyValue
	subject    string // S
	// instance names this process's keys in S_rejected.
	instance string

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
	s := &Store{opts: opts, now: opts.Now, subject: opts.Stream, instance: newInstanceID(), consumers: map[string]jetstream.Consumer{},
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
	s.cursorKV, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: S + "_cursors",
		Storage: jetstream.FileStorage, Replicas: r, History: 1, Description: "Hookgate reconciliation cursors"})
	if err != nil {
		return fmt.Errorf("bucket %s_cursors: %w", S, err)
	}
	s.rejectedKV, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: S + "_rejected",
		Storage: jetstream.FileStorage, Replicas: r, History: 1, TTL: 7 * 24 * time.Hour, Description: "Hookgate refused requests, per instance"})
	if err != nil {
		return fmt.Errorf("bucket %s_rejected: %w", S, err)
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
