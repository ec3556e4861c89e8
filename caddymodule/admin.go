package caddymodule

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI serves /hookgate/ on Caddy's admin endpoint, never on a site.
// Caddy creates it on its own, so it reads the package's live gateways.
type adminAPI struct{}

// CaddyModule returns the Caddy module information.
func (adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.hookgate",
		New: func() caddy.Module { return new(adminAPI) },
	}
}

// Routes returns the admin routes.
func (adminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/hookgate/", Handler: caddy.AdminHandlerFunc(serveAdmin)}}
}

// adminRoutes are the admin API's endpoints. Each answers for the store
// the request picks (pickGateway) and returns its error, which Caddy's
// admin server writes as JSON.
var adminRoutes = map[string]func(w http.ResponseWriter, r *http.Request, g *liveGateway) error{
	"GET /hookgate/events":                     listEvents,
	"GET /hookgate/events/{id}":                showEvent,
	"POST /hookgate/events/{id}/replay":        replayEvent,
	"POST /hookgate/events/{id}/cancel":        cancelEvent,
	"POST /hookgate/replay":                    bulkReplay,
	"GET /hookgate/stats":                      stats,
	"GET /hookgate/timeline":                   timeline,
	"GET /hookgate/backup":                     backup,
	"GET /hookgate/upstreams":                  listUpstreams,
	"POST /hookgate/upstreams/{name}/{action}": setPaused,
	"GET /hookgate/secrets":                    listSecrets,
	"DELETE /hookgate/secrets/{source}":        revokeSecret,
	"POST /hookgate/secrets/{source}/reveal":   revealSecret,
	"POST /hookgate/sources/{name}/reconcile":  reconcileSource,
	"GET /hookgate/rejected":                   listRejected,
	"GET /hookgate/listen/{source}":            listenAdmin,
}

// adminMux routes /hookgate/ by method and path; what it does not know
// gets 404, or 405 with the methods the path takes.
var adminMux = func() *http.ServeMux {
	mux := http.NewServeMux()
	for pattern, route := range adminRoutes {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			g, err := pickGateway(r)
			if err == nil {
				err = route(w, r, g)
			}
			if errors.Is(err, store.ErrUnavailable) {
				err = apiError(http.StatusServiceUnavailable, "%v", err)
			}
			adminOutcome(r).err = err
		})
	}
	mux.HandleFunc("/hookgate/ui/", func(w http.ResponseWriter, r *http.Request) { adminOutcome(r).err = serveUI(w, r) })
	mux.HandleFunc("/hookgate/ui", func(w http.ResponseWriter, r *http.Request) { adminOutcome(r).err = serveUI(w, r) })
	mux.HandleFunc("/hookgate/", func(w http.ResponseWriter, r *http.Request) {
		if trimmed := strings.TrimSuffix(r.URL.Path, "/"); trimmed != r.URL.Path && trimmed != "/hookgate" {
			again := r.Clone(r.Context())
			again.URL.Path, again.URL.RawPath = trimmed, ""
			if _, pattern := mux.Handler(again); pattern != "/hookgate/" {
				mux.ServeHTTP(w, again)
				return
			}
		}
		if allow := allowedMethods(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			adminOutcome(r).err = apiError(http.StatusMethodNotAllowed, "%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method)
			return
		}
		adminOutcome(r).err = apiError(http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	})
	return mux
}()

// allowedMethods are the methods an endpoint other than the catch-all
// takes at r's path.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/hookgate/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

type adminOutcomeKey struct{}

// adminResult carries a route's error out of the mux, which has no return.
type adminResult struct{ err error }

func adminOutcome(r *http.Request) *adminResult {
	return r.Context().Value(adminOutcomeKey{}).(*adminResult)
}

func serveAdmin(w http.ResponseWriter, r *http.Request) error {
	var out adminResult
	adminMux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), adminOutcomeKey{}, &out)))
	return out.err
}

// pickGateway chooses the store: the only live one, or ?store=<path>.
func pickGateway(r *http.Request) (*liveGateway, error) {
	gws := liveGateways()
	want := r.URL.Query().Get("store")
	if want != "" {
		for _, g := range gws {
			if g.handle.store.Path() == want {
				return g, nil
			}
		}
		return nil, apiError(http.StatusNotFound, "no live store %s", want)
	}
	switch len(gws) {
	case 0:
		return nil, apiError(http.StatusServiceUnavailable, "no webhook_gateway is configured")
	case 1:
		return gws[0], nil
	}
	var paths []string
	for _, g := range gws {
		paths = append(paths, g.handle.store.Path())
	}
	return nil, apiError(http.StatusBadRequest, "several stores are live; choose one with ?store= (%s)", strings.Join(paths, ", "))
}

