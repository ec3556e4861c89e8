// Package store is the seam between Hookgate and its storage: the types that
// cross it and the interfaces a backend implements. The backends are
// store/bolt (one embedded file) and store/jetstream (shared by instances).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable is returned when the store cannot take a write: it is
// closed, the disk is full, or the file cannot be written.
var ErrUnavailable = errors.New("store unavailable")

// ErrNotFound is returned for an unknown event or delivery.
var ErrNotFound = errors.New("not found")

// State is a delivery's state, and an event's status in a listing: the
// state that matters most among its deliveries, or why it has none.
type State string

// Delivery states; an event's status is one of these too.
const (
	StatePending   State = "pending"
	StateDelivered State = "delivered"
	StateDead      State = "dead"
	// StateCanceled is a delivery whose retries an operator canceled.
	StateCanceled State = "canceled"
)

// Statuses of an event without deliveries: no route took it, or a validation
// gate parked it.
const (
	StateUnrouted    State = "unrouted"
	StateQuarantined State = "quarantined"
)

// Event is a stored webhook request.
type Event struct {
	ID         ID        `json:"id"`
	Source     string    `json:"source"`
	ReceivedAt time.Time `json:"received_at"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	RawQuery   string    `json:"query,omitempty"`
	Host       string    `json:"host,omitempty"`
	RemoteAddr string    `json:"remote_addr,omitempty"`
	Proto      string    `json:"scheme,omitempty"`
	// ViaTrustedProxy is true when the request came from one of Caddy's
	// trusted_proxies, whose X-Forwarded-* headers delivery then passes on;
	// from anyone else they are dropped, as reverse_proxy drops them.
	ViaTrustedProxy bool        `json:"via_trusted_proxy,omitempty"`
	Header          http.Header `json:"headers"`
	DedupKey        string      `json:"dedup_key,omitempty"`
	// Unrouted marks an event that no route and no default took.
	Unrouted bool `json:"unrouted,omitempty"`
	// Quarantined says why a validation gate parked the event.
	Quarantined string `json:"quarantined,omitempty"`
	// Handshake marks a provider handshake kept as a record (an SNS
	// subscription confirmation) and says what it was: stored and listed,
	// never delivered.
	Handshake string `json:"handshake,omitempty"`
	// Origin says how the event came: "" for a webhook, OriginReconcile for
	// one fetched from the provider's event API, OriginRedelivery for a
	// webhook reconciliation asked the provider to send again.
	Origin string `json:"origin,omitempty"`
	// Secret is the index of the source's configured secret that verified
	// the event (0, the first, when there is one): during a rotation it
	// shows when the old secret is no longer used.
	Secret int `json:"secret,omitempty"`
	// Trace is the W3C trace context (traceparent, and tracestate when there
	// is one) of the span that ingested the event, when the request was
	// traced; each delivery attempt is a span of that trace.
	Trace map[string]string `json:"trace,omitempty"`
	// Search holds the values of the source's search fields, by name, as
	// computed when the event arrived; the store indexes them.
	Search map[string]string `json:"search,omitempty"`
	// Body is the request body, byte for byte.
	Body []byte `json:"-"`
}

// MaxSearchValue bounds a search field's stored value, in bytes.
const MaxSearchValue = 200

// OriginReconcile marks an event fetched from the provider's event API by
// reconciliation, not received as a webhook.
const OriginReconcile = "reconcile"

// OriginRedelivery marks a webhook that arrived after reconciliation asked
// the provider to deliver it again.
const OriginRedelivery = "redelivery"

// Target is one delivery to create with an event.
type Target struct {
	Upstream string
	Route    string
	// OrderKey, when set, makes this delivery wait for earlier ones to the
	// same upstream with the same key.
	OrderKey string
	Shaping
	// Body, when set, replaces the original body for this delivery.
	Body []byte
}

// Shaping is what a rule changes in the request an upstream receives.
type Shaping struct {
	// Path replaces the request's path; empty keeps it.
	Path string `json:"path,omitempty"`
	// SetHeaders sets headers; RemoveHeaders removes them.
	SetHeaders    map[string]string `json:"set_headers,omitempty"`
	RemoveHeaders []string          `json:"remove_headers,omitempty"`
}

// UnmarshalJSON reads a target as stored before its shaping had JSON
// names (JetStream keeps targets in its event records).
func (t *Target) UnmarshalJSON(data []byte) error {
	type target Target
	var v struct {
		target
		LegacySetHeaders    map[string]string `json:"SetHeaders"`
		LegacyRemoveHeaders []string          `json:"RemoveHeaders"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*t = Target(v.target)
	if t.SetHeaders == nil {
		t.SetHeaders = v.LegacySetHeaders
	}
	if t.RemoveHeaders == nil {
		t.RemoveHeaders = v.LegacyRemoveHeaders
	}
	return nil
}

