package deliver

import (
	"sync"
	"time"
)

// BreakerPolicy configures a circuit breaker; a zero FailureRatio turns it off.
type BreakerPolicy struct {
	FailureRatio float64
	Window       time.Duration
	MinRequests  int
	Cooldown     time.Duration
}

// Breaker states.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open"
)

const breakerBuckets = 10

// breaker keeps an upstream from being hammered while it fails: past a
// failure ratio over a window it opens, lets nothing through for the
// cooldown, then lets one probe through; the probe's outcome closes or
// reopens it. Deliveries wait meanwhile; they are not failed.
type breaker struct {
	mu       sync.Mutex
	policy   BreakerPolicy
	state    string
	openedAt time.Time
	probing  bool
	buckets  [breakerBuckets]struct {
		start     time.Time
		ok, fails int
	}
}

func newBreaker(p BreakerPolicy) *breaker { return &breaker{policy: p, state: BreakerClosed} }

func (b *breaker) setPolicy(p BreakerPolicy) {
	b.mu.Lock()
	b.policy = p
	if p.FailureRatio == 0 {
		b.state, b.probing = BreakerClosed, false
	}
	b.mu.Unlock()
}

// allow says how many attempts may start now (limit, or fewer), and when to
// look again if none may.
func (b *breaker) allow(now time.Time, limit int) (int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.policy.FailureRatio == 0 {
		return limit, 0
	}
	switch b.state {
	case BreakerOpen:
		// A wait longer than the cooldown means the wall clock went back:
		// the cooldown is over rather than hours away.
		if wait := b.openedAt.Add(b.policy.Cooldown).Sub(now); wait > 0 && wait <= b.policy.Cooldown {
			return 0, wait
		}
		b.state = BreakerHalfOpen
		fallthrough
	case BreakerHalfOpen:
		if b.probing {
			return 0, b.policy.Cooldown
		}
		b.probing = true
		return min(limit, 1), 0
	}
	return limit, 0
}

// release gives back a probe slot that allow granted but was not used.
func (b *breaker) release() {
	b.mu.Lock()
	if b.state == BreakerHalfOpen {
		b.probing = false
	}
	b.mu.Unlock()
}

// record counts an attempt's outcome and reports whether it opened the
// breaker from closed, or closed it (a half-open probe that succeeded).
func (b *breaker) record(now time.Time, ok bool) (opened, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.policy.FailureRatio == 0 {
		return false, false
	}
	if b.state == BreakerHalfOpen {
		b.probing = false
		if ok {
			b.state = BreakerClosed
			b.buckets = [breakerBuckets]struct {
				start     time.Time
				ok, fails int
			}{}
			return false, true
		}
		b.state, b.openedAt = BreakerOpen, now
		return false, false
	}
	width := max(b.policy.Window/breakerBuckets, time.Millisecond)
	slot := now.Truncate(width)
	i := int(slot.UnixNano()/int64(width)) % breakerBuckets
	if !b.buckets[i].start.Equal(slot) {
		b.buckets[i].start, b.buckets[i].ok, b.buckets[i].fails = slot, 0, 0
	}
	if ok {
		b.buckets[i].ok++
	} else {
		b.buckets[i].fails++
	}
	if b.state != BreakerClosed {
		return false, false
	}
	total, fails := 0, 0
	for _, bk := range b.buckets {
		if now.Sub(bk.start) < b.policy.Window {
			total += bk.ok + bk.fails
			fails += bk.fails
		}
	}
	if total >= b.policy.MinRequests && float64(fails) >= b.policy.FailureRatio*float64(total) {
		b.state, b.openedAt = BreakerOpen, now
		return true, false
	}
	return false, false
}

// State returns the breaker's state.
func (b *breaker) State() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
