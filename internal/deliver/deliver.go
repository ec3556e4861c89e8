// Package deliver sends stored events to their upstreams: one lane per
// upstream with its own concurrency, retries with backoff, and the outcome
// of every attempt recorded in the store.
package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/hookgate/hookgate/internal/store"
)

// Upstream is a delivery destination as the engine runs it.
type Upstream struct {
	Name        string
	URL         *url.URL
	Timeout     time.Duration
	Concurrency int
	Retry       RetryPolicy
	// Rate bounds attempts per second (0 = unbounded); Burst is the bucket size.
	Rate  float64
	Burst int
	// Breaker stops attempts to an upstream that keeps failing.
	Breaker BreakerPolicy
	// Sign, when set, re-signs each delivery request for the backend;
	// SignID names how, so two configurations can be compared.
	Sign   SignFunc `json:"-"`
	SignID string
	// Headers are set on every delivery request, before a route's shaping;
	// they may carry credentials, so they are never logged.
	Headers map[string]string
	// Transport, when set, carries the upstream's requests (Caddy's
	// reverse_proxy HTTP transport, with its TLS trust, client certificate
	// and proxy); nil uses the engine's own. TransportID names its
	// configuration, so two configurations can be compared.
	Transport   http.RoundTripper `json:"-"`
	TransportID string
	// HostFromURL sends the URL's host as Host instead of the public host
	// the event arrived on (which X-Forwarded-Host still carries): a forward
	// proxy takes a plain-http request to the host its Host names.
	HostFromURL bool
	// ExactURL sends every request to URL as it is, without the event's
	// path and query: an alert target's URL is the whole address (and its
	// path may be its credential, as a Slack webhook's is).
	ExactURL bool
	// CredentialPath marks a URL whose path is a credential (a Slack or
	// Teams webhook's): errors, logged and stored, name only its scheme
	// and host.
	CredentialPath bool
}

// RetryPolicy says how failed attempts are retried.
type RetryPolicy struct {
	MaxAttempts     int
	InitialInterval time.Duration
	MaxInterval     time.Duration
	// MaxAge gives up once the event (or its last replay) is this old; 0 never.
	MaxAge time.Duration
	// RetryOn says which failures are retried; the zero value means
	// DefaultRetryOn.
	RetryOn RetryOn
}

// RetryOn says which failures are retried.
type RetryOn struct {
	Codes    map[int]bool
	Class4xx bool
	Class5xx bool
	Network  bool
}

// DefaultRetryOn retries 408, 429, 5xx and network errors (timeouts included).
var DefaultRetryOn = RetryOn{Codes: map[int]bool{408: true, 429: true}, Class5xx: true, Network: true}

// ParseRetryOn reads a list of status codes, "4xx", "5xx" and "network".
func ParseRetryOn(items []string) (RetryOn, error) {
	r := RetryOn{Codes: map[int]bool{}}
	for _, item := range items {
		switch item {
		case "4xx":
			r.Class4xx = true
		case "5xx":
			r.Class5xx = true
		case "network":
			r.Network = true
		default:
			code, err := strconv.Atoi(item)
			if err != nil || code < 100 || code > 599 {
				return RetryOn{}, fmt.Errorf("retry_on: %q is not a status code, 4xx, 5xx or network", item)
			}
			r.Codes[code] = true
		}
	}
	return r, nil
}

func (r RetryOn) isZero() bool { return len(r.Codes) == 0 && !r.Class4xx && !r.Class5xx && !r.Network }

// Retries reports whether a failed attempt is retried.
func (r RetryOn) Retries(err error, status int) bool {
	if r.isZero() {
		r = DefaultRetryOn
	}
	switch {
	case err != nil:
		return r.Network
	case r.Codes[status]:
		return true
	case status >= 500:
		return r.Class5xx
	case status >= 400:
		return r.Class4xx
	}
	return false
}

