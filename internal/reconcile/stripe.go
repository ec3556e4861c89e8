package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Stripe lists events with GET /v1/events (30 days), newest first, 100 a
// page, paging with starting_after while has_more, bounded by
// created[gte]. Stripe cannot redeliver: each event is fetched, and its
// id is its dedup key, as on the webhook path.
type Stripe struct{ api }

// StripeAPI is Stripe's API host.
const StripeAPI = "https://api.stripe.com"

// NewStripe makes a Stripe client with a secret or restricted key that
// can read events.
func NewStripe(client *http.Client, base, key string) *Stripe {
	if base == "" {
		base = StripeAPI
	}
	// Stripe allows 100 read requests a second in live mode; a run stays
	// far below.
	return &Stripe{api{http: client, base: strings.TrimRight(base, "/"), auth: "Bearer " + key, limiter: &limiter{interval: 50 * time.Millisecond}}}
}

// List calls each for every event created at or after since.
func (s *Stripe) List(ctx context.Context, since time.Time, each func(Found) error) error {
	after := ""
	for {
		q := url.Values{"limit": {"100"}, "created[gte]": {strconv.FormatInt(since.Unix(), 10)}}
		if after != "" {
			q.Set("starting_after", after)
		}
		data, _, err := s.do(ctx, http.MethodGet, s.base+"/v1/events?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		var page struct {
			Object  string            `json:"object"`
			Data    []json.RawMessage `json:"data"`
			HasMore bool              `json:"has_more"`
		}
		if err := json.Unmarshal(data, &page); err != nil || page.Object != "list" {
			return errors.New("stripe: the answer is not a list of events")
		}
		for _, raw := range page.Data {
			var e struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Created int64  `json:"created"`
			}
			if err := json.Unmarshal(raw, &e); err != nil || e.Object != "event" || e.ID == "" {
				return fmt.Errorf("stripe: an item of the list is not an event")
			}
			if err := each(Found{Key: e.ID, At: time.Unix(e.Created, 0), Body: append([]byte(nil), raw...)}); err != nil {
				return err
			}
			after = e.ID
		}
		if !page.HasMore || len(page.Data) == 0 {
			return nil
		}
	}
}
