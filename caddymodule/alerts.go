package caddymodule

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/reconcile"
	"github.com/hookgate/hookgate/internal/store"
)

// newAlerts starts the alert manager of a store. Like the engine, it is one
// per store and lives in the pooled handle, so repeat suppression and the
// rejected windows carry over a reload.
func newAlerts(st store.Backend, logger *zap.Logger) *alert.Manager {
	opts := alert.Options{Store: st, Logger: logger.Named("alerts"), Oldest: st.OldestPendingByUpstream, StoreName: st.Path()}
	if capped, ok := st.(interface {
		store.DiskUser
		MaxSize() int64
	}); ok {
		opts.Size = func() (int64, int64, error) {
			u, err := capped.DiskUsage()
			return u.DB + u.Bodies + u.Log, capped.MaxSize(), err
		}
	}
	return alert.New(opts)
}

// liveTap hands a pipeline's outcomes to what runs beside it once it is
// live: its store's alert manager, and its sources' reconciliation loops,
// which a 503 to a source asks for a run soon. The pipeline is made when
// the configuration is provisioned, those when the app starts: the tap is
// set then, and tells nothing before.
type liveTap struct {
	alerts atomic.Pointer[alert.Manager]
	loops  atomic.Pointer[map[string]*reconcile.Loop]
}

func (t *liveTap) set(m *alert.Manager) { t.alerts.Store(m) }

func (t *liveTap) setLoops(loops map[string]*reconcile.Loop) { t.loops.Store(&loops) }

// Observe implements ingest.Observer.
func (t *liveTap) Observe(source, outcome string, took time.Duration) {
	if m := t.alerts.Load(); m != nil {
		m.Observe(source, outcome, took)
	}
	if outcome == alert.Unavailable {
		if loops := t.loops.Load(); loops != nil {
			if l := (*loops)[source]; l != nil {
				l.Soon()
			}
		}
	}
}

// observers tells each of its observers.
type observers []ingest.Observer

// Observe implements ingest.Observer.
func (os observers) Observe(source, outcome string, took time.Duration) {
	for _, o := range os {
		o.Observe(source, outcome, took)
	}
}

// ObserveSecret implements ingest.SecretObserver for those that are one.
func (os observers) ObserveSecret(source string, secret int) {
	for _, o := range os {
		if so, ok := o.(ingest.SecretObserver); ok {
			so.ObserveSecret(source, secret)
		}
	}
}

// mergeAlerts adds the rules of another configuration sharing the store;
// a target both define is checked through its upstream, like any other.
func mergeAlerts(rules, more []alert.Rule) []alert.Rule {
	have := map[string]bool{}
	for _, r := range rules {
		have[r.Name] = true
	}
	for _, r := range more {
		if !have[r.Name] {
			rules = append(rules, r)
		}
	}
	return rules
}