// NewEvent is an event to store, with its deduplication and deliveries.
type NewEvent struct {
	Event *Event
	// DedupKey, when set, makes the write a no-op if the same source stored
	// the same key before DedupUntil of that earlier event.
	DedupKey   string
	DedupUntil time.Time
	// DigestKey, when set, is a second dedup key with the same window: the
	// digest of signed content that carries no timestamp or id, so a
	// replayed capture is a duplicate whatever unsigned id it comes with.
	DigestKey string
	// ReplayKey, when set, is a single-use token the signature covered:
	// the write is refused (Replayed) if the source stored it before
	// ReplayUntil of that earlier event.
	ReplayKey   string
	ReplayUntil time.Time
	Targets     []Target
}

// IngestResult says what Ingest did.
type IngestResult struct {
	ID        ID
	Duplicate bool
	// Replayed reports a single-use token seen before with another event:
	// nothing was stored.
	Replayed bool
}

// DeliveryKey identifies one delivery: the event and the delivery's index.
type DeliveryKey struct {
	Event ID
	Index uint16
}

// Delivery is one event's way to one upstream.
type Delivery struct {
	Key        DeliveryKey `json:"-"`
	Upstream   string      `json:"upstream"`
	Route      string      `json:"route,omitempty"`
	State      State       `json:"state"`
	Attempts   int         `json:"attempts"`
	NextAt     time.Time   `json:"next_at"`
	LastStatus int         `json:"last_status,omitempty"`
	LastError  string      `json:"last_error,omitempty"`
	UpdatedAt  time.Time   `json:"updated_at"`
	// RetryBase is the attempt count when the delivery was last replayed;
	// the retry budget counts from there.
	RetryBase int `json:"retry_base,omitempty"`
	// ReplayedAt is when the delivery was last replayed.
	ReplayedAt time.Time `json:"replayed_at,omitzero"`
	// OrderKey groups deliveries to the upstream that go out one at a time.
	OrderKey string `json:"order_key,omitempty"`
	Shaping
	// Transformed says a rule transformed the body, which is stored beside
	// the original.
	Transformed bool `json:"transformed,omitempty"`
}

// Attempt is the record of one delivery attempt.
type Attempt struct {
	N        int           `json:"n"`
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration_ns"`
	Status   int           `json:"status,omitempty"`
	Error    string        `json:"error,omitempty"`
	Response string        `json:"response,omitempty"`
}

// Task is a due delivery with the event it carries.
type Task struct {
	Delivery Delivery
	Event    *Event
	// Body is the delivery's transformed body, nil for the event's own.
	Body []byte
	// EventErr, when set, says the stored event could not be read whole
	// (a body damaged on disk): Event holds what could be read, at least
	// its ID. The attempt then fails without a request, and is retried
	// like a failed one, so one damaged event never holds up the
	// deliveries queued behind it.
	EventErr error
}

// Outcome is the result of an attempt: the attempt record and what follows.
type Outcome struct {
	Key     DeliveryKey
	Attempt Attempt
	// Next is StatePending to retry at RetryAt, or a final state.
	Next    State
	RetryAt time.Time
}

// EventRecord is an event with its deliveries and their attempts.
type EventRecord struct {
	Event      *Event
	Deliveries []Delivery
	Attempts   map[uint16][]Attempt
}

// Store is the persistence behind the ingest and delivery paths.
type Store interface {
	// Ingest durably stores a new event and its deliveries, or reports the
	// earlier event when the dedup key was seen. It returns only after the
	// write is on disk, and wakes delivery (Queue.Configure's notify) for the
	// new deliveries.
	Ingest(ctx context.Context, e *NewEvent) (IngestResult, error)
	// Event returns one event with its deliveries and attempts.
	Event(id ID) (*EventRecord, error)
	SecretStore
	Queue
	// AddDeliveries gives a stored event more deliveries (routing it again,
	// or releasing it from quarantine) and clears its unrouted and
	// quarantined marks, and wakes delivery for them.
	AddDeliveries(ctx context.Context, id ID, targets []Target) error
	// Pending counts deliveries not yet delivered or dead.
	Pending() int64
	// Close stops writes and releases the store.
	Close() error
}

// UpstreamSettings are what a store needs to know of an upstream it queues
// deliveries for.
type UpstreamSettings struct {
	// AttemptTimeout bounds one attempt: a store shared by instances hands
	// a lease held longer (plus a margin) to another instance.
	AttemptTimeout time.Duration
}

