package providertest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Paddle serves a notification log as Paddle Billing's API does
// (PaddleHQ/paddle-openapi, list-notifications and replay-notification):
// GET /notifications, id[DESC], 200 a page at most, notification_setting_id,
// from and after, meta.pagination.next; POST /notifications/{id}/replay,
// only of an original (origin event) notification that was delivered or
// failed, which makes a new notification (origin replay) of the same
// event and sends it signed with Paddle-Signature. It takes a Bearer API
// key.
type Paddle struct {
	common
	Key, Destination string
	// Secret is the destination's endpoint secret key, which signs.
	Secret  string
	Deliver Deliver
	notes   []paddleNote // oldest first
	// Replayed counts the replays answered 202.
	Replayed int
}

type paddleNote struct {
	id, eventID, eventType, status, origin, setting string
	at                                              time.Time
	data                                            json.RawMessage
}

// NewPaddle serves destination's notifications to key.
func NewPaddle(t testing.TB, key, destination, secret string) *Paddle {
	p := &Paddle{Key: key, Destination: destination, Secret: secret}
	p.start(t, p.serve)
	return p
}

// Notify logs a notification of an event to the destination with this
// status (delivered, failed, needs_retry), and returns its id.
func (p *Paddle) Notify(eventID, eventType string, data []byte, at time.Time, status string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notifyLocked(eventID, eventType, data, at, status, "event")
}

func (p *Paddle) notifyLocked(eventID, eventType string, data []byte, at time.Time, status, origin string) string {
	id := fmt.Sprintf("ntf_%026d", len(p.notes)+1)
	p.notes = append(p.notes, paddleNote{id: id, eventID: eventID, eventType: eventType, status: status, origin: origin, setting: p.Destination, at: at, data: data})
	return id
}

// Payload is the body Paddle sends for a notification.
func (n paddleNote) payload() []byte {
	b, _ := json.Marshal(map[string]any{"data": n.data, "event_id": n.eventID, "event_type": n.eventType, "occurred_at": rfc3339(n.at), "notification_id": n.id})
	return b
}

// Sign is the Paddle-Signature header over body at ts.
func (p *Paddle) Sign(body []byte, ts time.Time) http.Header {
	t := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(p.Secret))
	mac.Write([]byte(t + ":"))
	mac.Write(body)
	return http.Header{"Content-Type": {"application/json"}, "Paddle-Signature": {"ts=" + t + ";h1=" + hex.EncodeToString(mac.Sum(nil))}}
}

// Send delivers an event now, as Paddle does when it happens, and logs
// its notification delivered or, when the receiver did not take it,
// with status ifFailed (needs_retry, or failed once retries ran out).
func (p *Paddle) Send(eventID, eventType string, data []byte, at time.Time, ifFailed string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notifyLocked(eventID, eventType, data, at, ifFailed, "event")
	n := &p.notes[len(p.notes)-1]
	status := 0
	if p.Deliver != nil {
		body := n.payload()
		status = p.Deliver(Delivery{Header: p.Sign(body, time.Now()), Body: body})
	}
	if status >= 200 && status < 300 {
		n.status = "delivered"
	}
	return status
}

func (p *Paddle) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+p.Key {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]string{"type": "request_error", "code": "forbidden", "detail": "You aren't permitted to perform this request."}})
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/notifications":
		p.list(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/notifications/") && strings.HasSuffix(r.URL.Path, "/replay"):
		p.replay(w, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/notifications/"), "/replay"))
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"type": "request_error", "code": "not_found"}})
	}
}

func (p *Paddle) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	perPage := 50
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"type": "request_error", "code": "invalid_field", "detail": "per_page must be between 1 and 200"}})
			return
		}
		perPage = n
	}
	var from time.Time
	if v := q.Get("from"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"type": "request_error", "code": "invalid_field", "detail": "from must be RFC 3339"}})
			return
		}
		from = t
	}
	settings := q.Get("notification_setting_id")
	var matching []paddleNote
	for i := len(p.notes) - 1; i >= 0; i-- { // id[DESC]
		n := p.notes[i]
		if n.at.Before(from) || n.at.Before(time.Now().AddDate(0, 0, -90)) || (settings != "" && !strings.Contains(","+settings+",", ","+n.setting+",")) {
			continue
		}
		matching = append(matching, n)
	}
	start := 0
	if after := q.Get("after"); after != "" {
		for i, n := range matching {
			if n.id == after {
				start = i + 1
			}
		}
	}
	start, end := page(start, perPage, len(matching))
	data := make([]map[string]any, 0, end-start)
	for _, n := range matching[start:end] {
		var payload any
		_ = json.Unmarshal(n.payload(), &payload)
		var delivered any
		if n.status == "delivered" {
			delivered = rfc3339(n.at)
		}
		data = append(data, map[string]any{"id": n.id, "type": n.eventType, "status": n.status, "payload": payload, "occurred_at": rfc3339(n.at),
			"delivered_at": delivered, "replayed_at": nil, "origin": n.origin, "last_attempt_at": rfc3339(n.at), "retry_at": nil, "times_attempted": 1, "notification_setting_id": n.setting})
	}
	next := ""
	if end > start {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("after", matching[end-1].id)
		next = p.Server.URL + "/notifications?" + v.Encode()
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "meta": map[string]any{"request_id": uuid(),
		"pagination": map[string]any{"per_page": perPage, "next": next, "has_more": end < len(matching), "estimated_total": len(matching)}}})
}

func (p *Paddle) replay(w http.ResponseWriter, id string) {
	for _, n := range p.notes {
		if n.id != id {
			continue
		}
		if n.origin != "event" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"type": "request_error", "code": "notification_replay_invalid_origin_type"}})
			return
		}
		if n.status != "delivered" && n.status != "failed" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"type": "request_error", "code": "notification_cannot_replay"}})
			return
		}
		newID := p.notifyLocked(n.eventID, n.eventType, n.data, n.at, "failed", "replay")
		r := &p.notes[len(p.notes)-1]
		if p.Deliver != nil {
			body := r.payload()
			if s := p.Deliver(Delivery{Header: p.Sign(body, time.Now()), Body: body}); s >= 200 && s < 300 {
				r.status = "delivered"
			}
		}
		p.Replayed++
		writeJSON(w, http.StatusAccepted, map[string]any{"data": map[string]string{"notification_id": newID}, "meta": map[string]string{"request_id": uuid()}})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"type": "request_error", "code": "entity_not_found"}})
}
