// Package caddymodule is Hookgate's Caddy glue: the webhook_gateway handler,
// its Caddyfile directive, the app that owns delivery, and the shared stores.
package caddymodule

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

func init() {
	caddy.RegisterModule(Handler{})
	// routes.yaml reads durations as the Caddyfile does.
	config.DurationParser = caddy.ParseDuration
}

// Handler verifies, deduplicates and durably stores webhooks for the paths
// its routes file declares, and passes every other request to the next
// handler untouched.
type Handler struct {
	// Routes is the gateway's whole configuration: storage, limits,
	// upstreams, sources, routes, verification, dedup, claimed prefixes,
	// alerts and logging, with the keys of routes.yaml
	// (docs/configuration.md). The Caddyfile adapter fills it from
	// routes.yaml. Secrets and paths keep their placeholders
	// ({env.STRIPE_SECRET}) until the configuration loads; relative file
	// names are taken from Caddy's working directory.
	Routes *config.Routes `json:"routes,omitempty"`
	// Config names a routes.yaml file read when the configuration loads,
	// instead of Routes. Placeholders such as {env.HOOKGATE_ROUTES} are
	// expanded; relative file names inside are taken from its folder.
	Config string `json:"config,omitempty"`
	// Storage overrides the bbolt file path from routes.yaml. Default:
	// Caddy's data directory/hookgate/hookgate.db.
	Storage string `json:"storage,omitempty"`
	// FileVersions notes, for each {file.PATH} placeholder of the routes,
	// the file's size and modification time when the Caddyfile was
	// adapted, so `caddy reload` of an unchanged Caddyfile sees a rotated
	// secret file as a changed configuration. Written by the Caddyfile
	// adapter; the handler does not read it.
	FileVersions map[string]string `json:"file_versions,omitempty"`

	pipeline *ingest.Pipeline
	logger   *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.webhook_gateway",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision reads and compiles the configuration and registers it with the
// hookgate app, which opens the store and starts delivery when the
// configuration goes live. It touches no file, socket or goroutine, so
// `caddy validate` works beside a running gateway.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	repl := caddy.NewReplacer()
	cfg, err := h.LoadConfig(repl)
	if err != nil {
		return err
	}
	routesPath := cfg.File
	tap := new(liveTap) // the store's alert manager counts refusals once the app starts
	parts, err := assemble.Config(cfg, ingest.Hooks{ClientIP: clientIP, TrustedProxy: viaTrustedProxy, Observer: observers{metricsObserver{}, tap}, Answered: setVars})
	if err != nil {
		return err
	}
	pipeline := parts.Pipeline
	if err := h.loadTransports(ctx, parts, cfg); err != nil {
		return err
	}
	spec, err := h.resolveStore(repl, cfg)
	if err != nil {
		return err
	}
	h.pipeline = pipeline

	appModule, err := ctx.App("hookgate")
	if err != nil {
		return fmt.Errorf("webhook_gateway: loading hookgate app: %w", err)
	}
	if err := appModule.(*App).register(spec, parts, routesPath, tap); err != nil {
		return err
	}
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("webhook_gateway: registering metrics: %w", err)
	}
	initSourceSeries(pipeline.Sources())
	var upstreams []string
	for name := range parts.Upstreams {
		if !alert.Internal(name) {
			upstreams = append(upstreams, name)
		}
	}
	initUpstreamSeries(upstreams)
	secrets := map[string]int{}
	for _, src := range cfg.Sources {
		secrets[src.Name] = len(src.Secrets)
	}
	initSecretSeries(secrets)
	h.logger.Info("webhook gateway provisioned",
		zap.String("routes", routesPath), zap.String("storage", spec.key), zap.Int("sources", len(pipeline.Sources())))
	return nil
}

// DefaultStorePath is where the bbolt store lives when nothing names it:
// Caddy's data directory, so it moves with Caddy's other state.
func DefaultStorePath() string {
	return filepath.Join(caddy.AppDataDir(), "hookgate", "hookgate.db")
}

// PlaceholderOptions has configuration values expand Caddy placeholders
// ({env.X}, {file.path}) when they are loaded.
func PlaceholderOptions(repl *caddy.Replacer) config.Options {
	return config.Options{Expand: func(s string) (string, error) { return repl.ReplaceOrErr(s, false, true) }, NoSecrets: ValidateWithoutSecrets}
}

// CheckOptions are PlaceholderOptions that leave credentials unresolved:
// for checking a configuration (adapting, validate-routes --no-secrets),
// never for serving one.
func CheckOptions(repl *caddy.Replacer) config.Options {
	opts := PlaceholderOptions(repl)
	opts.NoSecrets = true
	return opts
}

