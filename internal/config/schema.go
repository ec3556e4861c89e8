package config

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/reconcile"
	"github.com/hookgate/hookgate/internal/verify"
)

// Routes is the gateway's whole configuration: routes.yaml, and the same
// keys as the webhook_gateway handler's "routes" in Caddy's JSON. Each
// key's comment says its default; a key left out takes it.
type Routes struct {
	// Storage says where and how long events are kept.
	Storage Storage `json:"storage,omitzero" yaml:"storage,omitempty"`
	// MaxBody is the largest request body accepted; larger requests get
	// 413. Default 5MiB.
	MaxBody Size `json:"max_body,omitzero" yaml:"max_body,omitempty"`
	// MaxInflightBody bounds the body bytes all requests being read may
	// hold at once; past it, requests get 503. Default 256MiB.
	MaxInflightBody Size `json:"max_inflight_body,omitzero" yaml:"max_inflight_body,omitempty"`
	// UnfinishedBodies bounds the requests whose body has not fully
	// arrived.
	UnfinishedBodies UnfinishedBodies `json:"unfinished_bodies,omitzero" yaml:"unfinished_bodies,omitempty"`
	// MaxPending is the number of pending deliveries past which ingest
	// answers 503 with Retry-After. Default: no bound.
	MaxPending int `json:"max_pending,omitzero" yaml:"max_pending,omitempty" min:"1"`
	// Upstreams are the delivery destinations by name.
	Upstreams Upstreams `json:"upstreams,omitzero" yaml:"upstreams,omitempty"`
	// Sources are the webhook endpoints by name, kept in file order.
	Sources Sources `json:"sources" yaml:"sources"`
	// Logging says what is logged of events.
	Logging Logging `json:"logging,omitzero" yaml:"logging,omitempty"`
	// Inspector says how stored events are shown.
	Inspector Inspector `json:"inspector,omitzero" yaml:"inspector,omitempty"`
	// Claim lists the path prefixes the gateway answers itself: a request
	// under one that matches no source gets 404 and is never passed on.
	// Default: the sources' longest common parent folder, unless that is
	// "/"; an empty list claims nothing.
	Claim Claim `json:"claim,omitzero" yaml:"claim,omitempty"`
	// AllowIPs is the allowlist of the sources that set none of their own.
	// Default: every address.
	AllowIPs AllowIPs `json:"allow_ips,omitzero" yaml:"allow_ips,omitempty"`
	// IPRanges says how the named provider ranges in allow_ips are kept
	// current.
	IPRanges IPRanges `json:"ip_ranges,omitzero" yaml:"ip_ranges,omitempty"`
	// Alerts are the alert targets, in file order.
	Alerts Alerts `json:"alerts,omitzero" yaml:"alerts,omitempty"`

	// File is the path the configuration was read from, for its errors.
	File string `json:"-" yaml:"-"`
	// Literals are the credentials written out in the file rather than as
	// placeholders: the file's text goes into Caddy's configuration, so
	// they show in GET /config/, autosave.json and Caddy's DEBUG log.
	Literals []Literal `json:"-" yaml:"-"`
	// Unresolved names the sources (and "" for alert targets) with a
	// credential left as a placeholder under Options.NoSecrets.
	Unresolved map[string]bool `json:"-" yaml:"-"`

	// paths names the JSON path at each position, for a JSON configuration.
	paths map[Pos]string
	// written is the JSON document as written, for Caddy's JSON.
	written json.RawMessage
}

func (r *Routes) setDefaults() {
	r.MaxBody = DefaultMaxBody
	r.Storage.Retention = Duration(DefaultRetention)
	r.IPRanges.Refresh = Duration(DefaultIPRangesRefresh)
}

// Errorf builds an Error about this configuration at a position.
func (r *Routes) Errorf(at Pos, format string, args ...any) error {
	if r.paths != nil {
		return &Error{File: r.File, Path: r.paths[at], Msg: fmt.Sprintf(format, args...)}
	}
	return &Error{File: r.File, Pos: at, Msg: fmt.Sprintf(format, args...)}
}

// Storage says where and how long events are kept.
type Storage struct {
	Located
	// Path is the bbolt file. Default: the Caddyfile's storage, or Caddy's
	// data directory/hookgate/hookgate.db.
	Path Path `json:"path,omitzero" yaml:"path,omitempty"`
	// Retention is how long events and their dedup keys are kept. Default
	// 168h (7d).
	Retention Duration `json:"retention,omitzero" yaml:"retention,omitempty"`
	// MaxSize caps the bytes a bbolt store takes on disk (its file, its
	// body segments and its write-ahead log): past it, new events are answered 503 with
	// Retry-After, as on a full disk, and providers retry, until retention
	// frees room. It is measured every quarter second, so keep it below the
	// file system's room by what arrives in that time. Default: no cap.
	MaxSize Size `json:"max_size,omitzero" yaml:"max_size,omitempty" example:"20GiB"`
	// JetStream, when set, keeps events, dedup keys and the delivery queue
	// in NATS JetStream instead of a bbolt file, shared by every instance
	// that names the same servers and stream.
	JetStream *JetStream `json:"jetstream,omitzero" yaml:"jetstream,omitempty"`
}

func (s *Storage) check(d *decoder, _ *yaml.Node, _ string) {
	if s.JetStream != nil && s.Path != "" {
		d.errorAt(s.ValuePos("jetstream"), "storage: path and jetstream exclude each other")
	}
	if s.JetStream != nil && s.MaxSize > 0 {
		d.errorAt(s.ValuePos("max_size"), "storage: max_size is for the bbolt store; JetStream's stream limits its own size")
	}
}

