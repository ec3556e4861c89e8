// Package providertest serves providers' event APIs as their published
// descriptions say they answer (paths, parameters, pagination, page
// limits, credentials, rate-limit answers), for the reconciliation
// clients' tests and the gateway's end-to-end tests. Each fake keeps an
// event log; one that can redeliver hands the redelivered event to
// Deliver, which the test points at a gateway.
package providertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Delivery is a webhook a fake sends: what the provider would POST.
type Delivery struct {
	Header http.Header
	Body   []byte
}

// Deliver sends a delivery and returns the receiver's status (0 when it
// could not be reached).
type Deliver func(Delivery) int

// Post returns a Deliver that POSTs to url.
func Post(url string) Deliver {
	return func(d Delivery) int {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.Body))
		if err != nil {
			return 0
		}
		req.Header = d.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}

// common is what every fake shares: its server, the requests it took,
// and 429s to answer first.
type common struct {
	Server *httptest.Server
	mu     sync.Mutex
	// Requests counts the API requests answered, 429s included.
	requests int
	// throttle is how many requests to answer 429 with Retry-After: 1.
	throttle int
	delay    time.Duration
}

// Slow has every answer wait d first, as a distant or loaded API does.
func (c *common) Slow(d time.Duration) {
	c.mu.Lock()
	c.delay = d
	c.mu.Unlock()
}

// Requests is how many API requests the fake answered.
func (c *common) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Throttle has the next n requests answered 429 with Retry-After: 1.
func (c *common) Throttle(n int) {
	c.mu.Lock()
	c.throttle = n
	c.mu.Unlock()
}

// URL is the fake API's base URL.
func (c *common) URL() string { return c.Server.URL }

// start serves h, counting requests and answering the throttled ones.
// h runs with c.mu held.
func (c *common) start(t testing.TB, h http.HandlerFunc) {
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.requests++
		time.Sleep(c.delay)
		if c.throttle > 0 {
			c.throttle--
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "rate limited"})
			return
		}
		h(w, r)
	}))
	t.Cleanup(c.Server.Close)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// page bounds the items [start, start+n) of a list of length total.
func page(start, n, total int) (int, int) {
	start = min(max(start, 0), total)
	return start, min(start+n, total)
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
