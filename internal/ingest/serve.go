package ingest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// The request path runs in stages — admit, read the body, answer a
// handshake, verify, build the event, store — each of which either passes
// the request on or decides the answer. Only write puts an answer on the
// wire, so every refusal is counted and logged the same way.

// rejection is a refused request: the status and message the client gets
// and the reason it is counted and logged under.
type rejection struct {
	status  int
	message string
	// reason is counted as rejected_<reason>; empty for a refusal that is
	// not the client's doing (the store failed), counted as unavailable.
	reason string
	// err is logged with the refusal; never a secret or a header value.
	err error
	// storage names the store operation that failed, for the error log.
	storage string
}

func refuse(status int, reason, message string) *rejection {
	return &rejection{status: status, reason: reason, message: message}
}

// storageFailed is a 503 for a store that cannot take or give what the
// request needs: never a 2xx without the write.
func storageFailed(what string, err error) *rejection {
	return &rejection{status: http.StatusServiceUnavailable, message: "storage unavailable, retry later", storage: what, err: err}
}

var (
	errMethod        = refuse(http.StatusMethodNotAllowed, "method", "method not allowed")
	errTooLarge      = refuse(http.StatusRequestEntityTooLarge, "body_too_large", "request body too large")
	errForged        = refuse(http.StatusUnauthorized, "", "unauthorized")
	errNotAttached   = storageFailed("waiting for the store", errors.New("the store is not open yet"))
	errIPNotAllowed  = refuse(http.StatusForbidden, "ip_not_allowed", "forbidden")
	errUnfinishedCap = refuse(http.StatusServiceUnavailable, "unfinished_bodies", "too many unfinished requests from this client, retry later")
)

// answer is what the request path decided: a rejection, a handshake's
// response, or a stored event.
type answer struct {
	rejection *rejection
	handshake *handshakeAnswer
	stored    *storedEvent
	// body is the request's, when it was read: a kept rejection may show
	// its start.
	body []byte
}

type handshakeAnswer struct {
	handshake *verify.Handshake
	response  *verify.HandshakeResponse
	// why a proposed secret was refused, for the log.
	why string
}

type storedEvent struct {
	result store.IngestResult
	event  *store.NewEvent
}

// serve is the request path for one source.
func (p *Pipeline) serve(w http.ResponseWriter, r *http.Request, src *source) {
	start := time.Now()
	ctx, span := startSpan(r.Context(), "hookgate.ingest")
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.String("hookgate.source", src.Name))
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx) // the stages below, and the stored event, see the ingest span
	}
	if rej := p.admit(r, src); rej != nil {
		p.write(w, r, src, start, answer{rejection: rej})
		return
	}
	body, reserved, rej := p.readBody(w, r)
	defer p.bodies.release(reserved)
	if rej != nil {
		p.write(w, r, src, start, answer{rejection: rej})
		return
	}
	a := p.decide(r, src, body)
	a.body = body
	p.write(w, r, src, start, a)
}

// readBody reads the request's body within the client's share of
// unfinished requests and the deadlines: a body must start within the
// first-byte timeout, and one that trickles in (slowloris) may not hold a
// connection for longer than the provider would wait for an answer anyway.
func (p *Pipeline) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int64, *rejection) {
	client, conn := clientKey(p.clientIP(r)), r.RemoteAddr
	if p.trustedProxy(r) {
		conn = "" // a proxy's connection carries many clients
	}
	if !p.unfinished.enter(client, conn) {
		return nil, 0, errUnfinishedCap
	}
	defer p.unfinished.leave(client, conn)
	dl := deadlines{rc: http.NewResponseController(w), firstByte: p.firstByteTimeout}
	if p.bodyTimeout > 0 {
		dl.body = time.Now().Add(p.bodyTimeout)
	}
	dl.start()
	body, reserved, err := readBody(http.MaxBytesReader(w, r.Body, p.maxBody), r.ContentLength, p.bodies, dl.started)
	if err != nil {
		return nil, reserved, bodyRejection(err)
	}
	return body, reserved, nil
}

// clientKey is what unfinished requests are counted by: the address, or
// for IPv6 its /64, which one host can fill with addresses of its own.
func clientKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.Is6() || addr.Is4In6() {
		return ip
	}
	prefix, _ := addr.Prefix(64)
	return prefix.String()
}