// DefaultJetStreamStream names the store's streams when stream is not set.
const DefaultJetStreamStream = "HOOKGATE"

// streamName is what JetStream accepts in stream, subject and bucket names.
var streamName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// JetStream configures the NATS JetStream store.
type JetStream struct {
	Located
	// URL lists the NATS servers, comma-separated (nats://host:4222,...).
	// Required.
	URL Text `json:"url" yaml:"url" example:"nats://10.0.0.1:4222,nats://10.0.0.2:4222"`
	// Stream is the name the store's streams and buckets start with.
	// Default HOOKGATE.
	Stream string `json:"stream,omitzero" yaml:"stream,omitempty" example:"HOOKGATE"`
	// Replicas is how many servers hold each stream: 1, 3 or 5. Default 1.
	Replicas int `json:"replicas,omitzero" yaml:"replicas,omitempty" min:"1" example:"3"`
	// Credentials is a NATS .creds file. Default: none.
	Credentials Path `json:"credentials,omitzero" yaml:"credentials,omitempty" example:"/etc/hookgate/nats.creds"`
}

func (j *JetStream) setDefaults() { j.Stream, j.Replicas = DefaultJetStreamStream, 1 }

func (j *JetStream) check(d *decoder, n *yaml.Node, what string) {
	if j.URL == "" {
		d.errorf(n, "%s: url is required (nats://host:4222)", what)
	}
	if !streamName.MatchString(j.Stream) {
		d.errorAt(j.ValuePos("stream"), "%s.stream: %q must be 1-32 letters, digits, - or _", what, j.Stream)
	}
	if j.Replicas > 5 {
		d.errorAt(j.ValuePos("replicas"), "%s.replicas: %d is more than JetStream's 5", what, j.Replicas)
	}
}

// UnfinishedBodies bounds the requests whose body has not fully arrived,
// so that a client that opens requests (or HTTP/2 streams) and sends
// nothing cannot hold the gateway's intake: past a cap, requests get 503.
type UnfinishedBodies struct {
	// PerClient bounds them per client address (an IPv6 client: its /64).
	// Default 128.
	PerClient int `json:"per_client,omitzero" yaml:"per_client,omitempty" min:"1"`
	// PerConnection bounds them per connection, except connections from
	// Caddy's trusted_proxies. Default 64.
	PerConnection int `json:"per_connection,omitzero" yaml:"per_connection,omitempty" min:"1"`
	// FirstByteTimeout is how long a body may take to start; then 408.
	// Default 10s.
	FirstByteTimeout Duration `json:"first_byte_timeout,omitzero" yaml:"first_byte_timeout,omitempty"`
}

// Logging says what is logged of events.
type Logging struct {
	// Bodies logs each accepted body at debug level, with personal data and
	// the source's credentials masked. Default false.
	Bodies bool `json:"bodies,omitzero" yaml:"bodies,omitempty"`
	// MaskFields lists the JSON fields whose values are masked. Default: a
	// built-in list (email, phone, name, address, …).
	MaskFields []string `json:"mask_fields,omitzero" yaml:"mask_fields,omitempty"`
}

// Inspector says how the admin API, the inspector and `hookgate events
// show` show stored events.
type Inspector struct {
	// MaskBodies shows bodies with personal data masked as logged bodies
	// are, for operators who must not see it; deliveries still get the raw
	// bytes. Default false.
	MaskBodies bool `json:"mask_bodies,omitzero" yaml:"mask_bodies,omitempty"`
}

// IPRanges says how the named ranges in allow_ips are kept current.
type IPRanges struct {
	// Refresh is how often the providers' published lists are fetched, at
	// least 1m; "off" keeps the bundled lists and fetches nothing. Default
	// 24h.
	Refresh Duration `json:"refresh,omitzero" yaml:"refresh,omitempty"`
	// Off is set by refresh: off.
	Off bool `json:"-" yaml:"-"`
	At  Pos  `json:"-" yaml:"-"`
}

func (r *IPRanges) decodeNode(d *decoder, n *yaml.Node, what string) {
	r.At = pos(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping", what)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i], n.Content[i+1]
		if key.Value != "refresh" {
			d.errorf(key, "%s: unknown key %q (known: refresh)", what, key.Value)
			continue
		}
		if v.Kind == yaml.ScalarNode && (v.Value == "off" || v.Value == "false") {
			r.Off = true
			continue
		}
		errs := len(d.errs)
		var refresh Duration
		refresh.decodeNode(d, v, what+".refresh")
		switch {
		case len(d.errs) > errs:
		case refresh.Std() < MinIPRangesRefresh:
			d.errorf(v, "%s.refresh must be off or at least %s", what, MinIPRangesRefresh)
		default:
			r.Refresh = refresh
		}
	}
}

// Upstreams are the delivery destinations by name.
type Upstreams map[string]*Upstream

func (u *Upstreams) decodeNode(d *decoder, n *yaml.Node, what string) {
	out := Upstreams{}
	*u = out
	entries(d, n, "upstreams", "upstream", reflect.TypeFor[Upstream](), func(key, val *yaml.Node) {
		if _, dup := out[key.Value]; dup {
			d.errorf(key, "upstream %q is defined twice", key.Value)
			return
		}
		up := &Upstream{Name: key.Value}
		d.decode(val, reflect.ValueOf(up), d.entry("upstream", key.Value))
		up.at = pos(key)
		out[key.Value] = up
	})
}

