package deliver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/store"
)

// responseSnippet bounds how much of an upstream's answer is kept.
const responseSnippet = 1024

// snippetBuffers hold the start of a response while it is read.
var snippetBuffers = sync.Pool{New: func() any { return new([responseSnippet]byte) }}

// attempt makes one delivery attempt and records its verdict.
func (l *lane) attempt(cfg Upstream, t store.Task) {
	defer l.finish()
	n := t.Delivery.Attempts + 1
	ctx, cancel := context.WithTimeout(l.e.ctx, cfg.Timeout)
	defer cancel()
	ctx, span := l.e.traceAttempt(ctx, l.name, t, n)
	defer span.End() // ended with its outcome below, unless shutting down
	res := l.send(ctx, cfg, t, n)
	if res.err != nil && l.e.ctx.Err() != nil {
		l.e.store.Release(t.Delivery.Key) // shutting down: the delivery stays queued as it was
		return
	}
	v := l.e.decide(cfg.Retry, t, n, res.err, res.attempt, res.retryAfter, l.e.store.PauseOf(l.name))
	res.attempt.Error = v.reason
	endAttemptSpan(span, res.attempt, v.next)
	// Only failures the upstream causes count against it: a 4xx answer is
	// the upstream working as designed.
	if t.EventErr != nil {
		l.breaker.release() // the upstream was not asked
	} else {
		opened, closed := l.breaker.record(l.e.now(), res.err == nil && res.attempt.Status < 500 && res.attempt.Status != http.StatusTooManyRequests)
		switch {
		case opened && l.e.onOpen != nil:
			l.e.onOpen(l.name)
		case closed && l.e.onClose != nil:
			l.e.onClose(l.name)
		}
	}
	l.report(t, res.attempt, v)
	l.settle(t, res.attempt, v)
}

// result is what sending found: the attempt as it is recorded, the error
// that kept it from an answer, and the answer's Retry-After.
type result struct {
	attempt    store.Attempt
	err        error
	retryAfter time.Duration
}

// send builds the request (re-signed when the upstream says so), sends it
// and reads the start of the answer.
func (l *lane) send(ctx context.Context, cfg Upstream, t store.Task, n int) result {
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
	res := result{attempt: store.Attempt{N: n, At: start}}
	var resp *http.Response
	if err == nil {
		resp, err = l.clientFor(cfg).Do(req)
	}
	if err != nil {
		res.err = redactURLError(err, cfg.CredentialPath)
		res.attempt.Error = res.err.Error()
	} else {
		res.attempt.Status = resp.StatusCode
		buf := snippetBuffers.Get().(*[responseSnippet]byte)
		n, _ := io.ReadFull(resp.Body, buf[:])
		res.attempt.Response = string(buf[:n])
		snippetBuffers.Put(buf)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		res.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), l.e.now())
	}
	res.attempt.Duration = l.e.now().Sub(start)
	return res
}

// report logs an attempt and tells the engine's observer.
func (l *lane) report(t store.Task, a store.Attempt, v verdict) {
	fields := []zap.Field{
		zap.String("event_id", t.Event.ID.String()), zap.String("upstream", l.name),
		zap.Int("attempt", a.N), zap.Int("status", a.Status), zap.Duration("duration", a.Duration),
		zap.String("outcome", string(v.next)),
	}
	if a.Error != "" {
		fields = append(fields, zap.String("error", a.Error))
	}
	if trace := t.Event.TraceID(); trace != "" {
		fields = append(fields, zap.String("traceID", trace))
	}
	// One line per delivery's outcome: delivered at INFO, dead at WARN; an
	// attempt that will be retried at DEBUG, so a flapping upstream does
	// not double the log.
	switch v.next {
	case store.StateDead:
		l.e.log.Warn("delivery dead", fields...)
	case store.StatePending:
		l.e.log.Debug("delivery attempt failed; will retry", append(fields, zap.Time("retry_at", v.retryAt))...)
	default:
		l.e.log.Info("delivered", fields...)
	}
	if l.e.onAttempt != nil {
		outcome := map[store.State]string{store.StateDelivered: "delivered", store.StatePending: "retry", store.StateDead: "dead"}[v.next]
		l.e.onAttempt(l.name, outcome, a.Duration)
	}
}

// settle records the attempt and its verdict. A delivery whose outcome
// cannot be recorded stays queued under its old due time and is retried
// after a pause: it is due at once, and the store may fail every write for
// a while (disk full, read-only).
func (l *lane) settle(t store.Task, a store.Attempt, v verdict) {
	outcome := store.Outcome{Key: t.Delivery.Key, Attempt: a, Next: v.next, RetryAt: v.retryAt}
	if err := l.e.store.Settle(context.Background(), outcome); err != nil {
		l.e.log.Error("recording delivery outcome", zap.String("event_id", t.Event.ID.String()), zap.Error(err))
		select {
		case <-time.After(recordPause):
		case <-l.stop:
		}
		l.e.store.Release(t.Delivery.Key)
		return
	}
	if v.next == store.StateDead && l.e.onDead != nil {
		l.e.onDead(l.name, t.Event, a.Error)
	}
}

// recordPause is how long a delivery whose outcome could not be recorded
// waits before it is attempted again.
const recordPause = 5 * time.Second

// errUnreadableEvent marks an attempt that failed before its request
// because the stored event could not be read.
var errUnreadableEvent = errors.New("reading the stored event")

// verdict is what an attempt decides for its delivery: the next state,
// when a retry is due, and the attempt's error or why the delivery is dead.
type verdict struct {
	next    store.State
	retryAt time.Time
	reason  string
}

// decide turns an attempt's result into the delivery's next state: done,
// retried at a time, or dead with the reason in the attempt's error. pause
// is the upstream's pause record: max_age counts from the later of the
// event's arrival, the delivery's last replay and the upstream's last
// resume, so time spent paused never makes a delivery dead.
func (e *Engine) decide(p RetryPolicy, t store.Task, n int, err error, a store.Attempt, retryAfter time.Duration, pause store.Pause) verdict {
	if err == nil && a.Status >= 200 && a.Status < 300 {
		return verdict{store.StateDelivered, time.Time{}, a.Error}
	}
	// A stored event that could not be read is retried whatever retry_on
	// says: the upstream did not fail, and the read may succeed later.
	if !p.RetryOn.Retries(err, a.Status) && !errors.Is(err, errUnreadableEvent) {
		if err != nil {
			return verdict{store.StateDead, time.Time{}, a.Error}
		}
		return verdict{store.StateDead, time.Time{}, fmt.Sprintf("final status %d", a.Status)}
	}
	if used := n - t.Delivery.RetryBase; used >= p.MaxAttempts {
		return verdict{store.StateDead, time.Time{}, fmt.Sprintf("%s; gave up after %d attempts", describe(a), used)}
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
			return verdict{store.StateDead, time.Time{}, fmt.Sprintf("%s; gave up: older than max_age %s", describe(a), p.MaxAge)}
		}
	}
	return verdict{store.StatePending, retryAt, a.Error}
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