func parseID(s string) (store.ID, error) {
	id, err := store.ParseID(s)
	if err != nil {
		return id, apiError(http.StatusBadRequest, "%v", err)
	}
	return id, nil
}

func queryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, apiError(http.StatusBadRequest, "%s: want an RFC 3339 time or a duration ago (1h), got %q", name, v)
}

func queryLimit(r *http.Request, def, most int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, apiError(http.StatusBadRequest, "limit: want a number from 1 to %d, got %q", most, v)
	}
	return n, nil
}

// pageParams reads the parameters listings and bulk replays share: limit,
// since, until, and the id to resume from.
func pageParams(r *http.Request, resumeName string, defLimit, maxLimit int) (limit int, since, until time.Time, resume *store.ID, err error) {
	if limit, err = queryLimit(r, defLimit, maxLimit); err != nil {
		return
	}
	if since, err = queryTime(r, "since"); err != nil {
		return
	}
	if until, err = queryTime(r, "until"); err != nil {
		return
	}
	if v := r.URL.Query().Get(resumeName); v != "" {
		id, perr := parseID(v)
		if perr != nil {
			return limit, since, until, nil, perr
		}
		resume = &id
	}
	return
}

// statuses are the event statuses a listing filters by.
var statuses = []store.State{store.StatePending, store.StateDelivered, store.StateDead, store.StateUnrouted, store.StateQuarantined, store.StateCanceled}

func listEvents(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	q := r.URL.Query()
	f := store.ListFilter{Source: q.Get("source"), Status: store.State(q.Get("status")), Query: q.Get("q"), Upstream: q.Get("upstream"), Origin: q.Get("origin")}
	if o := f.Origin; o != "" && o != "webhook" && o != store.OriginReconcile && o != store.OriginRedelivery {
		return apiError(http.StatusBadRequest, "origin: want webhook, reconcile or redelivery, got %q", o)
	}
	if f.Status != "" && !slices.Contains(statuses, f.Status) {
		names := make([]string, len(statuses))
		for i, s := range statuses {
			names[i] = string(s)
		}
		return apiError(http.StatusBadRequest, "status: want one of %s, got %q", strings.Join(names, ", "), f.Status)
	}
	var err error
	if f.Limit, f.Since, f.Until, f.Before, err = pageParams(r, "cursor", 50, 1000); err != nil {
		return err
	}
	if term := q.Get("search"); term != "" {
		if f.Search, err = store.ParseSearch(term); err != nil {
			return apiError(http.StatusBadRequest, "%v", err)
		}
	} else if name, value, ok := strings.Cut(f.Query, ":"); ok && value != "" && g.hasSearchField(name) {
		// The inspector's one search box: name:value of a search field.
		f.Search, f.Query = &store.SearchTerm{Field: name, Value: value}, ""
	}
	if f.Search != nil && !g.hasSearchField(f.Search.Field) {
		return apiError(http.StatusBadRequest, "search: no source has a search field %q (search_fields: %s)", f.Search.Field, strings.Join(g.searchFields(), ", "))
	}
	events, next, err := g.handle.store.List(f)
	if err != nil {
		return err
	}
	out := map[string]any{"events": events}
	if next != nil {
		out["next_cursor"] = next.String()
	}
	if events == nil {
		out["events"] = []store.EventSummary{}
	}
	return writeJSON(w, out)
}

// maskedHeaders hides credentials and signatures: anything a preset reads,
// and names that look like secrets.
func maskedHeaders(h http.Header, sourceHeaders []string) http.Header {
	out := h.Clone()
	for name := range out {
		lower := strings.ToLower(name)
		if sensitiveHeaders[lower] || slices.ContainsFunc(sourceHeaders, func(s string) bool { return strings.EqualFold(s, name) }) || strings.Contains(lower, "signature") || strings.Contains(lower, "token") ||
			strings.Contains(lower, "secret") || strings.Contains(lower, "authorization") || strings.Contains(lower, "hmac") ||
			strings.Contains(lower, "cookie") || strings.Contains(lower, "api-key") {
			out[name] = []string{"[masked]"}
		}
	}
	return out
}