// Upstream is a delivery destination.
type Upstream struct {
	Located
	// Name is the upstream's key.
	Name string `json:"-" yaml:"-"`
	// URL is where events are delivered; the request's original path and
	// query are appended. Required.
	URL URL `json:"url" yaml:"url"`
	// Timeout bounds one attempt. Default 15s.
	Timeout Duration `json:"timeout,omitzero" yaml:"timeout,omitempty"`
	// Concurrency is the number of deliveries in flight to this upstream.
	// Default 16.
	Concurrency int `json:"concurrency,omitzero" yaml:"concurrency,omitempty" min:"1"`
	// Retry says how failed attempts are retried.
	Retry Retry `json:"retry,omitzero" yaml:"retry,omitempty"`
	// Rate bounds attempts per second ("50/s", "600/m", "3600/h").
	// Default: no bound.
	Rate Rate `json:"rate,omitzero" yaml:"rate,omitempty"`
	// Burst is the rate limit's bucket. Default: the rate, at least 1.
	Burst int `json:"burst,omitzero" yaml:"burst,omitempty" min:"1"`
	// Breaker stops sending to an upstream that keeps failing; deliveries
	// wait, they do not fail. Default: no breaker.
	Breaker *Breaker `json:"breaker,omitzero" yaml:"breaker,omitempty"`
	// Ordering delivers events with one key one at a time, in arrival
	// order. Default: none, every delivery in parallel.
	Ordering *Ordering `json:"ordering,omitzero" yaml:"ordering,omitempty"`
	// Sign re-signs deliveries for the backend. Default: none, the
	// provider's signature is passed on.
	Sign *Sign `json:"sign,omitzero" yaml:"sign,omitempty"`
	// TLS sets how an https upstream is reached: trusted CAs, a client
	// certificate, the name checked.
	TLS *UpstreamTLS `json:"tls,omitzero" yaml:"tls,omitempty"`
	// Proxy is a forward proxy for deliveries, or "env". Default: none,
	// whatever the environment says.
	Proxy Proxy `json:"proxy,omitzero" yaml:"proxy,omitempty"`
	// Transport is Caddy's reverse_proxy HTTP transport, whole, in Caddy's
	// JSON vocabulary; it excludes tls and proxy.
	Transport json.RawMessage `json:"transport,omitzero" yaml:"transport,omitempty"`
	// Headers are set on every delivery, placeholders expanded, never
	// logged.
	Headers DeliveryHeaders `json:"headers,omitzero" yaml:"headers,omitempty"`
}

func (u *Upstream) setDefaults() {
	u.Timeout, u.Concurrency = Duration(DefaultTimeout), DefaultConcurrency
	u.Retry.setDefaults()
}

func (u *Upstream) check(d *decoder, n *yaml.Node, what string) {
	if !u.Has("url") {
		d.errorf(n, "%s: url is required", what)
	}
	if u.Retry.MaxInterval < u.Retry.InitialInterval {
		d.errorAt(u.ValuePos("retry"), "%s.retry: max_interval (%s) is shorter than initial_interval (%s)", what, u.Retry.MaxInterval, u.Retry.InitialInterval)
	}
	if u.Timeout == 0 {
		u.Timeout = Duration(DefaultTimeout)
	}
	reach := u.KeyPos("tls")
	for _, k := range []string{"tls", "proxy", "transport"} {
		if u.Has(k) {
			reach = u.KeyPos(k)
			break
		}
	}
	if u.Transport != nil && (u.TLS != nil || u.Proxy != "") {
		d.errorAt(reach, "%s: transport is Caddy's whole HTTP transport: put tls and the proxy inside it, or drop it", what)
	}
	if u.TLS != nil && u.URL.URL != nil && u.URL.Scheme != "https" {
		d.errorAt(reach, "%s: tls applies to an https:// url, not %s", what, u.URL.Scheme)
	}
}

// ReachPos is where the first of tls, proxy and transport was written.
func (u *Upstream) ReachPos() Pos {
	for _, k := range []string{"tls", "proxy", "transport"} {
		if u.Has(k) {
			return u.KeyPos(k)
		}
	}
	return u.Pos()
}

// Delivery is the upstream as the delivery engine runs it.
func (u *Upstream) Delivery() deliver.Upstream {
	up := deliver.Upstream{
		Name: u.Name, URL: u.URL.URL, Timeout: u.Timeout.Std(), Concurrency: u.Concurrency,
		Retry: deliver.RetryPolicy{MaxAttempts: u.Retry.MaxAttempts, InitialInterval: u.Retry.InitialInterval.Std(),
			MaxInterval: u.Retry.MaxInterval.Std(), MaxAge: u.Retry.MaxAge.Std(), RetryOn: u.Retry.RetryOn.RetryOn},
		Rate: float64(u.Rate), Burst: u.Burst, Headers: u.Headers,
	}
	if b := u.Breaker; b != nil {
		up.Breaker = deliver.BreakerPolicy{FailureRatio: float64(b.FailureRatio), Window: b.Window.Std(), MinRequests: b.MinRequests, Cooldown: b.Cooldown.Std()}
	}
	return up
}

// Retry says how failed attempts are retried.
type Retry struct {
	// MaxAttempts is the number of attempts before a delivery is dead:
	// kept, visible and replayable. Default 10.
	MaxAttempts int `json:"max_attempts,omitzero" yaml:"max_attempts,omitempty" min:"1"`
	// InitialInterval is the first backoff; each retry waits a random time
	// up to initial_interval·2^(n-1), capped. Default 5s.
	InitialInterval Duration `json:"initial_interval,omitzero" yaml:"initial_interval,omitempty"`
	// MaxInterval caps the backoff. Default 1h.
	MaxInterval Duration `json:"max_interval,omitzero" yaml:"max_interval,omitempty"`
	// MaxAge gives up on events older than this. Default: never.
	MaxAge Duration `json:"max_age,omitzero" yaml:"max_age,omitempty"`
	// RetryOn lists what is retried: status codes, 4xx, 5xx, network.
	// Default [408, 429, 5xx, network]; other answers are final.
	RetryOn RetryOn `json:"retry_on,omitzero" yaml:"retry_on,omitempty"`
}

