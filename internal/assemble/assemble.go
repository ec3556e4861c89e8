// Package assemble turns a configuration into the gateway's running parts:
// the request pipeline with its compiled sources, and the upstreams that
// delivery runs, re-signers included. Errors name the file and line (or JSON
// path) they come from; the parts themselves know nothing of positions.
package assemble

import (
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/hookgate/hookgate/internal/reconcile"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/ipranges"
	"github.com/hookgate/hookgate/internal/rules"
)

// Parts is a configuration, compiled.
type Parts struct {
	Pipeline *ingest.Pipeline
	// Upstreams is the delivery configuration of every upstream.
	Upstreams map[string]deliver.Upstream
	// Retention is how long finished events are kept.
	Retention time.Duration
	// MaxSize caps a bbolt store's bytes on disk; 0 is no cap.
	MaxSize int64
	// Transports holds, by upstream, the Caddy reverse_proxy HTTP transport
	// (http.reverse_proxy.transport.http) each upstream with TLS, proxy or
	// transport settings is reached through, as JSON; the Caddy glue loads
	// it into Upstream.Transport.
	Transports map[string]json.RawMessage
	// Alerts are the alert targets' rules; each target's internal upstream
	// (alert.Upstream(name)) is among Upstreams.
	Alerts []alert.Rule
	// IPRangesRefresh is how often the named ranges the sources' allow_ips
	// use are fetched anew: zero when no source uses one or refresh is off.
	IPRangesRefresh time.Duration
	// Reconcile are the reconciliation schedules of the sources that set
	// reconcile.
	Reconcile []reconcile.Schedule
}

// Config compiles everything a configuration needs at request and delivery
// time: schemes, expressions, schemas and re-signers. It reports every
// error it finds, each with its position.
func Config(cfg *config.Routes, hooks ingest.Hooks) (*Parts, error) {
	var errs []error
	sources := make([]ingest.Source, 0, len(cfg.Sources))
	byKey := map[string]*config.Source{}
	for _, src := range cfg.Sources {
		s, err := compileSource(cfg, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := ingest.PathKey(src.Path)
		if other, dup := byKey[key]; dup {
			errs = append(errs, cfg.Errorf(src.Pos(), "source %s: path %s matches the same requests as source %s (%s): paths match without regard to case, trailing slash or duplicate slashes", src.Name, src.Path, other.Name, other.Path))
			continue
		}
		byKey[key] = src
		sources = append(sources, s)
	}
	upstreams, orderKeys, upErrs := compileUpstreams(cfg)
	transports := map[string]json.RawMessage{}
	for name, up := range cfg.Upstreams {
		if raw := transport(up); raw != nil {
			transports[name] = raw
			u := upstreams[name]
			u.TransportID = string(raw)
			u.HostFromURL = u.URL != nil && u.URL.Scheme == "http" && mayProxy(raw)
			upstreams[name] = u
		}
	}
	errs = append(errs, upErrs...)
	scheds, schedErrs := schedules(cfg)
	errs = append(errs, schedErrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	settings := ingest.Settings{
		Sources:                 sources,
		MaxBody:                 int64(cfg.MaxBody),
		MaxPending:              int64(cfg.MaxPending),
		MaxInflightBody:         int64(cfg.MaxInflightBody),
		UnfinishedPerClient:     cfg.UnfinishedBodies.PerClient,
		UnfinishedPerConnection: cfg.UnfinishedBodies.PerConnection,
		FirstByteTimeout:        cfg.UnfinishedBodies.FirstByteTimeout.Std(),
		LogBodies:               cfg.Logging.Bodies,
		MaskFields:              cfg.Logging.MaskFields,
		MaskShownBodies:         cfg.Inspector.MaskBodies,
		OrderKeys:               orderKeys,
		Hooks:                   hooks,
	}
	if cfg.Claim.Set {
		settings.Claims = append([]string{}, cfg.Claim.Prefixes...)
	}
	pipeline, err := ingest.New(settings)
	if err != nil {
		return nil, err
	}
	alerts, alertUpstreams := compileAlerts(cfg)
	maps.Copy(upstreams, alertUpstreams) // config keeps the alert: prefix for these
	return &Parts{Pipeline: pipeline, Upstreams: upstreams, Retention: cfg.Storage.Retention.Std(), MaxSize: int64(cfg.Storage.MaxSize), Transports: transports,
		Alerts: alerts, IPRangesRefresh: ipRangesRefresh(cfg), Reconcile: scheds}, nil
}

// ipRangesRefresh is the refresh interval when some source names a range,
// so that a gateway without named ranges never calls the providers.
func ipRangesRefresh(cfg *config.Routes) time.Duration {
	if cfg.IPRanges.Off {
		return 0
	}
	for _, src := range cfg.Sources {
		allow := cfg.AllowIPs
		if src.AllowIPs.Set {
			allow = src.AllowIPs
		}
		for _, entry := range allow.Entries {
			if !ipranges.IsAddress(entry) {
				return cfg.IPRanges.Refresh.Std()
			}
		}
	}
	return 0
}

// compileUpstreams builds each upstream's delivery settings, its re-signer
// and its ordering key.
func compileUpstreams(cfg *config.Routes) (map[string]deliver.Upstream, map[string]*rules.Program, []error) {
	var errs []error
	upstreams := map[string]deliver.Upstream{}
	orderKeys := map[string]*rules.Program{}
	for name, up := range cfg.Upstreams {
		u := up.Delivery()
		sign, err := resigner(cfg, up)
		if err != nil {
			errs = append(errs, err)
		}
		if up.Sign != nil {
			u.Sign, u.SignID = sign, up.Sign.Scheme
		}
		upstreams[name] = u
		if up.Ordering != nil {
			prog, err := rules.CompileKey(up.Ordering.Key.Src)
			if err != nil {
				errs = append(errs, cfg.Errorf(up.Ordering.Key.At, "upstream %s: ordering.key: %v", name, err))
				continue
			}
			orderKeys[name] = prog
		}
	}
	return upstreams, orderKeys, errs
}