// ValidateWithoutSecrets has every configuration provisioned in this
// process leave credentials unresolved: set by `hookgate validate
// --no-secrets`, a process that checks and never serves.
var ValidateWithoutSecrets bool

// LoadConfig reads the configuration the handler carries, or the routes
// file it names.
func (h *Handler) LoadConfig(repl *caddy.Replacer) (*config.Routes, error) {
	opts := PlaceholderOptions(repl)
	switch {
	case h.Routes != nil && h.Config != "":
		return nil, fmt.Errorf("webhook_gateway: set routes or config, not both")
	case h.Routes != nil:
		doc, err := h.Routes.Written()
		if err != nil {
			return nil, fmt.Errorf("webhook_gateway: routes: %w", err)
		}
		return config.ParseJSON("webhook_gateway routes", doc, opts)
	case h.Config != "":
		path, err := repl.ReplaceOrErr(h.Config, true, true)
		if err != nil {
			return nil, fmt.Errorf("webhook_gateway: config path: %w", err)
		}
		return config.Load(path, opts)
	}
	return nil, fmt.Errorf("webhook_gateway: no configuration: set routes (the routes.yaml document as JSON) or config (a routes.yaml file)")
}

// resolveStore picks the store: JetStream when routes.yaml says so, else
// the bbolt file named by the Caddyfile, routes.yaml or the default.
func (h *Handler) resolveStore(repl *caddy.Replacer, cfg *config.Routes) (storeSpec, error) {
	if js := cfg.Storage.JetStream; js != nil {
		if h.Storage != "" {
			return storeSpec{}, fmt.Errorf("webhook_gateway: the Caddyfile names a bbolt file (storage %s) but %s uses storage.jetstream", h.Storage, cfg.File)
		}
		return jetstreamSpec(js, cfg.Storage.Retention.Std()), nil
	}
	path, err := h.resolveStorePath(repl, cfg)
	if err != nil {
		return storeSpec{}, err
	}
	return boltSpec(path), nil
}

func (h *Handler) resolveStorePath(repl *caddy.Replacer, cfg *config.Routes) (string, error) {
	path := string(cfg.Storage.Path)
	if h.Storage != "" {
		p, err := repl.ReplaceOrErr(h.Storage, true, true)
		if err != nil {
			return "", fmt.Errorf("webhook_gateway: storage path: %w", err)
		}
		path = p
	}
	if path == "" {
		path = DefaultStorePath()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("webhook_gateway: storage path %s: %w", path, err)
	}
	return abs, nil
}

// ServeHTTP answers requests to a source's path, in any spelling, and to
// claimed prefixes, and passes the rest on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	learnTracing(r)
	if !h.pipeline.Serve(w, r) {
		return next.ServeHTTP(w, r)
	}
	return nil
}

// setVars puts a webhook's outcome (accepted, duplicate, handshake,
// unavailable, rejected_<reason>) and event id in the request's variables,
// {http.vars.hookgate.outcome} and {http.vars.hookgate.event_id}, for
// Caddy's access log (log_append) and later handlers.
func setVars(r *http.Request, outcome, eventID string) {
	caddyhttp.SetVar(r.Context(), "hookgate.outcome", outcome)
	if eventID != "" {
		caddyhttp.SetVar(r.Context(), "hookgate.event_id", eventID)
	}
}

// viaTrustedProxy reports whether Caddy found the request's peer among the
// server's trusted_proxies.
func viaTrustedProxy(r *http.Request) bool {
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	return trusted
}

// clientIP is the client's address as Caddy determined it, so that
// trusted_proxies applies.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)

// loadTransports gives each upstream with TLS, proxy or transport settings
// its own Caddy reverse_proxy HTTP transport, provisioned in this
// configuration's context, so Caddy closes its connections when the
// configuration is unloaded.
func (h *Handler) loadTransports(ctx caddy.Context, parts *assemble.Parts, cfg *config.Routes) error {
	for name, raw := range parts.Transports {
		mod, err := ctx.LoadModuleByID("http.reverse_proxy.transport.http", raw)
		if err != nil {
			return fmt.Errorf("webhook_gateway: upstream %s: transport: %w", name, err)
		}
		up := parts.Upstreams[name]
		up.Transport = mod.(*reverseproxy.HTTPTransport).Transport
		parts.Upstreams[name] = up
		if t := cfg.Upstreams[name].TLS; t != nil && t.InsecureSkipVerify {
			h.logger.Warn("upstream certificates are not checked: anyone on the path can read and change its deliveries; use tls.ca instead",
				zap.String("upstream", name))
		}
	}
	return nil
}
