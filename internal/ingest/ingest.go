// Package ingest is the request path: verify the signature over the raw
// bytes, compute the dedup key, route, store durably, then answer. It knows
// nothing of Caddy, so it runs under httptest as it runs in production.
package ingest

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/route"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// Pipeline answers webhook requests for a compiled configuration.
type Pipeline struct {
	sources   map[string]*source // by PathKey of their path
	claims    []string           // claimed prefixes in PathKey form, each ending in "/"
	maxBody   int64
	upstreams map[string]deliver.Upstream
	// orderKeys group deliveries to upstreams with ordered delivery.
	orderKeys map[string]*route.Program
	// maxPending bounds the deliveries waiting before ingest answers 503.
	maxPending int64
	retention  time.Duration
	counters   struct{ ruleErrors, unparseable atomic.Int64 }
	masker     *masker // set when bodies are logged
	// bodyTimeout bounds reading a request body.
	bodyTimeout time.Duration
	// bodies is the budget of body bytes held by requests being read.
	bodies *bodyBudget

	store  store.Store
	notify func(upstream string)
	log    *zap.Logger
	// rejectLog is log, sampled: at most rejectLogFirst lines a second, then
	// one in rejectLogThereafter.
	rejectLog *zap.Logger
	clientIP  func(*http.Request) string
	// trustedProxy says whether the request came through a trusted proxy.
	trustedProxy func(*http.Request) bool
	// attached is closed once the pipeline has its store. Caddy starts its
	// apps in no fixed order, so a request can arrive a moment before the
	// hookgate app has opened the store.
	attached   chan struct{}
	attachOnce sync.Once
	now        func() time.Time
	observer   Observer
}

const (
	rejectLogFirst      = 10
	rejectLogThereafter = 100
)

// Observer is told the outcome of every request, for metrics: accepted,
// duplicate, handshake, unavailable, or rejected_<reason>; took is the time
// from arrival to the answer.
type Observer interface {
	Observe(source, outcome string, took time.Duration)
}

// Observe sets the pipeline's observer.
func (p *Pipeline) Observe(o Observer) { p.observer = o }

func (p *Pipeline) observe(src *source, outcome string, start time.Time) {
	if p.observer != nil {
		p.observer.Observe(src.name, outcome, time.Since(start))
	}
}

// Attach connects the pipeline to its store. notify is told which upstreams
// got new work.
func (p *Pipeline) Attach(st store.Store, notify func(upstream string), log *zap.Logger, now func() time.Time) {
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	if notify == nil {
		notify = func(string) {}
	}
	p.store, p.notify, p.log, p.now = st, notify, log, now
	defer p.attachOnce.Do(func() { close(p.attached) })
	p.rejectLog = log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewSamplerWithOptions(c, time.Second, rejectLogFirst, rejectLogThereafter)
	}))
}

// Retention is how long finished events are kept.
func (p *Pipeline) Retention() time.Duration { return p.retention }

// Upstreams returns the delivery configuration of every upstream.
func (p *Pipeline) Upstreams() map[string]deliver.Upstream { return p.upstreams }

// retryAfterSeconds is what a provider is told to wait when storage is down.
const retryAfterSeconds = "5"

// ServeHTTP answers every request as the gateway's own: a path that names
// no source gets 404.
func (p *Pipeline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.Serve(w, r) {
		p.notFound(w, r)
	}
}

// Serve answers a request whose path the pipeline claims, a source's path
// in any spelling or a path under a claimed prefix, and reports whether it
// did; any other request is left to the caller, untouched. The path is
// matched once.
func (p *Pipeline) Serve(w http.ResponseWriter, r *http.Request) bool {
	src, claimed := p.match(r.URL.Path)
	if !claimed {
		return false
	}
	if src == nil {
		p.notFound(w, r)
		return true
	}
	p.serve(w, r, src)
	return true
}

func (p *Pipeline) notFound(w http.ResponseWriter, r *http.Request) {
	plain(w, http.StatusNotFound, "no webhook source at this path")
	p.rejectLog.Info("request rejected", zap.String("reason", "no_source"), zap.String("client_ip", p.clientIP(r)))
}

