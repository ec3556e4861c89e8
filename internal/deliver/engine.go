package deliver

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/store"
)

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
	// OnBreakerClose, when set, is told when an upstream's breaker closes
	// again (its half-open probe succeeded).
	OnBreakerClose func(upstream string)
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
	onClose   func(upstream string)
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
		onDead: opts.OnDead, onOpen: opts.OnBreakerOpen, onClose: opts.OnBreakerClose, tracing: opts.TracerProvider,
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
	if !f.DryRun {
		for _, u := range res.Upstreams {
			e.Notify(u)
		}
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
