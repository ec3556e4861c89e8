package caddymodule

import (
	"maps"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
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
	reconciledTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "reconciled_total",
		Help: "Events reconciliation found, by source and outcome (stored, duplicate, redelivery_requested, failed).",
	}, []string{"source", "outcome"})
	verifiedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "verified_total",
		Help: "Requests whose signature verified, by source and the index of the configured secret that verified it (0 first): a rotation's old secret can go once its count stops rising.",
	}, []string{"source", "secret"})
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "build_info",
		Help: "Always 1: the Hookgate and Caddy versions this binary was built from.",
	}, []string{"version", "caddy_version"})
	deliverySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "hookgate", Name: "delivery_duration_seconds",
		Help:    "Duration of delivery attempts by upstream.",
		Buckets: prometheus.DefBuckets,
	}, []string{"upstream"})
)

func init() {
	buildInfo.WithLabelValues(Version(), moduleVersion("github.com/caddyserver/caddy/v2")).Set(1)
}

// moduleVersion is a dependency's version in the binary's build information.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

// modulePath is Hookgate's module.
const modulePath = "github.com/hookgate/hookgate"

// Version is Hookgate's version: the one a release stamps into Caddy's
// CustomVersion ("hookgate v1.2.3"), else the module's in the binary's
// build information (an xcaddy build, a release's wrapper module), else
// "(devel)".
func Version() string {
	if v, ok := strings.CutPrefix(caddy.CustomVersion, "hookgate "); ok {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	if v := moduleVersion(modulePath); v != "(unknown)" {
		return v
	}
	return "(devel)"
}

// initSourceSeries makes every configured source's accepted count exist
// from the start, at 0, so that an alert on a source that stays silent
// (no increase over hours) also fires for one silent since the process
// started.
//
// The unavailable count (a 503 because the store could not take the
// event) exists from the start too, so the first outage after a restart
// is an increase that an alert rule sees.
func initSourceSeries(sources map[string]string) {
	for _, name := range sources {
		requestsTotal.WithLabelValues(name, "accepted")
		requestsTotal.WithLabelValues(name, "unavailable")
	}
}

// initUpstreamSeries makes every configured upstream's attempt counts
// exist from the start, at 0: a counter series that appears with its
// first dead delivery has no earlier sample, so increase() over it sees
// nothing and the dead-delivery alert would miss the first one after a
// restart.
func initUpstreamSeries(upstreams []string) {
	for _, name := range upstreams {
		for _, outcome := range []string{"delivered", "retry", "dead"} {
			deliveriesTotal.WithLabelValues(name, outcome)
		}
	}
}

// initSecretSeries makes each configured secret's verified count exist
// from the start, at 0, so that the old secret of a rotation shows as not
// rising rather than as missing.
func initSecretSeries(secrets map[string]int) {
	for source, n := range secrets {
		for i := range n {
			verifiedTotal.WithLabelValues(source, strconv.Itoa(i))
		}
	}
}

// metricsObserver feeds the ingest pipeline's outcomes to the collectors.
type metricsObserver struct{}

// ObserveSecret implements ingest.SecretObserver.
func (metricsObserver) ObserveSecret(source string, secret int) {
	verifiedTotal.WithLabelValues(source, strconv.Itoa(secret)).Inc()
}

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

// observeAttempt records an attempt's duration and outcome. A scrape
// collects the two concurrently, so it may see one without the other.
func observeAttempt(upstream, outcome string, took time.Duration) {
	deliverySeconds.WithLabelValues(upstream).Observe(took.Seconds())
	deliveriesTotal.WithLabelValues(upstream, outcome).Inc()
}
