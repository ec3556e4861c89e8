package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/reconcile"
	"github.com/hookgate/hookgate/internal/store"
)

// Reconciliation runs while a configuration is live: each source that sets
// reconcile gets a loop when the app starts, stopped when it stops (a
// reload's new configuration starts its own, from the cursor in the store).

// scheduled is a source's schedule with the pipeline that stores for it.
type scheduled struct {
	reconcile.Schedule
	pipeline *ingest.Pipeline
}

// pipelineSink stores what a loop fetched through its source's pipeline,
// and looks up dedup keys in its store.
type pipelineSink struct {
	pipeline *ingest.Pipeline
	source   string
	cursors  store.Cursors
}

func (s pipelineSink) Seen(key string) (bool, error) { return s.cursors.Seen(s.source, key) }

func (s pipelineSink) Redelivering(key string) { s.pipeline.ExpectRedelivery(s.source, key) }

func (s pipelineSink) Store(ctx context.Context, f reconcile.Found) (bool, error) {
	return s.pipeline.StoreFetched(ctx, s.source, f.Body)
}

// startLoops starts the loops of one store's registration and returns
// them by source name.
func (a *App) startLoops(ctx context.Context, reg *registration) map[string]*reconcile.Loop {
	cursors, ok := reg.handle.store.(store.Cursors)
	if !ok || len(reg.schedules) == 0 {
		return nil
	}
	loops := map[string]*reconcile.Loop{}
	for _, s := range reg.schedules {
		source := s.Source
		for _, outcome := range []string{"stored", "duplicate", "redelivery_requested", "failed"} {
			reconciledTotal.WithLabelValues(source, outcome) // the series exist from the start
		}
		loop := reconcile.NewLoop(s.Schedule, pipelineSink{pipeline: s.pipeline, source: source, cursors: cursors}, cursors, func(r reconcile.Report, err error) {
			if !r.DryRun {
				reconciledTotal.WithLabelValues(source, "stored").Add(float64(r.Stored))
				reconciledTotal.WithLabelValues(source, "duplicate").Add(float64(r.Duplicates))
				reconciledTotal.WithLabelValues(source, "redelivery_requested").Add(float64(r.Redeliveries))
				reconciledTotal.WithLabelValues(source, "failed").Add(float64(r.Failed))
			}
			fields := []zap.Field{zap.String("source", source), zap.Int("listed", r.Listed), zap.Int("stored", r.Stored), zap.Int("duplicates", r.Duplicates),
				zap.Int("redeliveries", r.Redeliveries), zap.Int("failed", r.Failed), zap.Int("requests", r.Requests), zap.Duration("took", r.Took)}
			switch {
			case err != nil:
				a.logger.Warn("reconciliation failed", append(fields, zap.Error(err))...)
				reg.handle.alerts.ReconcileFailed(source, err.Error())
			case r.Failed > 0:
				a.logger.Warn("reconciliation incomplete", fields...)
				reg.handle.alerts.ReconcileFailed(source, fmt.Sprintf("%d of %d events listed could not be stored or redelivered", r.Failed, r.Listed))
			default:
				a.logger.Info("reconciled", fields...)
				if !r.DryRun {
					reg.handle.alerts.Reconciled(source)
				}
			}
		})
		loop.Start(ctx)
		loops[source] = loop
	}
	return loops
}

// ReconcileView is a source's last reconciliation, in GET /hookgate/stats.
type ReconcileView struct {
	Through time.Time `json:"through"`
	LastRun time.Time `json:"last_run"`
	Outcome string    `json:"outcome"`
}

// reconcileViews reads each reconciling source's cursor from the store.
func reconcileViews(g *liveGateway) map[string]ReconcileView {
	cursors, ok := g.handle.store.(store.Cursors)
	if !ok || len(g.loops) == 0 {
		return nil
	}
	out := map[string]ReconcileView{}
	for name, loop := range g.loops {
		if c, err := cursors.Cursor(loop.Scope); err == nil {
			out[name] = ReconcileView{Through: c.Through, LastRun: c.LastRun, Outcome: c.Outcome}
		}
	}
	return out
}

// reconcileSource answers POST /hookgate/sources/{name}/reconcile
// [?since=24h][&dry_run=1]: one run now, its report as JSON.
func reconcileSource(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	name := r.PathValue("name")
	loop := g.loops[name]
	if loop == nil {
		return apiError(http.StatusNotFound, "source %q does not reconcile (set reconcile on it)", name)
	}
	var since time.Duration
	if v := r.URL.Query().Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return apiError(http.StatusBadRequest, "since must be a duration such as 24h, got %q", v)
		}
		since = d
	}
	dry := r.URL.Query().Get("dry_run")
	rep, err := loop.RunNow(r.Context(), since, dry == "1" || dry == "true")
	if err != nil {
		return apiError(http.StatusBadGateway, "reconciling %s: %v", name, err)
	}
	return writeJSON(w, map[string]any{"source": name, "since": rep.Since, "listed": rep.Listed, "stored": rep.Stored, "duplicates": rep.Duplicates,
		"redeliveries": rep.Redeliveries, "failed": rep.Failed, "requests": rep.Requests, "took_ms": rep.Took.Milliseconds(), "dry_run": rep.DryRun})
}
