package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Some schemes fetch what they verify with: SNS its signing certificate,
// Plaid a key by kid; SNS also confirms subscriptions. Every such request
// is bounded in time and size and follows no redirect, so a provider's URL
// cannot lead the gateway elsewhere, and nothing fetched is logged.

const (
	// fetchTimeout bounds one request to a provider's endpoint.
	fetchTimeout = 5 * time.Second
	// maxFetchBytes bounds a fetched certificate, key or confirmation.
	maxFetchBytes = 64 << 10
)

// Test-only: these environment variables point the schemes at local
// stand-ins for the providers' endpoints. Tests and docs/security.md name
// them; nothing in production sets them.
const (
	// EnvTestSNSURL is a base URL (such as http://127.0.0.1:8443) whose URLs
	// aws-sns accepts as certificate and subscription URLs besides SNS's.
	EnvTestSNSURL = "HOOKGATE_TEST_SNS_URL"
	// EnvTestPlaidURL replaces Plaid's API base URL for key fetches.
	EnvTestPlaidURL = "HOOKGATE_TEST_PLAID_URL"
)

var fetchClient = &http.Client{
	Timeout: fetchTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// errFetchTooLarge is a response over maxFetchBytes.
var errFetchTooLarge = errors.New("response too large")

// fetch sends req and returns the status and at most maxFetchBytes of body.
func fetch(ctx context.Context, req *http.Request) (int, []byte, error) {
	// Requests waiting for the same key share this fetch: one that goes
	// away must not fail the others.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	resp, err := fetchClient.Do(req.WithContext(ctx))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if len(body) > maxFetchBytes {
		return resp.StatusCode, nil, errFetchTooLarge
	}
	return resp.StatusCode, body, nil
}

// testBase returns the stand-in base URL an environment variable names,
// without a trailing slash, or "".
func testBase(env string) string {
	return strings.TrimRight(os.Getenv(env), "/")
}

// fetchLimiter is a token bucket for fetches of what is not cached: a flood
// of requests naming unknown certificates or keys costs the provider (and
// the gateway) at most burst fetches, then one per interval.
type fetchLimiter struct {
	mu       sync.Mutex
	tokens   float64
	burst    float64
	interval time.Duration
	last     time.Time
}

func newFetchLimiter(burst int, interval time.Duration) *fetchLimiter {
	return &fetchLimiter{tokens: float64(burst), burst: float64(burst), interval: interval}
}

// allow takes a token if one is left.
func (l *fetchLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+float64(now.Sub(l.last))/float64(l.interval))
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// remoteCache keeps what fetches found (or did not find) by key, bounded:
// when full, the entry fetched longest ago goes. Concurrent misses of one
// key share one fetch.
type remoteCache[V any] struct {
	mu       sync.Mutex
	entries  map[string]*remoteEntry[V]
	max      int
	negative time.Duration // how long a failed fetch is remembered
	limiter  *fetchLimiter
}

type remoteEntry[V any] struct {
	ready   chan struct{}
	value   V
	err     error
	fetched time.Time
}

// errFetchLimited is a miss refused because the fetch budget is spent.
var errFetchLimited = errors.New("fetch budget spent; try later")

func newRemoteCache[V any](max int, negative time.Duration, limiter *fetchLimiter) *remoteCache[V] {
	return &remoteCache[V]{entries: map[string]*remoteEntry[V]{}, max: max, negative: negative, limiter: limiter}
}

// get returns the cached value for key, or fetches it. A failed fetch is
// remembered for the negative duration; a value until ttl (zero: for as
// long as the cache keeps it).
func (c *remoteCache[V]) get(key string, now time.Time, ttl time.Duration, load func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		select {
		case <-e.ready:
			stale := (e.err != nil && now.Sub(e.fetched) > c.negative) || (e.err == nil && ttl > 0 && now.Sub(e.fetched) > ttl)
			if !stale {
				c.mu.Unlock()
				return e.value, e.err
			}
			ok = false
		default:
			c.mu.Unlock()
			<-e.ready
			return e.value, e.err
		}
	}
	if !ok && c.limiter != nil && !c.limiter.allow(now) {
		c.mu.Unlock()
		var zero V
		return zero, errFetchLimited
	}
	e = &remoteEntry[V]{ready: make(chan struct{}), fetched: now}
	c.evictLocked()
	c.entries[key] = e
	c.mu.Unlock()
	e.value, e.err = load()
	close(e.ready)
	return e.value, e.err
}

// put stores a value fetched some other way (or known in advance).
func (c *remoteCache[V]) put(key string, v V, now time.Time) {
	e := &remoteEntry[V]{ready: make(chan struct{}), value: v, fetched: now}
	close(e.ready)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked()
	c.entries[key] = e
}

func (c *remoteCache[V]) evictLocked() {
	for len(c.entries) >= c.max {
		var oldest string
		var at time.Time
		for k, e := range c.entries {
			select {
			case <-e.ready:
			default:
				continue // a fetch in flight stays
			}
			if oldest == "" || e.fetched.Before(at) {
				oldest, at = k, e.fetched
			}
		}
		if oldest == "" {
			return
		}
		delete(c.entries, oldest)
	}
}

// statusError is a provider endpoint's refusal.
type statusError int

func (s statusError) Error() string { return fmt.Sprintf("endpoint answered %d", int(s)) }