// serve is the request path for one source.
func (p *Pipeline) serve(w http.ResponseWriter, r *http.Request, src *source) {
	start := time.Now()
	select {
	case <-p.attached:
	default:
		if !p.awaitStore() {
			w.Header().Set("Retry-After", retryAfterSeconds)
			plain(w, http.StatusServiceUnavailable, "storage unavailable")
			return
		}
	}
	// GET and HEAD only ever carry a handshake (Meta, Okta, Intercom);
	// anything else must POST.
	probe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if r.Method != http.MethodPost && (!probe || !src.hasHandshakes()) {
		methodNotAllowed(w)
		p.reject(r, src, "method", nil)
		return
	}
	if r.ContentLength > p.maxBody {
		plain(w, http.StatusRequestEntityTooLarge, "request body too large")
		p.reject(r, src, "body_too_large", nil)
		return
	}
	// A body that trickles in (slowloris) may not hold a connection for
	// longer than the provider would wait for an answer anyway.
	if d := p.bodyTimeout; d > 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
	}
	body, reserved, err := readBody(http.MaxBytesReader(w, r.Body, p.maxBody), r.ContentLength, p.bodies)
	defer p.bodies.release(reserved)
	if err != nil {
		if errors.Is(err, errBodyBudget) {
			w.Header().Set("Retry-After", retryAfterSeconds)
			plain(w, http.StatusServiceUnavailable, "too many requests in flight, retry later")
			p.reject(r, src, "inflight_bodies", nil)
			return
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			plain(w, http.StatusRequestEntityTooLarge, "request body too large")
			p.reject(r, src, "body_too_large", nil)
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			plain(w, http.StatusRequestTimeout, "request body too slow")
			p.reject(r, src, "body_timeout", nil)
			return
		}
		plain(w, http.StatusBadRequest, "could not read request body")
		p.reject(r, src, "body_read", err)
		return
	}
	if probe && len(body) > 0 {
		plain(w, http.StatusBadRequest, "a GET carries no body")
		return
	}
	if p.answerHandshake(w, r, src, body, src.unsignedHandshakes, start) {
		return
	}
	now := p.now()
	vr := verify.Request{Body: body, Header: r.Header, Method: r.Method, Now: now}
	if src.signsURL {
		vr.URL = src.requestURL(r)
	}
	if src.learns {
		learned, err := p.learnedSecret(src)
		if err != nil {
			p.unavailable(w, src, start, "reading a learned secret", err)
			return
		}
		vr.Learned = learned
	}
	verified, err := src.scheme.Verify(&vr)
	if err != nil {
		plain(w, http.StatusUnauthorized, "unauthorized")
		p.reject(r, src, verify.Reason(err), nil)
		return
	}
	if p.answerHandshake(w, r, src, body, src.signedHandshakes, start) {
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w)
		p.reject(r, src, "method", nil)
		return
	}

	// The dedup key's fast path reads it from the bytes; a body that is not
	// JSON (a form, say) takes the ordinary path below.
	fastKey, fast := "", false
	if src.dedupPath != nil {
		fastKey, fast = route.ExtractKey(body, src.dedupPath)
	}
	var env *route.Env
	if src.needsEnv || (src.dedupPath != nil && !fast) {
		env = newEnv(src, r, now)
		if src.needsBody || src.dedupPath != nil {
			parsed, err := route.ParseBody(src.format, body)
			switch {
			case err == nil:
				env.Body = parsed
			case src.bodyRequired || src.dedupPath != nil:
				plain(w, http.StatusBadRequest, "body is not valid JSON or form data")
				p.reject(r, src, "unparseable_body", nil)
				return
			default:
				// Rules that read the body just do not match.
				p.counters.unparseable.Add(1)
			}
		}
	}
	ne := &store.NewEvent{Event: &store.Event{
		Source:          src.name,
		ReceivedAt:      now,
		Method:          r.Method,
		Path:            r.URL.Path,
		RawQuery:        r.URL.RawQuery,
		Host:            r.Host,
		RemoteAddr:      r.RemoteAddr,
		Proto:           scheme(r),
		ViaTrustedProxy: p.trustedProxy(r),
		Header:          r.Header,
		Body:            body,
	}}
	if src.gate != nil {
		if err := src.gate.Check(env.Body); err != nil {
			if !src.quarantine {
				plain(w, http.StatusBadRequest, "body does not match the source's schema")
				p.reject(r, src, "schema", err)
				return
			}
			ne.Event.Quarantined = firstLine(err.Error())
		}
	}
	var digest string // the body's digest, computed at most once
	if src.dedup != nil {
		key, err := fastKey, error(nil)
		if !fast {
			key, err = src.dedup.Key(env)
		}
		if key == "" && src.digestKey {
			// The preset's key is missing from this signed body: its digest
			// still makes the provider's retries of it one event.
			digest = digestKey(body)
			key, err = digest, nil
		}
		if err != nil {
			p.log.Warn("dedup key expression failed; event stored without dedup",
				zap.String("source", src.name), zap.Error(err))
		}
		if key != "" {
			ne.DedupKey = key
			ne.DedupUntil = now.Add(src.dedupWindow)
			ne.Event.DedupKey = key
		}
	}
	if src.replayDigest {
		if digest == "" {
			digest = digestKey(body)
		}
		ne.DigestKey, ne.DedupUntil = digest, now.Add(src.dedupWindow)
	}
	otherMode := false
	if src.live != nil {
		live, err := src.live.Match(env)
		if err != nil {
			p.log.Warn("live-mode expression failed", zap.String("source", src.name), zap.Error(err))
		}
		if live != src.wantLive {
			if len(src.otherModeTo) == 0 {
				plain(w, http.StatusUnauthorized, "unauthorized")
				p.reject(r, src, "wrong_mode", nil)
				return
			}
			otherMode = true
		}
	}
	if verified.SingleUseToken != "" {
		ne.ReplayKey, ne.ReplayUntil = verified.SingleUseToken, now.Add(verified.SingleUseWindow)
	}
	if ne.Event.Quarantined == "" {
		ne.Targets = p.targets(src, env, otherMode)
		ne.Event.Unrouted = len(ne.Targets) == 0
	}
	if p.maxPending > 0 && p.store.Pending() >= p.maxPending {
		w.Header().Set("Retry-After", retryAfterSeconds)
		plain(w, http.StatusServiceUnavailable, "too many events waiting for delivery, retry later")
		p.reject(r, src, "backpressure", nil)
		return
	}

	res, err := p.store.Ingest(r.Context(), ne)
	if err != nil {
		p.unavailable(w, src, start, "storing event", err)
		return
	}
	if res.Replayed {
		plain(w, http.StatusUnauthorized, "unauthorized")
		p.reject(r, src, "replayed_token", nil)
		return
	}
	id := res.ID.String()
	w.Header().Set("Hookgate-Event-Id", id)
	if res.Duplicate {
		w.Header().Set("Hookgate-Duplicate", "true")
		p.log.Debug("duplicate event", zap.String("source", src.name), zap.String("event_id", id))
		src.respond(w, http.StatusOK, id, "duplicate")
		p.observe(src, "duplicate", start)
		return
	}
	for _, t := range ne.Targets {
		p.notify(t.Upstream)
	}
	p.log.Info("event received", zap.String("source", src.name), zap.String("event_id", id),
		zap.Int("deliveries", len(ne.Targets)), zap.Int("bytes", len(body)))
	if p.masker != nil {
		if ce := p.log.Check(zap.DebugLevel, "event body"); ce != nil {
			ce.Write(zap.String("event_id", id), zap.String("body", p.masker.Mask(src.format, body)))
		}
	}
	src.respond(w, src.response.Status, id, "accepted")
	p.observe(src, "accepted", start)
}

