package reconcile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// PayPal lists webhook events (GET /v1/notifications/webhooks-events,
// kept 30 days), 100 a page, following the next link. PayPal retries a
// failed delivery for 3 days and resends an event on request (POST
// …/webhooks-events/{id}/resend), signed anew, through the webhook path,
// where the event id is the dedup key. Its API takes an OAuth2 access
// token, which the client gets with the app's client id and secret and
// keeps until it expires.
type PayPal struct {
	api
	clientID, secret string
	webhook          string

	mu      sync.Mutex
	expires time.Time
}

// PayPalAPI is PayPal's live API; the sandbox is
// https://api-m.sandbox.paypal.com.
const PayPalAPI = "https://api-m.paypal.com"

// NewPayPal makes a client with an app's CLIENT_ID:SECRET; webhook, when
// set, is the webhook id resends go to (else every webhook of the app
// subscribed to the event).
func NewPayPal(client *http.Client, base, credentials, webhook string) (*PayPal, error) {
	id, secret, ok := strings.Cut(credentials, ":")
	if !ok || id == "" || secret == "" {
		return nil, errors.New("credentials must be CLIENT_ID:SECRET of a PayPal REST app")
	}
	if webhook != "" && !paypalWebhook.MatchString(webhook) {
		return nil, fmt.Errorf("hook %q is not a PayPal webhook id", webhook)
	}
	if base == "" {
		base = PayPalAPI
	}
	// PayPal publishes no rate; a run stays at 5 requests a second.
	return &PayPal{api: api{http: client, base: strings.TrimRight(base, "/"), limiter: &limiter{interval: 200 * time.Millisecond}},
		clientID: id, secret: secret, webhook: webhook}, nil
}

// token gets an access token (client credentials) unless the one held
// is good for another minute.
func (p *PayPal) token(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.auth != "" && time.Until(p.expires) > time.Minute {
		return nil
	}
	basic := api{http: p.http, base: p.base, auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(p.clientID+":"+p.secret)), limiter: p.limiter}
	data, _, err := basic.form(ctx, p.base+"/v1/oauth2/token", url.Values{"grant_type": {"client_credentials"}})
	p.Requests += basic.Requests
	if err != nil {
		return fmt.Errorf("paypal: getting an access token: %w", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "Bearer") {
		return errors.New("paypal: the token answer carries no bearer access token")
	}
	p.auth, p.expires = "Bearer "+tok.AccessToken, time.Now().Add(time.Duration(tok.ExpiresIn)*time.Second)
	return nil
}

type paypalLink struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// List calls each for every event created at or after since.
func (p *PayPal) List(ctx context.Context, since time.Time, each func(Found) error) error {
	if err := p.token(ctx); err != nil {
		return err
	}
	// end_time a minute ahead: PayPal's times are whole seconds, and an
	// event of this second is listed now rather than by the next run.
	q := url.Values{"page_size": {"100"}, "start_time": {since.UTC().Format(time.RFC3339)}, "end_time": {time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}
	next := p.base + "/v1/notifications/webhooks-events?" + q.Encode()
	for next != "" {
		data, _, err := p.do(ctx, http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		var page struct {
			Events []struct {
				ID         string    `json:"id"`
				CreateTime time.Time `json:"create_time"`
			} `json:"events"`
			Links []paypalLink `json:"links"`
		}
		if err := json.Unmarshal(data, &page); err != nil || page.Events == nil {
			return errors.New("paypal: the answer is not a list of webhook events")
		}
		for _, e := range page.Events {
			if e.ID == "" {
				return errors.New("paypal: an event without an id")
			}
			if e.CreateTime.Before(since) {
				continue
			}
			id := e.ID
			// PayPal's list says nothing of delivery: the gateway's own
			// record decides, and an event it lacks is resent.
			f := Found{Key: id, At: e.CreateTime, Delivered: true, Redeliver: func(ctx context.Context) error { return p.resend(ctx, id) }}
			if err := each(f); err != nil {
				return err
			}
		}
		next = ""
		for _, l := range page.Links {
			if l.Rel == "next" && len(page.Events) > 0 {
				// PayPal's older answers escape & in links, and name
				// api.paypal.com: the page is asked of the configured API,
				// so the token goes nowhere else.
				u, err := url.Parse(strings.ReplaceAll(l.Href, "&amp;", "&"))
				if err != nil || !strings.HasPrefix(u.Path, "/v1/notifications/webhooks-events") {
					return fmt.Errorf("paypal: next page %q is not a list of webhook events", l.Href)
				}
				next = p.base + u.RequestURI()
			}
		}
	}
	return nil
}

func (p *PayPal) resend(ctx context.Context, id string) error {
	if err := p.token(ctx); err != nil {
		return err
	}
	body := []byte(`{}`)
	if p.webhook != "" {
		body, _ = json.Marshal(map[string][]string{"webhook_ids": {p.webhook}})
	}
	_, _, err := p.do(ctx, http.MethodPost, p.base+"/v1/notifications/webhooks-events/"+url.PathEscape(id)+"/resend", body)
	return err
}