// Options configure an Engine.
type Options struct {
	Logger *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, 1); nil means math/rand.
	Jitter func() float64
	// StopGrace is how long Stop lets in-flight attempts finish.
	StopGrace time.Duration
	// OnAttempt, when set, is told each attempt's upstream, outcome
	// (delivered, retry, dead) and duration, for metrics.
	OnAttempt func(upstream, outcome string, took time.Duration)
	// OnDead, when set, is told of each delivery that went dead, once its
	// outcome is recorded, with the reason; it must not block.
	OnDead func(upstream string, ev *store.Event, reason string)
	// OnBreakerOpen, when set, is told when an upstream's breaker opens
	// from closed (not when a failed probe keeps it open); it must not block.
	OnBreakerOpen func(upstream string)
	// Sweeper, when set, deletes finished events past the retention; a
	// store whose data expires by itself needs none.
	Sweeper store.Sweeper
	// TracerProvider, when set, returns the provider that records the
	// spans of attempts of traced events; nil, or a nil result, means
	// OpenTelemetry's global provider. A function, because the provider
	// may be known only once a traced request has come in.
	TracerProvider func() trace.TracerProvider
}

// Engine runs deliveries for one store. Exactly one engine exists per store,
// so overlapping configurations (a reload) never run two sets of workers.
type Engine struct {
	store     store.Queue
	sweep     store.Sweeper
	log       *zap.Logger
	now       func() time.Time
	jitter    func() float64
	grace     time.Duration
	onAttempt func(upstream, outcome string, took time.Duration)
	onDead    func(upstream string, ev *store.Event, reason string)
	onOpen    func(upstream string)
	tracing   func() trace.TracerProvider

	ctx    context.Context // canceled when Stop's grace runs out
	cancel context.CancelFunc

	mu          sync.Mutex
	generations []generation
	lanes       map[string]*lane
	stopped     bool
	retention   time.Duration
	sweeperDone chan struct{}
}

type generation struct {
	owner     any
	upstreams map[string]Upstream
}

// New returns an engine for the deliveries q queues. It delivers nothing
// until Activate.
func New(q store.Queue, opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		store: q, sweep: opts.Sweeper, log: opts.Logger, now: opts.Now, jitter: opts.Jitter, grace: opts.StopGrace, onAttempt: opts.OnAttempt,
		onDead: opts.OnDead, onOpen: opts.OnBreakerOpen, tracing: opts.TracerProvider,
		ctx: ctx, cancel: cancel, lanes: map[string]*lane{}, sweeperDone: make(chan struct{}),
	}
	if e.sweep == nil {
		close(e.sweeperDone)
	} else {
		go e.sweeper()
	}
	return e
}

// SetRetention sets how long finished events are kept; 0 keeps them.
func (e *Engine) SetRetention(d time.Duration) {
	e.mu.Lock()
	e.retention = d
	e.mu.Unlock()
}

// Sweep intervals: the first soon after start, then regularly.
const (
	firstSweep = time.Minute
	sweepEvery = 10 * time.Minute
	sweepBatch = 500
)

// sweeper deletes finished events past retention, in bounded transactions.
func (e *Engine) sweeper() {
	defer close(e.sweeperDone)
	timer := time.NewTimer(firstSweep)
	defer timer.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-timer.C:
		}
		e.SweepNow()
		timer.Reset(sweepEvery)
	}
}

// SweepNow runs one retention sweep and returns how many events it deleted.
func (e *Engine) SweepNow() int {
	e.mu.Lock()
	retention := e.retention
	e.mu.Unlock()
	if retention <= 0 || e.sweep == nil {
		return 0
	}
	n, err := e.sweep.Sweep(e.ctx, e.now().Add(-retention), sweepBatch)
	if err != nil && e.ctx.Err() == nil {
		e.log.Error("retention sweep", zap.Error(err))
	}
	if n > 0 {
		e.log.Info("retention sweep", zap.Int("events_deleted", n), zap.Duration("retention", retention))
	}
	return n
}

// Activate makes owner's upstreams the running configuration. The most
// recent active owner wins; Deactivate falls back to the one before, so a
// failed reload leaves the old configuration running.
func (e *Engine) Activate(owner any, upstreams map[string]Upstream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removeGeneration(owner)
	e.generations = append(e.generations, generation{owner: owner, upstreams: upstreams})
	e.apply()
	e.warnOrphans(upstreams)
}

