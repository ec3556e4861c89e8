package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/store"
)

// Ingester is where alerts are stored: the store the engine delivers from.
type Ingester interface {
	Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error)
}

// Options configure a Manager.
type Options struct {
	// Store is where alerts are stored for delivery.
	Store Ingester
	// Oldest returns, by upstream, the receive time of the oldest event
	// with a pending delivery to it; nil turns oldest_pending off.
	Oldest func() (map[string]time.Time, error)
	// Size returns the store's bytes on disk and its max_size (0: no cap),
	// for store_size; nil turns store_size off.
	Size   func() (used, limit int64, err error)
	Logger *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CheckEvery, when set, is how often oldest_pending is checked;
	// otherwise a quarter of the shortest oldest_pending, within
	// [MinCheck, MaxCheck].
	CheckEvery time.Duration
	// RetryStore is how often an alert whose write failed is tried again;
	// default 5s.
	RetryStore time.Duration
	// StoreName names the store in store_unavailable alerts.
	StoreName string
	// Client sends the alerts that go directly (store_unavailable);
	// default a client with a 10 s timeout.
	Client *http.Client
	// RetryDirect is the first wait before a direct alert is sent again;
	// it doubles up to a minute. Default 1s.
	RetryDirect time.Duration
	// StoreQuiet is how long the store must go without refusing an event
	// before an accepted one resolves store_unavailable: near a full disk
	// small writes fit between refused ones, and the alert must not flap.
	// Default 30s.
	StoreQuiet time.Duration
}

// Bounds of the oldest_pending check interval: often enough to alert near
// the configured age, rarely enough that the store's scan stays cheap.
const (
	MinCheck = time.Second
	MaxCheck = 30 * time.Second
)

// queueSize bounds the alerts noticed but not yet stored; repeat
// suppression keeps it far from full.
const queueSize = 256