func (r *Retry) setDefaults() {
	r.MaxAttempts, r.InitialInterval, r.MaxInterval = DefaultMaxAttempts, Duration(DefaultInitialInterval), Duration(DefaultMaxInterval)
	r.RetryOn = RetryOn{deliver.DefaultRetryOn}
}

// Breaker stops attempts to an upstream that keeps failing.
type Breaker struct {
	// FailureRatio is the share of failed attempts that opens it. Default
	// 0.5.
	FailureRatio Ratio `json:"failure_ratio,omitzero" yaml:"failure_ratio,omitempty"`
	// Window is the time the ratio is taken over. Default 1m.
	Window Duration `json:"window,omitzero" yaml:"window,omitempty"`
	// MinRequests is the attempts a window needs before it can open.
	// Default 10.
	MinRequests int `json:"min_requests,omitzero" yaml:"min_requests,omitempty" min:"1"`
	// Cooldown is how long it stays open before one probe: success closes
	// it, failure opens it again. Default 30s.
	Cooldown Duration `json:"cooldown,omitzero" yaml:"cooldown,omitempty"`
}

func (b *Breaker) setDefaults() {
	b.FailureRatio, b.Window, b.MinRequests, b.Cooldown = 0.5, Duration(time.Minute), 10, Duration(30*time.Second)
}

// Ordering delivers events with the same key one at a time.
type Ordering struct {
	// Key is an expression whose value groups deliveries, such as
	// body.data.object.id. Required.
	Key Expr `json:"key" yaml:"key"`
}

func (o *Ordering) check(d *decoder, n *yaml.Node, what string) {
	if o.Key.Src == "" {
		d.errorf(n, "%s: key is required (an expression, e.g. body.data.object.id)", what)
	}
}

// Sign re-signs deliveries for the backend.
type Sign struct {
	Located
	// Scheme is standard-webhooks (webhook-id/-timestamp/-signature with
	// the gateway's secret) or source (the provider's own scheme with the
	// source's first secret and a fresh timestamp). Required.
	Scheme string `json:"scheme" yaml:"scheme" enum:"standard-webhooks,source"`
	// Secret is the Standard Webhooks secret (whsec_…).
	Secret Secret `json:"secret,omitzero" yaml:"secret,omitempty"`
}

func (s *Sign) check(d *decoder, n *yaml.Node, what string) {
	if s.Scheme != "standard-webhooks" && s.Scheme != "source" {
		d.errorAt(s.ValuePos("scheme"), "%s.scheme must be standard-webhooks or source, got %q", what, s.Scheme)
	}
	if s.Scheme == "standard-webhooks" && s.Secret == "" {
		d.errorf(n, "%s: the standard-webhooks scheme needs a secret (whsec_…)", what)
	}
}

// UpstreamTLS says how an https upstream is reached.
type UpstreamTLS struct {
	Located
	// CA lists PEM files trusted instead of the system roots.
	CA CAFiles `json:"ca,omitzero" yaml:"ca,omitempty" example:"[/etc/ssl/internal-ca.pem]"`
	// ClientCert is the PEM certificate the gateway presents to an
	// upstream that asks for one (mutual TLS); it needs client_key.
	ClientCert Path `json:"client_cert,omitzero" yaml:"client_cert,omitempty" example:"/etc/hookgate/client.pem"`
	// ClientKey is the PEM key of client_cert.
	ClientKey Path `json:"client_key,omitzero" yaml:"client_key,omitempty" example:"/etc/hookgate/client.key"`
	// ServerName is the name checked on the upstream's certificate.
	// Default: the URL's host.
	ServerName Text `json:"server_name,omitzero" yaml:"server_name,omitempty" example:"billing.internal"`
	// InsecureSkipVerify accepts any certificate: for tests only, logged
	// as a warning.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitzero" yaml:"insecure_skip_verify,omitempty" example:"false"`
}

func (t *UpstreamTLS) check(d *decoder, n *yaml.Node, what string) {
	switch {
	case (t.ClientCert == "") != (t.ClientKey == ""):
		d.errorf(n, "%s: client_cert and client_key go together", what)
	case t.ClientCert != "":
		if _, err := tls.LoadX509KeyPair(string(t.ClientCert), string(t.ClientKey)); err != nil {
			d.errorAt(t.ValuePos("client_cert"), "%s: client certificate: %v", what, err)
		}
	}
	if t.InsecureSkipVerify && len(t.CA) > 0 {
		d.errorf(n, "%s: insecure_skip_verify turns off the check that ca configures; drop one", what)
	}
}

// Sources are the webhook endpoints, in file order.
type Sources []*Source

func (s *Sources) decodeNode(d *decoder, n *yaml.Node, _ string) {
	*s = nil
	if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		d.errorf(n, "%s: no sources defined", rootName)
		return
	}
	seen := map[string]bool{}
	entries(d, n, "sources", "source", reflect.TypeFor[Source](), func(key, val *yaml.Node) {
		if seen[key.Value] {
			d.errorf(key, "source %q is defined twice", key.Value)
			return
		}
		seen[key.Value] = true
		src := &Source{Name: key.Value}
		d.source = key.Value
		d.decode(val, reflect.ValueOf(src), d.entry("source", key.Value))
		d.source = ""
		src.at = pos(key)
		*s = append(*s, src)
	})
}