// admit checks what is known before the body is read: the client may
// send to the source, the store is there, the method can carry a webhook,
// and the declared length fits.
func (p *Pipeline) admit(r *http.Request, src *source) *rejection {
	// First, so that a sender from elsewhere costs no wait for the store
	// and learns nothing about the source, handshakes included.
	if src.AllowIPs != nil && !p.allowed(r, src.AllowIPs) {
		return errIPNotAllowed
	}
	select {
	case <-p.attached:
	default:
		if !p.awaitStore() {
			return errNotAttached
		}
	}
	// GET and HEAD only ever carry a handshake (Meta, Okta, Intercom);
	// anything else must POST.
	probe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if r.Method != http.MethodPost && (!probe || !src.hasHandshakes()) {
		return errMethod
	}
	if r.ContentLength > p.maxBody {
		return errTooLarge
	}
	return nil
}

// allowed reports whether the client address, as Caddy determined it, is
// in the set; an address that does not parse is not.
func (p *Pipeline) allowed(r *http.Request, set AddrSet) bool {
	addr, err := netip.ParseAddr(p.clientIP(r))
	return err == nil && set.Contains(addr)
}

func bodyRejection(err error) *rejection {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errBodyBudget):
		return refuse(http.StatusServiceUnavailable, "inflight_bodies", "too many requests in flight, retry later")
	case errors.As(err, &tooLarge):
		return errTooLarge
	case errors.Is(err, errFirstByte):
		return refuse(http.StatusRequestTimeout, "first_byte_timeout", "request body did not start")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return refuse(http.StatusRequestTimeout, "body_timeout", "request body too slow")
	}
	return &rejection{status: http.StatusBadRequest, reason: "body_read", message: "could not read request body", err: err}
}

// decide takes a request whose body is read to its answer: a handshake's,
// a refusal, or the stored event's.
func (p *Pipeline) decide(r *http.Request, src *source, body []byte) answer {
	if r.Method != http.MethodPost && len(body) > 0 {
		return answer{rejection: refuse(http.StatusBadRequest, "get_body", "a GET carries no body")}
	}
	if a, ok := p.handshake(r, src, body, src.unsignedHandshakes); ok {
		return a
	}
	now := p.now()
	vr := r
	vctx, vspan := startSpan(r.Context(), "hookgate.verify")
	if vctx != r.Context() {
		vr = r.WithContext(vctx) // a copy of the request only when traced
	}
	verified, rej := p.verify(vr, src, body, now)
	vspan.End()
	if rej != nil {
		return answer{rejection: rej}
	}
	if a, ok := p.handshake(r, src, body, src.signedHandshakes); ok {
		if a.handshake != nil && a.handshake.response.Record != "" && a.handshake.response.Status < 300 {
			return p.record(r, src, body, now, verified, a)
		}
		return a
	}
	if r.Method != http.MethodPost {
		return answer{rejection: errMethod}
	}
	ne, rej := p.event(r, src, body, now, verified)
	if rej != nil {
		return answer{rejection: rej}
	}
	if p.maxPending > 0 && p.store.Pending() >= p.maxPending {
		return answer{rejection: refuse(http.StatusServiceUnavailable, "backpressure", "too many events waiting for delivery, retry later")}
	}
	res, err := p.storeEvent(r.Context(), ne)
	switch {
	case err != nil:
		return answer{rejection: storageFailed("storing event", err)}
	case res.Replayed:
		return answer{rejection: refuse(http.StatusUnauthorized, "replayed_token", "unauthorized")}
	}
	return answer{stored: &storedEvent{result: res, event: ne}}
}

// storeEvent is the store write, a span of its own in a traced request:
// the fsync that the provider's answer waits for.
func (p *Pipeline) storeEvent(ctx context.Context, ne *store.NewEvent) (store.IngestResult, error) {
	ctx, span := startSpan(ctx, "hookgate.store")
	defer span.End()
	res, err := p.store.Ingest(ctx, ne)
	if err != nil {
		span.SetStatus(codes.Error, "store unavailable")
	} else if span.IsRecording() {
		span.SetAttributes(attribute.Bool("hookgate.duplicate", res.Duplicate))
	}
	return res, err
}

