package deliver

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Upstream is a delivery destination as the engine runs it.
type Upstream struct {
	Name        string
	URL         *url.URL
	Timeout     time.Duration
	Concurrency int
	Retry       RetryPolicy
	// Rate bounds attempts per second (0 = unbounded); Burst is the bucket size.
	Rate  float64
	Burst int
	// Breaker stops attempts to an upstream that keeps failing.
	Breaker BreakerPolicy
	// Sign, when set, re-signs each delivery request for the backend;
	// SignID names how, so two configurations can be compared.
	Sign   SignFunc `json:"-"`
	SignID string
	// Headers are set on every delivery request, before a route's shaping;
	// they may carry credentials, so they are never logged.
	Headers map[string]string
	// Transport, when set, carries the upstream's requests (Caddy's
	// reverse_proxy HTTP transport, with its TLS trust, client certificate
	// and proxy); nil uses the engine's own. TransportID names its
	// configuration, so two configurations can be compared.
	Transport   http.RoundTripper `json:"-"`
	TransportID string
	// HostFromURL sends the URL's host as Host instead of the public host
	// the event arrived on (which X-Forwarded-Host still carries): a forward
	// proxy takes a plain-http request to the host its Host names.
	HostFromURL bool
	// ExactURL sends every request to URL as it is, without the event's
	// path and query: an alert target's URL is the whole address (and its
	// path may be its credential, as a Slack webhook's is).
	ExactURL bool
	// CredentialPath marks a URL whose path is a credential (a Slack or
	// Teams webhook's): errors, logged and stored, name only its scheme
	// and host.
	CredentialPath bool
}

// RetryPolicy says how failed attempts are retried.
type RetryPolicy struct {
	MaxAttempts     int
	InitialInterval time.Duration
	MaxInterval     time.Duration
	// MaxAge gives up once the event (or its last replay) is this old; 0 never.
	MaxAge time.Duration
	// RetryOn says which failures are retried; the zero value means
	// DefaultRetryOn.
	RetryOn RetryOn
}

// RetryOn says which failures are retried.
type RetryOn struct {
	Codes    map[int]bool
	Class4xx bool
	Class5xx bool
	Network  bool
}

// DefaultRetryOn retries 408, 429, 5xx and network errors (timeouts included).
var DefaultRetryOn = RetryOn{Codes: map[int]bool{408: true, 429: true}, Class5xx: true, Network: true}

// ParseRetryOn reads a list of status codes, "4xx", "5xx" and "network".
func ParseRetryOn(items []string) (RetryOn, error) {
	r := RetryOn{Codes: map[int]bool{}}
	for _, item := range items {
		switch item {
		case "4xx":
			r.Class4xx = true
		case "5xx":
			r.Class5xx = true
		case "network":
			r.Network = true
		default:
			code, err := strconv.Atoi(item)
			if err != nil || code < 100 || code > 599 {
				return RetryOn{}, fmt.Errorf("retry_on: %q is not a status code, 4xx, 5xx or network", item)
			}
			r.Codes[code] = true
		}
	}
	return r, nil
}

func (r RetryOn) isZero() bool { return len(r.Codes) == 0 && !r.Class4xx && !r.Class5xx && !r.Network }

// Retries reports whether a failed attempt is retried.
func (r RetryOn) Retries(err error, status int) bool {
	if r.isZero() {
		r = DefaultRetryOn
	}
	switch {
	case err != nil:
		return r.Network
	case r.Codes[status]:
		return true
	case status >= 500:
		return r.Class5xx
	case status >= 400:
		return r.Class4xx
	}
	return false
}
