package store

import (
	"fmt"
	"strings"
	"time"
)

// EventSummary is an event in a listing.
type EventSummary struct {
	ID          ID         `json:"id"`
	Source      string     `json:"source"`
	ReceivedAt  time.Time  `json:"received_at"`
	Status      State      `json:"status"`
	DedupKey    string     `json:"dedup_key,omitempty"`
	Deliveries  []Delivery `json:"deliveries"`
	Quarantined string     `json:"quarantined,omitempty"`
	// Handshake marks a recorded handshake (see Event.Handshake).
	Handshake string `json:"handshake,omitempty"`
	// Origin is how the event came (see Event.Origin); "" for a webhook.
	Origin string `json:"origin,omitempty"`
}

// ListFilter selects events, newest first.
type ListFilter struct {
	Source string
	// Status is the event's status; empty means any.
	Status State
	// Query matches a substring of the event id or dedup key.
	Query string
	// Search keeps the events whose search field Field has the value
	// Value, exactly; nil keeps every event.
	Search *SearchTerm
	// Upstream keeps the events with a delivery to it; Origin those that
	// came so (webhook, reconcile, redelivery). Empty means any.
	Upstream, Origin string
	Since            time.Time
	Until            time.Time
	// Before resumes a listing below this id.
	Before *ID
	Limit  int
}

// SearchTerm is a query of one search field: name:value.
type SearchTerm struct {
	Field, Value string
}

// ParseSearch reads name:value.
func ParseSearch(q string) (*SearchTerm, error) {
	field, value, ok := strings.Cut(q, ":")
	if !ok || field == "" || value == "" {
		return nil, fmt.Errorf("search: want name:value, such as type:invoice.paid, got %q", q)
	}
	return &SearchTerm{Field: field, Value: value}, nil
}

// Keeps reports whether an event and its deliveries pass the filter's
// search term, origin and upstream.
func (f ListFilter) Keeps(e *Event, ds []Delivery) bool {
	if f.Search != nil && e.Search[f.Search.Field] != f.Search.Value {
		return false
	}
	switch {
	case f.Origin == "webhook" && e.Origin != "",
		f.Origin != "" && f.Origin != "webhook" && e.Origin != f.Origin:
		return false
	case f.Upstream == "":
		return true
	}
	for _, d := range ds {
		if d.Upstream == f.Upstream {
			return true
		}
	}
	return false
}

// Status derives an event's status: quarantined or unrouted first, then
// pending if any delivery is, dead if any is, canceled if any is, else
// delivered.
func Status(e *Event, ds []Delivery) State {
	switch {
	case e.Quarantined != "":
		return StateQuarantined
	case e.Unrouted || len(ds) == 0:
		return StateUnrouted
	}
	has := map[State]bool{}
	for _, d := range ds {
		has[d.State] = true
	}
	switch {
	case has[StatePending]:
		return StatePending
	case has[StateDead]:
		return StateDead
	case has[StateCanceled]:
		return StateCanceled
	}
	return StateDelivered
}

// UpstreamStats counts one upstream's deliveries.
type UpstreamStats struct {
	Pending   int `json:"pending"`
	Delivered int `json:"delivered"`
	Dead      int `json:"dead"`
	Canceled  int `json:"canceled"`
	// OldestPendingSeconds is the age of the longest-waiting pending delivery.
	OldestPendingSeconds float64 `json:"oldest_pending_seconds"`
}

// Stats counts stored events and deliveries. It reads every delivery, so it
// is an operator's query, not something to poll many times a second.
type Stats struct {
	Events      int                      `json:"events"`
	Unrouted    int                      `json:"unrouted"`
	Quarantined int                      `json:"quarantined"`
	Pending     int                      `json:"pending"`
	Dead        int                      `json:"dead"`
	Delivered   int                      `json:"delivered"`
	Canceled    int                      `json:"canceled"`
	Oldest      float64                  `json:"oldest_pending_seconds"`
	Upstreams   map[string]UpstreamStats `json:"upstreams"`
	// Sources are each source's stored events and bytes.
	Sources map[string]SourceStats `json:"sources"`
}

// SourceStats is what one source keeps in the store.
type SourceStats struct {
	Events int `json:"events"`
	// Bytes are its events' stored bytes: records (headers, metadata) and
	// bodies, without deliveries, attempts or the store's own overhead.
	Bytes int64 `json:"bytes"`
	// BodyBytes are the bodies' share of Bytes.
	BodyBytes int64 `json:"body_bytes"`
}

// AddEvent counts one stored event of source: its record's and its body's
// bytes.
func (st *Stats) AddEvent(source string, record, body int64) {
	if st.Sources == nil {
		st.Sources = map[string]SourceStats{}
	}
	s := st.Sources[source]
	s.Events++
	s.Bytes += record + body
	s.BodyBytes += body
	st.Sources[source] = s
}

// Count adds n deliveries to upstream in state, to the upstream's counts
// and the totals.
func (st *Stats) Count(upstream string, state State, n int) {
	if st.Upstreams == nil {
		st.Upstreams = map[string]UpstreamStats{}
	}
	u := st.Upstreams[upstream]
	switch state {
	case StatePending:
		u.Pending += n
		st.Pending += n
	case StateDelivered:
		u.Delivered += n
		st.Delivered += n
	case StateDead:
		u.Dead += n
		st.Dead += n
	case StateCanceled:
		u.Canceled += n
		st.Canceled += n
	}
	st.Upstreams[upstream] = u
}

// TimelinePoint counts one minute: events received, attempts delivered and
// attempts failed.
type TimelinePoint struct {
	Minute    time.Time `json:"minute"`
	Received  int       `json:"received"`
	Delivered int       `json:"delivered"`
	Failed    int       `json:"failed"`
}
