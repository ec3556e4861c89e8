package deliver

import (
	"net"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/hookgate/hookgate/internal/store"
)

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
