package caddymodule

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/store"
)

// stateCollector reads the stores at scrape time.
var stateCollector = &liveCollector{
	pending: prometheus.NewDesc("caddy_hookgate_pending_deliveries", "Deliveries waiting, per store file.", []string{"store"}, nil),
	oldest:  prometheus.NewDesc("caddy_hookgate_oldest_pending_seconds", "Age of the oldest event with a pending delivery, per store file.", []string{"store"}, nil),
	breaker: prometheus.NewDesc("caddy_hookgate_breaker_open", "1 while an upstream's circuit breaker is open or probing, per store file and upstream.", []string{"store", "upstream"}, nil),
	upstreams: upstreamDescs{
		pending: prometheus.NewDesc("caddy_hookgate_upstream_pending_deliveries", "Deliveries waiting, per store and upstream.", []string{"store", "upstream"}, nil),
		oldest:  prometheus.NewDesc("caddy_hookgate_upstream_oldest_pending_seconds", "Age of the oldest pending delivery, per store and upstream; 0 when none waits.", []string{"store", "upstream"}, nil),
		dead:    prometheus.NewDesc("caddy_hookgate_dead_deliveries", "Dead deliveries kept (not yet replayed or expired), per store and upstream.", []string{"store", "upstream"}, nil),
		paused:  prometheus.NewDesc("caddy_hookgate_upstream_paused", "1 while an upstream is paused, per store and upstream.", []string{"store", "upstream"}, nil),
	},
	counts:     &statsCache{every: statsEvery, byStore: map[string]cachedStats{}},
	storeBytes: prometheus.NewDesc("caddy_hookgate_store_bytes", "Bytes the store takes on disk, per store file and kind (db: the bbolt file, bodies: the body segments, log: the write-ahead log).", []string{"store", "kind"}, nil),
	freeBytes:  prometheus.NewDesc("caddy_hookgate_store_free_bytes", "Bytes free on the store's file system, for the gateway's user.", []string{"store"}, nil),
	fsBytes:    prometheus.NewDesc("caddy_hookgate_store_filesystem_bytes", "Size of the store's file system.", []string{"store"}, nil),
}

// registerMetrics registers every collector with a configuration's
// registry; a registry that has them already keeps the first.
func registerMetrics(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{requestsTotal, ackSeconds, deliveriesTotal, deliverySeconds, reconciledTotal, verifiedTotal, buildInfo, stateCollector} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}

// liveCollector reads queue depth, oldest pending age and breaker states
// from the live stores at scrape time.
type liveCollector struct {
	pending, oldest, breaker *prometheus.Desc
	upstreams                upstreamDescs
	counts                   *statsCache
	// storeBytes, freeBytes and fsBytes are a file store's disk use.
	storeBytes, freeBytes, fsBytes *prometheus.Desc
}

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.oldest
	ch <- c.breaker
	ch <- c.storeBytes
	ch <- c.freeBytes
	ch <- c.fsBytes
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
		if du, ok := g.handle.store.(store.DiskUser); ok {
			if u, err := du.DiskUsage(); err == nil {
				ch <- prometheus.MustNewConstMetric(c.storeBytes, prometheus.GaugeValue, float64(u.DB), path, "db")
				ch <- prometheus.MustNewConstMetric(c.storeBytes, prometheus.GaugeValue, float64(u.Bodies), path, "bodies")
				ch <- prometheus.MustNewConstMetric(c.storeBytes, prometheus.GaugeValue, float64(u.Log), path, "log")
				ch <- prometheus.MustNewConstMetric(c.freeBytes, prometheus.GaugeValue, float64(u.Free), path)
				ch <- prometheus.MustNewConstMetric(c.fsBytes, prometheus.GaugeValue, float64(u.Size), path)
			}
		}
	}
}

// upstreamDescs are the per-upstream gauges, read from the store at scrape
// time: backlog, its age and dead letters, and whether the upstream is paused.
type upstreamDescs struct {
	pending, oldest, dead, paused *prometheus.Desc
}

func (d upstreamDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- d.pending
	ch <- d.oldest
	ch <- d.dead
	ch <- d.paused
}

// collect reports every upstream GET /hookgate/upstreams lists, so that a
// paused upstream, or one whose definition is gone but whose work waits,
// has its series too.
func (d upstreamDescs) collect(ch chan<- prometheus.Metric, g *liveGateway, counts map[string]store.UpstreamStats) {
	path := g.handle.store.Path()
	for _, v := range g.upstreamViews(counts) {
		paused := 0.0
		if v.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(d.pending, prometheus.GaugeValue, float64(v.Pending), path, v.Name)
		ch <- prometheus.MustNewConstMetric(d.oldest, prometheus.GaugeValue, v.OldestPendingSeconds, path, v.Name)
		ch <- prometheus.MustNewConstMetric(d.dead, prometheus.GaugeValue, float64(v.Dead), path, v.Name)
		ch <- prometheus.MustNewConstMetric(d.paused, prometheus.GaugeValue, paused, path, v.Name)
	}
}

// statsEvery bounds how often a scrape counts a store's deliveries: counting
// reads every delivery, so scrapes closer together than this share a count.
const statsEvery = 10 * time.Second

// statsCache keeps each store's last per-upstream counts for statsEvery.
type statsCache struct {
	every   time.Duration
	mu      sync.Mutex
	byStore map[string]cachedStats
}

type cachedStats struct {
	at     time.Time
	counts map[string]store.UpstreamStats
}

// of returns g's per-upstream counts, counted at most every c.every; on an
// error the last counts stand (nil before the first), so a scrape still
// reports pauses and breakers.
func (c *statsCache) of(g *liveGateway) map[string]store.UpstreamStats {
	path := g.handle.store.Path()
	c.mu.Lock()
	defer c.mu.Unlock() // one count at a time: concurrent scrapes wait for it
	prior, ok := c.byStore[path]
	if ok && time.Since(prior.at) < c.every {
		return prior.counts
	}
	st, err := g.handle.store.Stats()
	if err != nil {
		return prior.counts
	}
	c.byStore[path] = cachedStats{at: time.Now(), counts: st.Upstreams}
	return st.Upstreams
}
