package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/reconcile"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	natsstore "github.com/hookgate/hookgate/internal/store/jetstream"
)

func init() {
	caddy.RegisterModule(App{})
}

// stores holds one open store per file path across configurations, so a
// reload (new config provisioned before the old is cleaned up) shares the
// file and its single delivery engine instead of fighting over bbolt's lock.
var stores = caddy.NewUsagePool()

// storeHandle is the pooled value: the store and the engine that delivers from it.
type storeHandle struct {
	store  store.Backend
	backup snapshotter // nil for a store that keeps its own copies
	engine *deliver.Engine
	alerts *alert.Manager
	// rejected keeps each source's refused requests, across reloads.
	rejected *ingest.Rejections
}

// Destruct stops delivery, then closes the store.
func (s *storeHandle) Destruct() error {
	s.engine.Stop()
	s.alerts.Stop() // after the engine, which tells it of dead deliveries
	s.rejected.Close()
	return s.store.Close()
}

// storeSpec says which store a configuration uses: its pool key and how to
// open it.
type storeSpec struct {
	key  string
	open func(logger *zap.Logger) (openStore, error)
}

// openStore is an open store with the roles only some backends play.
type openStore struct {
	store.Backend
	// sweeper deletes what retention no longer keeps; nil for a store whose
	// data expires by itself.
	sweeper store.Sweeper
	// backup copies the store for the admin API; nil for a store that
	// keeps its own copies.
	backup snapshotter
}

// snapshotter writes a consistent copy of a store while it runs, announcing
// its size first (bolt.Store.Backup).
type snapshotter interface {
	Backup(w io.Writer, sized func(size int64)) (int64, error)
}

// boltSpec is the embedded store in one file.
func boltSpec(path string) storeSpec {
	return storeSpec{key: path, open: func(logger *zap.Logger) (openStore, error) {
		st, err := bolt.Open(path, bolt.Options{OpenTimeout: 3 * time.Second,
			Logf:  func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
			Warnf: func(format string, args ...any) { logger.Error(fmt.Sprintf(format, args...)) }})
		if err != nil {
			return openStore{}, err
		}
		return openStore{Backend: st, sweeper: st, backup: st}, nil
	}}
}

// jetstreamSpec is the shared store on NATS JetStream. Instances of the same
// process that name the same servers and stream share one connection.
func jetstreamSpec(js *config.JetStream, retention time.Duration) storeSpec {
	return storeSpec{key: "jetstream:" + js.Stream + "@" + string(js.URL), open: func(*zap.Logger) (openStore, error) {
		st, err := natsstore.Open(natsstore.Options{URL: string(js.URL), Stream: js.Stream, Replicas: js.Replicas,
			Credentials: string(js.Credentials), Retention: retention})
		if err != nil {
			return openStore{}, err
		}
		return openStore{Backend: st}, nil
	}}
}

func acquireStore(spec storeSpec, logger *zap.Logger) (*storeHandle, error) {
	val, _, err := stores.LoadOrNew(spec.key, func() (caddy.Destructor, error) {
		st, err := spec.open(logger)
		if err != nil {
			return nil, err
		}
		alerts := newAlerts(st.Backend, logger)
		engine := deliver.New(st, deliver.Options{Logger: logger.Named("deliver"), OnAttempt: observeAttempt, Sweeper: st.sweeper,
			OnDead: alerts.Dead, OnBreakerOpen: alerts.BreakerOpened, OnBreakerClose: alerts.BreakerClosed, TracerProvider: deliveryTracerProvider})
		keeper, _ := st.Backend.(store.RejectionKeeper)
		rejected := ingest.NewRejections(keeper, logger.Named("rejections"))
		return &storeHandle{store: st.Backend, backup: st.backup, engine: engine, alerts: alerts, rejected: rejected}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("webhook_gateway: %w", err)
	}
	return val.(*storeHandle), nil
}

// App is the hookgate app. Handlers register their configuration with it
// while being provisioned, which touches no file and starts nothing; the app
// opens the stores and starts delivery when Caddy starts it, that is once
// the configuration goes live, and never during `caddy validate`.
type App struct {
	mu       *sync.Mutex
	logger   *zap.Logger
	regs     map[string]*registration // by store key
	acquired []string                 // store keys this app holds in the pool
	// ipRefresh is how often named IP ranges are refreshed, the shortest
	// any configuration asks for; zero when none uses one.
	ipRefresh time.Duration
	// stopLoops ends the reconciliation loops Start began.
	stopLoops context.CancelFunc
}

type registration struct {
	spec      storeSpec
	upstreams map[string]deliver.Upstream
	routes    string
	retention time.Duration
	maxSize   int64
	pipelines []*ingest.Pipeline
	alerts    []alert.Rule
	taps      []*liveTap
	schedules []scheduled
	handle    *storeHandle // set by Start
}

// liveGateway is a store file with the configuration now serving it, as the
// admin API and the metrics see it.
type liveGateway struct {
	owner     *App
	handle    *storeHandle
	upstreams map[string]deliver.Upstream
	pipelines []*ingest.Pipeline
	loops     map[string]*reconcile.Loop // by source name
}

var (
	liveMu sync.Mutex
	live   = map[string]*liveGateway{} // by store path
)

// liveGateways returns the live gateways, sorted by store path.
func liveGateways() []*liveGateway {
	liveMu.Lock()
	defer liveMu.Unlock()
	out := make([]*liveGateway, 0, len(live))
	for _, g := range live {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *liveGateway) int { return strings.Compare(a.handle.store.Path(), b.handle.store.Path()) })
	return out
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "hookgate",
		New: func() caddy.Module { return &App{mu: new(sync.Mutex)} },
	}
}