// verify checks the signature over the raw bytes, with the secret the
// store learned when the source learns one.
func (p *Pipeline) verify(r *http.Request, src *source, body []byte, now time.Time) (verify.Result, *rejection) {
	vr := &verify.Request{Body: body, Header: r.Header, Method: r.Method, Now: now, Context: r.Context()}
	if src.SignsURL {
		vr.URL = src.requestURL(r)
	}
	if src.Learns {
		learned, err := p.learnedSecret(src)
		if err != nil {
			return verify.Result{}, storageFailed("reading a learned secret", err)
		}
		vr.Learned = learned
	}
	verified, err := src.Scheme.Verify(vr)
	if errors.Is(err, verify.ErrKeyUnavailable) {
		// The key may be genuine and not fetched yet: the provider retries
		// a 503, while a 401 would end the event.
		return verify.Result{}, &rejection{status: http.StatusServiceUnavailable, reason: "key_unavailable",
			message: "verification key not available yet, retry later", err: err}
	}
	if err != nil {
		rej := *errForged
		rej.reason = verify.Reason(err)
		return verify.Result{}, &rej
	}
	if p.secrets != nil && len(src.Secrets) > 0 {
		p.secrets.ObserveSecret(src.Name, verified.Secret)
	}
	return verified, nil
}

// event builds the event to store from a verified request: its body read
// where something needs it, the validation gate, the dedup keys, the
// mode check and the routing.
func (p *Pipeline) event(r *http.Request, src *source, body []byte, now time.Time, verified verify.Result) (*store.NewEvent, *rejection) {
	env, fastKey, rej := p.environment(r, src, body, now)
	if rej != nil {
		return nil, rej
	}
	ne := p.newEvent(r, src, body, now)
	if src.Gate != nil {
		if err := src.Gate.Check(env.Body); err != nil {
			if !src.Quarantine {
				return nil, &rejection{status: http.StatusBadRequest, reason: "schema", message: "body does not match the source's schema", err: err}
			}
			ne.Event.Quarantined = firstLine(err.Error())
		}
	}
	p.dedupKeys(src, ne, env, fastKey, verified.DedupKey, now)
	p.searchValues(src, ne.Event, env)
	ne.Event.Secret = verified.Secret
	otherMode, rej := p.mode(src, env)
	if rej != nil {
		return nil, rej
	}
	if verified.SingleUseToken != "" {
		ne.ReplayKey, ne.ReplayUntil = verified.SingleUseToken, now.Add(verified.SingleUseWindow)
	}
	if ne.Event.Quarantined == "" {
		ne.Targets = p.targets(src, env, otherMode)
		ne.Event.Unrouted = len(ne.Targets) == 0
	}
	return ne, nil
}

// newEvent is the request as an event is stored.
func (p *Pipeline) newEvent(r *http.Request, src *source, body []byte, now time.Time) *store.NewEvent {
	return &store.NewEvent{Event: &store.Event{
		Source:          src.Name,
		ReceivedAt:      now,
		Method:          r.Method,
		Path:            r.URL.Path,
		RawQuery:        r.URL.RawQuery,
		Host:            r.Host,
		RemoteAddr:      r.RemoteAddr,
		Proto:           proto(r),
		ViaTrustedProxy: p.trustedProxy(r),
		Header:          r.Header,
		Body:            body,
		Trace:           traceContext(r.Context()),
	}}
}