// Manager watches one store's gateway and stores the alerts its running
// rules raise. One manager exists per store, like the delivery engine, so
// repeat suppression and windows survive a reload.
type Manager struct {
	ingest     Ingester
	oldest     func() (map[string]time.Time, error)
	size       func() (used, limit int64, err error)
	log        *zap.Logger
	now        func() time.Time
	checkEvery time.Duration
	retryStore time.Duration
	storeName  string
	storeQuiet time.Duration
	// lastRefused is when the store last refused an event (Observe).
	lastRefused time.Time
	client      *http.Client
	retryFirst  time.Duration
	direct      sync.WaitGroup

	// observeOn lets Observe, on the request path, return at once when no
	// rule counts refusals or watches for missed events.
	observeOn atomic.Bool

	mu          sync.Mutex
	generations []generation
	rules       []Rule
	last        map[string]time.Time // by Alert.key: when last raised
	open        map[string]bool      // by Alert.key: conditions fired and not yet resolved
	// openKinds counts open conditions by kind, so the request path asks
	// for a resolve only when one of that kind is open.
	openKinds map[Kind]int
	windows   map[windowKey]*window
	stopped   bool

	queue chan raised
	// unstored holds the alerts whose write failed (the store was
	// unavailable, which is when a missed alert is raised), retried
	// every retryStore until they are stored. Only run touches it.
	unstored []raised
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

type generation struct {
	owner any
	rules []Rule
}

type raised struct {
	rule  Rule
	alert Alert
	// sent marks an alert already sent directly: it is recorded with no
	// delivery.
	sent bool
}

// New starts a manager; it raises nothing until Activate.
func New(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetryStore <= 0 {
		opts.RetryStore = defaultRetryStore
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.RetryDirect <= 0 {
		opts.RetryDirect = time.Second
	}
	if opts.StoreQuiet <= 0 {
		opts.StoreQuiet = 30 * time.Second
	}
	m := &Manager{
		ingest: opts.Store, oldest: opts.Oldest, size: opts.Size, log: opts.Logger, now: opts.Now, checkEvery: opts.CheckEvery, retryStore: opts.RetryStore,
		storeName: opts.StoreName, storeQuiet: opts.StoreQuiet, client: opts.Client, retryFirst: opts.RetryDirect,
		last: map[string]time.Time{}, open: map[string]bool{}, openKinds: map[Kind]int{}, windows: map[windowKey]*window{},
		queue: make(chan raised, queueSize), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go m.run()
	return m
}

// Activate makes owner's rules the running ones. The most recent active
// owner wins; Deactivate falls back to the one before, as the engine does.
func (m *Manager) Activate(owner any, rules []Rule) {
	m.mu.Lock()
	m.removeGeneration(owner)
	m.generations = append(m.generations, generation{owner: owner, rules: rules})
	m.apply()
	m.mu.Unlock()
	m.poke()
}

// Deactivate withdraws owner's rules.
func (m *Manager) Deactivate(owner any) {
	m.mu.Lock()
	m.removeGeneration(owner)
	m.apply()
	m.mu.Unlock()
	m.poke()
}

func (m *Manager) removeGeneration(owner any) {
	for i, g := range m.generations {
		if g.owner == owner {
			m.generations = append(m.generations[:i], m.generations[i+1:]...)
			return
		}
	}
}

// apply sets the running rules. Called with m.mu held.
func (m *Manager) apply() {
	m.rules = nil
	if n := len(m.generations); n > 0 {
		m.rules = m.generations[n-1].rules
	}
	on := false
	for _, r := range m.rules {
		on = on || r.Rejected != nil || len(r.Missed) > 0 || r.StoreUnavailable
	}
	m.observeOn.Store(on)
}

func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Stop stops raising and checking, and returns once the alerts raised
// before it are stored.
func (m *Manager) Stop() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	m.stopped = true
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	m.direct.Wait()
}

// sendDirectLocked sends an alert to its target at once, not through the
// store (which may be what failed), unless the same one went out less than
// r.Repeat ago: best effort, tried again in memory with a doubling wait
// until it is taken or the manager stops, and then kept for the store, so
// the alert is also recorded once the store is back. Called with m.mu
// held; it never blocks.
func (m *Manager) sendDirectLocked(r Rule, a Alert) {
	if m.stopped || (r.URL == "" && r.Mailer == nil) {
		return
	}
	key := a.key(r.Name)
	m.markOpen(key, a.Kind)
	if last, ok := m.last[key]; ok && a.At.Sub(last) < r.Repeat && a.At.Sub(last) >= 0 {
		return
	}
	a = a.stamp(StateFiring).linked(r)
	m.last[key] = a.At
	m.direct.Add(1)
	go func() {
		defer m.direct.Done()
		fields := []zap.Field{zap.String("alert", string(a.Kind)), zap.String("target", r.Name)}
		wait := m.retryFirst
		for try := 1; ; try++ {
			err := m.post(r, a)
			if err == nil {
				m.log.Info("alert sent directly", append(fields, zap.Int("tries", try))...)
				break
			}
			m.log.Warn("sending an alert directly; it is tried again", append(fields, zap.Int("tries", try), zap.Error(err))...)
			select {
			case <-m.stop:
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Minute)
		}
		// Recorded too, as an event without a delivery: written once the
		// store takes writes again.
		select {
		case m.queue <- raised{rule: r, alert: a, sent: true}:
		default:
		}
	}()
}

// post sends an alert's body to its target.
func (m *Manager) post(r Rule, a Alert) error {
	body, path, query := a.For(r)
	if r.Mailer != nil {
		return r.Mailer.Send(body)
	}
	target := r.URL
	if path != "" {
		target = strings.TrimSuffix(r.URL, "/") + path
		if query != "" {
			target += "?" + query
		}
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Hookgate-Alerts")
	resp, err := m.client.Do(req)
	if err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), target, "the target")) // the URL may hold a token
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fmt.Errorf("the target answered %d", resp.StatusCode)
	}
	return nil
}

// Dead is told of a delivery that went dead (deliver.Options.OnDead).
func (m *Manager) Dead(upstream string, ev *store.Event, reason string) {
	if Internal(upstream) || ev.Source == Source {
		return // an alert that could not be delivered raises none
	}
	a := deadAlert(upstream, ev.Source, ev.ID.String(), reason, m.now())
	m.raise(a, func(r Rule) bool { return r.Dead })
}

// BreakerOpened is told of an upstream's breaker opening
// (deliver.Options.OnBreakerOpen).
func (m *Manager) BreakerOpened(upstream string) {
	if Internal(upstream) {
		return
	}
	m.raise(breakerAlert(upstream, m.now()), func(r Rule) bool { return r.BreakerOpen })
}

