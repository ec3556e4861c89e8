package assemble

import (
	"fmt"
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
	"gitlab": 7 * 24 * time.Hour,
	"paypal": 30 * 24 * time.Hour,
	"paddle": 90 * 24 * time.Hour,
	"square": 28 * 24 * time.Hour,
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
		if cfg.Unresolved[src.Name] {
			continue // a check without secrets: no client to make
		}
		c, err := newReconcileClient(src.Provider, base, string(r.Credentials), string(r.Hook))
		if err != nil {
			errs = append(errs, cfg.Errorf(src.Pos(), "source %s.reconcile: %v", src.Name, err))
			continue
		}
		s.Client, s.Requests = c, c.Count
		out = append(out, s)
	}
	return out, errs
}

// counting is a client that counts its requests.
type counting interface {
	reconcile.Client
	Count() int
}

// newReconcileClient makes the client of a provider that can reconcile.
func newReconcileClient(provider, base, credentials, hook string) (counting, error) {
	switch provider {
	case "stripe":
		return reconcile.NewStripe(reconcileClient, base, credentials), nil
	case "github":
		return reconcile.NewGitHub(reconcileClient, base, credentials, hook)
	case "gitlab":
		return reconcile.NewGitLab(reconcileClient, base, credentials, hook)
	case "paypal":
		return reconcile.NewPayPal(reconcileClient, base, credentials, hook)
	case "paddle":
		return reconcile.NewPaddle(reconcileClient, base, credentials, hook)
	case "square":
		return reconcile.NewSquare(reconcileClient, base, credentials), nil
	}
	return nil, fmt.Errorf("provider %s has no reconciliation client", provider)
}
