package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hookgate/hookgate/internal/store"
)

// hopHeaders are dropped on delivery, as a proxy drops them.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length",
}

func buildRequest(ctx context.Context, cfg Upstream, t store.Task, attempt int) (*http.Request, error) {
	ev, d := t.Event, t.Delivery
	target := *cfg.URL
	target.Path, target.RawPath = joinPath(cfg.URL.Path, ev.Path), ""
	if d.Path != "" {
		// A route's rewrite is stored escaped, each value one segment: keep
		// that escaping rather than escape it a second time.
		raw := joinPath(cfg.URL.EscapedPath(), d.Path)
		unescaped, err := url.PathUnescape(raw)
		if err != nil {
			return nil, fmt.Errorf("route path %q: %w", d.Path, err)
		}
		target.Path, target.RawPath = unescaped, raw
	}
	switch {
	case cfg.URL.RawQuery == "":
		target.RawQuery = ev.RawQuery
	case ev.RawQuery != "":
		target.RawQuery = cfg.URL.RawQuery + "&" + ev.RawQuery
	}
	if cfg.ExactURL {
		target = *cfg.URL
	}
	body := ev.Body
	if d.Transformed {
		body = t.Body
	}
	req, err := http.NewRequestWithContext(ctx, ev.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header = ev.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, name := range req.Header.Values("Connection") {
		for field := range strings.SplitSeq(name, ",") {
			req.Header.Del(strings.TrimSpace(field))
		}
	}
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	setForwarded(req, ev, !cfg.HostFromURL)
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	for _, h := range d.RemoveHeaders {
		req.Header.Del(h)
	}
	for k, v := range d.SetHeaders {
		req.Header.Set(k, v)
	}
	if d.Transformed {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Del("Content-Encoding")
	}
	id := ev.ID.String()
	req.Header.Set("Hookgate-Event-Id", id)
	req.Header.Set("Hookgate-Attempt", strconv.Itoa(attempt))
	req.Header.Set("Hookgate-Source", ev.Source)
	origin := ev.Origin
	if origin == "" {
		origin = "webhook"
	}
	req.Header.Set("Hookgate-Origin", origin)
	req.Header.Set("Idempotency-Key", id)
	setTraceHeaders(ctx, req.Header)
	req.ContentLength = int64(len(body))
	return req, nil
}

// redactURLError hides what a URL in a client error may carry in the
// clear: a password and query values (tokens, API keys) of the upstream's
// URL or of the request's own query, and the whole path and query when the
// path is a credential. The error is logged and stored.
func redactURLError(err error, credentialPath bool) error {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return err
	}
	u, perr := url.Parse(urlErr.URL)
	if perr != nil {
		return errors.New("request failed: " + errors.Unwrap(urlErr).Error())
	}
	if credentialPath {
		return &url.Error{Op: urlErr.Op, URL: u.Scheme + "://" + u.Host + "/…", Err: urlErr.Err}
	}
	return &url.Error{Op: urlErr.Op, URL: RedactURL(u), Err: urlErr.Err}
}

// RedactURL shows a URL without its password and with every query value
// replaced, keeping the names so that a reader can still tell them apart.
func RedactURL(u *url.URL) string {
	r := *u
	if r.User != nil {
		r.User = url.User(r.User.Username())
	}
	if r.RawQuery != "" {
		q := r.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = "REDACTED"
			}
			q[k] = vs
		}
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// setForwarded sets X-Forwarded-For, -Host and -Proto as reverse_proxy
// does: a trusted proxy's values are extended, anyone else's are replaced,
// so a sender cannot make the backend believe it came from elsewhere.
// publicHost also sends the event's host as Host, as reverse_proxy does.
func setForwarded(req *http.Request, ev *store.Event, publicHost bool) {
	if !ev.ViaTrustedProxy {
		for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
			req.Header.Del(h)
		}
	}
	if ev.Host != "" {
		if publicHost {
			req.Host = ev.Host
		}
		if req.Header.Get("X-Forwarded-Host") == "" {
			req.Header.Set("X-Forwarded-Host", ev.Host)
		}
	}
	if ip, _, err := net.SplitHostPort(ev.RemoteAddr); err == nil {
		if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
			ip = prior + ", " + ip
		}
		req.Header.Set("X-Forwarded-For", ip)
	}
	if ev.Proto != "" && req.Header.Get("X-Forwarded-Proto") == "" {
		req.Header.Set("X-Forwarded-Proto", ev.Proto)
	}
}

func joinPath(base, p string) string {
	switch {
	case base == "" || base == "/":
		return p
	case strings.HasSuffix(base, "/") && strings.HasPrefix(p, "/"):
		return base + p[1:]
	case !strings.HasSuffix(base, "/") && !strings.HasPrefix(p, "/"):
		return base + "/" + p
	}
	return base + p
}