// ReconcileFailed is told of a source's reconciliation run that failed.
func (m *Manager) ReconcileFailed(source, reason string) {
	m.raise(reconcileFailedAlert(source, reason, m.now()), func(r Rule) bool { return r.ReconcileFailed })
}

// Unavailable is the outcome of a request the store could not take (503).
const Unavailable = "unavailable"

// Observe counts a request's outcome for the rejected condition and
// watches for 503s to sources whose provider never retries; it implements
// the ingest pipeline's Observer and runs on the request path, so it only
// counts and, rarely, queues an alert.
func (m *Manager) Observe(source, outcome string, _ time.Duration) {
	if !m.observeOn.Load() || source == Source {
		return
	}
	refused := strings.HasPrefix(outcome, "rejected_")
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if outcome == Unavailable {
		m.lastRefused = now
	}
	storeQuiet := now.Sub(m.lastRefused) >= m.storeQuiet
	for _, r := range m.rules {
		if recover, ok := r.Missed[source]; ok && outcome == Unavailable {
			m.raiseLocked(r, missedAlert(source, recover, now))
		}
		if r.StoreUnavailable {
			switch outcome {
			case Unavailable:
				m.sendDirectLocked(r, storeUnavailableAlert(m.storeName, source, now))
			case "accepted", "duplicate":
				if storeQuiet && m.openKinds[KindStoreUnavailable] > 0 {
					m.resolveLocked(r, storeAvailableAlert(m.storeName, now))
				}
			}
		}
		if r.Rejected == nil {
			continue
		}
		key := windowKey{rule: r.Name, window: r.Rejected.Window, source: source}
		w := m.windows[key]
		if w == nil {
			w = &window{}
			m.windows[key] = w
		}
		total, bad := w.add(now, r.Rejected.Window, refused)
		switch {
		case total >= r.Rejected.Min && float64(bad) >= r.Rejected.Ratio*float64(total):
			m.raiseLocked(r, rejectedAlert(source, bad, total, r.Rejected.Window, now))
		case total >= r.Rejected.Min && m.openKinds[KindRejected] > 0:
			m.resolveLocked(r, rejectedClearedAlert(source, r.Rejected.Window, now))
		}
	}
}

// windowKey names a rejected window: a rule whose window changes on a
// reload starts a new one. A struct, so that counting a request allocates
// nothing.
type windowKey struct {
	rule   string
	window time.Duration
	source string
}

