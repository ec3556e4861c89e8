// Package ingest is the request path: verify the signature over the raw
// bytes, compute the dedup key, route, store durably, then answer. It knows
// nothing of Caddy, so it runs under httptest as it runs in production.
package ingest

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/store"
)

// Pipeline answers webhook requests for a compiled configuration.
type Pipeline struct {
	sources map[string]*source // by PathKey of their path
	claims  []string           // claimed prefixes in PathKey form, each ending in "/"
	maxBody int64
	// orderKeys group deliveries to upstreams with ordered delivery.
	orderKeys map[string]*rules.Program
	// maxPending bounds the deliveries waiting before ingest answers 503.
	maxPending int64
	counters   struct{ ruleErrors, unparseable atomic.Int64 }
	masker     *masker // set when bodies are logged
	// shownMasker is set when bodies the admin API shows are masked.
	shownMasker *masker
	// bodyTimeout bounds reading a request body.
	bodyTimeout time.Duration
	// bodies is the budget of body bytes held by requests being read.
	bodies *bodyBudget
	// unfinished caps the requests whose body has not fully arrived, per
	// client and per connection; firstByteTimeout bounds how long a body
	// may take to start.
	unfinished       *unfinished
	firstByteTimeout time.Duration
	// redeliveries are what reconciliation asked providers to send again.
	redeliveries redeliveries

	store Store
	log   *zap.Logger
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
	secrets    SecretObserver
	answered   func(r *http.Request, outcome, eventID string)
	// rejections keeps refused requests per source; nil keeps none.
	rejections *Rejections
}

// KeepRejections gives the pipeline the logs its refused requests go to:
// its store's, which outlive a reload. Call it before Attach.
func (p *Pipeline) KeepRejections(r *Rejections) { p.rejections = r }

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

// SecretObserver, when the Observer is one too, is told which of a
// source's configured secrets verified each request (its index, 0 first),
// duplicates included: during a rotation, when the old secret stops
// verifying, it can go.
type SecretObserver interface {
	ObserveSecret(source string, secret int)
}

func (p *Pipeline) observe(src *source, outcome string, start time.Time) {
	if p.observer != nil {
		p.observer.Observe(src.Name, outcome, time.Since(start))
	}
}

// Store is what the request path needs of the store: writing events,
// reading one back (to route it again), the backlog for backpressure, and
// the secrets handshakes establish.
type Store interface {
	Ingest(ctx context.Context, e *store.NewEvent) (store.IngestResult, error)
	Event(id store.ID) (*store.EventRecord, error)
	AddDeliveries(ctx context.Context, id store.ID, targets []store.Target) error
	Pending() int64
	LearnedSecret(scope string) (*store.LearnedSecret, error)
	LearnSecret(ctx context.Context, ls store.LearnedSecret) (bool, error)
}

// Attach connects the pipeline to its store, which wakes delivery for the
// work it takes: the store opens when the configuration goes live, after
// the pipeline is built.
func (p *Pipeline) Attach(st Store, log *zap.Logger, now func() time.Time) {
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	p.store, p.log, p.now = st, log, now
	defer p.attachOnce.Do(func() { close(p.attached) })
	p.rejectLog = log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewSamplerWithOptions(c, time.Second, rejectLogFirst, rejectLogThereafter)
	}))
}

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

func untrusted(*http.Request) bool { return false }

func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// proto is the protocol the request came in on, as X-Forwarded-Proto names it.
func proto(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// requestURL is the URL the provider signed: the configured public URL, or
// the one the request arrived on.
func (s *source) requestURL(r *http.Request) string {
	if s.PublicURL != "" {
		if r.URL.RawQuery == "" {
			return s.PublicURL
		}
		return s.PublicURL + "?" + r.URL.RawQuery
	}
	u := proto(r) + "://" + r.Host + r.URL.Path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// targets routes an event: the destinations of the matching rules (or the
// other-mode upstreams), with each route's shaping rendered and each
// ordered upstream's key computed. Expression errors are logged and counted.
func (p *Pipeline) targets(src *source, env *rules.Env, otherMode bool) []store.Target {
	var dests []rules.Destination
	switch {
	case otherMode:
		for _, u := range src.OtherModeTo {
			dests = append(dests, rules.Destination{Upstream: u, Route: "other_mode"})
		}
	case env != nil:
		var errs []error
		dests, errs = src.Rules.Decide(env)
		for _, err := range errs {
			p.counters.ruleErrors.Add(1)
			p.log.Warn("route expression failed; treated as no match", zap.String("source", src.Name), zap.Error(err))
		}
	default:
		dests, _ = src.Rules.Decide(&rules.Env{})
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
					zap.String("source", src.Name), zap.String("route", d.Route), zap.Error(err))
			} else {
				target.Shaping, target.Body = shaped.Shaping, shaped.Body
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

// newEnv is what expressions see of a request, live or stored: headers in
// lower case and the query, first value of each.
func newEnv(src *source, method, path, rawQuery string, header http.Header, at time.Time) *rules.Env {
	headers := make(map[string]string, len(header))
	for k, v := range header {
		if len(v) > 0 {
			headers[strings.ToLower(k)] = v[0]
		}
	}
	values, _ := url.ParseQuery(rawQuery) // as r.URL.Query: what parses counts
	query := make(map[string]string, len(values))
	for k, v := range values {
		query[k] = v[0]
	}
	return &rules.Env{Headers: headers, Query: query, Path: path, Method: method, Source: src.Name, Provider: src.Provider, ReceivedAt: at}
}

// SearchFields names the sources' search fields.
func (p *Pipeline) SearchFields() []string {
	var out []string
	for _, s := range p.sources {
		for _, f := range s.Search {
			out = append(out, f.Name)
		}
	}
	return out
}

// Sources returns the source names by path, for logs and tools.
func (p *Pipeline) Sources() map[string]string {
	out := make(map[string]string, len(p.sources))
	for _, s := range p.sources {
		out[s.Path] = s.Name
	}
	return out
}
