// Package deliver sends stored events to their upstreams: one lane per
// upstream with its own concurrency, retries with backoff, and the outcome
// of every attempt recorded in the store.
package deliver

import (
	"bytes"
	"context"
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

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/store"
)

// Upstream is a delivery destination as the engine runs it.
type Upstream struct {
	Name        string
	URL         *url.URL
	Timeout     time.Duration
	Concurrency int
	Retry       RetryPolicy
}

// RetryPolicy says how failed attempts are retried.
type RetryPolicy struct {
	MaxAttempts     int
	InitialInterval time.Duration
	MaxInterval     time.Duration
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
}

// Engine runs deliveries for one store. Exactly one engine exists per store,
// so overlapping configurations (a reload) never run two sets of workers.
type Engine struct {
	store  store.Store
	log    *zap.Logger
	now    func() time.Time
	jitter func() float64
	grace  time.Duration

	ctx    context.Context // canceled when Stop's grace runs out
	cancel context.CancelFunc

	mu          sync.Mutex
	generations []generation
	lanes       map[string]*lane
	stopped     bool
}

type generation struct {
	owner     any
	upstreams map[string]Upstream
}

// New returns an engine for st. It delivers nothing until Activate.
func New(st store.Store, opts Options) *Engine {
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
	return &Engine{
		store: st, log: opts.Logger, now: opts.Now, jitter: opts.Jitter, grace: opts.StopGrace,
		ctx: ctx, cancel: cancel, lanes: map[string]*lane{},
	}
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
	taken    map[store.DeliveryKey]struct{}
	inflight sync.WaitGroup
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
			Transport: transport,
			// A redirect is an answer, not an instruction to send the event elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		taken: map[store.DeliveryKey]struct{}{},
	}
}

func (l *lane) configure(u *Upstream) {
	l.mu.Lock()
	l.cfg = u
	l.mu.Unlock()
	l.poke()
}

func (l *lane) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *lane) isTaken(k store.DeliveryKey) bool {
	_, ok := l.taken[k] // called from run with l.mu held
	return ok
}

// idlePoll bounds how long a lane sleeps without a wake-up, as a safety net.
const idlePoll = 30 * time.Second

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
	cfg := *l.cfg
	free := cfg.Concurrency - len(l.taken)
	if free <= 0 {
		return idlePoll // a finishing attempt pokes the lane
	}
	now := l.e.now()
	tasks, err := l.e.store.Due(l.name, now, free, l.isTaken)
	if err != nil {
		l.e.log.Error("reading due deliveries", zap.String("upstream", l.name), zap.Error(err))
		return time.Second
	}
	for _, t := range tasks {
		l.taken[t.Delivery.Key] = struct{}{}
		l.inflight.Add(1)
		go l.attempt(cfg, t)
	}
	if len(tasks) == free {
		return idlePoll
	}
	next, ok, err := l.e.store.NextDue(l.name, l.isTaken)
	if err != nil || !ok {
		return idlePoll
	}
	return min(max(next.Sub(now), 0), idlePoll)
}

func (l *lane) release(k store.DeliveryKey) {
	l.mu.Lock()
	delete(l.taken, k)
	l.mu.Unlock()
	l.inflight.Done()
	l.poke()
}

// responseSnippet bounds how much of an upstream's answer is kept.
const responseSnippet = 1024

func (l *lane) attempt(cfg Upstream, t store.Task) {
	defer l.release(t.Delivery.Key)
	n := t.Delivery.Attempts + 1
	ctx, cancel := context.WithTimeout(l.e.ctx, cfg.Timeout)
	defer cancel()
	req, err := buildRequest(ctx, cfg, t.Event, n)
	start := l.e.now()
	attempt := store.Attempt{N: n, At: start}
	var resp *http.Response
	if err == nil {
		resp, err = l.client.Do(req)
	}
	if err != nil && l.e.ctx.Err() != nil {
		return // shutting down: the delivery stays queued as it was
	}
	var retryAfter time.Duration
	if err != nil {
		attempt.Error = err.Error()
	} else {
		attempt.Status = resp.StatusCode
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, responseSnippet))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		attempt.Response = string(snippet)
		retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), l.e.now())
	}
	attempt.Duration = l.e.now().Sub(start)
	outcome := store.Outcome{Key: t.Delivery.Key, Attempt: attempt}
	switch {
	case err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		outcome.Next = store.StateDelivered
	case retryable(err, attempt.Status) && n < cfg.Retry.MaxAttempts:
		outcome.Next = store.StatePending
		outcome.RetryAt = l.e.now().Add(Backoff(cfg.Retry, n, retryAfter, l.e.jitter()))
	default:
		outcome.Next = store.StateDead
		if err == nil && !retryable(nil, attempt.Status) {
			attempt.Error = fmt.Sprintf("final status %d", attempt.Status)
			outcome.Attempt = attempt
		}
	}
	fields := []zap.Field{
		zap.String("event_id", t.Event.ID.String()), zap.String("upstream", l.name),
		zap.Int("attempt", n), zap.Int("status", attempt.Status), zap.Duration("duration", attempt.Duration),
		zap.String("outcome", string(outcome.Next)),
	}
	if attempt.Error != "" {
		fields = append(fields, zap.String("error", attempt.Error))
	}
	if outcome.Next == store.StateDead {
		l.e.log.Warn("delivery dead", fields...)
	} else {
		l.e.log.Debug("delivery attempt", fields...)
	}
	if err := l.e.store.Record(context.Background(), outcome); err != nil {
		// The delivery stays queued under its old due time and is retried.
		l.e.log.Error("recording delivery outcome", zap.String("event_id", t.Event.ID.String()), zap.Error(err))
	}
}

func retryable(err error, status int) bool {
	if err != nil {
		return true
	}
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
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

func buildRequest(ctx context.Context, cfg Upstream, ev *store.Event, attempt int) (*http.Request, error) {
	target := *cfg.URL
	target.Path = joinPath(cfg.URL.Path, ev.Path)
	target.RawPath = ""
	switch {
	case cfg.URL.RawQuery == "":
		target.RawQuery = ev.RawQuery
	case ev.RawQuery != "":
		target.RawQuery = cfg.URL.RawQuery + "&" + ev.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, ev.Method, target.String(), bytes.NewReader(ev.Body))
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
	if ev.Host != "" {
		req.Host = ev.Host // as reverse_proxy does: the backend sees the public host
		req.Header.Set("X-Forwarded-Host", ev.Host)
	}
	if ip, _, err := net.SplitHostPort(ev.RemoteAddr); err == nil {
		if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
			ip = prior + ", " + ip
		}
		req.Header.Set("X-Forwarded-For", ip)
	}
	if ev.Proto != "" {
		req.Header.Set("X-Forwarded-Proto", ev.Proto)
	}
	id := ev.ID.String()
	req.Header.Set("Hookgate-Event-Id", id)
	req.Header.Set("Hookgate-Attempt", strconv.Itoa(attempt))
	req.Header.Set("Hookgate-Source", ev.Source)
	req.Header.Set("Idempotency-Key", id)
	req.ContentLength = int64(len(ev.Body))
	return req, nil
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