var sensitiveHeaders = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range verify.Presets() {
		if p.Spec.Header != "" {
			m[strings.ToLower(p.Spec.Header)] = true
		}
		for _, h := range p.Bespoke.Headers {
			if strings.Contains(strings.ToLower(h), "sig") || strings.Contains(strings.ToLower(h), "secret") || strings.Contains(strings.ToLower(h), "verification") {
				m[strings.ToLower(h)] = true
			}
		}
	}
	return m
}()

// maskedParts collects what the live configurations mask for a source.
func (g *liveGateway) maskedParts(source string) (headers, fields []string) {
	for _, p := range g.pipelines {
		h, f := p.MaskedParts(source)
		headers, fields = append(headers, h...), append(fields, f...)
	}
	return headers, fields
}

// shownBody is the body with personal data masked when a live
// configuration asks for it (inspector.mask_bodies); ok is false when none
// does.
func (g *liveGateway) shownBody(source string, body []byte) ([]byte, bool) {
	for _, p := range g.pipelines {
		if masked, ok := p.ShownBody(source, body); ok {
			return masked, true
		}
	}
	return nil, false
}

// maskBodyFields replaces the values of the named fields, at any depth of a
// JSON body, with "[masked]"; ok is false when nothing needed masking.
func maskBodyFields(body []byte, fields []string) ([]byte, bool) {
	if len(fields) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil, false
	}
	var masked bool
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if slices.Contains(fields, k) {
					v[k], masked = "[masked]", true
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
	if !masked {
		return nil, false
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, false
	}
	return out, true
}