// Claimed is what one Claim leased.
type Claimed struct {
	// Tasks are the leased deliveries, in due order.
	Tasks []Task
	// Next, when HasNext, is when to claim again unless notified sooner:
	// the due time of the first delivery left unleased (at or before now
	// when the limit ended the claim), or, from a store that keeps due times
	// to itself, its next look. Without it nothing is queued.
	Next    time.Time
	HasNext bool
}

// Queue is the delivery path: deliveries are claimed (leased) when due,
// attempted, and settled. A leased delivery is not claimed again until its
// lease ends, so the claimer keeps no list of its own.
type Queue interface {
	// Configure starts delivery on this instance, or changes it when the
	// running configuration changes: the upstreams delivered to and their
	// settings, and notify, told an upstream's name when work for it is
	// queued, so that it is claimed at once rather than at Claimed.Next.
	Configure(upstreams map[string]UpstreamSettings, notify func(upstream string)) error
	// Claim leases up to limit deliveries to upstream that are due at now,
	// in due order, leaving out those leased already.
	Claim(ctx context.Context, upstream string, now time.Time, limit int) (Claimed, error)
	// Settle durably records an attempt's outcome and ends the delivery's
	// lease. When it fails, the attempt may be unrecorded and the lease may
	// remain: Release ends it once the delivery may be claimed again.
	Settle(ctx context.Context, o Outcome) error
	// Release ends a lease without an attempt (a stopping engine's): the
	// delivery may be claimed again as it was. A key not leased is ignored.
	Release(k DeliveryKey)
	// Replay makes the matching finished deliveries pending again, at most
	// filter.Limit of them, and returns how many and where to resume.
	Replay(ctx context.Context, filter ReplayFilter) (ReplayResult, error)
	// QueuedUpstreams names the upstreams that have pending deliveries.
	QueuedUpstreams() ([]string, error)
	Pauses
}

// Pause is an upstream's pause as stored. A resumed upstream keeps its
// record, Paused false, so that Since tells when it runs again.
type Pause struct {
	Paused bool `json:"paused"`
	// Since is when the upstream was paused, or resumed.
	Since time.Time `json:"since"`
}

// PauseTable is a store's in-memory copy of its pause records, read by
// every claim; the store keeps them durably itself.
type PauseTable struct {
	mu sync.RWMutex
	m  map[string]Pause
}

// NewPauseTable holds the records a store read when it opened.
func NewPauseTable(records map[string]Pause) *PauseTable {
	if records == nil {
		records = map[string]Pause{}
	}
	return &PauseTable{m: records}
}

// Of returns upstream's record; the zero Pause when it has none.
func (t *PauseTable) Of(upstream string) Pause {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[upstream]
}

// All returns a copy of every record.
func (t *PauseTable) All() map[string]Pause {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.m)
}

// Set keeps upstream's record and returns the one it replaced.
func (t *PauseTable) Set(upstream string, p Pause) (was Pause) {
	t.mu.Lock()
	defer t.mu.Unlock()
	was, t.m[upstream] = t.m[upstream], p
	return was
}

// Pauses keeps which upstreams are paused: durably, so a pause survives a
// restart, and for every instance that shares the store. A paused upstream's
// deliveries stay queued and are not claimed.
type Pauses interface {
	// SetPaused pauses or resumes upstream and returns its record. Pausing
	// a paused upstream (or resuming a running one) changes nothing. A
	// resume tells Configure's notify, here and on every instance, so that
	// the waiting deliveries are claimed at once.
	SetPaused(ctx context.Context, upstream string, paused bool) (Pause, error)
	// PauseOf returns upstream's record, the zero Pause when it was never
	// paused. It reads memory: the engine asks before every claim.
	PauseOf(upstream string) Pause
	// Pauses returns every upstream's record, by name.
	Pauses() map[string]Pause
}

// Sweeper is a store that deletes what retention no longer keeps when it is
// asked to. A store whose data expires by itself (JetStream's MaxAge and key
// TTLs, set from the retention when it is opened) is not one.
type Sweeper interface {
	// Sweep deletes events received before cutoff whose deliveries are all
	// finished, and dedup keys that expired, in transactions of at most batch
	// events; it returns how many events it deleted.
	Sweep(ctx context.Context, cutoff time.Time, batch int) (int, error)
}

// LearnedSecret is a secret a provider's handshake established (Asana's
// X-Hook-Secret), for one scope.
type LearnedSecret struct {
	// Scope names the endpoint the secret belongs to: the source's name and
	// public address, so that two sites sharing a store never share one.
	Scope     string    `json:"scope"`
	Source    string    `json:"source"`
	Secret    string    `json:"secret"`
	LearnedAt time.Time `json:"learned_at"`
}

