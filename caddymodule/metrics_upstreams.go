package caddymodule

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookgate/hookgate/internal/store"
)

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
