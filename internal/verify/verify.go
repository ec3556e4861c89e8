// Package verify checks webhook signatures: a declarative HMAC engine and the
// provider presets built on it. Every check runs over the raw request bytes,
// before anything parses them, and compares in constant time.
package verify

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Request is what a scheme may look at: the raw body and the request line.
type Request struct {
	Body   []byte
	Header http.Header
	Method string
	// URL is the public URL the provider sent to, with its query.
	URL string
	// Now is the time timestamps are checked against.
	Now time.Time
	// Learned is the secret a handshake established for the source, read
	// from the store for this request (so a revoked one stops verifying at
	// once, on every instance), or empty.
	Learned string
	// Context is the request's, for schemes that fetch a key; nil means
	// context.Background().
	Context context.Context
}

func (r *Request) context() context.Context {
	if r.Context == nil {
		return context.Background()
	}
	return r.Context
}

// Result is what a successful Verify found beyond the signature being good.
type Result struct {
	// SingleUseToken is set by schemes whose signature covers a token but
	// not the body (Mailgun's): the token may be accepted once within
	// SingleUseWindow, or a captured signature could carry any body.
	SingleUseToken  string
	SingleUseWindow time.Duration
	// DedupKey, when set, names this one delivery of one event by what the
	// signature covered (SNS: the digest of the string to sign). It is the
	// source's dedup key unless the source configures its own.
	DedupKey string
	// Secret is the index of the configured secret that verified (see
	// PerSecret); 0 with a single secret.
	Secret int
}

// Reasons a request is refused. They are for logs and counters; the provider
// only ever sees 401.
var (
	ErrMissingSignature   = errors.New("signature header missing")
	ErrMalformedSignature = errors.New("signature header malformed")
	ErrInvalidSignature   = errors.New("signature does not match")
	ErrMissingTimestamp   = errors.New("timestamp missing or malformed")
	ErrStaleTimestamp     = errors.New("timestamp outside tolerance")
)

// Reason names a verification error for metrics and logs.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrKeyUnavailable):
		return "key_unavailable"
	case errors.Is(err, ErrMissingSignature):
		return "missing_signature"
	case errors.Is(err, ErrMalformedSignature):
		return "malformed_signature"
	case errors.Is(err, ErrInvalidSignature):
		return "invalid_signature"
	case errors.Is(err, ErrMissingTimestamp):
		return "missing_timestamp"
	case errors.Is(err, ErrStaleTimestamp):
		return "stale_timestamp"
	default:
		return "unverified"
	}
}

// Scheme verifies one provider's signatures.
type Scheme interface {
	// Verify returns a nil error when the request carries a valid signature
	// made with one of the scheme's secrets. It does not modify r, which
	// callers may share.
	Verify(r *Request) (Result, error)
}