// SecretStore keeps learned secrets, at most one per scope, with no expiry.
type SecretStore interface {
	// LearnedSecret returns the secret learned for scope, or nil.
	LearnedSecret(scope string) (*LearnedSecret, error)
	// LearnSecret durably stores s unless its scope has a secret already,
	// as one atomic step, and reports whether this call stored it: of
	// concurrent calls for one scope, on any instance, exactly one wins.
	LearnSecret(ctx context.Context, s LearnedSecret) (bool, error)
	// LearnedSecrets lists every learned secret, ordered by scope.
	LearnedSecrets() ([]LearnedSecret, error)
	// RevokeSecret deletes the secret learned for scope and reports whether
	// there was one; a later handshake may establish a new one.
	RevokeSecret(ctx context.Context, scope string) (bool, error)
}

// Cursor is where a source's reconciliation got to: every event the
// provider created before Through was listed, and what the gateway lacked
// is stored. It moves only after that.
type Cursor struct {
	Through time.Time `json:"through"`
	// LastRun is when the last run ended, and Outcome what it did.
	LastRun time.Time `json:"last_run"`
	Outcome string    `json:"outcome"`
}

// Cursors keep each source's reconciliation cursor, one per scope, without
// expiry, shared by every instance of a store; Seen tells reconciliation
// whether the gateway has an event.
type Cursors interface {
	// Seen reports whether source stored an event with this dedup key
	// within its dedup window.
	Seen(source, dedupKey string) (bool, error)
	// Cursor returns the cursor of scope, or the zero Cursor.
	Cursor(scope string) (Cursor, error)
	// SetCursor durably stores c for scope.
	SetCursor(ctx context.Context, scope string, c Cursor) error
}

// Inspector is what the admin API and metrics read from a store.
type Inspector interface {
	// Path names the store: its file, or its JetStream stream and servers.
	Path() string
	// List returns events matching f, newest first, and where to resume.
	List(f ListFilter) ([]EventSummary, *ID, error)
	// Cancel ends an event's pending deliveries and returns how many.
	Cancel(ctx context.Context, id ID) (int, error)
	// Stats counts events and deliveries by state.
	Stats() (Stats, error)
	// OldestPending returns the receive time of the oldest pending event.
	OldestPending() (time.Time, bool)
	// OldestPendingByUpstream returns, by upstream, the receive time of the
	// oldest pending delivery's event, reading only the queues.
	OldestPendingByUpstream() (map[string]time.Time, error)
	// Timeline counts received events and attempts per minute since since.
	Timeline(since time.Time) ([]TimelinePoint, bool, error)
}

// Backend is a complete store: the ingest and delivery paths and the
// operator's view of them.
type Backend interface {
	Store
	Inspector
}

// ReplayFilter selects deliveries to replay.
type ReplayFilter struct {
	// Event limits the replay to one event.
	Event *ID
	// Source and Upstream, when set, must match.
	Source   string
	Upstream string
	// States are the states replayed; empty means dead only.
	States []State
	// Since and Until bound the events' receive time.
	Since, Until time.Time
	// After resumes a bulk replay after this event.
	After *ID
	// Limit bounds the deliveries replayed in one call (default 1000).
	Limit int
	// DryRun counts what the replay would touch and changes nothing.
	DryRun bool
}

// ReplayResult says what a replay did.
type ReplayResult struct {
	Replayed  int
	Upstreams []string
	// ByUpstream counts the deliveries replayed (or, in a dry run, that
	// would be) per upstream; Sample is up to SampleSize of their events.
	ByUpstream map[string]int
	Sample     []ID
	// Next is where to resume; nil when the scan reached the end.
	Next *ID
}

// TraceID is the W3C trace id of the span that ingested the event, from
// its stored traceparent; empty when the request was not traced.
func (e *Event) TraceID() string {
	parts := strings.Split(e.Trace["traceparent"], "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return ""
	}
	return parts[1]
}

// SampleSize bounds ReplayResult.Sample.
const SampleSize = 10

// Count notes one delivery of event id to upstream in a replay's result.
func (r *ReplayResult) Count(id ID, upstream string) {
	r.Replayed++
	if r.ByUpstream == nil {
		r.ByUpstream = map[string]int{}
	}
	r.ByUpstream[upstream]++
	if len(r.Sample) < SampleSize && !slices.Contains(r.Sample, id) {
		r.Sample = append(r.Sample, id)
	}
}

// DiskUsage is a file store's footprint and its file system's room.
type DiskUsage struct {
	// DB and Bodies are the bytes of the store's file and of its body
	// segments.
	DB, Bodies int64
	// Log is the bytes of its write-ahead log's segments: events ACKed
	// and not yet applied, and the zeros written ahead of the next.
	Log int64
	// Free and Size are the file system's bytes available to the store's
	// user, and in all.
	Free, Size int64
}

// DiskUser is a store on a local file system that can say its DiskUsage.
type DiskUser interface {
	DiskUsage() (DiskUsage, error)
}