// Source is one webhook endpoint: its path, how its requests are verified,
// deduplicated and routed.
type Source struct {
	Located
	// Name is the source's key.
	Name string `json:"-" yaml:"-"`
	// Path is the request path that selects this source, matched as
	// Caddy's path matcher does. Required.
	Path string `json:"path" yaml:"path"`
	// Provider names a verification preset (hookgate providers lists
	// them); verify declares a scheme instead.
	Provider string `json:"provider,omitzero" yaml:"provider,omitempty"`
	// Secrets are the signing secrets, any of which may match (rotation);
	// a placeholder that expands to nothing is dropped.
	Secrets Secrets `json:"secrets,omitzero" yaml:"secrets,omitempty"`
	// LearnSecret opens the window in which a handshake (Asana's
	// X-Hook-Secret) may establish the source's secret. Default: closed.
	LearnSecret *LearnSecret `json:"learn_secret,omitzero" yaml:"learn_secret,omitempty"`
	// Tolerance overrides the preset's timestamp tolerance.
	Tolerance Duration `json:"tolerance,omitzero" yaml:"tolerance,omitempty"`
	// VerifyToken answers Meta's subscription check (hub.verify_token).
	VerifyToken Secret `json:"verify_token,omitzero" yaml:"verify_token,omitempty"`
	// Mode, live or test, admits only events of that mode. Default: both.
	Mode string `json:"mode,omitzero" yaml:"mode,omitempty" enum:"live,test"`
	// Validate rejects (or quarantines) bodies that fail a JSON Schema.
	Validate *Validate `json:"validate,omitzero" yaml:"validate,omitempty"`
	// OtherModeTo routes events of the other mode to these upstreams
	// instead of refusing them; needs mode.
	OtherModeTo Refs `json:"other_mode_to,omitzero" yaml:"other_mode_to,omitempty"`
	// PublicURL is the URL the provider signs, for schemes that sign the
	// URL (Twilio, HubSpot v2 and v3, Square).
	PublicURL Text `json:"public_url,omitzero" yaml:"public_url,omitempty"`
	// Verify is a declarative scheme for a provider without a preset.
	Verify *VerifySpec `json:"verify,omitzero" yaml:"verify,omitempty"`
	// Dedup overrides the preset's deduplication key and window; "off"
	// turns deduplication off.
	Dedup Dedup `json:"dedup,omitzero" yaml:"dedup,omitempty"`
	// Default lists the upstreams that receive events no route matched.
	Default Refs `json:"default,omitzero" yaml:"default,omitempty"`
	// Routes are evaluated in order; every match delivers (fan-out).
	Routes []*Route `json:"routes,omitzero" yaml:"routes,omitempty"`
	// Response is what the provider gets for an accepted event. Default:
	// 200 with the event's id as JSON.
	Response Response `json:"response,omitzero" yaml:"response,omitempty"`
	// AllowIPs, when set, replaces the top-level allow_ips.
	AllowIPs AllowIPs `json:"allow_ips,omitzero" yaml:"allow_ips,omitempty"`
	// ProviderOptions are settings the preset reads beyond its secrets
	// (Plaid's API credentials).
	ProviderOptions ProviderOptions `json:"provider_options,omitzero" yaml:"provider_options,omitempty"`
	// Reconcile asks the provider's event API for events the gateway
	// missed (stripe, github, gitlab, paypal, paddle, square). Default: off.
	Reconcile *Reconcile `json:"reconcile,omitzero" yaml:"reconcile,omitempty"`
	// SearchFields name values of each event, computed by expressions over
	// its request as dedup keys are (body.type, headers["x-github-event"]),
	// that the admin API, hookgate events list --search and the inspector
	// find through an index: name:value. At most 8. Default: none.
	SearchFields SearchFields `json:"search_fields,omitzero" yaml:"search_fields,omitempty" example:"{type: body.type, customer: body.data.object.customer}"`
	// ListenTokens let hookgate listen stream the source's stored events to
	// a developer's machine (GET /hookgate/listen/<source>, on the admin
	// endpoint or wherever the operator routes hookgate_listen). Each is
	// a bearer token of at least 24 characters; one with raw: true gets
	// bodies unmasked. Default: none, and the stream is refused.
	ListenTokens []*ListenToken `json:"listen_tokens,omitzero" yaml:"listen_tokens,omitempty"`
	// Rejections is the log of the source's recent refused requests (the
	// admin API, hookgate rejected, the inspector). Default: the last 100,
	// without bodies.
	Rejections *Rejections `json:"rejections,omitzero" yaml:"rejections,omitempty"`
}

// ListenToken is a token that may stream a source's events.
type ListenToken struct {
	Located
	// Token is the bearer token, a credential. Required.
	Token Secret `json:"token" yaml:"token" example:"\"{env.STRIPE_LISTEN_TOKEN}\""`
	// Raw streams bodies as stored, not masked as shown bodies are
	// (inspector.mask_bodies) and without masking credential fields.
	// Default false.
	Raw bool `json:"raw,omitzero" yaml:"raw,omitempty"`
}

// MinListenToken is the shortest listen token accepted.
const MinListenToken = 24

func (l *ListenToken) check(d *decoder, n *yaml.Node, what string) {
	switch {
	case !l.Has("token"):
		d.errorf(n, "%s: token is required", what)
	case d.noSecrets && hasPlaceholder(string(l.Token)):
	case len(l.Token) < MinListenToken:
		d.errorAt(l.ValuePos("token"), "%s.token: %d characters, at least %d (or its placeholder is empty)", what, len(l.Token), MinListenToken)
	}
}