type eventView struct {
	ID         string      `json:"id"`
	Source     string      `json:"source"`
	Status     store.State `json:"status"`
	ReceivedAt time.Time   `json:"received_at"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Query      string      `json:"query,omitempty"`
	Host       string      `json:"host,omitempty"`
	RemoteAddr string      `json:"remote_addr,omitempty"`
	Headers    http.Header `json:"headers"`
	// Search are the event's search field values.
	Search     map[string]string `json:"search,omitempty"`
	Body       string            `json:"body"`
	BodyBase64 bool              `json:"body_base64,omitempty"`
	// BodyMasked says the body is shown re-encoded, with credential fields
	// (and, with inspector.mask_bodies, personal data) masked.
	BodyMasked  bool   `json:"body_masked,omitempty"`
	DedupKey    string `json:"dedup_key,omitempty"`
	Quarantined string `json:"quarantined,omitempty"`
	Handshake   string `json:"handshake,omitempty"`
	// Origin is how the event came: webhook, reconcile (fetched from the
	// provider's event API) or redelivery (sent again at reconciliation's
	// request).
	Origin string `json:"origin"`
	// Secret is the index of the source's configured secret that verified
	// the event (0 first).
	Secret     int            `json:"secret"`
	Deliveries []deliveryView `json:"deliveries"`
}

type deliveryView struct {
	store.Delivery
	Index   uint16          `json:"index"`
	History []store.Attempt `json:"history"`
}

func showEvent(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	id, err := parseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	rec, err := g.handle.store.Event(id)
	if errors.Is(err, store.ErrNotFound) {
		return apiError(http.StatusNotFound, "no event %s", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	e := rec.Event
	v := eventView{
		ID: e.ID.String(), Source: e.Source, Status: store.Status(e, rec.Deliveries), ReceivedAt: e.ReceivedAt,
		Method: e.Method, Path: e.Path, Query: e.RawQuery, Host: e.Host, RemoteAddr: e.RemoteAddr,
		DedupKey: e.DedupKey, Quarantined: e.Quarantined, Handshake: e.Handshake, Origin: e.Origin, Secret: e.Secret, Search: e.Search,
	}
	if v.Origin == "" {
		v.Origin = "webhook"
	}
	secretHeaders, secretFields := g.maskedParts(e.Source)
	v.Headers = maskedHeaders(e.Header, secretHeaders)
	v.Body, v.BodyBase64, v.BodyMasked = g.bodyAsShown(e, secretFields, true)
	for _, d := range rec.Deliveries {
		attempts := rec.Attempts[d.Key.Index]
		if attempts == nil {
			attempts = []store.Attempt{}
		}
		v.Deliveries = append(v.Deliveries, deliveryView{Delivery: d, Index: d.Key.Index, History: attempts})
	}
	if v.Deliveries == nil {
		v.Deliveries = []deliveryView{}
	}
	return writeJSON(w, v)
}

func replayEvent(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	id, err := parseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	rec, err := g.handle.store.Event(id)
	if errors.Is(err, store.ErrNotFound) {
		return apiError(http.StatusNotFound, "no event %s", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	if rec.Event.Unrouted || rec.Event.Quarantined != "" {
		for _, p := range g.pipelines {
			targets, err := p.Reroute(r.Context(), id)
			if err != nil && !errors.Is(err, ingest.ErrUnknownSource) {
				return apiError(http.StatusConflict, "%v", err)
			}
			if err == nil {
				return writeJSON(w, map[string]any{"rerouted": len(targets)})
			}
		}
		return apiError(http.StatusConflict, "no configured source %s to route the event", rec.Event.Source)
	}
	res, err := g.handle.engine.Replay(r.Context(), store.ReplayFilter{Event: &id, States: []store.State{store.StateDead, store.StateDelivered, store.StateCanceled}})
	if err != nil {
		return err
	}
	if res.Replayed == 0 {
		return apiError(http.StatusConflict, "event %s has nothing to replay: its deliveries are pending", r.PathValue("id"))
	}
	return writeJSON(w, map[string]any{"replayed": res.Replayed})
}

func cancelEvent(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	id, err := parseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	n, err := g.handle.store.Cancel(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return apiError(http.StatusNotFound, "no event %s", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"canceled": n})
}

func bulkReplay(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	q := r.URL.Query()
	f := store.ReplayFilter{Source: q.Get("source"), Upstream: q.Get("upstream")}
	for _, s := range strings.Split(q.Get("status"), ",") {
		switch s {
		case "":
		case "dead", "delivered", "canceled":
			f.States = append(f.States, store.State(s))
		default:
			return apiError(http.StatusBadRequest, "status: want dead, delivered or canceled, got %q", s)
		}
	}
	var err error
	if f.Limit, f.Since, f.Until, f.After, err = pageParams(r, "after", 1000, 10000); err != nil {
		return err
	}
	dry := q.Get("dry_run")
	f.DryRun = dry == "1" || dry == "true"
	res, err := g.handle.engine.Replay(r.Context(), f)
	if err != nil {
		return err
	}
	sample := make([]string, len(res.Sample))
	for i, id := range res.Sample {
		sample[i] = id.String()
	}
	out := map[string]any{"replayed": res.Replayed, "upstreams": res.Upstreams, "by_upstream": res.ByUpstream, "sample": sample}
	if f.DryRun {
		// The plan: what a replay with these parameters would touch.
		out = map[string]any{"dry_run": true, "would_replay": res.Replayed, "upstreams": res.Upstreams, "by_upstream": res.ByUpstream, "sample": sample, "more": res.Next != nil}
	}
	if res.Next != nil {
		out["next"] = res.Next.String() // resume with ?after=
	}
	return writeJSON(w, out)
}

// RejectedView is the answer of GET /hookgate/rejected: each source's
// most recent refused requests, newest first.
type RejectedView struct {
	Sources map[string]store.RejectionLog `json:"sources"`
}

// listRejected answers ?source= (one source) and ?limit= (records per
// source, default 100).
func listRejected(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return apiError(http.StatusBadRequest, "limit: want 1 to 1000, got %q", s)
		}
		limit = n
	}
	source := q.Get("source")
	if source != "" && !g.hasSource(source) {
		return apiError(http.StatusNotFound, "no source %q in the running configuration", source)
	}
	logs, err := g.handle.rejected.Recent(source, limit)
	if err != nil {
		return err
	}
	if source != "" && logs[source].Records == nil {
		logs[source] = store.RejectionLog{Records: []store.Rejection{}}
	}
	return writeJSON(w, RejectedView{Sources: logs})
}

// StatsView is the answer of GET /hookgate/stats.
type StatsView struct {
	store.Stats
	// Store is the store's path or URL.
	Store string `json:"store"`
	// Requests counts requests by source and outcome.
	Requests map[string]map[string]float64 `json:"requests"`
	// Breakers is each upstream's breaker state.
	Breakers map[string]string `json:"breakers"`
	// Pipelines are the rule evaluation errors of each configuration.
	Pipelines []ingest.Counters `json:"rule_errors"`
	// Reconcile is each reconciling source's cursor and last run.
	Reconcile map[string]ReconcileView `json:"reconcile,omitempty"`
}

func stats(w http.ResponseWriter, _ *http.Request, g *liveGateway) error {
	st, err := g.handle.store.Stats()
	if err != nil {
		return err
	}
	v := StatsView{Stats: st, Store: g.handle.store.Path(), Requests: requestCounts(), Breakers: map[string]string{}}
	for name := range g.upstreams {
		v.Breakers[name] = g.handle.engine.BreakerState(name)
	}
	for _, p := range g.pipelines {
		v.Pipelines = append(v.Pipelines, p.Counts())
	}
	v.Reconcile = reconcileViews(g)
	return writeJSON(w, v)
}

// backup streams a consistent snapshot of the live bbolt store: a tar of
// the store file as of one read transaction and the body segments it
// refers to (bolt.Store.Backup), its size announced in
// Content-Length so a client can tell a complete copy from a cut one.
// Writes go on meanwhile. It holds every stored body, header and learned
// secret unmasked, so it is refused to browsers and to the inspector (both
// send an Origin); the CLI, `hookgate backup`, sends none.
func backup(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	if _, browser := r.Header["Origin"]; browser {
		return apiError(http.StatusForbidden, "a backup holds every body and secret unmasked: it is served to tools that send no Origin (hookgate backup), not to browsers or the inspector")
	}
	src := g.handle.backup
	if src == nil {
		stream, _, _ := strings.Cut(strings.TrimPrefix(g.handle.store.Path(), "jetstream:"), "@")
		return apiError(http.StatusNotImplemented, "store %s is on NATS JetStream, which keeps its own copies (replicas); back it up with NATS: nats stream backup for each of %[2]s, %[2]s_WORK, %[2]s_DEAD, KV_%[2]s_dedup, KV_%[2]s_state and KV_%[2]s_secrets", g.handle.store.Path(), stream)
	}
	// Caddy's admin server gives a request 10 s to be read; once that
	// passes, net/http treats the connection as gone and cancels the
	// request's context. A large copy takes longer: lift the deadline.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	started, sent := time.Now(), false
	n, err := src.Backup(w, func(size int64) {
		sent = true
		h := w.Header()
		h.Set("Content-Type", "application/x-tar")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Content-Disposition", `attachment; filename="hookgate-`+started.UTC().Format("20060102T150405Z")+`.tar"`)
		h.Set("Cache-Control", "no-store")
		h.Set("Hookgate-Store", g.handle.store.Path())
		w.WriteHeader(http.StatusOK)
	})
	logger := zap.NewNop()
	if g.owner != nil && g.owner.logger != nil {
		logger = g.owner.logger
	}
	if err != nil {
		if !sent {
			return err // nothing sent yet: Caddy answers with the error
		}
		// The status is sent: the short body (against Content-Length) is
		// how the client learns the copy is incomplete.
		logger.Error("backup failed", zap.String("storage", g.handle.store.Path()), zap.Int64("bytes", n), zap.Error(err))
		return nil
	}
	logger.Info("backup sent", zap.String("storage", g.handle.store.Path()), zap.Int64("bytes", n), zap.Duration("took", time.Since(started)))
	return nil
}

// hasSource reports whether a live configuration has a source so named.
func (g *liveGateway) hasSource(name string) bool {
	for _, p := range g.pipelines {
		for _, source := range p.Sources() {
			if source == name {
				return true
			}
		}
	}
	return false
}

// searchFields names the live sources' search fields, sorted.
func (g *liveGateway) searchFields() []string {
	var out []string
	for _, p := range g.pipelines {
		for _, name := range p.SearchFields() {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (g *liveGateway) hasSearchField(name string) bool {
	return slices.Contains(g.searchFields(), name)
}

// bodyAsShown is an event's body as the admin API shows it: credential
// fields and, when the configuration asks, personal data masked (unless
// mask is false), as text, or base64 when it is not UTF-8.
func (g *liveGateway) bodyAsShown(e *store.Event, secretFields []string, mask bool) (body string, isBase64, masked bool) {
	b := e.Body
	if mask {
		if m, ok := maskBodyFields(b, secretFields); ok {
			b, masked = m, true
		}
		if shown, ok := g.shownBody(e.Source, b); ok {
			b, masked = shown, true
		}
	}
	if utf8.Valid(b) {
		return string(b), false, masked
	}
	return base64.StdEncoding.EncodeToString(b), true, masked
}