// record stores a verified handshake that asks to be kept (an SNS
// subscription confirmation) as an event marked with what it was: listed
// and inspected like any other, deduplicated by the source's key, never
// routed or delivered. The handshake's answer goes out once it is stored,
// after the follow-up it names (SNS's confirmation GET), which therefore
// runs only for a request that verified and was kept.
func (p *Pipeline) record(r *http.Request, src *source, body []byte, now time.Time, verified verify.Result, a answer) answer {
	ne := p.newEvent(r, src, body, now)
	ne.Event.Handshake, ne.Event.Unrouted = a.handshake.response.Record, true
	var env *rules.Env
	var fastKey *string
	if src.Dedup != nil {
		var rej *rejection
		if env, fastKey, rej = p.environment(r, src, body, now); rej != nil {
			return answer{rejection: rej}
		}
	}
	p.dedupKeys(src, ne, env, fastKey, verified.DedupKey, now)
	res, err := p.storeEvent(r.Context(), ne)
	if err != nil {
		return answer{rejection: storageFailed("storing a handshake record", err)}
	}
	resp := *a.handshake.response
	if resp.Followup != nil {
		resp = *resp.Followup(r.Context())
		a.handshake.why = resp.Reason
	}
	resp.Header = resp.Header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set("Hookgate-Event-Id", res.ID.String())
	if resp.Status == http.StatusServiceUnavailable {
		resp.Header.Set("Retry-After", retryAfterSeconds)
	}
	a.handshake.response = &resp
	p.log.Info("handshake recorded", zap.String("source", src.Name), zap.String("event_id", res.ID.String()),
		zap.String("record", ne.Event.Handshake), zap.Bool("duplicate", res.Duplicate), zap.Int("status", resp.Status))
	return a
}

// environment is what expressions see of the request, with the body
// parsed when something reads it; nil when nothing does. A dedup key that
// is all the source reads of the body comes straight from the bytes
// instead (fastKey), unless the body is not JSON.
func (p *Pipeline) environment(r *http.Request, src *source, body []byte, now time.Time) (*rules.Env, *string, *rejection) {
	var fastKey *string
	if src.dedupPath != nil {
		if key, ok := rules.ExtractKey(body, src.dedupPath); ok {
			fastKey = &key
		}
	}
	if !src.needsEnv && (src.dedupPath == nil || fastKey != nil) {
		return nil, fastKey, nil
	}
	env := newEnv(src, r.Method, r.URL.Path, r.URL.RawQuery, r.Header, now)
	if !src.needsBody && src.dedupPath == nil {
		return env, fastKey, nil
	}
	parsed, err := rules.ParseBody(src.Format, body)
	switch {
	case err == nil:
		env.Body = parsed
	case src.bodyRequired || src.dedupPath != nil:
		return nil, nil, refuse(http.StatusBadRequest, "unparseable_body", "body is not valid JSON or form data")
	default:
		// Rules that read the body just do not match.
		p.counters.unparseable.Add(1)
	}
	return env, fastKey, nil
}

// searchValues computes the event's search fields: a field whose value is
// empty, or whose expression fails on this event, is left out.
func (p *Pipeline) searchValues(src *source, e *store.Event, env *rules.Env) {
	for _, f := range src.Search {
		v, err := f.Expr.Key(env)
		if err != nil || v == "" {
			continue
		}
		v = strings.ReplaceAll(v, "\x00", "") // the index separates with NUL
		if len(v) > store.MaxSearchValue {
			v = strings.ToValidUTF8(v[:store.MaxSearchValue], "")
		}
		if e.Search == nil {
			e.Search = make(map[string]string, len(src.Search))
		}
		e.Search[f.Name] = v
	}
}

// maxDedupKey bounds a dedup key as stored: a longer one (the ids of a
// batch of events, joined) is kept as its digest.
const maxDedupKey = 256

// dedupKeys sets the event's dedup key: the one the scheme derived from
// what it verified, the source's expression, or the body's digest where the
// preset's key is absent; and the body's digest as a second key where the
// signature covers no timestamp or id.
func (p *Pipeline) dedupKeys(src *source, ne *store.NewEvent, env *rules.Env, fastKey *string, schemeKey string, now time.Time) {
	var digest string // the body's digest, computed at most once
	var key string
	switch {
	case src.SchemeKey && schemeKey != "":
		key = schemeKey
	case src.Dedup != nil:
		var err error
		if fastKey != nil {
			key = *fastKey
		} else {
			key, err = src.Dedup.Key(env)
		}
		if err != nil && !src.DigestFallback {
			p.log.Warn("dedup key expression failed; event stored without dedup",
				zap.String("source", src.Name), zap.Error(err))
		}
	}
	if key == "" && src.DigestFallback {
		// The preset's key is missing from this signed body, or the
		// provider sends none: its digest still makes the provider's
		// retries of it one event.
		digest = digestKey(ne.Event.Body)
		key = digest
	}
	if len(key) > maxDedupKey {
		key = digestKey([]byte(key))
	}
	if key != "" {
		ne.DedupKey, ne.DedupUntil, ne.Event.DedupKey = key, now.Add(src.DedupWindow), key
		if p.redeliveries.asked(src.Name, key, now) {
			ne.Event.Origin = store.OriginRedelivery
		}
	}
	if src.ReplayDigest {
		if digest == "" {
			digest = digestKey(ne.Event.Body)
		}
		ne.DigestKey, ne.DedupUntil = digest, now.Add(src.DedupWindow)
	}
}

