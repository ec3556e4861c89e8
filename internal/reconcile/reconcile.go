// Package reconcile asks providers' event APIs for what the gateway may
// have missed: events it never received (the gateway was down, answered
// 503, a network path failed) within the provider's window. Where the
// provider can redeliver (GitHub), it is asked to, so the event arrives
// signed through the normal path; where it cannot (Stripe), the event is
// fetched over TLS with the team's credentials. Clients here know the
// providers' APIs; what to do with what they find is the caller's.
package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"time"
)

// Found is one event a provider's API lists.
type Found struct {
	// Key is the event's dedup key as the webhook path computes it
	// (Stripe's event id, GitHub's delivery guid), so a fetched copy and a
	// delivered one are one event.
	Key string
	// At is when the provider created the event.
	At time.Time
	// Body is the event as the provider would have sent it, for providers
	// whose events are fetched; nil where the provider redelivers.
	Body []byte
	// Delivered reports whether the provider saw the delivery succeed; a
	// failed one is asked again even if the gateway has the event.
	Delivered bool
	// Redeliver asks the provider to send the event again; nil where it
	// cannot.
	Redeliver func(ctx context.Context) error
	// Pending marks an event the provider is still retrying (Paddle's
	// needs_retry): it is left to the provider, and the cursor stays at
	// or before it, so a later run sees how it ended.
	Pending bool
}

// Client lists a provider's events created at or after since, newest
// first or oldest first as its API pages them, calling each for every
// event; returning an error from each stops the listing.
type Client interface {
	List(ctx context.Context, since time.Time, each func(Found) error) error
}

// maxResponse bounds one page read from a provider's API.
const maxResponse = 8 << 20

// api is what the clients share: an HTTP client, the base URL, the
// credentials header, a request budget and the provider's rate limits.
type api struct {
	http *http.Client
	base string
	// auth is the credentials header's value; authName its name
	// (Authorization when empty).
	auth, authName string
	limiter        *limiter
	// Requests counts the requests made, for the run's report.
	Requests int
}

// Count is the requests made so far.
func (a *api) Count() int { return a.Requests }

// ErrRateLimited is a provider that kept answering 429 past the run's
// patience.
var ErrRateLimited = errors.New("rate limited by the provider")

// statusError is a provider answer other than 2xx.
type statusError struct {
	Status int
	Body   string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Body)
}

// do sends req with the credentials, waiting out 429s as Retry-After (or
// the rate-limit reset headers) says, at most maxWaits times, and returns
// the body of a 2xx answer.
func (a *api) do(ctx context.Context, method, url string, body []byte) ([]byte, http.Header, error) {
	return a.send(ctx, method, url, body, nil)
}

// form posts a form, as OAuth2 token endpoints take one.
func (a *api) form(ctx context.Context, url string, values neturl.Values) ([]byte, http.Header, error) {
	return a.send(ctx, http.MethodPost, url, []byte(values.Encode()), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

// send is do with more headers (a JSON body's Content-Type, an API
// version) and the credentials header a caller names.
func (a *api) send(ctx context.Context, method, url string, body []byte, header http.Header) ([]byte, http.Header, error) {
	const maxWaits = 5
	for wait := 0; ; wait++ {
		if err := a.limiter.wait(ctx); err != nil {
			return nil, nil, err
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, rd)
		if err != nil {
			return nil, nil, err
		}
		name := a.authName
		if name == "" {
			name = "Authorization"
		}
		req.Header.Set(name, a.auth)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("User-Agent", "Hookgate-Reconcile/1")
		a.Requests++
		resp, err := a.http.Do(req)
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return data, resp.Header, nil
		case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") == "0"):
			if wait == maxWaits {
				return nil, nil, ErrRateLimited
			}
			if err := sleep(ctx, retryAfter(resp.Header, time.Now())); err != nil {
				return nil, nil, err
			}
			continue
		}
		snippet := string(data)
		if len(snippet) > 200 {
			snippet = snippet[:200]
		}
		return nil, nil, &statusError{Status: resp.StatusCode, Body: snippet}
	}
}

// retryAfter reads how long a provider asks to wait: Retry-After (seconds
// or a date), or GitHub's X-RateLimit-Reset (Unix seconds); one second
// when it says nothing, at most a minute.
func retryAfter(h http.Header, now time.Time) time.Duration {
	d := time.Second
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil {
			d = time.Duration(s) * time.Second
		} else if at, err := http.ParseTime(v); err == nil {
			d = at.Sub(now)
		}
	} else if v := h.Get("X-RateLimit-Reset"); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil {
			d = time.Unix(s, 0).Sub(now)
		}
	}
	return min(max(d, 0), time.Minute)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// limiter spaces requests to a provider: at most one per interval.
type limiter struct {
	interval time.Duration
	next     time.Time
}

func (l *limiter) wait(ctx context.Context) error {
	if l == nil || l.interval <= 0 {
		return ctx.Err()
	}
	now := time.Now()
	if d := l.next.Sub(now); d > 0 {
		if err := sleep(ctx, d); err != nil {
			return err
		}
		now = l.next
	}
	l.next = now.Add(l.interval)
	return nil
}
