package assemble

import (
	"net/http"
	"time"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/reconcile"
)

// Provider windows: how far back each provider's event API reaches.
var reconcileWindows = map[string]time.Duration{
	"stripe": 30 * 24 * time.Hour,
	"github": 3 * 24 * time.Hour,
}

// reconcileClient bounds each request to a provider's API.
var reconcileClient = &http.Client{Timeout: 30 * time.Second}

// schedules makes the reconciliation schedule of each source that sets
// reconcile.
func schedules(cfg *config.Routes) ([]reconcile.Schedule, []error) {
	var out []reconcile.Schedule
	var errs []error
	for _, src := range cfg.Sources {
		r := src.Reconcile
		if r == nil {
			continue
		}
		base := ""
		if r.APIBase.URL != nil {
			base = r.APIBase.String()
		}
		s := reconcile.Schedule{
			Source: src.Name, Scope: ingest.SecretScope(src.Name, src.Path, string(src.PublicURL)),
			Every: r.Every.Std(), Lookback: r.Lookback.Std(), Window: reconcileWindows[src.Provider],
		}
		if s.Every == 0 {
			s.Every = config.DefaultReconcileEvery
		}
		if s.Lookback == 0 {
			s.Lookback = config.DefaultReconcileLookback
		}
		switch src.Provider {
		case "stripe":
			c := reconcile.NewStripe(reconcileClient, base, string(r.Credentials))
			s.Client, s.Requests = c, func() int { return c.Requests }
		case "github":
			c, err := reconcile.NewGitHub(reconcileClient, base, string(r.Credentials), string(r.Hook))
			if err != nil {
				errs = append(errs, cfg.Errorf(src.Pos(), "source %s.reconcile: %v", src.Name, err))
				continue
			}
			s.Client, s.Requests = c, func() int { return c.Requests }
		}
		out = append(out, s)
	}
	return out, errs
}