// mode checks a source that takes only live (or only test) events: an
// event of the other mode is refused, or routed to the other-mode
// upstreams when there are some.
func (p *Pipeline) mode(src *source, env *rules.Env) (otherMode bool, rej *rejection) {
	if src.Live == nil {
		return false, nil
	}
	live, err := src.Live.Match(env)
	if err != nil {
		p.log.Warn("live-mode expression failed", zap.String("source", src.Name), zap.Error(err))
	}
	if live == src.WantLive {
		return false, nil
	}
	if len(src.OtherModeTo) == 0 {
		rej := *errForged
		rej.reason = "wrong_mode"
		return false, &rej
	}
	return true, nil
}

// handshake answers the request if it is one of the handshakes. A
// handshake that proposes a secret is answered as it asks only if the store
// took the secret (learn).
func (p *Pipeline) handshake(r *http.Request, s *source, body []byte, handshakes []*verify.Handshake) (answer, bool) {
	if len(handshakes) == 0 {
		return answer{}, false
	}
	hr := &verify.HandshakeRequest{
		Method: r.Method, Header: r.Header, Query: r.URL.Query(), Body: body,
		Secrets: s.Secrets, VerifyToken: s.VerifyToken, KnownSecrets: len(s.Secrets),
	}
	for _, h := range handshakes {
		resp, ok := h.Answer(hr)
		if !ok {
			continue
		}
		why := resp.Reason
		if resp.Learn != "" {
			if !s.Learns {
				continue
			}
			var err error
			if resp, why, err = p.learn(r, s, resp); err != nil {
				return answer{rejection: storageFailed("storing a handshake secret", err)}, true
			}
		}
		return answer{handshake: &handshakeAnswer{handshake: h, response: resp, why: why}}, true
	}
	return answer{}, false
}

// write puts the answer on the wire, then counts and logs it: the one
// place the request path writes HTTP.
func (p *Pipeline) write(w http.ResponseWriter, r *http.Request, src *source, start time.Time, a answer) {
	span := trace.SpanFromContext(r.Context())
	var outcome, id string
	switch {
	case a.rejection != nil:
		writeRejection(w, a.rejection)
		outcome = p.rejected(r, src, start, a.rejection)
		p.keepRejection(r, src, a.rejection, a.body)
		endIngestSpan(span, a.rejection.status, outcome, "")
	case a.handshake != nil:
		resp := a.handshake.response
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", resp.ContentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
		p.handshakeAnswered(r, src, a.handshake.handshake, resp, a.handshake.why, start)
		outcome = "handshake"
		endIngestSpan(span, resp.Status, outcome, "")
	default:
		var status int
		status, outcome, id = p.accepted(w, src, start, a.stored)
		endIngestSpan(span, status, outcome, id)
	}
	if p.answered != nil {
		p.answered(r, outcome, id)
	}
}

func writeRejection(w http.ResponseWriter, rej *rejection) {
	switch rej.status {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfterSeconds)
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", http.MethodPost)
	}
	plain(w, rej.status, rej.message)
}

// rejected counts a refused request and logs it: at INFO, sampled so that a
// flood cannot fill the disk, never a header value or the body; a store
// failure at ERROR, sampled alike (a full disk refuses every request, and
// a line for each would fill what little is left; the counts are in
// caddy_hookgate_requests_total). It returns the outcome it counted.
func (p *Pipeline) rejected(r *http.Request, src *source, start time.Time, rej *rejection) string {
	if rej.storage != "" {
		p.rejectLog.Error(rej.storage, zap.String("source", src.Name), zap.Error(rej.err))
		p.observe(src, "unavailable", start)
		return "unavailable"
	}
	outcome := "rejected_" + rej.reason
	if p.observer != nil {
		p.observer.Observe(src.Name, outcome, 0)
	}
	fields := []zap.Field{zap.String("source", src.Name), zap.String("reason", rej.reason), zap.String("client_ip", p.clientIP(r))}
	if rej.err != nil {
		fields = append(fields, zap.Error(rej.err))
	}
	p.rejectLog.Info("request rejected", fields...)
	return outcome
}

