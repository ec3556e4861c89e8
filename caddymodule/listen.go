package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
)

func init() {
	caddy.RegisterModule(ListenHandler{})
	httpcaddyfile.RegisterHandlerDirective("hookgate_listen", parseListenDirective)
	httpcaddyfile.RegisterDirectiveOrder("hookgate_listen", httpcaddyfile.Before, "reverse_proxy")
}

// ListenedEvent is one event of a listen stream (GET
// /hookgate/listen/<source>), the data of a server-sent event whose id is
// the event's id. The signature headers are left out: hookgate listen
// signs again for the local app.
type ListenedEvent struct {
	ID         string      `json:"id"`
	Source     string      `json:"source"`
	Provider   string      `json:"provider,omitempty"`
	ReceivedAt time.Time   `json:"received_at"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Query      string      `json:"query,omitempty"`
	Origin     string      `json:"origin,omitempty"`
	Headers    http.Header `json:"headers"`
	Body       string      `json:"body"`
	BodyBase64 bool        `json:"body_base64,omitempty"`
	// BodyMasked says personal data or credential fields were masked.
	BodyMasked bool `json:"body_masked,omitempty"`
}

// Stream pacing: an event is streamed once it is listenSettle old, so a
// commit that finished after a later one's never leaves an event behind
// the stream's cursor; the store is read every listenPoll, and a comment
// every listenPing keeps proxies from closing an idle stream.
const (
	listenSettle = time.Second
	listenPoll   = 300 * time.Millisecond
	listenPing   = 15 * time.Second
	listenBatch  = 200
)

// listenError is a refusal before the stream starts.
type listenError struct {
	status int
	err    error
}

func (e *listenError) Error() string { return e.err.Error() }

// streamListen streams a source's events as server-sent events: from the
// one after Last-Event-ID (a reconnection), or from ?since= (an RFC 3339
// time or a duration ago), or from now. It needs a listen token of the
// source as a bearer token; a stream is a read of bodies, logged.
func streamListen(w http.ResponseWriter, r *http.Request, source string) error {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var g *liveGateway
	var grant ingest.Listener
	if ok && token != "" {
		for _, live := range liveGateways() {
			for _, p := range live.pipelines {
				if l, found := p.Listen(source, token); found {
					g, grant = live, l
				}
			}
		}
	}
	if g == nil {
		// One answer for an unknown source, a source without tokens and a
		// wrong token: a caller learns nothing of the sources.
		w.Header().Set("WWW-Authenticate", `Bearer realm="hookgate listen"`)
		return &listenError{http.StatusUnauthorized, errors.New("a listen token of the source is needed (listen_tokens)")}
	}
	var after store.ID
	from := time.Now().Add(-listenSettle)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		id, err := store.ParseID(last)
		if err != nil {
			return &listenError{http.StatusBadRequest, fmt.Errorf("Last-Event-ID: %v", err)}
		}
		after, from = id, id.Time()
	} else if since := r.URL.Query().Get("since"); since != "" {
		t, err := parseSince(since)
		if err != nil {
			return &listenError{http.StatusBadRequest, fmt.Errorf("since: %v", err)}
		}
		from = t
	}
	// A stream outlives the admin server's and the site's timeouts.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": hookgate listen\n\n")
	if err := rc.Flush(); err != nil {
		return nil
	}
	logger := zap.NewNop()
	if g.owner != nil && g.owner.logger != nil {
		logger = g.owner.logger
	}
	fields := []zap.Field{zap.String("source", source), zap.Bool("raw", grant.Raw), zap.String("client_ip", clientIP(r))}
	logger.Info("listen stream started", fields...)
	sent, err := g.stream(r.Context(), w, rc, grant, after, from)
	logger.Info("listen stream ended", append(fields, zap.Int("events", sent), zap.Error(err))...)
	return nil
}

// parseSince reads an RFC 3339 time or a duration back from now.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := caddy.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time or a duration such as 1h, got %q", s)
	}
	return time.Now().Add(-d), nil
}

// stream writes the source's events after the cursor (or received from
// from on) until the client goes away, and returns how many it wrote.
func (g *liveGateway) stream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, grant ingest.Listener, after store.ID, from time.Time) (int, error) {
	sent := 0
	lastWrite := time.Now()
	poll := time.NewTicker(listenPoll)
	defer poll.Stop()
	for {
		ids, err := g.eventsAfter(grant.Source, after, from, time.Now().Add(-listenSettle))
		if err != nil {
			return sent, err
		}
		for _, id := range ids {
			rec, err := g.handle.store.Event(id)
			if errors.Is(err, store.ErrNotFound) {
				continue // swept meanwhile
			}
			if err != nil {
				return sent, err
			}
			data, err := json.Marshal(g.listened(rec.Event, grant))
			if err != nil {
				return sent, err
			}
			if _, err := fmt.Fprintf(w, "id: %s\nevent: webhook\ndata: %s\n\n", id, data); err != nil {
				return sent, err
			}
			if err := rc.Flush(); err != nil {
				return sent, err
			}
			after, from, sent, lastWrite = id, id.Time(), sent+1, time.Now()
		}
		if len(ids) == listenBatch {
			continue // more are waiting
		}
		if time.Since(lastWrite) > listenPing {
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return sent, err
			}
			if err := rc.Flush(); err != nil {
				return sent, err
			}
			lastWrite = time.Now()
		}
		select {
		case <-ctx.Done():
			return sent, ctx.Err()
		case <-poll.C:
		}
	}
}

// eventsAfter lists up to listenBatch of a source's events after the
// cursor (any id when it is zero) received from from to until, oldest
// first. The listings run newest first, so it walks windows of time from
// from, each window paged down to its start, a window growing while it
// finds nothing.
func (g *liveGateway) eventsAfter(source string, after store.ID, from, until time.Time) ([]store.ID, error) {
	window := 10 * time.Second
	for start := from; !start.After(until); {
		end := start.Add(window)
		if end.After(until) {
			end = until
		}
		var found []store.ID
		f := store.ListFilter{Source: source, Since: start, Until: end, Limit: 1000}
		for {
			page, next, err := g.handle.store.List(f)
			if err != nil {
				return nil, err
			}
			for _, e := range page {
				if bytes.Compare(e.ID[:], after[:]) > 0 {
					found = append(found, e.ID)
				}
			}
			if next == nil {
				break
			}
			f.Before = next
		}
		if len(found) > 0 {
			slices.SortFunc(found, func(a, b store.ID) int { return bytes.Compare(a[:], b[:]) })
			return found[:min(len(found), listenBatch)], nil
		}
		if end.Equal(until) {
			return nil, nil
		}
		start, window = end, min(2*window, time.Hour)
	}
	return nil, nil
}

// listened is an event as a listen stream carries it: signature headers
// dropped, the body masked as the admin API shows it unless the token is
// raw.
func (g *liveGateway) listened(e *store.Event, grant ingest.Listener) ListenedEvent {
	v := ListenedEvent{ID: e.ID.String(), Source: e.Source, Provider: grant.Provider, ReceivedAt: e.ReceivedAt,
		Method: e.Method, Path: e.Path, Query: e.RawQuery, Origin: e.Origin, Headers: http.Header{}}
	secretHeaders, secretFields := g.maskedParts(e.Source)
	for name, values := range maskedHeaders(e.Header, secretHeaders) {
		if len(values) == 1 && values[0] == "[masked]" {
			continue // a signature or a token: signed again, or none of the app's business
		}
		v.Headers[name] = values
	}
	v.Body, v.BodyBase64, v.BodyMasked = g.bodyAsShown(e, secretFields, !grant.Raw)
	return v
}

// listenAdmin serves GET /hookgate/listen/{source} on the admin endpoint.
func listenAdmin(w http.ResponseWriter, r *http.Request, _ *liveGateway) error {
	err := streamListen(w, r, r.PathValue("source"))
	var le *listenError
	if errors.As(err, &le) {
		return apiError(le.status, "%v", le.err)
	}
	return err
}

// ListenHandler serves hookgate listen's stream on a site, for an operator
// who routes it there (hookgate_listen): GET <any path>/<source>, with a
// listen token of that source.
type ListenHandler struct{}

// CaddyModule returns the Caddy module information.
func (ListenHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hookgate_listen",
		New: func() caddy.Module { return new(ListenHandler) },
	}
}

// ServeHTTP streams the source the path's last segment names.
func (ListenHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		return caddyhttp.Error(http.StatusMethodNotAllowed, errors.New("the listen stream is a GET"))
	}
	err := streamListen(w, r, path.Base(r.URL.Path))
	var le *listenError
	if errors.As(err, &le) {
		return caddyhttp.Error(le.status, le.err)
	}
	return err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	hookgate_listen [<matcher>]
//
// It takes no arguments and no block: the tokens are each source's
// listen_tokens in routes.yaml. Route only the stream's path to it, for
// example:
//
//	handle /hookgate/listen/* {
//		hookgate_listen
//	}
func (h *ListenHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(0) {
		return d.Errf("hookgate_listen takes no block")
	}
	return nil
}

func parseListenDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	l := new(ListenHandler)
	return l, l.UnmarshalCaddyfile(h.Dispenser)
}

var (
	_ caddyhttp.MiddlewareHandler = (*ListenHandler)(nil)
	_ caddyfile.Unmarshaler       = (*ListenHandler)(nil)
)