// Rejections says how much of a source's refused requests is kept: each
// one's time, client address, reason, status and headers (values masked),
// and optionally the start of its body.
type Rejections struct {
	Located
	// Keep is how many of the most recent refused requests are kept, at
	// most 1000; 0 keeps none. Default 100.
	Keep int `json:"keep" yaml:"keep" example:"100"`
	// BodyBytes keeps up to this much of each refused body, masked as
	// shown bodies are (at most 64KiB). Default: none, since a forged body
	// is whatever an attacker sent.
	BodyBytes Size `json:"body_bytes,omitzero" yaml:"body_bytes,omitempty" example:"1KiB"`
}

// DefaultRejectionsKept is how many refused requests a source keeps
// without a rejections block.
const DefaultRejectionsKept = 100

func (r *Rejections) setDefaults() { r.Keep = DefaultRejectionsKept }

func (r *Rejections) check(d *decoder, _ *yaml.Node, what string) {
	if r.Keep < 0 || r.Keep > 1000 {
		d.errorAt(r.ValuePos("keep"), "%s.keep must be between 0 and 1000, got %d", what, r.Keep)
	}
	if r.BodyBytes > 64<<10 {
		d.errorAt(r.ValuePos("body_bytes"), "%s.body_bytes must be at most 64KiB, got %d bytes", what, r.BodyBytes)
	}
}

func (s *Source) setDefaults() { s.Response.Status = DefaultResponseStatus }

func (s *Source) check(d *decoder, n *yaml.Node, what string) {
	at := s.at
	if at == (Pos{}) {
		at = pos(n)
	}
	switch {
	case s.Path == "":
		d.errorAt(at, "%s: path is required", what)
	case !strings.HasPrefix(s.Path, "/"):
		d.errorAt(at, "%s: path must start with /, got %q", what, s.Path)
	}
	switch {
	case s.Provider == "" && s.Verify == nil:
		d.errorAt(at, "%s: set provider (a preset) or verify (a declarative scheme)", what)
	case s.Provider != "" && s.Verify != nil:
		d.errorAt(at, "%s: provider and verify exclude each other", what)
	}
	// A preset may learn its secret in a handshake; the assembly checks those.
	if len(s.Secrets) == 0 && s.Provider == "" {
		secretsAt := s.KeyPos("secrets")
		if !s.Has("secrets") {
			secretsAt = at
		}
		d.errorAt(secretsAt, "%s: no secret configured (or every placeholder in secrets is empty)", what)
	}
	if s.Mode != "" && s.Mode != "live" && s.Mode != "test" {
		d.errorAt(s.ValuePos("mode"), "%s.mode must be live or test, got %q", what, s.Mode)
	}
	if s.Reconcile != nil {
		s.Reconcile.checkFor(d, s, what)
	}
}

// Reconcile asks a provider's event API for what the gateway missed:
// Stripe's and Square's events are fetched; GitHub, GitLab, PayPal and
// Paddle are asked to deliver again what failed or the gateway lacks.
type Reconcile struct {
	Located
	// Credentials read the provider's events: a Stripe key with read
	// access to events, a GitHub token that can read and redeliver the
	// hook's deliveries, a GitLab token with the api scope, a PayPal
	// app's CLIENT_ID:SECRET, a Paddle API key with notification.read and
	// notification.write, a Square personal access token. Required.
	Credentials Secret `json:"credentials" yaml:"credentials"`
	// Every is how often a run starts, besides one after every start.
	// Default 15m.
	Every Duration `json:"every,omitzero" yaml:"every,omitempty"`
	// Lookback is the first run's horizon, capped by the provider's
	// window (Stripe 30 days, GitHub 3, GitLab 7, PayPal 30, Paddle 90,
	// Square 28). Default 72h.
	Lookback Duration `json:"lookback,omitzero" yaml:"lookback,omitempty"`
	// APIBase is the provider's API URL; tests and proxies override it.
	// Default: the provider's.
	APIBase URL `json:"api_base,omitzero" yaml:"api_base,omitempty" example:"https://api.stripe.com"`
	// Hook names whose deliveries are reconciled: for github
	// repos/OWNER/REPO/hooks/ID or orgs/ORG/hooks/ID, for gitlab
	// projects/ID/hooks/ID or groups/ID/hooks/ID (required for both); for
	// paddle the notification destination's ntfset_ id (required); for
	// paypal the webhook id resends go to (default: every webhook of the
	// app subscribed to the event).
	Hook Text `json:"hook,omitzero" yaml:"hook,omitempty" example:"repos/acme/app/hooks/123"`
}

// Reconcilable names the presets whose events reconcile can recover:
// those whose delivery facts say how.
var Reconcilable = func() []string {
	var out []string
	for _, p := range verify.Presets() {
		if p.Delivery.Reconcile != "" {
			out = append(out, p.Name)
		}
	}
	return out
}()

// ReconcileDefaults are Every and Lookback when unset.
const (
	DefaultReconcileEvery    = 15 * time.Minute
	DefaultReconcileLookback = 72 * time.Hour
)

// checkedCredentials are the credentials whose shape can be checked:
// none when a check left them a placeholder (NoSecrets).
func (r *Reconcile) checkedCredentials(d *decoder) string {
	if d.noSecrets && hasPlaceholder(string(r.Credentials)) {
		return ""
	}
	return string(r.Credentials)
}