// warnOrphans logs pending work for upstreams the configuration no longer
// names: it stays queued, and resumes if the upstream comes back.
func (e *Engine) warnOrphans(upstreams map[string]Upstream) {
	queued, err := e.store.QueuedUpstreams()
	if err != nil {
		e.log.Error("listing queued upstreams", zap.Error(err))
		return
	}
	for _, name := range queued {
		if _, ok := upstreams[name]; !ok {
			e.log.Warn("pending deliveries wait for an upstream the configuration does not define",
				zap.String("upstream", name))
		}
	}
}

// Deactivate withdraws owner's configuration.
func (e *Engine) Deactivate(owner any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removeGeneration(owner)
	e.apply()
}

func (e *Engine) removeGeneration(owner any) {
	for i, g := range e.generations {
		if g.owner == owner {
			e.generations = append(e.generations[:i], e.generations[i+1:]...)
			return
		}
	}
}

// apply pauses lanes the running configuration lacks and (re)configures the
// rest. Lanes are paused, never removed, so a lane's in-flight attempts stay
// known to it across reloads. Called with e.mu held.
func (e *Engine) apply() {
	if e.stopped {
		return
	}
	var want map[string]Upstream
	if n := len(e.generations); n > 0 {
		want = e.generations[n-1].upstreams
	}
	for name, l := range e.lanes {
		if _, ok := want[name]; !ok {
			l.configure(nil)
		}
	}
	if len(want) > 0 {
		settings := make(map[string]store.UpstreamSettings, len(want))
		for name, up := range want {
			settings[name] = store.UpstreamSettings{AttemptTimeout: up.Timeout}
		}
		if err := e.store.Configure(settings, e.Notify); err != nil {
			e.log.Error("configuring the store's delivery", zap.Error(err))
		}
	}
	for name, up := range want {
		l, ok := e.lanes[name]
		if !ok {
			l = newLane(e, name)
			e.lanes[name] = l
			go l.run()
		}
		u := up
		l.configure(&u)
	}
}

// BreakerState returns the circuit state of an upstream's lane.
func (e *Engine) BreakerState(upstream string) string {
	e.mu.Lock()
	l := e.lanes[upstream]
	e.mu.Unlock()
	if l == nil {
		return BreakerClosed
	}
	return l.breaker.State()
}

// Replay makes finished deliveries pending again and wakes their lanes.
func (e *Engine) Replay(ctx context.Context, f store.ReplayFilter) (store.ReplayResult, error) {
	res, err := e.store.Replay(ctx, f)
	for _, u := range res.Upstreams {
		e.Notify(u)
	}
	return res, err
}

// SetPaused pauses or resumes an upstream, durably and (with a shared store)
// on every instance. A paused upstream's deliveries stay queued and are not
// claimed, so they burn no attempts; attempts under way when it is paused
// finish. A resume wakes the lane at once.
func (e *Engine) SetPaused(ctx context.Context, upstream string, paused bool) (store.Pause, error) {
	p, err := e.store.SetPaused(ctx, upstream, paused)
	if err == nil && !paused {
		e.Notify(upstream) // the store notifies too; a second poke is free
	}
	return p, err
}

// Notify tells the lane for upstream that new work may be due.
func (e *Engine) Notify(upstream string) {
	e.mu.Lock()
	l := e.lanes[upstream]
	e.mu.Unlock()
	if l != nil {
		l.poke()
	}
}

// Stop stops dispatching, lets in-flight attempts finish within the grace
// period, then cancels the rest; canceled attempts stay queued unrecorded.
func (e *Engine) Stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	lanes := make([]*lane, 0, len(e.lanes))
	for _, l := range e.lanes {
		lanes = append(lanes, l)
	}
	e.mu.Unlock()
	for _, l := range lanes {
		close(l.stop)
	}
	done := make(chan struct{})
	go func() {
		for _, l := range lanes {
			<-l.done
			l.inflight.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(e.grace):
		e.cancel()
		<-done
	}
	e.cancel()
	<-e.sweeperDone
}

// lane delivers to one upstream.
type lane struct {
	e      *Engine
	name   string
	client *http.Client
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	cfg      *Upstream // nil while paused
	busy     int       // attempts under way
	inflight sync.WaitGroup
	limiter  *rate.Limiter
	breaker  *breaker
}

