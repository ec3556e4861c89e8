package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/verify"
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
			OldestPending: a.On.OldestPending.Std(), ReconcileFailed: a.On.ReconcileFailed, StoreUnavailable: a.On.StoreUnavailable, StoreSize: float64(a.On.StoreSize), Repeat: a.Repeat.Std()}
		if a.To.URL.URL != nil {
			r.URL = a.To.URL.String()
		}
		r.Headers, r.RoutingKey = a.Headers, string(a.RoutingKey)
		if a.InspectorURL.URL != nil {
			r.InspectorURL = a.InspectorURL.String()
		}
		if a.On.Missed {
			r.Missed = unretried(cfg)
		}
		if rej := a.On.Rejected; rej != nil {
			r.Rejected = &alert.Rejected{Ratio: float64(rej.Ratio), Min: rej.Min, Window: rej.Window.Std()}
		}
		name := alert.Upstream(a.Name)
		up := deliver.Upstream{
			// Opsgenie takes each alert at a path of its own below the URL.
			Name: name, URL: a.To.URL.URL, Timeout: config.DefaultTimeout, Concurrency: alertConcurrency, ExactURL: a.Format != alert.FormatOpsgenie, CredentialPath: true, Headers: a.Headers,
			Retry: deliver.RetryPolicy{
				MaxAttempts:     config.DefaultMaxAttempts,
				InitialInterval: config.DefaultInitialInterval,
				MaxInterval:     config.DefaultMaxInterval,
				RetryOn:         deliver.DefaultRetryOn,
			},
		}
		if a.Format == alert.FormatEmail && a.Email != nil && a.To.URL.URL != nil {
			// The engine carries e-mail too: the mailer is the upstream's
			// transport, and the URL it is given holds no credential.
			r.Mailer = &alert.Mailer{Server: a.To.URL.URL, From: a.Email.From, To: a.Email.To}
			sum := sha256.Sum256([]byte(a.To.URL.String() + "\x00" + a.Email.From + "\x00" + strings.Join(a.Email.To, ",")))
			up.URL, up.Transport, up.TransportID, up.Headers = r.Mailer.Address(), r.Mailer, "email:"+hex.EncodeToString(sum[:8]), nil
		}
		rules = append(rules, r)
		upstreams[name] = up
	}
	return rules, upstreams
}

// unretried names the sources whose provider never retries a failed
// delivery and that do not reconcile, each with how to recover what it
// missed.
func unretried(cfg *config.Routes) map[string]string {
	out := map[string]string{}
	for _, src := range cfg.Sources {
		p, ok := verify.Lookup(src.Provider)
		if !ok || !p.Delivery.NeverRetries() || src.Reconcile != nil {
			continue
		}
		var how []string
		if p.Delivery.Reconcile != "" {
			how = append(how, "set reconcile on source "+src.Name+" and the gateway asks "+src.Provider+" for them itself")
		}
		if p.Delivery.Redeliver != "" {
			how = append(how, p.Delivery.Redeliver)
		}
		if len(how) == 0 {
			how = append(how, "ask "+src.Provider+" to send them again, or have them sent again from where they came")
		}
		out[src.Name] = strings.Join(how, "; or ")
	}
	return out
}