func (r *Reconcile) checkFor(d *decoder, s *Source, what string) {
	at := r.at
	switch {
	case !slices.Contains(Reconcilable, s.Provider):
		d.errorAt(s.KeyPos("reconcile"), "%s.reconcile: provider %q has no event API to reconcile with (%s do)", what, s.Provider, strings.Join(Reconcilable, ", "))
	case r.Credentials == "":
		d.errorAt(at, "%s.reconcile: credentials are required (or their placeholder is empty)", what)
	case reconcile.CheckSettings(s.Provider, string(r.Hook), r.checkedCredentials(d)) != nil:
		pos := at
		if r.Has("hook") {
			pos = r.ValuePos("hook")
		}
		d.errorAt(pos, "%s.reconcile: %v", what, reconcile.CheckSettings(s.Provider, string(r.Hook), r.checkedCredentials(d)))
	case r.Every != 0 && r.Every.Std() < time.Minute:
		d.errorAt(r.ValuePos("every"), "%s.reconcile.every must be at least 1m, got %s", what, r.Every)
	}
}

// LearnUntil ends the window in which a handshake may establish the
// source's secret; zero when it never may.
func (s *Source) LearnUntil() time.Time {
	if s.LearnSecret == nil {
		return time.Time{}
	}
	return s.LearnSecret.Until.Time
}

// LearnSecret opens a window for a handshake to establish a secret.
type LearnSecret struct {
	// Until is when the window ends, an RFC 3339 time. Required.
	Until Time `json:"until" yaml:"until"`
}

func (l *LearnSecret) check(d *decoder, n *yaml.Node, what string) {
	if fieldNode(n, "until") == nil {
		d.errorf(n, "%s: until is required (an RFC 3339 time such as 2030-01-02T15:04:05Z)", what)
	}
}

// VerifySpec declares a signature scheme for a provider without a preset.
type VerifySpec struct {
	// Algorithm is how the signature is made: an HMAC, a digest over the
	// secret, a public-key signature (ed25519ph for Ed25519 over the
	// content's SHA-512, as KMS-held keys sign), or a token or basic
	// credential compared as it is. Default hmac-sha256.
	Algorithm string `json:"algorithm,omitzero" yaml:"algorithm,omitempty"`
	// Header carries the signature. Required.
	Header string `json:"header" yaml:"header"`
	// Prefix precedes each signature value ("sha256=", "v1,").
	Prefix string `json:"prefix,omitzero" yaml:"prefix,omitempty"`
	// Separator splits a header holding several signatures.
	Separator string `json:"separator,omitzero" yaml:"separator,omitempty"`
	// PairSeparator splits key=value pairs. Default ",".
	PairSeparator string `json:"pair_separator,omitzero" yaml:"pair_separator,omitempty"`
	// SignatureKey switches to key=value pairs ("t=1,v1=abc"): the key
	// whose values are signatures.
	SignatureKey string `json:"signature_key,omitzero" yaml:"signature_key,omitempty"`
	// TimestampKey is the pair key carrying the timestamp.
	TimestampKey string `json:"timestamp_key,omitzero" yaml:"timestamp_key,omitempty"`
	// Encoding is how the signature bytes are written. Default hex.
	Encoding string `json:"encoding,omitzero" yaml:"encoding,omitempty" enum:"hex,base64,base64url"`
	// Content is the signed content over {body}, {timestamp}, {id}, {url},
	// {method}, {secret} and {header:Name}. Default "{body}".
	Content string `json:"content,omitzero" yaml:"content,omitempty"`
	// TimestampHeader carries the timestamp when the signature header
	// does not.
	TimestampHeader string `json:"timestamp_header,omitzero" yaml:"timestamp_header,omitempty"`
	// TimestampUnit is how the timestamp is written: Unix seconds,
	// milliseconds, an RFC 3339 time, or iso8601 (RFC 3339, UTC when no
	// zone is written). Default s.
	TimestampUnit string `json:"timestamp_unit,omitzero" yaml:"timestamp_unit,omitempty" enum:"s,ms,rfc3339,iso8601"`
	// IDHeader carries the message id for {id}.
	IDHeader string `json:"id_header,omitzero" yaml:"id_header,omitempty"`
	// SecretEncoding says how key bytes come from a secret: as written,
	// base64, hex, Standard Webhooks' whsec_ and whpk_, whsec-or-raw (a
	// whsec_ secret tried decoded and as written, as Polar's older secrets
	// are used), or a base64 DER public key. Default raw.
	SecretEncoding string `json:"secret_encoding,omitzero" yaml:"secret_encoding,omitempty" enum:"raw,base64,hex,whsec,whsec-or-raw,whpk,der-base64"`
	// Format is how the provider encodes bodies, which is how rules and
	// dedup keys read them (never by the request's Content-Type). Default
	// either.
	Format string `json:"format,omitzero" yaml:"format,omitempty" enum:"json,form,either"`
}

// Spec is the declared scheme as verify takes it.
func (v *VerifySpec) Spec() verify.Spec {
	return verify.Spec{
		Algorithm: v.Algorithm, Header: v.Header, Prefix: v.Prefix, Separator: v.Separator, PairSeparator: v.PairSeparator,
		SignatureKey: v.SignatureKey, TimestampKey: v.TimestampKey, Encoding: v.Encoding, Content: v.Content,
		TimestampHeader: v.TimestampHeader, TimestampUnit: v.TimestampUnit, IDHeader: v.IDHeader,
		SecretEncoding: v.SecretEncoding, Format: v.Format,
	}
}

// Dedup configures deduplication of provider retries.
type Dedup struct {
	Located
	// Key is an expression producing the provider's event id. Default: the
	// preset's.
	Key Expr `json:"key,omitzero" yaml:"key,omitempty"`
	// Window is how long a key is remembered. Default storage.retention.
	Window Duration `json:"window,omitzero" yaml:"window,omitempty"`
	// ReplayDigest keeps the body's digest as a second key where the
	// signature covers no timestamp or event id, so a replayed capture is a
	// duplicate. Default true.
	ReplayDigest *bool `json:"replay_digest,omitzero" yaml:"replay_digest,omitempty"`
	// Disabled is set by dedup: off.
	Disabled bool `json:"-" yaml:"-"`
}

