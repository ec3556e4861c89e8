package caddymodule

import (
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/store"
)

// Upstream states in GET /hookgate/upstreams: what an operator needs to
// know first, the pause before the breaker.
const (
	upstreamRunning      = "running"
	upstreamPaused       = "paused"
	upstreamBreakerOpen  = "breaker_open"
	upstreamUnconfigured = "unconfigured" // queued work or a pause, but no definition
)

// UpstreamView is one upstream in GET /hookgate/upstreams and the answer to
// a pause or resume.
type UpstreamView struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Paused bool   `json:"paused"`
	// Since is when the upstream was paused or last resumed; absent when it
	// never was.
	Since                *time.Time `json:"since,omitempty"`
	Pending              int        `json:"pending"`
	OldestPendingSeconds float64    `json:"oldest_pending_seconds"`
	Dead                 int        `json:"dead"`
	Breaker              string     `json:"breaker"`
	Configured           bool       `json:"configured"`
}

// upstreamViews describes every upstream the configuration defines, and any
// other one the store has deliveries or a pause for. counts may be nil.
func (g *liveGateway) upstreamViews(counts map[string]store.UpstreamStats) []UpstreamView {
	pauses := g.handle.store.Pauses()
	names := map[string]bool{}
	for name := range g.upstreams {
		names[name] = true
	}
	for name := range counts {
		names[name] = true
	}
	for name, p := range pauses {
		if p.Paused {
			names[name] = true
		}
	}
	out := make([]UpstreamView, 0, len(names))
	for name := range names {
		_, configured := g.upstreams[name]
		p, c := pauses[name], counts[name]
		v := UpstreamView{Name: name, Paused: p.Paused, Pending: c.Pending, Dead: c.Dead,
			OldestPendingSeconds: c.OldestPendingSeconds, Breaker: g.handle.engine.BreakerState(name), Configured: configured}
		if !p.Since.IsZero() {
			v.Since = &p.Since
		}
		switch {
		case p.Paused:
			v.State = upstreamPaused
		case !configured:
			v.State = upstreamUnconfigured
		case v.Breaker != deliver.BreakerClosed:
			v.State = upstreamBreakerOpen
		default:
			v.State = upstreamRunning
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b UpstreamView) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// listUpstreams serves GET /hookgate/upstreams.
func listUpstreams(w http.ResponseWriter, _ *http.Request, g *liveGateway) error {
	st, err := g.handle.store.Stats()
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"store": g.handle.store.Path(), "upstreams": g.upstreamViews(st.Upstreams)})
}

// setPaused serves POST /hookgate/upstreams/{name}/pause and /resume. Only
// a defined upstream may be paused; any paused one may be resumed, so a
// pause never outlives the upstream's definition unnoticed.
func setPaused(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	name, action := r.PathValue("name"), r.PathValue("action")
	if action != "pause" && action != "resume" {
		return apiError(http.StatusNotFound, "no such endpoint: %s %s (pause or resume)", r.Method, r.URL.Path)
	}
	paused := action == "pause"
	if _, ok := g.upstreams[name]; !ok && (paused || !g.handle.store.PauseOf(name).Paused) {
		return apiError(http.StatusNotFound, "no upstream %s in the configuration", name)
	}
	p, err := g.handle.engine.SetPaused(r.Context(), name, paused)
	if err != nil {
		return apiError(http.StatusServiceUnavailable, "storing the pause of %s: %v", name, err)
	}
	if g.owner != nil && g.owner.logger != nil {
		verb := "upstream resumed"
		if paused {
			verb = "upstream paused"
		}
		g.owner.logger.Info(verb, zap.String("upstream", name), zap.String("storage", g.handle.store.Path()), zap.Time("since", p.Since))
	}
	st, err := g.handle.store.Stats()
	if err != nil {
		st = store.Stats{} // the change is made; the counts are a courtesy
	}
	for _, v := range g.upstreamViews(st.Upstreams) {
		if v.Name == name {
			return writeJSON(w, v)
		}
	}
	return writeJSON(w, UpstreamView{Name: name, Paused: p.Paused})
}