// readBody reads the whole body in one allocation when its length is known.
// The server stops a body at its Content-Length, so reading that many bytes
// reads all of it.
func methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", http.MethodPost)
	plain(w, http.StatusMethodNotAllowed, "method not allowed")
}

func (s *source) hasHandshakes() bool {
	return len(s.unsignedHandshakes)+len(s.signedHandshakes) > 0
}

// answerHandshake answers the request if it is one of the handshakes, and
// counts and logs the outcome. A handshake that proposes a secret is
// answered as it asks only if the store took the secret (learn).
func (p *Pipeline) answerHandshake(w http.ResponseWriter, r *http.Request, s *source, body []byte, handshakes []*verify.Handshake, start time.Time) bool {
	if len(handshakes) == 0 {
		return false
	}
	hr := &verify.HandshakeRequest{
		Method: r.Method, Header: r.Header, Query: r.URL.Query(), Body: body,
		Secrets: s.secrets, VerifyToken: s.verifyToken, KnownSecrets: len(s.secrets),
	}
	for _, h := range handshakes {
		resp, ok := h.Answer(hr)
		if !ok {
			continue
		}
		why := ""
		if resp.Learn != "" {
			if !s.learns {
				continue
			}
			var err error
			if resp, why, err = p.learn(r, s, resp); err != nil {
				p.unavailable(w, s, start, "storing a handshake secret", err)
				return true
			}
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", resp.ContentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
		p.handshakeAnswered(r, s, h, resp, why, start)
		return true
	}
	return false
}

// reject counts a refused request and logs it at INFO, sampled so that a
// flood cannot fill the disk; never a header value or the body.
func (p *Pipeline) reject(r *http.Request, src *source, reason string, err error) {
	if p.observer != nil {
		p.observer.Observe(src.name, "rejected_"+reason, 0)
	}
	fields := []zap.Field{zap.String("source", src.name), zap.String("reason", reason), zap.String("client_ip", p.clientIP(r))}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	p.rejectLog.Info("request rejected", fields...)
}

// unavailable answers 503 with Retry-After when the store cannot take or
// give what the request needs: never a 2xx without the write.
func (p *Pipeline) unavailable(w http.ResponseWriter, src *source, start time.Time, what string, err error) {
	w.Header().Set("Retry-After", retryAfterSeconds)
	plain(w, http.StatusServiceUnavailable, "storage unavailable, retry later")
	p.log.Error(what, zap.String("source", src.name), zap.Error(err))
	p.observe(src, "unavailable", start)
}

// storeWait bounds how long a request waits for the store to be attached.
const storeWait = 5 * time.Second

func (p *Pipeline) awaitStore() bool {
	t := time.NewTimer(storeWait)
	defer t.Stop()
	select {
	case <-p.attached:
		return true
	case <-t.C:
		return false
	}
}

// SetClientIP sets how the client's address is read (Caddy's client IP,
// which honours trusted_proxies); by default it is the connection's peer.
func (p *Pipeline) SetClientIP(f func(*http.Request) string) { p.clientIP = f }

// SetTrustedProxy sets how a request from one of Caddy's trusted_proxies is
// recognised; by default none is, and incoming X-Forwarded-* headers are
// not passed on.
func (p *Pipeline) SetTrustedProxy(f func(*http.Request) bool) { p.trustedProxy = f }

func untrusted(*http.Request) bool { return false }

func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *source) respond(w http.ResponseWriter, status int, id, outcome string) {
	if s.response.Body != "" {
		ct := s.response.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		io.WriteString(w, s.response.Body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"status":"`+outcome+`","id":"`+id+`"}`+"\n")
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// requestURL is the URL the provider signed: the configured public URL, or
// the one the request arrived on.
func (s *source) requestURL(r *http.Request) string {
	if s.publicURL != "" {
		if r.URL.RawQuery == "" {
			return s.publicURL
		}
		return s.publicURL + "?" + r.URL.RawQuery
	}
	u := scheme(r) + "://" + r.Host + r.URL.Path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// targets routes an event: the destinations of the matching rules (or the
// other-mode upstreams), with each route's shaping rendered and each
// ordered upstream's key computed. Expression errors are logged and counted.
func (p *Pipeline) targets(src *source, env *route.Env, otherMode bool) []store.Target {
	var dests []route.Destination
	switch {
	case otherMode:
		for _, u := range src.otherModeTo {
			dests = append(dests, route.Destination{Upstream: u, Route: "other_mode"})
		}
	case env != nil:
		var errs []error
		dests, errs = src.table.Decide(env)
		for _, err := range errs {
			p.counters.ruleErrors.Add(1)
			p.log.Warn("route expression failed; treated as no match", zap.String("source", src.name), zap.Error(err))
		}
	default:
		dests, _ = src.table.Decide(&route.Env{})
	}
	out := make([]store.Target, 0, len(dests))
	for _, d := range dests {
		target := store.Target{Upstream: d.Upstream, Route: d.Route}
		if d.Shape != nil {
			shaped, err := d.Shape.Apply(env)
			if err != nil {
				// A delivery the route cannot shape is not sent shaped wrongly:
				// it goes as received, and the failure is logged and counted.
				p.counters.ruleErrors.Add(1)
				p.log.Warn("route shaping failed; delivering the event as received",
					zap.String("source", src.name), zap.String("route", d.Route), zap.Error(err))
			} else {
				target.Path, target.SetHeaders, target.RemoveHeaders, target.Body = shaped.Path, shaped.SetHeaders, shaped.RemoveHeaders, shaped.Body
			}
		}
		if prog := p.orderKeys[d.Upstream]; prog != nil {
			key, err := prog.Key(env)
			if err != nil {
				p.log.Warn("ordering key expression failed; delivery unordered", zap.String("upstream", d.Upstream), zap.Error(err))
			}
			target.OrderKey = key
		}
		out = append(out, target)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Counters are the pipeline's own counts.
type Counters struct {
	// RuleErrors counts expressions that failed while routing or shaping.
	RuleErrors int64 `json:"rule_errors"`
	// Unparseable counts bodies rules could not read.
	Unparseable int64 `json:"unparseable_bodies"`
}

// Counts returns the pipeline's counters.
func (p *Pipeline) Counts() Counters {
	return Counters{RuleErrors: p.counters.ruleErrors.Load(), Unparseable: p.counters.unparseable.Load()}
}

func newEnv(src *source, r *http.Request, now time.Time) *route.Env {
	headers := make(map[string]string, len(r.Header))
	for k, v := range r.Header {
		if len(v) > 0 {
			headers[strings.ToLower(k)] = v[0]
		}
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			query[k] = v[0]
		}
	}
	return &route.Env{Headers: headers, Query: query, Path: r.URL.Path, Method: r.Method, Source: src.name, Provider: src.provider, ReceivedAt: now}
}

// Sources returns the source names by path, for logs and tools.
func (p *Pipeline) Sources() map[string]string {
	out := make(map[string]string, len(p.sources))
	for _, s := range p.sources {
		out[s.path] = s.name
	}
	return out
}
