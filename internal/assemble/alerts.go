package assemble

import (
	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
)

// alertConcurrency bounds an alert target's deliveries in flight: alerts
// are few, and a chat webhook rate-limits bursts.
const alertConcurrency = 2

// compileAlerts returns the alert rules and, for each target, the internal
// upstream that delivers its alerts: the target's URL used as it is, the
// default timeout and retry policy, no breaker, no re-signing.
func compileAlerts(cfg *config.Routes) ([]alert.Rule, map[string]deliver.Upstream) {
	var rules []alert.Rule
	upstreams := map[string]deliver.Upstream{}
	for _, a := range cfg.Alerts {
		r := alert.Rule{Name: a.Name, Format: a.Format, Dead: a.On.Dead, BreakerOpen: a.On.BreakerOpen,
			OldestPending: a.On.OldestPending.Std(), Repeat: a.Repeat.Std()}
		if rej := a.On.Rejected; rej != nil {
			r.Rejected = &alert.Rejected{Ratio: float64(rej.Ratio), Min: rej.Min, Window: rej.Window.Std()}
		}
		rules = append(rules, r)
		name := alert.Upstream(a.Name)
		upstreams[name] = deliver.Upstream{
			Name: name, URL: a.To.URL.URL, Timeout: config.DefaultTimeout, Concurrency: alertConcurrency, ExactURL: true, CredentialPath: true,
			Retry: deliver.RetryPolicy{
				MaxAttempts:     config.DefaultMaxAttempts,
				InitialInterval: config.DefaultInitialInterval,
				MaxInterval:     config.DefaultMaxInterval,
				RetryOn:         deliver.DefaultRetryOn,
			},
		}
	}
	return rules, upstreams
}