// register adds a handler's compiled configuration for its store. Two
// configurations that share a store must agree on every upstream they both
// name.
func (a *App) register(spec storeSpec, parts *assemble.Parts, routes string, tap *liveTap) error {
	pipeline, upstreams, retention := parts.Pipeline, parts.Upstreams, parts.Retention
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := parts.IPRangesRefresh; r > 0 && (a.ipRefresh == 0 || r < a.ipRefresh) {
		a.ipRefresh = r
	}
	if a.regs == nil {
		a.regs = map[string]*registration{}
	}
	var scheds []scheduled
	for _, s := range parts.Reconcile {
		scheds = append(scheds, scheduled{Schedule: s, pipeline: pipeline})
	}
	reg, ok := a.regs[spec.key]
	if !ok {
		a.regs[spec.key] = &registration{spec: spec, upstreams: upstreams, routes: routes, retention: retention, maxSize: parts.MaxSize, pipelines: []*ingest.Pipeline{pipeline},
			alerts: parts.Alerts, taps: []*liveTap{tap}, schedules: scheds}
		return nil
	}
	reg.schedules = append(reg.schedules, scheds...)
	reg.pipelines = append(reg.pipelines, pipeline)
	reg.alerts = mergeAlerts(reg.alerts, parts.Alerts)
	reg.taps = append(reg.taps, tap)
	// Configurations sharing a store keep events as long as the longest asks.
	reg.retention = max(reg.retention, retention)
	reg.maxSize = max(reg.maxSize, parts.MaxSize)
	merged := make(map[string]deliver.Upstream, len(reg.upstreams)+len(upstreams))
	for name, up := range reg.upstreams {
		merged[name] = up
	}
	for name, up := range upstreams {
		if prior, dup := merged[name]; dup && !sameUpstream(prior, up) {
			return fmt.Errorf("webhook_gateway: upstream %q is defined differently in %s and %s, which share a store", name, reg.routes, routes)
		}
		merged[name] = up
	}
	reg.upstreams = merged
	return nil
}

// Start opens each store (or shares it with the configuration still
// running, during a reload), connects the pipelines to it, hands this
// configuration's upstreams to its engine, and takes over the refresh of
// named IP ranges.
func (a *App) Start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	keys := slices.Sorted(maps.Keys(a.regs))
	for _, key := range keys {
		reg := a.regs[key]
		handle, err := acquireStore(reg.spec, a.logger)
		if err != nil {
			return err
		}
		a.acquired = append(a.acquired, key)
		reg.handle = handle
		for _, p := range reg.pipelines {
			p.KeepRejections(handle.rejected)
			p.Attach(handle.store, a.logger, nil)
		}
		for _, tap := range reg.taps {
			tap.set(handle.alerts)
		}
	}
	liveMu.Lock()
	defer liveMu.Unlock()
	loopCtx, stop := context.WithCancel(context.Background())
	a.stopLoops = stop
	for _, key := range keys {
		reg := a.regs[key]
		h := reg.handle
		h.engine.SetRetention(reg.retention)
		if capped, ok := h.store.(interface{ SetMaxSize(int64) }); ok {
			capped.SetMaxSize(reg.maxSize)
		}
		h.engine.Activate(a, reg.upstreams)
		h.alerts.Activate(a, reg.alerts)
		loops := a.startLoops(loopCtx, reg)
		for _, tap := range reg.taps {
			tap.setLoops(loops)
		}
		live[h.store.Path()] = &liveGateway{owner: a, handle: h, upstreams: reg.upstreams, pipelines: reg.pipelines, loops: loops}
		a.logger.Info("webhook gateway started", zap.String("storage", h.store.Path()), zap.Int("configurations", len(reg.pipelines)))
	}
	refresher.start(a, a.ipRefresh)
	return nil
}

// Stop withdraws this configuration; an engine falls back to the previous
// live one, or pauses. The refresh of named IP ranges stops unless a newer
// configuration has taken it over.
func (a *App) Stop() error {
	refresher.stop(a)
	if a.stopLoops != nil {
		a.stopLoops()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	liveMu.Lock()
	defer liveMu.Unlock()
	for _, reg := range a.regs {
		h := reg.handle
		if h == nil {
			continue
		}
		h.engine.Deactivate(a)
		h.alerts.Deactivate(a)
		if g := live[h.store.Path()]; g != nil && g.owner == a {
			delete(live, h.store.Path())
		}
	}
	return nil
}

// Cleanup lets go of the stores Start acquired, after every app of this
// configuration has stopped, so requests still finishing on the old
// configuration during a reload keep their store. The last holder of a
// store stops its delivery and closes it.
func (a *App) Cleanup() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, key := range a.acquired {
		if _, err := stores.Delete(key); err != nil {
			errs = append(errs, err)
		}
	}
	a.acquired = nil
	return errors.Join(errs...)
}

// Provision sets up the app's logger.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	return nil
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)

// sameUpstream compares two upstream definitions; signers are functions and
// compare by the settings that made them, which the rest of the fields carry.
func sameUpstream(a, b deliver.Upstream) bool {
	a.Sign, b.Sign = nil, nil
	a.Transport, b.Transport = nil, nil // TransportID compares them
	return reflect.DeepEqual(a, b)
}
