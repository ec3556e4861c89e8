package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Paddle lists a notification destination's notifications (GET
// /notifications, kept 90 days), 200 a page, following
// meta.pagination.next while has_more. Paddle retries a failed delivery
// for 3 days and replays one on request (POST
// /notifications/{id}/replay): the replay is a new notification of the
// same event, signed, through the webhook path, whose dedup key is the
// event id. A notification Paddle is still retrying is left to it.
type Paddle struct {
	api
	destination string
}

// PaddleAPI is Paddle's live API; the sandbox is
// https://sandbox-api.paddle.com.
const PaddleAPI = "https://api.paddle.com"

// NewPaddle makes a client for one notification destination (its
// ntfset_ id), with an API key that has notification.read and
// notification.write.
func NewPaddle(client *http.Client, base, key, destination string) (*Paddle, error) {
	if !paddleDestination.MatchString(destination) {
		return nil, fmt.Errorf("hook %q is not a notification setting id (ntfset_…)", destination)
	}
	if base == "" {
		base = PaddleAPI
	}
	// Paddle allows 240 requests a minute from an address.
	return &Paddle{api: api{http: client, base: strings.TrimRight(base, "/"), auth: "Bearer " + key, limiter: &limiter{interval: 300 * time.Millisecond}}, destination: destination}, nil
}

type paddleNotification struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	Origin     string    `json:"origin"`
	OccurredAt time.Time `json:"occurred_at"`
	Setting    string    `json:"notification_setting_id"`
	Payload    struct {
		EventID string `json:"event_id"`
	} `json:"payload"`
}

// List calls each for every event notified to the destination at or
// after since: delivered if one of its notifications was, pending while
// Paddle still retries one and none was delivered; the one replayed is
// the event's original notification (Paddle replays no replay).
func (p *Paddle) List(ctx context.Context, since time.Time, each func(Found) error) error {
	type event struct {
		at                 time.Time
		original           string
		delivered, pending bool
	}
	events := map[string]*event{}
	var order []string
	q := url.Values{"notification_setting_id": {p.destination}, "per_page": {"200"}, "from": {since.UTC().Format(time.RFC3339)}}
	next := p.base + "/notifications?" + q.Encode()
	for next != "" {
		data, _, err := p.do(ctx, http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		var page struct {
			Data []paddleNotification `json:"data"`
			Meta struct {
				Pagination struct {
					Next    string `json:"next"`
					HasMore bool   `json:"has_more"`
				} `json:"pagination"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(data, &page); err != nil || page.Data == nil {
			return errors.New("paddle: the answer is not a list of notifications")
		}
		for _, n := range page.Data {
			if n.Payload.EventID == "" || n.ID == "" {
				return errors.New("paddle: a notification without an id or an event id")
			}
			if n.OccurredAt.Before(since) || n.Setting != p.destination {
				continue
			}
			e := events[n.Payload.EventID]
			if e == nil {
				e = &event{at: n.OccurredAt}
				events[n.Payload.EventID] = e
				order = append(order, n.Payload.EventID)
			}
			switch n.Status {
			case "delivered":
				e.delivered = true
			case "needs_retry", "not_attempted":
				e.pending = true
			}
			if n.Origin == "event" {
				e.original = n.ID
			}
		}
		next = ""
		if page.Meta.Pagination.HasMore && len(page.Data) > 0 {
			if !strings.HasPrefix(page.Meta.Pagination.Next, p.base+"/") {
				return fmt.Errorf("paddle: next page %q is not on %s", page.Meta.Pagination.Next, p.base)
			}
			next = page.Meta.Pagination.Next
		}
	}
	for _, id := range order {
		e := events[id]
		f := Found{Key: id, At: e.at, Delivered: e.delivered, Pending: e.pending && !e.delivered}
		original := e.original
		f.Redeliver = func(ctx context.Context) error {
			if original == "" {
				// Paddle replays only an event's original notification.
				return fmt.Errorf("paddle: event %s has only replays since %s; replay it from the dashboard", id, since.Format(time.RFC3339))
			}
			_, _, err := p.do(ctx, http.MethodPost, p.base+"/notifications/"+url.PathEscape(original)+"/replay", nil)
			return err
		}
		if err := each(f); err != nil {
			return err
		}
	}
	return nil
}