// keepRejection adds a refused request to its source's log of rejections:
// its headers masked, its body only as the source asks, masked too.
func (p *Pipeline) keepRejection(r *http.Request, src *source, rej *rejection, body []byte) {
	if p.rejections == nil || src.RejectionsKept <= 0 {
		return
	}
	now := p.now()
	p.rejections.add(src.Name, now, src.RejectionsKept, func() store.Rejection {
		rec := store.Rejection{At: now, Source: src.Name, Reason: rej.reason, Status: rej.status, ClientIP: p.clientIP(r),
			Method: r.Method, Path: r.URL.Path, Header: rejectionHeaders(r.Header, src.SecretHeaders)}
		if rej.storage != "" {
			rec.Reason = "unavailable"
		}
		if rej.err != nil {
			rec.Detail = firstLine(rej.err.Error())
		}
		if n := src.RejectionBodyBytes; n > 0 && len(body) > 0 {
			rec.Body = p.rejectedBody(src, body, n)
		}
		return rec
	})
}

// rejectedBody is the start of a refused body, masked as shown bodies are;
// one too large to parse cheaply is masked as text.
func (p *Pipeline) rejectedBody(src *source, body []byte, n int) string {
	m := p.shownMasker
	if m == nil {
		m = newMasker(nil)
	}
	var masked string
	if len(body) <= 64<<10 {
		masked = m.masked(src.Format, body, src.SecretFields)
	} else if len(src.SecretFields) > 0 {
		masked = maskedValue
	} else {
		masked = maskText(strings.ToValidUTF8(string(body[:n]), "\uFFFD"))
	}
	if len(masked) > n {
		masked = strings.ToValidUTF8(masked[:n], "") + "…"
	}
	return masked
}

// accepted answers a stored event (or a duplicate of one), counts and logs
// it, and returns the status, outcome and event id it answered with.
func (p *Pipeline) accepted(w http.ResponseWriter, src *source, start time.Time, s *storedEvent) (status int, outcome, id string) {
	id = s.result.ID.String()
	w.Header().Set("Hookgate-Event-Id", id)
	if s.result.Duplicate {
		w.Header().Set("Hookgate-Duplicate", "true")
		p.log.Debug("duplicate event", zap.String("source", src.Name), zap.String("event_id", id))
		src.respond(w, http.StatusOK, id, "duplicate")
		p.observe(src, "duplicate", start)
		return http.StatusOK, "duplicate", id
	}
	body := s.event.Event.Body
	fields := []zap.Field{zap.String("source", src.Name), zap.String("event_id", id), zap.Int("deliveries", len(s.event.Targets)), zap.Int("bytes", len(body))}
	if trace := s.event.Event.TraceID(); trace != "" {
		fields = append(fields, zap.String("traceID", trace)) // the field Caddy's access log names it by
	}
	p.log.Info("event received", fields...)
	if p.masker != nil {
		if ce := p.log.Check(zap.DebugLevel, "event body"); ce != nil {
			ce.Write(zap.String("event_id", id), zap.String("body", p.masker.Mask(src.Format, body, src.SecretFields)))
		}
	}
	src.respond(w, src.Response.Status, id, "accepted")
	p.observe(src, "accepted", start)
	return src.Response.Status, "accepted", id
}

func (p *Pipeline) notFound(w http.ResponseWriter, r *http.Request) {
	plain(w, http.StatusNotFound, "no webhook source at this path")
	p.rejectLog.Info("request rejected", zap.String("reason", "no_source"), zap.String("client_ip", p.clientIP(r)))
}

func (s *source) respond(w http.ResponseWriter, status int, id, outcome string) {
	if s.Response.Body != "" {
		ct := s.Response.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		io.WriteString(w, s.Response.Body)
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