func newLane(e *Engine, name string) *lane {
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// The backend gets the provider's headers, not an Accept-Encoding of our own.
		DisableCompression: true,
		ForceAttemptHTTP2:  true,
	}
	return &lane{
		e:    e,
		name: name,
		client: &http.Client{
			Transport:     transport,
			CheckRedirect: noRedirects,
		},
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		limiter: rate.NewLimiter(rate.Inf, 1),
		breaker: newBreaker(BreakerPolicy{}),
	}
}

// clientFor is the client an attempt uses: the lane's, or one over the
// upstream's own transport. Redirects are answers either way.
func (l *lane) clientFor(cfg Upstream) *http.Client {
	if cfg.Transport == nil {
		return l.client
	}
	return &http.Client{Transport: cfg.Transport, CheckRedirect: noRedirects}
}

// noRedirects makes a redirect an answer, not an instruction to send the
// event elsewhere.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (l *lane) configure(u *Upstream) {
	l.mu.Lock()
	l.cfg = u
	if u != nil {
		limit, burst := rate.Inf, 1
		if u.Rate > 0 {
			limit, burst = rate.Limit(u.Rate), max(u.Burst, 1)
		}
		if l.limiter.Limit() != limit || l.limiter.Burst() != burst {
			l.limiter.SetLimit(limit)
			l.limiter.SetBurst(burst)
		}
		l.breaker.setPolicy(u.Breaker)
	}
	l.mu.Unlock()
	l.poke()
}

func (l *lane) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// idlePoll bounds how long a lane sleeps without a wake-up, as a safety net.
const idlePoll = 30 * time.Second

// clockSlack is how far past MaxInterval a due time may lie before the lane
// takes it for a wall clock that went back.
const clockSlack = time.Second

func (l *lane) run() {
	defer close(l.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := l.dispatch()
		timer.Reset(wait)
		select {
		case <-l.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
		case <-l.stop:
			return
		}
	}
}

// dispatch starts the due deliveries there is room for and returns how long
// to sleep before looking again.
func (l *lane) dispatch() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg == nil {
		return idlePoll
	}
	if l.e.store.PauseOf(l.name).Paused {
		return idlePoll // a resume pokes the lane
	}
	cfg := *l.cfg
	free := cfg.Concurrency - l.busy
	if free <= 0 {
		return idlePoll // a finishing attempt pokes the lane
	}
	now := l.e.now()
	allowed, wait := l.breaker.allow(now, free)
	if allowed == 0 {
		return min(wait, idlePoll)
	}
	if cfg.Rate > 0 {
		tokens := int(l.limiter.TokensAt(time.Now()))
		if tokens < 1 {
			l.breaker.release()
			r := l.limiter.Reserve()
			delay := r.Delay()
			r.Cancel()
			return max(delay, time.Millisecond)
		}
		allowed = min(allowed, tokens)
	}
	claimed, err := l.claim(cfg, now, allowed)
	if err != nil {
		l.breaker.release()
		l.e.log.Error("reading due deliveries", zap.String("upstream", l.name), zap.Error(err))
		return time.Second
	}
	if len(claimed.Tasks) == 0 {
		l.breaker.release()
	}
	for _, t := range claimed.Tasks {
		if cfg.Rate > 0 {
			l.limiter.Allow()
		}
		l.busy++
		l.inflight.Add(1)
		go l.attempt(cfg, t)
	}
	if len(claimed.Tasks) == allowed {
		if allowed < free {
			return time.Millisecond // more may be allowed soon: rate or probe
		}
		return idlePoll
	}
	if !claimed.HasNext {
		return idlePoll
	}
	if farAhead(cfg, now, claimed.Next) {
		return time.Millisecond // due now as well, as below
	}
	return min(max(claimed.Next.Sub(now), 0), idlePoll)
}

// claim leases up to limit due deliveries. When none is due but the next
// lies further ahead than farAhead allows, that one is due now.
func (l *lane) claim(cfg Upstream, now time.Time, limit int) (store.Claimed, error) {
	claimed, err := l.e.store.Claim(l.e.ctx, l.name, now, limit)
	if err == nil && len(claimed.Tasks) == 0 && claimed.HasNext && farAhead(cfg, now, claimed.Next) {
		claimed, err = l.e.store.Claim(l.e.ctx, l.name, claimed.Next, limit)
	}
	return claimed, err
}

