package verify

import (
	"context"
	"crypto/x509"
	"encoding/pem"
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

// allow takes a token if one is left; a nil limiter always allows.
func (l *fetchLimiter) allow(now time.Time) bool {
	if l == nil {
		return true
	}
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

// ErrKeyUnavailable is a key or certificate the scheme needs that could not
// be fetched yet: the fetch budget is spent, or the provider's endpoint
// failed or did not answer. The request may be genuine, so the provider is
// told to retry (503), never that it was forged.
var ErrKeyUnavailable = errors.New("verification key not available yet")

// errFetchLimited is a miss refused because the fetch budget is spent.
var errFetchLimited = fmt.Errorf("%w: fetch budget spent", ErrKeyUnavailable)

// gone marks a fetch whose answer is final: the provider says the key or
// certificate does not exist, or what it served is not one. Anything else
// that fails is transient.
type gone struct{ error }

func (g gone) Unwrap() error { return g.error }

func isGone(err error) bool {
	var g gone
	return errors.As(err, &g)
}

// remoteCache keeps what fetches found, apart from what they did not find,
// so that misses never push out a key in use:
//   - good entries are bounded and evicted only by other good entries,
//     least recently used first; one older than refresh keeps serving
//     while a background fetch renews it;
//   - bad entries (a final answer, or a transient failure) are bounded
//     separately and remembered for negative or transient;
//   - concurrent misses of one key share one fetch, and each fetch spends a
//     token of the limiter the caller names (a source's own budget).
type remoteCache[V any] struct {
	mu       sync.Mutex
	good     map[string]*goodEntry[V]
	bad      map[string]badEntry
	inflight map[string]*fetchCall[V]
	maxGood  int
	maxBad   int
	// refresh is the age after which a good entry is fetched again in the
	// background (zero: never); negative and transient are how long a
	// final and a transient failure are remembered.
	refresh, negative, transient time.Duration
}

type goodEntry[V any] struct {
	value      V
	fetched    time.Time
	used       time.Time
	refreshing bool
}

type badEntry struct {
	err error
	at  time.Time
	ttl time.Duration
}

type fetchCall[V any] struct {
	done  chan struct{}
	value V
	err   error
}

// Bounds of a remote cache's bad entries and the time a transient failure
// is remembered, so that a flood of requests naming an unreachable key is
// not a flood of fetches.
const (
	maxBadEntries     = 1024
	transientFailures = 10 * time.Second
)

func newRemoteCache[V any](maxGood int, refresh, negative time.Duration) *remoteCache[V] {
	return &remoteCache[V]{
		good: map[string]*goodEntry[V]{}, bad: map[string]badEntry{}, inflight: map[string]*fetchCall[V]{},
		maxGood: maxGood, maxBad: maxBadEntries, refresh: refresh, negative: negative, transient: transientFailures,
	}
}

// get returns the value for key: cached, or fetched by load within the
// limiter's budget. A transient failure, or a spent budget, is
// ErrKeyUnavailable; a final answer is load's error.
func (c *remoteCache[V]) get(key string, now time.Time, limiter *fetchLimiter, load func() (V, error)) (V, error) {
	var zero V
	c.mu.Lock()
	if e, ok := c.good[key]; ok {
		e.used = now
		if c.refresh > 0 && now.Sub(e.fetched) > c.refresh && !e.refreshing && limiter.allow(now) {
			e.refreshing = true
			go c.renew(key, load)
		}
		c.mu.Unlock()
		return e.value, nil
	}
	if b, ok := c.bad[key]; ok && now.Sub(b.at) < b.ttl {
		c.mu.Unlock()
		return zero, b.err
	}
	if call, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-call.done
		return call.value, call.err
	}
	if !limiter.allow(now) {
		c.mu.Unlock()
		return zero, errFetchLimited
	}
	call := &fetchCall[V]{done: make(chan struct{})}
	c.inflight[key] = call
	c.mu.Unlock()

	v, err := load()
	c.mu.Lock()
	delete(c.inflight, key)
	call.value, call.err = c.settleLocked(key, v, err, now)
	c.mu.Unlock()
	close(call.done)
	return call.value, call.err
}

// settleLocked files a fetch's outcome and returns what the caller gets.
func (c *remoteCache[V]) settleLocked(key string, v V, err error, now time.Time) (V, error) {
	var zero V
	if err == nil {
		delete(c.bad, key)
		c.putGoodLocked(key, v, now)
		return v, nil
	}
	ttl := c.negative
	if !isGone(err) {
		ttl = c.transient
		if !errors.Is(err, ErrKeyUnavailable) {
			err = fmt.Errorf("%w: %v", ErrKeyUnavailable, err)
		}
	}
	if len(c.bad) >= c.maxBad {
		c.evictBadLocked(now)
	}
	c.bad[key] = badEntry{err: err, at: now, ttl: ttl}
	return zero, err
}

// renew fetches a good entry again. The old value serves until a new one
// comes; a final answer (the key was withdrawn) removes it, a transient
// failure keeps it and lets the next use try again.
func (c *remoteCache[V]) renew(key string, load func() (V, error)) {
	v, err := load()
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.good[key]
	if !ok {
		return
	}
	e.refreshing = false
	switch {
	case err == nil:
		e.value, e.fetched = v, now
	case isGone(err):
		delete(c.good, key)
		c.bad[key] = badEntry{err: err, at: now, ttl: c.negative}
	}
}

// put stores a value known some other way (configured, or in tests).
func (c *remoteCache[V]) put(key string, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.bad, key)
	c.putGoodLocked(key, v, now)
}

func (c *remoteCache[V]) putGoodLocked(key string, v V, now time.Time) {
	if _, ok := c.good[key]; !ok && len(c.good) >= c.maxGood {
		var lru string
		var at time.Time
		for k, e := range c.good {
			if lru == "" || e.used.Before(at) {
				lru, at = k, e.used
			}
		}
		delete(c.good, lru)
	}
	c.good[key] = &goodEntry[V]{value: v, fetched: now, used: now}
}

// evictBadLocked drops expired bad entries, or the oldest when none has
// expired.
func (c *remoteCache[V]) evictBadLocked(now time.Time) {
	var oldest string
	var at time.Time
	for k, b := range c.bad {
		if now.Sub(b.at) >= b.ttl {
			delete(c.bad, k)
			continue
		}
		if oldest == "" || b.at.Before(at) {
			oldest, at = k, b.at
		}
	}
	if len(c.bad) >= c.maxBad {
		delete(c.bad, oldest)
	}
}

// statusError is a provider endpoint's refusal.
type statusError int

func (s statusError) Error() string { return fmt.Sprintf("endpoint answered %d", int(s)) }

// statusFailure classifies a provider endpoint's non-200 answer: a 4xx
// other than 408 and 429 is final, the rest is transient.
func statusFailure(status int) error {
	if status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests {
		return gone{statusError(status)}
	}
	return statusError(status)
}

// fetchCertificate fetches a PEM certificate. An answer that is not one is
// final; a failed fetch or a 5xx is transient.
func fetchCertificate(ctx context.Context, certURL string) (*x509.Certificate, error) {
	req, err := http.NewRequest(http.MethodGet, certURL, nil)
	if err != nil {
		return nil, gone{err}
	}
	status, body, err := fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusFailure(status)
	}
	cert, err := parsePEMCert(string(body))
	if err != nil {
		return nil, gone{err}
	}
	return cert, nil
}

// parsePEMCert reads one PEM certificate.
func parsePEMCert(text string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
