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

// GitLab lists a hook's events (GET /api/v4/{hook}/events, kept 7 days),
// newest first, 20 a page (GitLab's most), following X-Next-Page until
// events are older than since. GitLab does not retry a failed delivery on
// its own, but resends one on request (POST …/events/{id}/resend), with
// the same Idempotency-Key, which is the preset's dedup key: the event
// arrives through the webhook path, and where the gateway has it already
// it is a duplicate.
type GitLab struct {
	api
	hook string
	// resends spaces resends: GitLab allows 5 a minute per user and
	// project or group.
	resends *limiter
}

// GitLabAPI is GitLab.com; a self-managed instance sets api_base.
const GitLabAPI = "https://gitlab.com"

// NewGitLab makes a client for one hook, projects/ID/hooks/ID or
// groups/ID/hooks/ID, with a token (PRIVATE-TOKEN) of a maintainer (an
// owner for a group) with the api scope, which resending needs.
func NewGitLab(client *http.Client, base, token, hook string) (*GitLab, error) {
	if !gitlabHook.MatchString(hook) {
		return nil, fmt.Errorf("hook %q is not projects/ID/hooks/ID or groups/ID/hooks/ID", hook)
	}
	if base == "" {
		base = GitLabAPI
	}
	return &GitLab{
		api:     api{http: client, base: strings.TrimRight(base, "/"), auth: token, authName: "PRIVATE-TOKEN", limiter: &limiter{interval: 100 * time.Millisecond}},
		hook:    hook,
		resends: &limiter{interval: 12 * time.Second},
	}, nil
}

// gitlabEvent is one entry of a hook's event log.
type gitlabEvent struct {
	ID             int64             `json:"id"`
	RequestHeaders map[string]string `json:"request_headers"`
	// ResponseStatus is the receiver's status as a string, or "internal
	// error" when the connection failed.
	ResponseStatus string    `json:"response_status"`
	CreatedAt      time.Time `json:"created_at"`
}

// key is the preset's dedup key: Idempotency-Key, which retries and
// resends keep, else X-Gitlab-Event-UUID (GitLab before 17.4).
func (e gitlabEvent) key() string {
	var uuid string
	for k, v := range e.RequestHeaders {
		switch {
		case strings.EqualFold(k, "Idempotency-Key") && v != "":
			return v
		case strings.EqualFold(k, "X-Gitlab-Event-UUID"):
			uuid = v
		}
	}
	return uuid
}

func (e gitlabEvent) succeeded() bool {
	status, err := strconv.Atoi(e.ResponseStatus)
	return err == nil && succeeded(status)
}

// List calls each for every event of the hook at or after since. An event
// sent several times (resends) is listed once, delivered if any of its
// attempts was; its newest attempt is the one resent.
func (g *GitLab) List(ctx context.Context, since time.Time, each func(Found) error) error {
	seen := map[string]*gitlabEvent{}
	delivered := map[string]bool{}
	var order []string
	for page := "1"; page != ""; {
		q := url.Values{"per_page": {"20"}, "page": {page}}
		data, header, err := g.do(ctx, http.MethodGet, g.base+"/api/v4/"+g.hook+"/events?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		var events []gitlabEvent
		if err := json.Unmarshal(data, &events); err != nil {
			return errors.New("gitlab: the answer is not a list of hook events")
		}
		older := false
		for i := range events {
			e := events[i]
			if e.CreatedAt.Before(since) {
				older = true
				continue
			}
			key := e.key()
			if key == "" {
				return fmt.Errorf("gitlab: hook event %d has neither Idempotency-Key nor X-Gitlab-Event-UUID", e.ID)
			}
			if _, known := seen[key]; !known {
				seen[key] = &e
				order = append(order, key)
			}
			delivered[key] = delivered[key] || e.succeeded()
		}
		page = ""
		if next := header.Get("X-Next-Page"); next != "" && !older && len(events) > 0 {
			if _, err := strconv.Atoi(next); err != nil {
				return fmt.Errorf("gitlab: X-Next-Page %q is not a page number", next)
			}
			page = next
		}
	}
	for _, key := range order {
		e := seen[key]
		id := e.ID
		f := Found{Key: key, At: e.CreatedAt, Delivered: delivered[key], Redeliver: func(ctx context.Context) error {
			if err := g.resends.wait(ctx); err != nil {
				return err
			}
			_, _, err := g.do(ctx, http.MethodPost, fmt.Sprintf("%s/api/v4/%s/events/%d/resend", g.base, g.hook, id), nil)
			return err
		}}
		if err := each(f); err != nil {
			return err
		}
	}
	return nil
}
