package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Square searches events (POST /v2/events, SearchEvents, kept 28 days),
// oldest first, 100 a page, following the cursor. Square cannot redeliver:
// each event is fetched and stored as its webhook would have carried it
// (merchant_id, location_id, type, event_id, created_at, data), and its
// event_id is its dedup key, as on the webhook path. The Events API takes
// a personal access token, and must have been turned on
// (PUT /v2/events/enable) before the events happened.
type Square struct{ api }

// SquareAPI is Square's production API; the sandbox is
// https://connect.squareupsandbox.com.
const SquareAPI = "https://connect.squareup.com"

// SquareVersion is the API version the client asks for.
const SquareVersion = "2025-08-20"

// NewSquare makes a Square client with a personal access token.
func NewSquare(client *http.Client, base, token string) *Square {
	if base == "" {
		base = SquareAPI
	}
	// Square publishes no rate; a run stays at 10 requests a second.
	return &Square{api{http: client, base: strings.TrimRight(base, "/"), auth: "Bearer " + token, limiter: &limiter{interval: 100 * time.Millisecond}}}
}

// squareEvent is an event as SearchEvents answers and the webhook body
// carries it.
type squareEvent struct {
	MerchantID string          `json:"merchant_id"`
	LocationID string          `json:"location_id,omitempty"`
	Type       string          `json:"type"`
	EventID    string          `json:"event_id"`
	CreatedAt  string          `json:"created_at"`
	Data       json.RawMessage `json:"data"`
}

// squareTime reads created_at, which SearchEvents may write without a zone
// (UTC).
func squareTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05.999999999", s)
}

// List calls each for every event created at or after since.
func (s *Square) List(ctx context.Context, since time.Time, each func(Found) error) error {
	type query struct {
		Cursor string `json:"cursor,omitempty"`
		Limit  int    `json:"limit"`
		Query  any    `json:"query"`
	}
	q := query{Limit: 100, Query: map[string]any{
		"filter": map[string]any{"created_at": map[string]string{"start_at": since.UTC().Format(time.RFC3339)}},
		"sort":   map[string]string{"field": "DEFAULT", "order": "ASC"},
	}}
	for {
		body, _ := json.Marshal(q)
		data, _, err := s.send(ctx, http.MethodPost, s.base+"/v2/events", body, http.Header{"Square-Version": {SquareVersion}})
		if err != nil {
			return err
		}
		var page struct {
			Events []squareEvent `json:"events"`
			Cursor string        `json:"cursor"`
			Errors []struct {
				Code, Detail string
			} `json:"errors"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return errors.New("square: the answer is not a list of events")
		}
		if len(page.Errors) > 0 {
			return errors.New("square: " + page.Errors[0].Code + ": " + page.Errors[0].Detail)
		}
		for _, e := range page.Events {
			at, err := squareTime(e.CreatedAt)
			if err != nil || e.EventID == "" || e.Type == "" {
				return errors.New("square: an event without an event_id, a type or a created_at")
			}
			if at.Before(since) {
				continue
			}
			hook, _ := json.Marshal(e) // the fields the webhook carries, in its order
			if err := each(Found{Key: e.EventID, At: at, Body: hook}); err != nil {
				return err
			}
		}
		if page.Cursor == "" || len(page.Events) == 0 {
			return nil
		}
		q.Cursor = page.Cursor
	}
}
