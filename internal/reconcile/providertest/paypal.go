package providertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PayPal serves webhook events as PayPal's REST API does
// (paypal-rest-api-specifications, notifications_webhooks_v1.json):
// POST /v1/oauth2/token (client credentials, Basic), GET
// /v1/notifications/webhooks-events (page_size, start_time, end_time,
// newest first, a next link on api.paypal.com with & escaped as older
// answers have it), POST …/webhooks-events/{id}/resend ({webhook_ids}),
// which sends the event again in a new transmission, signed by Sign.
type PayPal struct {
	common
	ClientID, Secret string
	// Sign signs a body as PayPal does, in a new transmission.
	Sign    func(body []byte) http.Header
	Deliver Deliver
	events  []paypalEvent // oldest first
	tokens  map[string]bool
	// Tokens counts the access tokens issued; Resent the resends answered.
	Tokens, Resent int
	// ResentTo is the webhook_ids of the last resend.
	ResentTo []string
}

type paypalEvent struct {
	id   string
	at   time.Time
	body []byte
}

// NewPayPal serves the app clientID:secret.
func NewPayPal(t testing.TB, clientID, secret string) *PayPal {
	p := &PayPal{ClientID: clientID, Secret: secret, tokens: map[string]bool{}}
	p.start(t, p.serve)
	return p
}

// Event logs an event created at at and returns its body, the event as
// the webhook carries it.
func (p *PayPal) Event(id, eventType string, at time.Time) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"id": id, "create_time": at.UTC().Format(time.RFC3339), "resource_type": "capture", "event_type": eventType,
		"summary": "Payment completed", "resource_version": "2.0", "event_version": "1.0", "resource": map[string]any{"id": "5O190127TN364715T", "status": "COMPLETED"},
		"links": []map[string]string{{"href": "https://api.paypal.com/v1/notifications/webhooks-events/" + id, "rel": "self", "method": "GET"}}})
	p.events = append(p.events, paypalEvent{id: id, at: at.Truncate(time.Second), body: body}) // create_time is whole seconds
	return body
}

// Send delivers an event now, in a transmission of its own.
func (p *PayPal) Send(body []byte) int {
	if p.Deliver == nil {
		return 0
	}
	h := p.Sign(body)
	h.Set("Content-Type", "application/json")
	return p.Deliver(Delivery{Header: h, Body: body})
}

func paypalError(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, map[string]any{"name": name, "message": msg, "debug_id": fmt.Sprintf("%x", time.Now().UnixNano())})
}

func (p *PayPal) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/v1/oauth2/token" {
		p.token(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !p.tokens[tok] {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": "Token signature verification failed"})
		return
	}
	const prefix = "/v1/notifications/webhooks-events"
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == prefix || r.URL.Path == prefix+"/"):
		p.list(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, prefix+"/") && strings.HasSuffix(r.URL.Path, "/resend"):
		p.resend(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix+"/"), "/resend"))
	default:
		paypalError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", "The specified resource does not exist.")
	}
}

func (p *PayPal) token(w http.ResponseWriter, r *http.Request) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.ClientID+":"+p.Secret))
	if r.Header.Get("Authorization") != want {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "Client Authentication failed"})
		return
	}
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": "Grant Type is NULL"})
		return
	}
	tok := fmt.Sprintf("A21AA%d", time.Now().UnixNano())
	p.tokens[tok] = true
	p.Tokens++
	writeJSON(w, http.StatusOK, map[string]any{"scope": "https://uri.paypal.com/services/applications/webhooks", "access_token": tok, "token_type": "Bearer",
		"app_id": "APP-80W284485P519543T", "expires_in": 32400, "nonce": "2026-12-02T00:00:00Z" + tok})
}

func (p *PayPal) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size := 10
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 300 {
			paypalError(w, http.StatusBadRequest, "INVALID_REQUEST", "page_size is out of range")
			return
		}
		size = n
	}
	var start, end time.Time
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"start_time", &start}, {"end_time", &end}} {
		if v := q.Get(b.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				paypalError(w, http.StatusBadRequest, "INVALID_REQUEST", b.name+" is not RFC 3339")
				return
			}
			*b.t = t
		}
	}
	var matching []paypalEvent
	for i := len(p.events) - 1; i >= 0; i-- { // newest first
		e := p.events[i]
		if (!start.IsZero() && e.at.Before(start)) || (!end.IsZero() && e.at.After(end)) {
			continue
		}
		matching = append(matching, e)
	}
	offset, _ := strconv.Atoi(q.Get("index_id"))
	from, to := page(offset, size, len(matching))
	events := make([]json.RawMessage, 0, to-from)
	for _, e := range matching[from:to] {
		events = append(events, e.body)
	}
	var links []map[string]string
	if to < len(matching) {
		v := url.Values{"page_size": {strconv.Itoa(size)}, "start_time": {q.Get("start_time")}, "end_time": {q.Get("end_time")}, "move_to": {"next"}, "index_id": {strconv.Itoa(to)}}
		links = append(links, map[string]string{"href": "https://api.paypal.com/v1/notifications/webhooks-events/?" + strings.ReplaceAll(v.Encode(), "&", "&amp;"), "rel": "next", "method": "GET"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": events, "count": len(events), "links": links})
}

func (p *PayPal) resend(w http.ResponseWriter, r *http.Request, id string) {
	var req struct {
		WebhookIDs []string `json:"webhook_ids"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.WebhookIDs) > 500 {
		paypalError(w, http.StatusBadRequest, "INVALID_REQUEST", "Request is not well-formed, syntactically incorrect, or violates schema.")
		return
	}
	for _, e := range p.events {
		if e.id == id {
			p.Resent++
			p.ResentTo = req.WebhookIDs
			p.Send(e.body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(e.body)
			return
		}
	}
	paypalError(w, http.StatusNotFound, "INVALID_RESOURCE_ID", "Requested resource ID was not found.")
}