// CheckPending raises oldest_pending alerts for the upstreams whose oldest
// pending delivery is too old. The manager runs it on its own; tests call it.
func (m *Manager) CheckPending() {
	m.checkSize()
	m.mu.Lock()
	rules := m.rules
	m.mu.Unlock()
	if m.oldest == nil || !anyOldest(rules) {
		return
	}
	oldest, err := m.oldest()
	if err != nil {
		m.log.Error("reading the oldest pending deliveries for alerts", zap.Error(err))
		return
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for upstream, t := range oldest {
		if Internal(upstream) {
			continue
		}
		age := now.Sub(t)
		for _, r := range m.rules {
			if r.OldestPending > 0 && age > r.OldestPending {
				m.raiseLocked(r, oldestAlert(upstream, age, r.OldestPending, now))
			}
		}
	}
	// A backlog that drained, or got young enough: resolved.
	for _, r := range m.rules {
		if r.OldestPending <= 0 {
			continue
		}
		for key := range m.open {
			a, ok := m.openOldest(r, key)
			if !ok {
				continue
			}
			if t, pending := oldest[a]; !pending || now.Sub(t) <= r.OldestPending {
				m.resolveLocked(r, oldestClearedAlert(a, r.OldestPending, now))
			}
		}
	}
}

// checkSize raises store_size alerts for rules whose share of max_size
// the store passed, and resolves them when it is back under.
func (m *Manager) checkSize() {
	m.mu.Lock()
	rules := m.rules
	m.mu.Unlock()
	want := false
	for _, r := range rules {
		want = want || r.StoreSize > 0
	}
	if m.size == nil || !want {
		return
	}
	used, limit, err := m.size()
	if err != nil || limit <= 0 {
		return
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.rules {
		switch {
		case r.StoreSize <= 0:
		case float64(used) >= r.StoreSize*float64(limit):
			m.raiseLocked(r, storeSizeAlert(m.storeName, used, limit, r.StoreSize, now))
		default:
			m.resolveLocked(r, storeSizeClearedAlert(m.storeName, r.StoreSize, now))
		}
	}
}

// openOldest reports the upstream of an open oldest_pending condition of
// rule r, by its key.
func (m *Manager) openOldest(r Rule, key string) (string, bool) {
	prefix := r.Name + "\x00" + string(KindOldestPending) + "\x00\x00"
	upstream, ok := strings.CutPrefix(key, prefix)
	return upstream, ok
}

func anyOldest(rules []Rule) bool {
	for _, r := range rules {
		if r.OldestPending > 0 {
			return true
		}
	}
	return false
}

// raise queues a for every running rule that wants it.
func (m *Manager) raise(a Alert, wants func(Rule) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.rules {
		if wants(r) {
			m.raiseLocked(r, a)
		}
	}
}

// raiseLocked queues an alert for rule r unless the same one went out less
// than r.Repeat ago. Called with m.mu held; it never blocks.
func (m *Manager) raiseLocked(r Rule, a Alert) {
	if m.stopped {
		return
	}
	key := a.key(r.Name)
	if conditions[a.Kind] {
		m.markOpen(key, a.Kind)
	}
	if last, ok := m.last[key]; ok && a.At.Sub(last) < r.Repeat && a.At.Sub(last) >= 0 {
		return
	}
	m.enqueueLocked(r, a.stamp(StateFiring).linked(r), key)
}

// markOpen notes a condition that fired. Called with m.mu held.
func (m *Manager) markOpen(key string, kind Kind) {
	if !m.open[key] {
		m.open[key] = true
		m.openKinds[kind]++
	}
}

// enqueueLocked queues an alert to be stored for delivery. Called with
// m.mu held; it never blocks.
func (m *Manager) enqueueLocked(r Rule, a Alert, key string) {
	select {
	case m.queue <- raised{rule: r, alert: a}:
		m.last[key] = a.At
	default:
		m.log.Warn("alert dropped: too many waiting to be stored", zap.String("alert", string(a.Kind)), zap.String("target", r.Name))
	}
}

// resolveLocked sends the resolved message of a condition that fired for
// rule r, if it did and has not been resolved, whatever repeat says; a
// later firing is then sent at once. Called with m.mu held.
func (m *Manager) resolveLocked(r Rule, a Alert) {
	if m.stopped {
		return
	}
	if m.openKinds[a.Kind] == 0 {
		return // nothing of the kind is open: the common case, on the request path
	}
	key := a.key(r.Name)
	if !m.open[key] {
		return
	}
	delete(m.open, key)
	m.openKinds[a.Kind]--
	m.enqueueLocked(r, a.stamp(StateResolved).linked(r), key)
	delete(m.last, key)
}

// resolve is resolveLocked for every running rule that wants the kind.
func (m *Manager) resolve(a Alert, wants func(Rule) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.rules {
		if wants(r) {
			m.resolveLocked(r, a)
		}
	}
}

// BreakerClosed is told of an upstream's breaker closing again
// (deliver.Options.OnBreakerClose).
func (m *Manager) BreakerClosed(upstream string) {
	if Internal(upstream) {
		return
	}
	m.resolve(breakerClosedAlert(upstream, m.now()), func(r Rule) bool { return r.BreakerOpen })
}

// Reconciled is told of a source's reconciliation run that succeeded.
func (m *Manager) Reconciled(source string) {
	m.resolve(reconcileRecoveredAlert(source, m.now()), func(r Rule) bool { return r.ReconcileFailed })
}

// run stores queued alerts and checks oldest_pending periodically.
func (m *Manager) run() {
	defer close(m.done)
	timer := time.NewTimer(m.interval())
	defer timer.Stop()
	retry := time.NewTicker(m.retryStore)
	defer retry.Stop()
	for {
		select {
		case <-m.stop:
			m.drain()
			return
		case r := <-m.queue:
			m.keep(r, m.store(r))
		case <-retry.C:
			m.storeUnstored()
		case <-m.wake:
			timer.Reset(m.interval())
		case <-timer.C:
			m.CheckPending()
			timer.Reset(m.interval())
		}
	}
}

// Bounds of the alerts kept for another write: how often they are tried,
// and how many are kept (the oldest are dropped past it).
const (
	defaultRetryStore = 5 * time.Second
	maxUnstored       = 64
)

// keep holds r for another write when its write failed.
func (m *Manager) keep(r raised, err error) {
	if err == nil {
		return
	}
	if len(m.unstored) == maxUnstored {
		m.log.Warn("alert dropped: too many could not be stored", zap.String("alert", string(m.unstored[0].alert.Kind)), zap.String("target", m.unstored[0].rule.Name))
		m.unstored = m.unstored[1:]
	}
	m.unstored = append(m.unstored, r)
}

// storeUnstored writes the alerts kept, oldest first, until one fails.
func (m *Manager) storeUnstored() {
	for len(m.unstored) > 0 {
		if m.store(m.unstored[0]) != nil {
			return
		}
		m.unstored = m.unstored[1:]
	}
}

// drain stores the alerts raised before Stop: the store closes only after
// the manager has stopped.
func (m *Manager) drain() {
	for {
		select {
		case r := <-m.queue:
			m.store(r)
		default:
			m.storeUnstored()
			return
		}
	}
}

// interval is how long to wait before the next oldest_pending check.
func (m *Manager) interval() time.Duration {
	if m.checkEvery > 0 {
		return m.checkEvery
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	every := MaxCheck
	for _, r := range m.rules {
		if r.OldestPending > 0 {
			every = min(every, r.OldestPending/4)
		}
		if r.StoreSize > 0 {
			every = min(every, 5*time.Second) // a store fills faster than a backlog ages
		}
	}
	return max(every, MinCheck)
}

// storeTimeout bounds one alert's write.
const storeTimeout = 10 * time.Second

// store writes an alert as an event with one delivery, to its target's
// upstream, which the engine then delivers.
func (m *Manager) store(r raised) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	body, path, query := r.alert.For(r.rule)
	if path == "" {
		path = "/"
	}
	contentType := "application/json"
	if r.rule.Mailer != nil {
		contentType = "message/rfc822"
	}
	ne := &store.NewEvent{
		Event: &store.Event{
			Source: Source, ReceivedAt: m.now(), Method: http.MethodPost, Path: path, RawQuery: query,
			Header: http.Header{"Content-Type": {contentType}, "User-Agent": {"Hookgate-Alerts"}},
			Body:   body,
		},
		Targets: []store.Target{{Upstream: Upstream(r.rule.Name), Route: string(r.alert.Kind)}},
	}
	if r.sent {
		ne.Targets, ne.Event.Unrouted = nil, true
	}
	res, err := m.ingest.Ingest(ctx, ne)
	fields := []zap.Field{zap.String("alert", string(r.alert.Kind)), zap.String("target", r.rule.Name),
		zap.String("source", r.alert.Source), zap.String("upstream", r.alert.Upstream)}
	if err != nil {
		m.log.Error("storing an alert; it is tried again", append(fields, zap.Error(err))...)
		return err
	}
	m.log.Info("alert raised", append(fields, zap.String("alert_event_id", res.ID.String()))...)
	return nil
}

// buckets divide a rejected window, as the breaker's divide its own.
const buckets = 10

// window counts a source's requests and refusals over a sliding window.
type window struct {
	b [buckets]struct {
		start        time.Time
		total, fails int
	}
}

// add counts one request at now and returns the window's totals.
func (w *window) add(now time.Time, span time.Duration, refused bool) (total, fails int) {
	width := max(span/buckets, time.Millisecond)
	slot := now.Truncate(width)
	i := int(slot.UnixNano()/int64(width)) % buckets
	if !w.b[i].start.Equal(slot) {
		w.b[i].start, w.b[i].total, w.b[i].fails = slot, 0, 0
	}
	w.b[i].total++
	if refused {
		w.b[i].fails++
	}
	for _, bk := range w.b {
		if age := now.Sub(bk.start); age >= 0 && age < span {
			total += bk.total
			fails += bk.fails
		}
	}
	return total, fails
}