func (dd *Dedup) decodeNode(d *decoder, n *yaml.Node, what string) {
	if n.Kind == yaml.ScalarNode && (n.Value == "off" || n.Value == "false") {
		dd.Disabled = true
		return
	}
	d.decodeStruct(n, reflect.ValueOf(dd).Elem(), what)
}

// NoReplayDigest reports replay_digest: false.
func (dd *Dedup) NoReplayDigest() bool { return dd.ReplayDigest != nil && !*dd.ReplayDigest }

// Route is one routing rule.
type Route struct {
	Located
	// Name names the rule in listings and metrics. Default: its line.
	Name string `json:"name,omitzero" yaml:"name,omitempty"`
	// When is an expression that must be true; with schema, both must
	// match.
	When Expr `json:"when,omitzero" yaml:"when,omitempty"`
	// Schema is a JSON Schema the body must satisfy: a file, or inline.
	Schema Schema `json:"schema,omitzero" yaml:"schema,omitempty"`
	// To lists the destination upstreams. Required.
	To Refs `json:"to" yaml:"to"`
	// Stop ends rule evaluation when this rule matches.
	Stop bool `json:"stop,omitzero" yaml:"stop,omitempty"`
	// Path rewrites the delivered path: a template with {expression}
	// parts, starting with /.
	Path string `json:"path,omitzero" yaml:"path,omitempty"`
	// SetHeaders sets headers on the delivery; values are templates.
	SetHeaders RouteHeaders `json:"set_headers,omitzero" yaml:"set_headers,omitempty"`
	// RemoveHeaders removes headers from the delivery.
	RemoveHeaders []string `json:"remove_headers,omitzero" yaml:"remove_headers,omitempty"`
	// Transform is an expression building a new JSON body for the
	// upstream.
	Transform Expr `json:"transform,omitzero" yaml:"transform,omitempty"`
}

func (r *Route) check(d *decoder, n *yaml.Node, what string) {
	if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
		d.errorAt(r.ValuePos("path"), "%s.path must start with /", what)
	}
	if r.Name != "" {
		what = fmt.Sprintf("route %q", r.Name)
	}
	if !r.Has("to") {
		d.errorf(n, "%s: to is required", what)
	}
	if r.When.Src == "" && r.Schema.IsZero() {
		d.errorf(n, "%s: set when, schema, or both", what)
	}
}

// Validate is a source's validation gate.
type Validate struct {
	Located
	// Schema is a JSON Schema file, or an inline schema, bodies must
	// satisfy. Required.
	Schema Schema `json:"schema" yaml:"schema"`
	// Quarantine ACKs and parks failing events instead of answering 400.
	Quarantine bool `json:"quarantine,omitzero" yaml:"quarantine,omitempty"`
}

func (v *Validate) decodeNode(d *decoder, n *yaml.Node, what string) {
	v.at = pos(n)
	if n.Kind == yaml.ScalarNode {
		v.Schema.decodeNode(d, n, what)
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a schema file or a mapping with schema and quarantine", what)
		return
	}
	d.decodeStruct(n, reflect.ValueOf(v).Elem(), what)
	v.at = pos(n)
	if v.Schema.IsZero() {
		d.errorf(n, "%s: schema is required", what)
	}
}

// Response is the answer to an accepted event.
type Response struct {
	// Status is a 2xx status. Default 200.
	Status int `json:"status,omitzero" yaml:"status,omitempty"`
	// Body replaces the default body, the event's id as JSON.
	Body string `json:"body,omitzero" yaml:"body,omitempty"`
	// ContentType goes with body. Default text/plain; charset=utf-8.
	ContentType string `json:"content_type,omitzero" yaml:"content_type,omitempty"`
}

func (r *Response) check(d *decoder, n *yaml.Node, what string) {
	if r.Status < 200 || r.Status > 299 {
		d.errorAt(fieldPos(n, "status"), "%s.status must be a 2xx status", what)
	}
}

func fieldPos(n *yaml.Node, key string) Pos {
	if v := fieldNode(n, key); v != nil {
		return pos(v)
	}
	return pos(n)
}

// entries walks a mapping of names to blocks (sources, upstreams). A block
// whose keys were not indented under its name reads as an empty entry
// followed by entries named like its keys: that is reported once, and the
// stray keys are skipped, instead of an error for each.
func entries(d *decoder, n *yaml.Node, what, kind string, elem reflect.Type, each func(key, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of names to %ss", what, kind)
		return
	}
	fieldNames := map[string]bool{}
	for _, f := range schemaFields(elem) {
		fieldNames[f.name] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if val.Tag == "!!null" {
			var stray []string
			j := i + 2
			for ; j+1 < len(n.Content) && fieldNames[n.Content[j].Value]; j += 2 {
				stray = append(stray, n.Content[j].Value)
			}
			if len(stray) > 0 {
				d.errorf(key, "%s %s: its keys are not indented under it (%s are at the level of the %s' names); indent them by two more spaces",
					kind, key.Value, strings.Join(stray, ", "), what)
				i = j - 2
				continue
			}
		}
		each(key, val)
	}
}

// Literal is a credential written out in the file.
type Literal struct {
	// At is where it is written.
	At Pos
	// What names the key (source stripe.secrets, alerts[0].to).
	What string
	// Source is the source it belongs to, "" for none.
	Source string
}

// upstreamNames is for messages.
func (r *Routes) upstreamNames() string {
	if len(r.Upstreams) == 0 {
		return " (no upstreams are defined)"
	}
	return " (defined: " + strings.Join(slices.Sorted(maps.Keys(r.Upstreams)), ", ") + ")"
}