// farAhead reports a due time that only a wall clock gone back explains. No
// delay the engine schedules exceeds MaxInterval (Retry-After is capped at
// it), so a delivery due further ahead was scheduled before the clock went
// back (or max_interval was lowered): it is due now.
func farAhead(cfg Upstream, now, next time.Time) bool {
	return next.Sub(now) > cfg.Retry.MaxInterval+clockSlack
}

// finish ends an attempt and lets the lane look for more work.
func (l *lane) finish() {
	l.mu.Lock()
	l.busy--
	l.mu.Unlock()
	l.inflight.Done()
	l.poke()
}

// responseSnippet bounds how much of an upstream's answer is kept.
const responseSnippet = 1024

// snippetBuffers hold the start of a response while it is read.
var snippetBuffers = sync.Pool{New: func() any { return new([responseSnippet]byte) }}

func (l *lane) attempt(cfg Upstream, t store.Task) {
	defer l.finish()
	n := t.Delivery.Attempts + 1
	ctx, cancel := context.WithTimeout(l.e.ctx, cfg.Timeout)
	defer cancel()
	ctx, span := l.e.traceAttempt(ctx, l.name, t, n)
	defer span.End() // ended with its outcome below, unless shutting down
	var req *http.Request
	var err error
	if t.EventErr != nil {
		err = fmt.Errorf("%w: %w", errUnreadableEvent, t.EventErr)
	} else {
		req, err = buildRequest(ctx, cfg, t, n)
	}
	if err == nil && cfg.Sign != nil {
		err = cfg.Sign(req, t.Event, l.e.now())
	}
	start := l.e.now()
	attempt := store.Attempt{N: n, At: start}
	var resp *http.Response
	if err == nil {
		resp, err = l.clientFor(cfg).Do(req)
	}
	if err != nil && l.e.ctx.Err() != nil {
		l.e.store.Release(t.Delivery.Key) // shutting down: the delivery stays queued as it was
		return
	}
	var retryAfter time.Duration
	if err != nil {
		err = redactURLError(err, cfg.CredentialPath)
		attempt.Error = err.Error()
	} else {
		attempt.Status = resp.StatusCode
		buf := snippetBuffers.Get().(*[responseSnippet]byte)
		n, _ := io.ReadFull(resp.Body, buf[:])
		attempt.Response = string(buf[:n])
		snippetBuffers.Put(buf)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), l.e.now())
	}
	attempt.Duration = l.e.now().Sub(start)
	outcome := store.Outcome{Key: t.Delivery.Key}
	outcome.Next, outcome.RetryAt, attempt.Error = l.e.decide(cfg.Retry, t, n, err, attempt, retryAfter, l.e.store.PauseOf(l.name))
	outcome.Attempt = attempt
	endAttemptSpan(span, attempt, outcome.Next)
	// Only failures the upstream causes count against it: a 4xx answer is
	// the upstream working as designed.
	if t.EventErr != nil {
		l.breaker.release() // the upstream was not asked
	} else if l.breaker.record(l.e.now(), err == nil && attempt.Status < 500 && attempt.Status != http.StatusTooManyRequests) && l.e.onOpen != nil {
		l.e.onOpen(l.name)
	}
	fields := []zap.Field{
		zap.String("event_id", t.Event.ID.String()), zap.String("upstream", l.name),
		zap.Int("attempt", n), zap.Int("status", attempt.Status), zap.Duration("duration", attempt.Duration),
		zap.String("outcome", string(outcome.Next)),
	}
	if attempt.Error != "" {
		fields = append(fields, zap.String("error", attempt.Error))
	}
	switch {
	case outcome.Next == store.StateDead:
		l.e.log.Warn("delivery dead", fields...)
	case outcome.Next == store.StatePending:
		l.e.log.Info("delivery attempt failed; will retry", append(fields, zap.Time("retry_at", outcome.RetryAt))...)
	default:
		l.e.log.Info("delivery attempt", fields...)
	}
	if l.e.onAttempt != nil {
		result := map[store.State]string{store.StateDelivered: "delivered", store.StatePending: "retry", store.StateDead: "dead"}[outcome.Next]
		l.e.onAttempt(l.name, result, attempt.Duration)
	}
	if err := l.e.store.Settle(context.Background(), outcome); err != nil {
		// The delivery stays queued under its old due time and is retried,
		// after a pause: it is due at once, and the store may fail every
		// write for a while (disk full, read-only).
		l.e.log.Error("recording delivery outcome", zap.String("event_id", t.Event.ID.String()), zap.Error(err))
		select {
		case <-time.After(recordPause):
		case <-l.stop:
		}
		l.e.store.Release(t.Delivery.Key)
		return
	}
	if outcome.Next == store.StateDead && l.e.onDead != nil {
		l.e.onDead(l.name, t.Event, attempt.Error)
	}
}

