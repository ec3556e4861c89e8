package caddymodule

import (
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookgate/hookgate/internal/deliver"
)

// Collectors are made once and registered with every configuration's
// registry; a registry that has them already keeps the first.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "requests_total",
		Help: "Webhook requests by source and outcome (accepted, duplicate, handshake, unavailable, rejected_<reason>).",
	}, []string{"source", "outcome"})
	ackSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "ack_duration_seconds",
		Help:    "Time from a webhook's arrival to its answer, for accepted and duplicate events.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"source"})
	deliveriesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "delivery_attempts_total",
		Help: "Delivery attempts by upstream and outcome (delivered, retry, dead).",
	}, []string{"upstream", "outcome"})
	deliverySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "delivery_duration_seconds",
		Help:    "Duration of delivery attempts by upstream.",
		Buckets: prometheus.DefBuckets,
	}, []string{"upstream"})
	stateCollector = &liveCollector{
		pending: prometheus.NewDesc("caddy_hookgate_pending_deliveries", "Deliveries waiting, per store file.", []string{"store"}, nil),
		oldest:  prometheus.NewDesc("caddy_hookgate_oldest_pending_seconds", "Age of the oldest event with a pending delivery, per store file.", []string{"store"}, nil),
		breaker: prometheus.NewDesc("caddy_hookgate_breaker_open", "1 while an upstream's circuit breaker is open or probing, per store file and upstream.", []string{"store", "upstream"}, nil),
		upstreams: upstreamDescs{
			pending: prometheus.NewDesc("caddy_hookgate_upstream_pending_deliveries", "Deliveries waiting, per store and upstream.", []string{"store", "upstream"}, nil),
			oldest:  prometheus.NewDesc("caddy_hookgate_upstream_oldest_pending_seconds", "Age of the oldest pending delivery, per store and upstream; 0 when none waits.", []string{"store", "upstream"}, nil),
			dead:    prometheus.NewDesc("caddy_hookgate_dead_deliveries", "Dead deliveries kept (not yet replayed or expired), per store and upstream.", []string{"store", "upstream"}, nil),
			paused:  prometheus.NewDesc("caddy_hookgate_upstream_paused", "1 while an upstream is paused, per store and upstream.", []string{"store", "upstream"}, nil),
		},
		counts: &statsCache{every: statsEvery, byStore: map[string]cachedStats{}},
	}
)

func registerMetrics(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{requestsTotal, ackSeconds, deliveriesTotal, deliverySeconds, stateCollector} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}

// initSourceSeries makes every configured source's accepted count exist
// from the start, at 0, so that an alert on a source that stays silent
// (no increase over hours) also fires for one silent since the process
// started.
func initSourceSeries(sources map[string]string) {
	for _, name := range sources {
		requestsTotal.WithLabelValues(name, "accepted")
	}
}

// metricsObserver feeds the ingest pipeline's outcomes to the collectors.
type metricsObserver struct{}

func (metricsObserver) Observe(source, outcome string, took time.Duration) {
	requestsTotal.WithLabelValues(source, outcome).Inc()
	countsMu.Lock()
	if counts[source] == nil {
		counts[source] = map[string]float64{}
	}
	counts[source][outcome]++
	countsMu.Unlock()
	if outcome == "accepted" || outcome == "duplicate" {
		ackSeconds.WithLabelValues(source).Observe(took.Seconds())
	}
}

// counts mirrors requests_total for /hookgate/stats since the process started.
var (
	countsMu sync.Mutex
	counts   = map[string]map[string]float64{}
)

func requestCounts() map[string]map[string]float64 {
	countsMu.Lock()
	defer countsMu.Unlock()
	out := make(map[string]map[string]float64, len(counts))
	for src, m := range counts {
		out[src] = maps.Clone(m)
	}
	return out
}

func observeAttempt(upstream, outcome string, took time.Duration) {
	deliveriesTotal.WithLabelValues(upstream, outcome).Inc()
	deliverySeconds.WithLabelValues(upstream).Observe(took.Seconds())
}

// liveCollector reads queue depth, oldest pending age and breaker states
// from the live stores at scrape time.
type liveCollector struct {
	pending, oldest, breaker *prometheus.Desc
	upstreams                upstreamDescs
	counts                   *statsCache
}

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.oldest
	ch <- c.breaker
	c.upstreams.describe(ch)
}

func (c *liveCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range liveGateways() {
		path := g.handle.store.Path()
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(g.handle.store.Pending()), path)
		age := 0.0
		if t, ok := g.handle.store.OldestPending(); ok {
			age = max(time.Since(t).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age, path)
		for name := range g.upstreams {
			open := 0.0
			if g.handle.engine.BreakerState(name) != deliver.BreakerClosed {
				open = 1
			}
			ch <- prometheus.MustNewConstMetric(c.breaker, prometheus.GaugeValue, open, path, name)
		}
		c.upstreams.collect(ch, g, c.counts.of(g))
	}
}
