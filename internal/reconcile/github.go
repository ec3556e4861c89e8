package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// GitHub lists a hook's deliveries (GET {hook}/deliveries, kept 3 days for
// redelivery), newest first, 100 a page, following the Link header's next
// cursor until deliveries are older than since. GitHub never retries on
// its own, but redelivers on request (POST {hook}/deliveries/{id}/attempts):
// the event then arrives signed, through the webhook path. Its dedup key is
// the delivery guid (X-GitHub-Delivery), which a redelivery keeps.
type GitHub struct {
	api
	hook string
}

// GitHubAPI is GitHub's API host.
const GitHubAPI = "https://api.github.com"

// NewGitHub makes a client for one hook, named repos/O/R/hooks/ID or
// orgs/O/hooks/ID, with a token that can read and redeliver it.
func NewGitHub(client *http.Client, base, token, hook string) (*GitHub, error) {
	if !githubHook.MatchString(hook) {
		return nil, fmt.Errorf("hook %q is not repos/OWNER/REPO/hooks/ID or orgs/ORG/hooks/ID", hook)
	}
	if base == "" {
		base = GitHubAPI
	}
	// GitHub allows 5,000 requests an hour to a token; a run stays below a
	// tenth of that pace.
	return &GitHub{api: api{http: client, base: strings.TrimRight(base, "/"), auth: "Bearer " + token, limiter: &limiter{interval: 100 * time.Millisecond}}, hook: hook}, nil
}

// linkNext is the next page in a Link header.
var linkNext = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// List calls each for every delivery of the hook at or after since. A
// guid delivered several times (redeliveries) is listed once, delivered
// if any of its attempts was.
func (g *GitHub) List(ctx context.Context, since time.Time, each func(Found) error) error {
	type attempt struct {
		ID          int64     `json:"id"`
		GUID        string    `json:"guid"`
		DeliveredAt time.Time `json:"delivered_at"`
		StatusCode  int       `json:"status_code"`
	}
	seen := map[string]*attempt{}
	var order []string
	next := g.base + "/" + g.hook + "/deliveries?per_page=100"
	for next != "" {
		data, header, err := g.do(ctx, http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		var page []attempt
		if err := json.Unmarshal(data, &page); err != nil {
			return errors.New("github: the answer is not a list of deliveries")
		}
		older := false
		for i := range page {
			a := page[i]
			if a.GUID == "" {
				return errors.New("github: a delivery without a guid")
			}
			if a.DeliveredAt.Before(since) {
				older = true
				continue
			}
			prev, known := seen[a.GUID]
			switch {
			case !known:
				seen[a.GUID] = &a
				order = append(order, a.GUID)
			case succeeded(a.StatusCode) && !succeeded(prev.StatusCode):
				seen[a.GUID] = &a
			}
		}
		next = ""
		if m := linkNext.FindStringSubmatch(header.Get("Link")); m != nil && !older {
			if !strings.HasPrefix(m[1], g.base+"/") {
				return fmt.Errorf("github: next page %q is not on %s", m[1], g.base)
			}
			next = m[1]
		}
	}
	for _, guid := range order {
		a := seen[guid]
		id := a.ID
		f := Found{Key: guid, At: a.DeliveredAt, Delivered: succeeded(a.StatusCode), Redeliver: func(ctx context.Context) error {
			_, _, err := g.do(ctx, http.MethodPost, fmt.Sprintf("%s/%s/deliveries/%d/attempts", g.base, g.hook, id), nil)
			return err
		}}
		if err := each(f); err != nil {
			return err
		}
	}
	return nil
}

func succeeded(status int) bool { return status >= 200 && status < 300 }