// recordPause is how long a delivery whose outcome could not be recorded
// waits before it is attempted again.
const recordPause = 5 * time.Second

// errUnreadableEvent marks an attempt that failed before its request
// because the stored event could not be read.
var errUnreadableEvent = errors.New("reading the stored event")

// decide turns an attempt's result into the delivery's next state: done,
// retried at a time, or dead with the reason in the attempt's error. pause
// is the upstream's pause record: max_age counts from the later of the
// event's arrival, the delivery's last replay and the upstream's last
// resume, so time spent paused never makes a delivery dead.
func (e *Engine) decide(p RetryPolicy, t store.Task, n int, err error, a store.Attempt, retryAfter time.Duration, pause store.Pause) (store.State, time.Time, string) {
	if err == nil && a.Status >= 200 && a.Status < 300 {
		return store.StateDelivered, time.Time{}, a.Error
	}
	// A stored event that could not be read is retried whatever retry_on
	// says: the upstream did not fail, and the read may succeed later.
	if !p.RetryOn.Retries(err, a.Status) && !errors.Is(err, errUnreadableEvent) {
		if err != nil {
			return store.StateDead, time.Time{}, a.Error
		}
		return store.StateDead, time.Time{}, fmt.Sprintf("final status %d", a.Status)
	}
	if used := n - t.Delivery.RetryBase; used >= p.MaxAttempts {
		return store.StateDead, time.Time{}, fmt.Sprintf("%s; gave up after %d attempts", describe(a), used)
	}
	now := e.now()
	retryAt := now.Add(Backoff(p, n-t.Delivery.RetryBase, retryAfter, e.jitter()))
	if p.MaxAge > 0 {
		started := t.Event.ReceivedAt
		if t.Delivery.ReplayedAt.After(started) {
			started = t.Delivery.ReplayedAt
		}
		if !pause.Paused && pause.Since.After(started) {
			started = pause.Since
		}
		if retryAt.Sub(started) > p.MaxAge {
			return store.StateDead, time.Time{}, fmt.Sprintf("%s; gave up: older than max_age %s", describe(a), p.MaxAge)
		}
	}
	return store.StatePending, retryAt, a.Error
}

func describe(a store.Attempt) string {
	if a.Error != "" {
		return a.Error
	}
	return fmt.Sprintf("status %d", a.Status)
}

