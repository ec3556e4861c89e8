package providertest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GitLab serves a hook's event log as GitLab's REST API does
// (doc/api/project_webhooks.md, lib/api/hooks/events.rb): GET
// /api/v4/{hook}/events, newest first, 20 a page at most, the last 7
// days, X-Next-Page and Link; POST …/events/{id}/resend, 5 a minute,
// which sends the event again with its Idempotency-Key and logs the new
// attempt. It takes PRIVATE-TOKEN.
type GitLab struct {
	common
	Token, Hook string
	// Secret is the hook's secret token, sent as X-Gitlab-Token.
	Secret  string
	Deliver Deliver
	log     []gitlabEntry // oldest first
	resends []time.Time
	// Resent counts the resends answered 201.
	Resent int
}

type gitlabEntry struct {
	id     int64
	key    string
	body   json.RawMessage
	status string
	at     time.Time
}

// NewGitLab serves hook (projects/ID/hooks/ID) to token.
func NewGitLab(t testing.TB, token, hook, secret string) *GitLab {
	g := &GitLab{Token: token, Hook: hook, Secret: secret}
	g.start(t, g.serve)
	return g
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Attempt logs a delivery attempt of the event with this Idempotency-Key
// at at, answered status (0: the connection failed).
func (g *GitLab) Attempt(key string, body []byte, at time.Time, status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attemptLocked(key, body, at, status)
}

func (g *GitLab) attemptLocked(key string, body []byte, at time.Time, status int) {
	s := "internal error"
	if status != 0 {
		s = strconv.Itoa(status)
	}
	g.log = append(g.log, gitlabEntry{id: int64(len(g.log) + 1), key: key, body: body, status: s, at: at})
}

// Headers are what GitLab sends with the event of this Idempotency-Key.
func (g *GitLab) Headers(key string) http.Header {
	return http.Header{
		"Content-Type": {"application/json"}, "User-Agent": {"GitLab/18.6.0"}, "X-Gitlab-Event": {"Push Hook"},
		"Idempotency-Key": {key}, "X-Gitlab-Event-Uuid": {uuid()}, "X-Gitlab-Webhook-Uuid": {uuid()},
		"X-Gitlab-Instance": {g.Server.URL}, "X-Gitlab-Token": {g.Secret},
	}
}

// Send delivers the event now, as GitLab does when it happens, and logs
// the attempt.
func (g *GitLab) Send(key string, body []byte, at time.Time) int {
	status := 0
	if g.Deliver != nil {
		status = g.Deliver(Delivery{Header: g.Headers(key), Body: body})
	}
	g.Attempt(key, body, at, status)
	return status
}

func (g *GitLab) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("PRIVATE-TOKEN") != g.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "401 Unauthorized"})
		return
	}
	prefix := "/api/v4/" + g.Hook + "/events"
	switch {
	case r.Method == http.MethodGet && r.URL.EscapedPath() == prefix:
		g.list(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.EscapedPath(), prefix+"/") && strings.HasSuffix(r.URL.Path, "/resend"):
		id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(r.URL.EscapedPath(), prefix+"/"), "/resend"), 10, 64)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "hook_event_id is invalid"})
			return
		}
		g.resend(w, id)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not Found"})
	}
}

func (g *GitLab) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	perPage, pageNo := 20, 1
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 20 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "per_page does not have a valid value"})
			return
		}
		perPage = n
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "page is invalid"})
			return
		}
		pageNo = n
	}
	y, m, d := time.Now().AddDate(0, 0, -7).Date()
	horizon := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	var recent []gitlabEntry
	for i := len(g.log) - 1; i >= 0; i-- {
		if !g.log[i].at.Before(horizon) {
			recent = append(recent, g.log[i])
		}
	}
	sort.SliceStable(recent, func(i, j int) bool { return recent[i].at.After(recent[j].at) }) // created_at DESC
	start, end := page((pageNo-1)*perPage, perPage, len(recent))
	out := make([]map[string]any, 0, end-start)
	for _, e := range recent[start:end] {
		h := map[string]string{"Content-Type": "application/json", "Idempotency-Key": e.key, "X-Gitlab-Event": "Push Hook",
			"X-Gitlab-Event-UUID": uuid(), "X-Gitlab-Webhook-UUID": uuid(), "X-Gitlab-Token": "[REDACTED]"}
		out = append(out, map[string]any{"id": e.id, "url": "https://example.net/", "trigger": "push_hooks", "request_headers": h, "request_data": e.body,
			"response_headers": map[string]string{}, "response_body": "", "execution_duration": 0.012, "response_status": e.status, "created_at": rfc3339(e.at)})
	}
	link := func(p int, rel string) string {
		v := url.Values{"per_page": {strconv.Itoa(perPage)}, "page": {strconv.Itoa(p)}}
		return fmt.Sprintf("<%s%s?%s>; rel=%q", g.Server.URL, r.URL.EscapedPath(), v.Encode(), rel)
	}
	pages := max((len(recent)+perPage-1)/perPage, 1)
	links := []string{link(1, "first"), link(pages, "last")}
	next := ""
	if pageNo < pages {
		next = strconv.Itoa(pageNo + 1)
		links = append(links, link(pageNo+1, "next"))
	}
	w.Header().Set("X-Page", strconv.Itoa(pageNo))
	w.Header().Set("X-Per-Page", strconv.Itoa(perPage))
	w.Header().Set("X-Next-Page", next)
	w.Header().Set("X-Total", strconv.Itoa(len(recent)))
	w.Header().Set("Link", strings.Join(links, ", "))
	writeJSON(w, http.StatusOK, out)
}

func (g *GitLab) resend(w http.ResponseWriter, id int64) {
	now := time.Now()
	var last []time.Time
	for _, t := range g.resends {
		if now.Sub(t) < time.Minute {
			last = append(last, t)
		}
	}
	g.resends = last
	if len(last) >= 5 {
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"message": "This endpoint has been requested too many times. Try again later."})
		return
	}
	if id < 1 || id > int64(len(g.log)) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
		return
	}
	g.resends = append(g.resends, now)
	e := g.log[id-1]
	status := 0
	if g.Deliver != nil {
		status = g.Deliver(Delivery{Header: g.Headers(e.key), Body: e.body})
	}
	g.attemptLocked(e.key, e.body, now, status)
	g.Resent++
	writeJSON(w, http.StatusCreated, map[string]int{"response_status": status})
}
