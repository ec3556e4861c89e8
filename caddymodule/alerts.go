package caddymodule

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/store"
)

// newAlerts starts the alert manager of a store. Like the engine, it is one
// per store and lives in the pooled handle, so repeat suppression and the
// rejected windows carry over a reload.
func newAlerts(st store.Backend, logger *zap.Logger) *alert.Manager {
	return alert.New(alert.Options{Store: st, Logger: logger.Named("alerts"), Oldest: st.OldestPendingByUpstream})
}

// alertTap hands a pipeline's outcomes to its store's alert manager. The
// pipeline is made when the configuration is provisioned, the manager when
// the app starts: the tap is set then, and counts nothing before.
type alertTap struct {
	m atomic.Pointer[alert.Manager]
}

func (t *alertTap) set(m *alert.Manager) { t.m.Store(m) }

// Observe implements ingest.Observer.
func (t *alertTap) Observe(source, outcome string, took time.Duration) {
	if m := t.m.Load(); m != nil {
		m.Observe(source, outcome, took)
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