// Backoff returns the wait before the retry that follows attempt n: a random
// point between the initial interval and an exponentially growing ceiling
// (initial × 2^(n-1), capped at the maximum), never shorter than the
// upstream's Retry-After, never longer than the maximum.
func Backoff(p RetryPolicy, n int, retryAfter time.Duration, jitter float64) time.Duration {
	ceiling := p.MaxInterval
	if n-1 < 40 {
		if c := p.InitialInterval << (n - 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	d := p.InitialInterval + time.Duration(jitter*float64(ceiling-p.InitialInterval))
	if retryAfter > d {
		d = retryAfter
	}
	return min(d, p.MaxInterval)
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// hopHeaders are dropped on delivery, as a proxy drops them.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length",
}

func buildRequest(ctx context.Context, cfg Upstream, t store.Task, attempt int) (*http.Request, error) {
	ev, d := t.Event, t.Delivery
	target := *cfg.URL
	target.Path, target.RawPath = joinPath(cfg.URL.Path, ev.Path), ""
	if d.Path != "" {
		// A route's rewrite is stored escaped, each value one segment: keep
		// that escaping rather than escape it a second time.
		raw := joinPath(cfg.URL.EscapedPath(), d.Path)
		unescaped, err := url.PathUnescape(raw)
		if err != nil {
			return nil, fmt.Errorf("route path %q: %w", d.Path, err)
		}
		target.Path, target.RawPath = unescaped, raw
	}
	switch {
	case cfg.URL.RawQuery == "":
		target.RawQuery = ev.RawQuery
	case ev.RawQuery != "":
		target.RawQuery = cfg.URL.RawQuery + "&" + ev.RawQuery
	}
	if cfg.ExactURL {
		target = *cfg.URL
	}
	body := ev.Body
	if d.Transformed {
		body = t.Body
	}
	req, err := http.NewRequestWithContext(ctx, ev.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header = ev.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, name := range req.Header.Values("Connection") {
		for field := range strings.SplitSeq(name, ",") {
			req.Header.Del(strings.TrimSpace(field))
		}
	}
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	setForwarded(req, ev, !cfg.HostFromURL)
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	for _, h := range d.RemoveHeaders {
		req.Header.Del(h)
	}
	for k, v := range d.SetHeaders {
		req.Header.Set(k, v)
	}
	if d.Transformed {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Del("Content-Encoding")
	}
	id := ev.ID.String()
	req.Header.Set("Hookgate-Event-Id", id)
	req.Header.Set("Hookgate-Attempt", strconv.Itoa(attempt))
	req.Header.Set("Hookgate-Source", ev.Source)
	req.Header.Set("Idempotency-Key", id)
	setTraceHeaders(ctx, req.Header)
	req.ContentLength = int64(len(body))
	return req, nil
}

// redactURLError hides what a URL in a client error may carry in the
// clear: a password and query values (tokens, API keys) of the upstream's
// URL or of the request's own query, and the whole path and query when the
// path is a credential. The error is logged and stored.
func redactURLError(err error, credentialPath bool) error {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return err
	}
	u, perr := url.Parse(urlErr.URL)
	if perr != nil {
		return errors.New("request failed: " + errors.Unwrap(urlErr).Error())
	}
	if credentialPath {
		return &url.Error{Op: urlErr.Op, URL: u.Scheme + "://" + u.Host + "/…", Err: urlErr.Err}
	}
	return &url.Error{Op: urlErr.Op, URL: RedactURL(u), Err: urlErr.Err}
}

// RedactURL shows a URL without its password and with every query value
// replaced, keeping the names so that a reader can still tell them apart.
func RedactURL(u *url.URL) string {
	r := *u
	if r.User != nil {
		r.User = url.User(r.User.Username())
	}
	if r.RawQuery != "" {
		q := r.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = "REDACTED"
			}
			q[k] = vs
		}
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// setForwarded sets X-Forwarded-For, -Host and -Proto as reverse_proxy
// does: a trusted proxy's values are extended, anyone else's are replaced,
// so a sender cannot make the backend believe it came from elsewhere.
// publicHost also sends the event's host as Host, as reverse_proxy does.
func setForwarded(req *http.Request, ev *store.Event, publicHost bool) {
	if !ev.ViaTrustedProxy {
		for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
			req.Header.Del(h)
		}
	}
	if ev.Host != "" {
		if publicHost {
			req.Host = ev.Host
		}
		if req.Header.Get("X-Forwarded-Host") == "" {
			req.Header.Set("X-Forwarded-Host", ev.Host)
		}
	}
	if ip, _, err := net.SplitHostPort(ev.RemoteAddr); err == nil {
		if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
			ip = prior + ", " + ip
		}
		req.Header.Set("X-Forwarded-For", ip)
	}
	if ev.Proto != "" && req.Header.Get("X-Forwarded-Proto") == "" {
		req.Header.Set("X-Forwarded-Proto", ev.Proto)
	}
}

func joinPath(base, p string) string {
	switch {
	case base == "" || base == "/":
		return p
	case strings.HasSuffix(base, "/") && strings.HasPrefix(p, "/"):
		return base + p[1:]
	case !strings.HasSuffix(base, "/") && !strings.HasPrefix(p, "/"):
		return base + "/" + p
	}
	return base + p
}
