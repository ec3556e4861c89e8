package store

import (
	"context"
	"net/http"
	"time"
)

// Rejection is a refused webhook request as kept for triage: what was
// refused and why, never a secret, a signature or, unless the source asks
// for some, the body.
type Rejection struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	// Reason is the refusal's reason (bad_signature, ip_not_allowed, …;
	// the outcome is rejected_<reason>), or unavailable when the store
	// could not take the event.
	Reason string `json:"reason"`
	// Status is the answer's HTTP status.
	Status   int    `json:"status"`
	ClientIP string `json:"client_ip"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	// Header holds the request's headers, the values of all but a few
	// harmless ones (Content-Type, User-Agent, event-type headers)
	// replaced by their length.
	Header http.Header `json:"headers,omitempty"`
	// Detail is the verifier's or reader's explanation, when it gave one.
	Detail string `json:"detail,omitempty"`
	// Body is the start of the body, masked, when the source keeps some.
	Body string `json:"body,omitempty"`
}

// RejectionLog is one source's most recent rejections, oldest first, and
// how many more were refused than were kept (the log is rate-limited).
type RejectionLog struct {
	Records []Rejection `json:"records"`
	// Dropped counts refusals not kept because they came faster than the
	// log takes them.
	Dropped int64 `json:"dropped"`
}

// RejectionKeeper is a store that keeps rejection logs durably, one per
// source (and, in a store shared by instances, per instance).
type RejectionKeeper interface {
	// KeepRejections durably replaces this instance's logs of the sources
	// given, in one write.
	KeepRejections(ctx context.Context, logs map[string]RejectionLog) error
	// Rejections returns the kept logs by source. With mine, only this
	// instance's (what it carries on after a restart); else every
	// instance's, merged, oldest first.
	Rejections(mine bool) (map[string]RejectionLog, error)
}
