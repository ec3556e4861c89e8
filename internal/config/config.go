// Package config loads and validates routes.yaml: the upstreams, the
// sources and their verification, deduplication and routing settings.
//
// Loading walks the yaml.Node tree by hand so that every error names the
// file, line and column it comes from, and so that unknown keys are refused.
package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/ipranges"
	"github.com/hookgate/hookgate/internal/verify"
)

// Defaults, kept in one place.
const (
	DefaultRetention       = 168 * time.Hour
	DefaultMaxBody         = 5 << 20
	DefaultTimeout         = 15 * time.Second
	DefaultConcurrency     = 16
	DefaultMaxAttempts     = 10
	DefaultInitialInterval = 5 * time.Second
	DefaultMaxInterval     = time.Hour
	DefaultResponseStatus  = 200
	// DefaultIPRangesRefresh is how often named IP ranges are fetched anew.
	DefaultIPRangesRefresh = 24 * time.Hour
	// MinIPRangesRefresh keeps a refresh from polling providers' lists.
	MinIPRangesRefresh = time.Minute
)

// UnfinishedBodies bounds the requests whose body has not fully arrived,
// so that a client that opens requests (or HTTP/2 streams) and sends
// nothing cannot hold the gateway's intake: past a cap, requests get 503.
type UnfinishedBodies struct {
	// PerClient bounds them per client address (0 = the default, 128).
	PerClient int
	// PerConnection bounds them per connection, except connections from
	// Caddy's trusted_proxies (0 = the default, 64).
	PerConnection int
	// FirstByteTimeout is how long a body may take to start (0 = the
	// default, 10s).
	FirstByteTimeout time.Duration
}

// Literal is a credential written out in the file.
type Literal struct {
	Pos Pos
	// What names the key (sources.stripe.secrets, alerts[0].to).
	What string
	// Source is the source it belongs to, "" for none.
	Source string
}

// hasPlaceholder reports whether a value as written takes any part of itself
// from a placeholder ({env.X}, {file.Y}).
func hasPlaceholder(raw string) bool {
	i := strings.IndexByte(raw, '{')
	return i >= 0 && strings.IndexByte(raw[i:], '}') > 0 && !strings.HasPrefix(raw, `{"`)
}

// literal notes a credential written out in the file.
func (p *parser) literal(n *yaml.Node, what, source string) {
	if n.Kind == yaml.ScalarNode && n.Value != "" && !hasPlaceholder(n.Value) {
		p.cfg.Literals = append(p.cfg.Literals, Literal{Pos: pos(n), What: what, Source: source})
	}
}

// Pos is a position in the configuration file.
type Pos struct {
	Line, Col int
}

// Config is a loaded and checked routes.yaml.
type Config struct {
	// File is the path the configuration was read from.
	File string
	// Storage holds where and how long events are kept.
	Storage Storage
	// MaxBody is the largest request body accepted, in bytes.
	MaxBody int64
	// Upstreams are the delivery destinations by name.
	Upstreams map[string]*Upstream
	// Sources are the webhook endpoints, in file order.
	Sources []*Source
	// MaxInflightBody bounds the body bytes held by all requests being read
	// at once; past it, requests get 503 (0 = the default, 256 MiB).
	MaxInflightBody int64
	// UnfinishedBodies bounds the requests whose body has not fully arrived.
	UnfinishedBodies UnfinishedBodies
	// MaxPending is the number of pending deliveries past which ingest
	// answers 503 (0 = no bound).
	MaxPending int
	// Logging says whether bodies are logged (at debug, masked).
	Logging Logging
	// Inspector says how the admin API and the inspector show events.
	Inspector Inspector
	// Claim lists path prefixes the gateway answers itself: a request under
	// one that matches no source gets 404 and is never passed on. Unset, the
	// sources' common parent folder is claimed (unless that is "/").
	Claim []string
	// ClaimSet is true when the file sets claim (an empty list claims nothing).
	ClaimSet bool
	ClaimPos Pos
	// AllowIPs is the allowlist of sources that set none of their own.
	AllowIPs AllowIPs
	// Literals are the credentials written out in the file rather than as
	// placeholders: the file's text goes into Caddy's configuration, so
	// they show in GET /config/, autosave.json and Caddy's DEBUG log.
	Literals []Literal
	// IPRanges says how the named ranges in allow_ips are kept current.
	IPRanges IPRanges
	// Alerts are the alert targets, in file order.
	Alerts []*Alert

	// paths names the JSON path at each position, for a JSON configuration.
	paths map[Pos]string
}

// AllowIPs limits the client addresses (as Caddy sees them, so
// trusted_proxies applies) a source takes requests from.
type AllowIPs struct {
	// Entries are CIDRs, single addresses and named provider ranges, as
	// written; each is checked when the file loads.
	Entries []string
	// Set is true when the key is written: an empty list then allows every
	// address, which is how a source turns the top-level default off.
	Set bool
	// Pos is where the key is written.
	Pos Pos
}

// IPRanges configures the refresh of named ranges (ip_ranges).
type IPRanges struct {
	// Refresh is how often the providers' published lists are fetched.
	Refresh time.Duration
	// Off keeps the bundled lists and fetches nothing, for hosts that cannot
	// reach the providers (refresh: off).
	Off bool
	// Pos is where the key is written.
	Pos Pos
}

// Logging configures what the gateway logs about events.
type Logging struct {
	// Bodies logs each accepted body at debug level, with personal data masked.
	Bodies bool
	// MaskFields lists JSON fields whose values are masked; empty means the
	// built-in list (email, phone, name, address, …).
	MaskFields []string
}

// Inspector configures how stored events are shown by the admin API, the
// inspector and `hookgate events show` (inspector:).
type Inspector struct {
	// MaskBodies shows bodies with personal data masked as logged bodies
	// are (logging.mask_fields, e-mail addresses, phone numbers), for
	// operators who must not see it; deliveries still get the raw bytes.
	MaskBodies bool
}

// Storage configures the event store.
type Storage struct {
	// Path is the bbolt file; empty means the caller's default location.
	Path string
	// Retention is how long events and their dedup keys are kept.
	Retention time.Duration
	// JetStream, when set, keeps events, dedup keys and the delivery queue
	// in NATS JetStream instead of a bbolt file, shared by every instance
	// that names the same server and stream.
	JetStream *JetStream
	// JetStreamPos is where the jetstream block starts.
	JetStreamPos Pos
}

// JetStream configures the NATS JetStream store.
type JetStream struct {
	// URL lists the NATS servers, comma-separated (nats://host:4222,...).
	URL string
	// Stream is the name the store's streams and buckets start with
	// (default HOOKGATE).
	Stream string
	// Replicas is how many servers hold each stream (1, 3 or 5; default 1).
	Replicas int
	// Credentials is a NATS .creds file; empty connects without one.
	Credentials string
}

// DefaultJetStreamStream names the store's streams when stream is not set.
const DefaultJetStreamStream = "HOOKGATE"

// Upstream is a delivery destination: the engine's settings, filled and
// defaulted here, plus what only the configuration knows.
type Upstream struct {
	// Upstream holds the name, URL, timeout, concurrency, retry policy, rate
	// limit and breaker, as the delivery engine takes them.
	deliver.Upstream
	// OrderingKey, when set, is an expression whose value groups deliveries
	// that must go out one at a time in arrival order.
	OrderingKey    string
	OrderingKeyPos Pos
	// Resign says how deliveries are re-signed for the backend (key sign).
	Resign Sign
	// Reach is how delivery gets to the upstream: TLS, proxy, transport.
	Reach Reach
	Pos   Pos
}

// Sign says how deliveries are re-signed for the backend.
type Sign struct {
	// Scheme is "standard-webhooks" (the gateway's own secret) or "source"
	// (the provider's scheme with the source's first secret and a fresh timestamp).
	Scheme string
	// Secret is the Standard Webhooks secret (whsec_…).
	Secret string
	Pos    Pos
}

// Source is one webhook endpoint.
type Source struct {
	Name string
	// Path is the exact request path that selects this source.
	Path string
	// Provider names a verification preset; empty when Verify is set.
	Provider string
	// Secrets are the signing secrets after placeholder expansion; any may match.
	Secrets []string
	// Tolerance overrides the preset's timestamp tolerance when non-zero.
	Tolerance time.Duration
	// PublicURL is the URL the provider signs, for schemes that sign the URL.
	PublicURL string
	// ProviderOptions are settings the preset reads beyond its secrets
	// (Plaid's API credentials), placeholders expanded; the preset names
	// the keys it takes.
	ProviderOptions    map[string]string
	ProviderOptionsPos Pos
	// Verify is a declarative scheme for providers without a preset.
	Verify    *verify.Spec
	VerifyPos Pos
	// Dedup overrides the preset's deduplication key and window.
	Dedup Dedup
	// Default lists the upstreams that receive events no route matched.
	Default []string
	// Routes are evaluated in order; every match delivers.
	Routes []*Route
	// Response is what the provider gets for an accepted event.
	Response Response
	// VerifyToken answers Meta's subscription check (hub.verify_token).
	VerifyToken string
	// LearnUntil, from learn_secret.until, ends the window in which a
	// handshake (Asana's X-Hook-Secret) may establish the source's secret.
	// Zero, the default, means handshakes never establish one.
	LearnUntil     time.Time
	LearnSecretPos Pos
	// Mode, when "live" or "test", admits only events of that mode.
	Mode    string
	ModePos Pos
	// Validate rejects (or quarantines) bodies that fail a JSON Schema.
	Validate *Validate
	// OtherModeTo routes events of the other mode to these upstreams instead
	// of refusing them.
	OtherModeTo    []string
	OtherModeToPos Pos
	Pos            Pos
	// ProviderPos, SecretsPos and DefaultPos locate those keys for later errors.
	ProviderPos, SecretsPos, DefaultPos Pos
	// AllowIPs, when set, replaces the top-level allow_ips for this source.
	AllowIPs AllowIPs
}

// Dedup configures deduplication of provider retries.
type Dedup struct {
	// Key is an expression producing the provider's event id.
	Key    string
	KeyPos Pos
	// Window is how long a key is remembered; zero means storage.retention.
	Window time.Duration
	// Disabled turns deduplication off for the source.
	Disabled bool
	// NoReplayDigest turns off the second key, the body's digest, that
	// makes a replayed capture a duplicate for schemes whose signature
	// covers no timestamp or event id (replay_digest: false).
	NoReplayDigest bool
}

// Route is one routing rule.
type Route struct {
	Name string
	// When is an expr-lang expression that must evaluate to true.
	When    string
	WhenPos Pos
	// Schema is a JSON Schema file the body must satisfy.
	Schema    string
	SchemaPos Pos
	// SchemaDoc is a schema written inline instead of a file.
	SchemaDoc any
	// To lists the destination upstreams.
	To    []string
	ToPos Pos
	// Stop ends rule evaluation when this rule matches.
	Stop bool
	// Path rewrites the delivered path: a template with {expression} parts.
	Path    string
	PathPos Pos
	// SetHeaders and RemoveHeaders change the delivered headers.
	SetHeaders    map[string]string
	SetHeadersPos Pos
	RemoveHeaders []string
	// Transform is an expression building a new JSON body for the upstream.
	Transform    string
	TransformPos Pos
	Pos          Pos
}

// Validate is a source's validation gate.
type Validate struct {
	// Schema is a file, or SchemaDoc an inline schema, that bodies must satisfy.
	Schema    string
	SchemaDoc any
	// Quarantine ACKs and parks failing events instead of answering 400.
	Quarantine bool
	Pos        Pos
}

// Response is the answer to an accepted event.
type Response struct {
	Status      int
	Body        string
	ContentType string
}

// Error is a configuration error at a position in a file.
type Error struct {
	File string
	Pos  Pos
	// Path is where in a JSON configuration the error is, instead of Pos.
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Path, e.Msg)
	}
	if e.Pos.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Errorf builds an Error for this configuration's file.
func (c *Config) Errorf(pos Pos, format string, args ...any) error {
	if c.paths != nil {
		return &Error{File: c.File, Path: c.paths[pos], Msg: fmt.Sprintf(format, args...)}
	}
	return &Error{File: c.File, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Options change how a file is loaded.
type Options struct {
	// Expand replaces placeholders such as {env.X} in secrets, URLs and paths.
	// Nil leaves values as written.
	Expand func(string) (string, error)
}

// Load reads, parses and checks a routes.yaml file. The returned error joins
// every problem found, each as a *Error.
func Load(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading routes file: %w", err)
	}
	return Parse(path, data, opts)
}

// Parse checks configuration text; path is used for error messages and to
// resolve relative file names.
func Parse(path string, data []byte, opts Options) (*Config, error) {
	return parse(path, filepath.Dir(path), data, opts, false)
}

func parse(name, dir string, data []byte, opts Options, isJSON bool) (*Config, error) {
	p := &parser{cfg: &Config{File: name}, expand: opts.Expand, dir: dir}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.cfg.yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, p.cfg.Errorf(Pos{}, "file is empty")
	}
	if isJSON {
		p.cfg.paths = map[Pos]string{}
		indexPaths(&doc, "", p.cfg.paths)
	}
	p.root(doc.Content[0])
	p.check()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.cfg, nil
}

type parser struct {
	cfg    *Config
	expand func(string) (string, error)
	dir    string
	errs   []error
}

func pos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	var at Pos
	if n != nil {
		at = pos(n)
	}
	p.errorAt(at, format, args...)
}

func (p *parser) errorAt(at Pos, format string, args ...any) {
	p.errs = append(p.errs, p.cfg.Errorf(at, format, args...))
}

// yamlError restates a yaml.v3 syntax error as file:line. yaml.v3 has no
// typed syntax error: it returns fmt errors "yaml: line N: reason" (its
// *TypeError, also text only, cannot arise when decoding into a yaml.Node),
// so the line is read from the text, here and nowhere else.
func (c *Config) yamlError(err error) error {
	msg := err.Error()
	var line int
	if _, scanErr := fmt.Sscanf(msg, "yaml: line %d:", &line); scanErr == nil {
		_, reason, _ := strings.Cut(msg, ": line ")
		_, reason, _ = strings.Cut(reason, ": ")
		return c.Errorf(Pos{Line: line, Col: 1}, "%s", reason)
	}
	return c.Errorf(Pos{}, "%s", strings.TrimPrefix(msg, "yaml: "))
}

// handlers read a mapping's values by key.
type handlers map[string]func(key, val *yaml.Node)

// fields walks a mapping node, refusing unknown and repeated keys.
func (p *parser) fields(n *yaml.Node, what string, h handlers) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping", what)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			p.errorf(key, "%s: key %q appears twice", what, key.Value)
			continue
		}
		seen[key.Value] = true
		read, ok := h[key.Value]
		if !ok {
			p.errorf(key, "%s: unknown key %q (known: %s)", what, key.Value, joinKeys(h))
			continue
		}
		read(key, val)
	}
}

// joinKeys lists a map's keys sorted, for messages.
func joinKeys[M ~map[string]V, V any](m M) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "%s must be a string", what)
		return ""
	}
	return n.Value
}

func (p *parser) expanded(n *yaml.Node, what string) string {
	s := p.str(n, what)
	if i := strings.Index(s, "{$"); i >= 0 {
		name, _, _ := strings.Cut(s[i+2:], "}")
		name, _, _ = strings.Cut(name, ":")
		p.errorf(n, "%s: {$%s} is Caddyfile syntax, expanded only in a Caddyfile; in routes.yaml write {env.%s}", what, name, name)
		return ""
	}
	// A JSON object (a JWK public key) is a value, not a placeholder.
	if p.expand == nil || s == "" || strings.HasPrefix(s, `{"`) {
		return s
	}
	out, err := p.expand(s)
	if err != nil {
		p.errorf(n, "%s: %v", what, err)
		return ""
	}
	return out
}

// itemNode is the i-th item of a list, or the node itself for a scalar
// standing in for a one-item list.
func itemNode(n *yaml.Node, i int) *yaml.Node {
	if n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i]
	}
	return n
}

func (p *parser) strList(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list of strings", what)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		out = append(out, p.str(item, what))
	}
	return out
}

// duration reads a duration as caddy.Duration does: text in Caddy's units
// ("90s", "7d12h"), or a whole number of nanoseconds (Caddy's JSON form).
func (p *parser) duration(n *yaml.Node, what string) time.Duration {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var ns int64
		if n.Decode(&ns) != nil || ns < 0 {
			p.errorf(n, "%s: want a duration such as 90s or 7d, or whole nanoseconds", what)
			return 0
		}
		return time.Duration(ns)
	}
	s := p.str(n, what)
	if s == "" {
		return 0
	}
	d, err := ParseDuration(s)
	if err != nil {
		p.errorf(n, "%s: %v", what, err)
		return 0
	}
	if d < 0 {
		p.errorf(n, "%s must not be negative", what)
		return 0
	}
	return d
}

// timestamp reads an RFC 3339 time, after placeholder expansion.
func (p *parser) timestamp(n *yaml.Node, what string) time.Time {
	s := p.expanded(n, what)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		p.errorf(n, "%s: want an RFC 3339 time such as 2030-01-02T15:04:05Z, got %q", what, s)
		return time.Time{}
	}
	return t
}

func (p *parser) integer(n *yaml.Node, what string, min int) int {
	var v int
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		p.errorf(n, "%s must be a whole number", what)
		return 0
	}
	if v < min {
		p.errorf(n, "%s must be at least %d", what, min)
		return 0
	}
	return v
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		p.errorf(n, "%s must be true or false", what)
	}
	return v
}

// schema reads a JSON Schema given as a file name or written inline.
func (p *parser) schema(n *yaml.Node, what string) (file string, doc any) {
	if n.Kind == yaml.MappingNode {
		return "", p.inlineDoc(n, what)
	}
	return p.path(n, what), nil
}

// inlineDoc decodes a mapping written in YAML as a JSON document.
func (p *parser) inlineDoc(n *yaml.Node, what string) any {
	var doc any
	if err := n.Decode(&doc); err != nil {
		p.errorf(n, "%s: %v", what, err)
		return nil
	}
	return doc
}

func (p *parser) validate(k, n *yaml.Node, what string) *Validate {
	v := &Validate{Pos: pos(k)}
	switch n.Kind {
	case yaml.ScalarNode:
		v.Schema = p.path(n, what)
		return v
	case yaml.MappingNode:
		p.fields(n, what, handlers{
			"schema":     func(_, s *yaml.Node) { v.Schema, v.SchemaDoc = p.schema(s, what+".schema") },
			"quarantine": func(_, q *yaml.Node) { v.Quarantine = p.boolean(q, what+".quarantine") },
		})
		if v.Schema == "" && v.SchemaDoc == nil {
			p.errorf(n, "%s: schema is required", what)
		}
		return v
	}
	p.errorf(n, "%s must be a schema file or a mapping with schema and quarantine", what)
	return nil
}

// path resolves a file name relative to the routes file's folder.
func (p *parser) path(n *yaml.Node, what string) string {
	s := p.expanded(n, what)
	if s == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.dir, s)
}

func (p *parser) root(n *yaml.Node) {
	cfg := p.cfg
	cfg.MaxBody = DefaultMaxBody
	cfg.Storage.Retention = DefaultRetention
	cfg.IPRanges.Refresh = DefaultIPRangesRefresh
	cfg.Upstreams = map[string]*Upstream{}
	var sourcesNode *yaml.Node
	p.fields(n, "routes file", handlers{
		"storage": func(_, v *yaml.Node) {
			p.fields(v, "storage", handlers{
				"path":      func(_, v *yaml.Node) { cfg.Storage.Path = p.path(v, "storage.path") },
				"retention": func(_, v *yaml.Node) { cfg.Storage.Retention = p.duration(v, "storage.retention") },
				"jetstream": func(_, v *yaml.Node) { cfg.Storage.JetStream, cfg.Storage.JetStreamPos = p.jetstream(v), pos(v) },
			})
		},
		"max_body": func(_, v *yaml.Node) {
			size, err := ParseSize(p.str(v, "max_body"))
			if err != nil {
				p.errorf(v, "max_body: %v", err)
			}
			cfg.MaxBody = size
		},
		"upstreams":   func(_, v *yaml.Node) { p.upstreams(v) },
		"max_pending": func(_, v *yaml.Node) { cfg.MaxPending = p.integer(v, "max_pending", 1) },
		"max_inflight_body": func(_, v *yaml.Node) {
			size, err := ParseSize(p.str(v, "max_inflight_body"))
			if err != nil || size <= 0 {
				p.errorf(v, "max_inflight_body: want a size such as 256MiB")
			}
			cfg.MaxInflightBody = size
		},
		"unfinished_bodies": func(_, v *yaml.Node) {
			u := &cfg.UnfinishedBodies
			p.fields(v, "unfinished_bodies", handlers{
				"per_client":         func(_, v *yaml.Node) { u.PerClient = p.integer(v, "unfinished_bodies.per_client", 1) },
				"per_connection":     func(_, v *yaml.Node) { u.PerConnection = p.integer(v, "unfinished_bodies.per_connection", 1) },
				"first_byte_timeout": func(_, v *yaml.Node) { u.FirstByteTimeout = p.duration(v, "unfinished_bodies.first_byte_timeout") },
			})
		},
		"logging": func(_, v *yaml.Node) {
			p.fields(v, "logging", handlers{
				"bodies":      func(_, v *yaml.Node) { cfg.Logging.Bodies = p.boolean(v, "logging.bodies") },
				"mask_fields": func(_, v *yaml.Node) { cfg.Logging.MaskFields = p.strList(v, "logging.mask_fields") },
			})
		},
		"inspector": func(_, v *yaml.Node) {
			p.fields(v, "inspector", handlers{
				"mask_bodies": func(_, v *yaml.Node) { cfg.Inspector.MaskBodies = p.boolean(v, "inspector.mask_bodies") },
			})
		},
		"sources":   func(_, v *yaml.Node) { sourcesNode = v },
		"allow_ips": func(k, v *yaml.Node) { cfg.AllowIPs = p.allowIPs(k, v, "allow_ips") },
		"ip_ranges": func(k, v *yaml.Node) { p.ipRanges(k, v) },
		"alerts":    func(_, v *yaml.Node) { p.alerts(v) },
		"claim": func(_, v *yaml.Node) {
			cfg.ClaimSet, cfg.ClaimPos = true, pos(v)
			cfg.Claim = p.strList(v, "claim")
			for i, c := range cfg.Claim {
				if !strings.HasPrefix(c, "/") {
					p.errorf(itemNode(v, i), "claim: a prefix must start with /, got %q", c)
				}
			}
		},
	})
	if sourcesNode == nil {
		p.errorf(n, "routes file: no sources defined")
		return
	}
	p.sources(sourcesNode)
}

// allowIPs reads an allowlist, checking each entry where it is written.
func (p *parser) allowIPs(k, n *yaml.Node, what string) AllowIPs {
	a := AllowIPs{Set: true, Pos: pos(k)}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list of CIDRs, addresses or provider names, such as [github, 192.0.2.0/24]", what)
		return a
	}
	for _, item := range n.Content {
		entry := p.str(item, what)
		if entry == "" {
			if item.Kind == yaml.ScalarNode && item.Tag != "!!null" {
				p.errorf(item, "%s: an entry is empty", what)
			}
			continue
		}
		if err := ipranges.Default().Check(entry); err != nil {
			p.errorf(item, "%s: %v", what, err)
			continue
		}
		a.Entries = append(a.Entries, entry)
	}
	return a
}

// ipRanges reads how named ranges are refreshed: an interval, or off.
func (p *parser) ipRanges(k, n *yaml.Node) {
	r := &p.cfg.IPRanges
	r.Pos = pos(k)
	p.fields(n, "ip_ranges", handlers{
		"refresh": func(_, v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && (v.Value == "off" || v.Value == "false") {
				r.Off = true
				return
			}
			errs := len(p.errs)
			d := p.duration(v, "ip_ranges.refresh")
			switch {
			case len(p.errs) > errs:
			case d < MinIPRangesRefresh:
				p.errorf(v, "ip_ranges.refresh must be off or at least %s", MinIPRangesRefresh)
			default:
				r.Refresh = d
			}
		},
	})
}

func (p *parser) upstreams(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "upstreams must be a mapping of names to upstreams")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if _, dup := p.cfg.Upstreams[key.Value]; dup {
			p.errorf(key, "upstream %q is defined twice", key.Value)
			continue
		}
		p.cfg.Upstreams[key.Value] = p.upstream(key, val)
	}
}

func (p *parser) upstream(key, n *yaml.Node) *Upstream {
	up := &Upstream{
		Upstream: deliver.Upstream{
			Name:        key.Value,
			Timeout:     DefaultTimeout,
			Concurrency: DefaultConcurrency,
			Retry: deliver.RetryPolicy{
				MaxAttempts:     DefaultMaxAttempts,
				InitialInterval: DefaultInitialInterval,
				MaxInterval:     DefaultMaxInterval,
				RetryOn:         deliver.DefaultRetryOn,
			},
		},
		Pos: pos(key),
	}
	what := "upstream " + up.Name
	p.fields(n, what, handlers{
		"url":         func(_, v *yaml.Node) { up.URL = p.upstreamURL(v, what+".url") },
		"timeout":     func(_, v *yaml.Node) { up.Timeout = p.duration(v, what+".timeout") },
		"concurrency": func(_, v *yaml.Node) { up.Concurrency = p.integer(v, what+".concurrency", 1) },
		"retry":       func(_, v *yaml.Node) { p.retry(v, &up.Retry, what+".retry") },
		"rate":        func(_, v *yaml.Node) { up.Rate = p.rate(v, what+".rate") },
		"burst":       func(_, v *yaml.Node) { up.Burst = p.integer(v, what+".burst", 1) },
		"breaker":     func(_, v *yaml.Node) { up.Breaker = p.breaker(v, what+".breaker") },
		"ordering": func(_, v *yaml.Node) {
			up.OrderingKey, up.OrderingKeyPos = p.ordering(v, what+".ordering")
		},
		"sign":      func(k, v *yaml.Node) { up.Resign = p.sign(k, v, what+".sign") },
		"tls":       func(k, v *yaml.Node) { p.reachKey(k, v, up, what) },
		"proxy":     func(k, v *yaml.Node) { p.reachKey(k, v, up, what) },
		"transport": func(k, v *yaml.Node) { p.reachKey(k, v, up, what) },
		"headers":   func(_, v *yaml.Node) { up.Headers = p.upstreamHeaders(v, what+".headers") },
	})
	p.checkReach(key, up, what)
	if up.URL == nil && field(n, "url") == nil {
		p.errorf(key, "%s: url is required", what)
	}
	if up.Retry.MaxInterval < up.Retry.InitialInterval {
		p.errorf(key, "%s.retry: max_interval (%s) is shorter than initial_interval (%s)", what, up.Retry.MaxInterval, up.Retry.InitialInterval)
	}
	if up.Timeout == 0 {
		up.Timeout = DefaultTimeout
	}
	return up
}

// upstreamURL is nil for a URL that is not absolute http(s).
func (p *parser) upstreamURL(n *yaml.Node, what string) *url.URL {
	raw := p.expanded(n, what)
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.errorf(n, "%s: %v", what, err)
	case u.Scheme != "http" && u.Scheme != "https":
		p.errorf(n, "%s: scheme must be http or https, got %q", what, raw)
	case u.Host == "":
		p.errorf(n, "%s: no host in %q", what, raw)
	default:
		return u
	}
	return nil
}

// retry sets the keys given over the defaults already in r.
func (p *parser) retry(n *yaml.Node, r *deliver.RetryPolicy, what string) {
	p.fields(n, what, handlers{
		"max_attempts":     func(_, v *yaml.Node) { r.MaxAttempts = p.integer(v, what+".max_attempts", 1) },
		"initial_interval": func(_, v *yaml.Node) { r.InitialInterval = p.duration(v, what+".initial_interval") },
		"max_interval":     func(_, v *yaml.Node) { r.MaxInterval = p.duration(v, what+".max_interval") },
		"max_age":          func(_, v *yaml.Node) { r.MaxAge = p.duration(v, what+".max_age") },
		"retry_on":         func(_, v *yaml.Node) { r.RetryOn = p.retryOn(v, what) },
	})
}

// retryOn parses the items one by one first, so that an error points at
// the item it is about.
func (p *parser) retryOn(n *yaml.Node, what string) deliver.RetryOn {
	items := p.strList(n, what+".retry_on")
	for i, item := range items {
		if _, err := deliver.ParseRetryOn([]string{item}); err != nil {
			p.errorf(itemNode(n, i), "%s.%v", what, err)
		}
	}
	on, _ := deliver.ParseRetryOn(items)
	return on
}

func (p *parser) rate(n *yaml.Node, what string) float64 {
	rate, err := ParseRate(p.str(n, what))
	if err != nil {
		p.errorf(n, "%s: %v", what, err)
	}
	return rate
}

func (p *parser) breaker(n *yaml.Node, what string) deliver.BreakerPolicy {
	b := deliver.BreakerPolicy{FailureRatio: 0.5, Window: time.Minute, MinRequests: 10, Cooldown: 30 * time.Second}
	p.fields(n, what, handlers{
		"failure_ratio": func(_, v *yaml.Node) {
			var r float64
			if v.Decode(&r) != nil || r <= 0 || r > 1 {
				p.errorf(v, "%s.failure_ratio must be a number in (0, 1]", what)
			}
			b.FailureRatio = r
		},
		"window":       func(_, v *yaml.Node) { b.Window = p.duration(v, what+".window") },
		"min_requests": func(_, v *yaml.Node) { b.MinRequests = p.integer(v, what+".min_requests", 1) },
		"cooldown":     func(_, v *yaml.Node) { b.Cooldown = p.duration(v, what+".cooldown") },
	})
	return b
}

// ordering returns the ordering key expression and where it is.
func (p *parser) ordering(n *yaml.Node, what string) (key string, at Pos) {
	p.fields(n, what, handlers{
		"key": func(_, v *yaml.Node) { key, at = p.str(v, what+".key"), pos(v) },
	})
	if key == "" {
		p.errorf(n, "%s: key is required (an expression, e.g. body.data.object.id)", what)
	}
	return key, at
}

func (p *parser) sign(k, n *yaml.Node, what string) Sign {
	s := Sign{Pos: pos(k)}
	p.fields(n, what, handlers{
		"scheme": func(_, v *yaml.Node) {
			s.Scheme = p.str(v, what+".scheme")
			if s.Scheme != "standard-webhooks" && s.Scheme != "source" {
				p.errorf(v, "%s.scheme must be standard-webhooks or source, got %q", what, s.Scheme)
			}
		},
		"secret": func(_, v *yaml.Node) { s.Secret = p.expanded(v, what+".secret") },
	})
	if s.Scheme == "standard-webhooks" && s.Secret == "" {
		p.errorf(k, "%s: the standard-webhooks scheme needs a secret (whsec_…)", what)
	}
	return s
}

func (p *parser) sources(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "sources must be a mapping of names to sources")
		return
	}
	if len(n.Content) == 0 {
		p.errorf(n, "routes file: no sources defined")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			p.errorf(key, "source %q is defined twice", key.Value)
			continue
		}
		seen[key.Value] = true
		p.cfg.Sources = append(p.cfg.Sources, p.source(key, val))
	}
}

func (p *parser) source(key, n *yaml.Node) *Source {
	src := &Source{Name: key.Value, Pos: pos(key), Response: Response{Status: DefaultResponseStatus}}
	what := "source " + src.Name
	p.fields(n, what, handlers{
		"path":     func(_, v *yaml.Node) { src.Path = p.str(v, what+".path") },
		"provider": func(_, v *yaml.Node) { src.Provider, src.ProviderPos = p.str(v, what+".provider"), pos(v) },
		"secrets":  func(k, v *yaml.Node) { src.Secrets, src.SecretsPos = p.secrets(v, what+".secrets", src.Name), pos(k) },
		"learn_secret": func(k, v *yaml.Node) {
			src.LearnUntil, src.LearnSecretPos = p.learnSecret(v, what+".learn_secret"), pos(k)
		},
		"tolerance": func(_, v *yaml.Node) { src.Tolerance = p.duration(v, what+".tolerance") },
		"verify_token": func(_, v *yaml.Node) {
			src.VerifyToken = p.expanded(v, what+".verify_token")
			p.literal(v, what+".verify_token", src.Name)
		},
		"mode":     func(_, v *yaml.Node) { src.Mode, src.ModePos = p.mode(v, what+".mode"), pos(v) },
		"validate": func(k, v *yaml.Node) { src.Validate = p.validate(k, v, what+".validate") },
		"other_mode_to": func(_, v *yaml.Node) {
			src.OtherModeTo, src.OtherModeToPos = p.strList(v, what+".other_mode_to"), pos(v)
		},
		"public_url": func(_, v *yaml.Node) { src.PublicURL = p.expanded(v, what+".public_url") },
		"verify":     func(k, v *yaml.Node) { src.Verify, src.VerifyPos = p.verify(v, what+".verify"), pos(k) },
		"dedup":      func(_, v *yaml.Node) { src.Dedup = p.dedup(v, what+".dedup") },
		"default":    func(_, v *yaml.Node) { src.Default, src.DefaultPos = p.strList(v, what+".default"), pos(v) },
		"routes":     func(_, v *yaml.Node) { src.Routes = p.routes(v, what+".routes") },
		"response":   func(_, v *yaml.Node) { p.response(v, &src.Response, what+".response") },
		"allow_ips":  func(k, v *yaml.Node) { src.AllowIPs = p.allowIPs(k, v, what+".allow_ips") },
		"provider_options": func(k, v *yaml.Node) {
			src.ProviderOptions, src.ProviderOptionsPos = p.providerOptions(v, what+".provider_options", src.Name), pos(k)
		},
	})
	p.checkSource(key, src, what)
	return src
}

// checkSource reports what a source lacks once all its keys are read.
func (p *parser) checkSource(key *yaml.Node, src *Source, what string) {
	switch {
	case src.Path == "":
		p.errorf(key, "%s: path is required", what)
	case !strings.HasPrefix(src.Path, "/"):
		p.errorf(key, "%s: path must start with /, got %q", what, src.Path)
	}
	switch {
	case src.Provider == "" && src.Verify == nil:
		p.errorf(key, "%s: set provider (a preset) or verify (a declarative scheme)", what)
	case src.Provider != "" && src.Verify != nil:
		p.errorf(key, "%s: provider and verify exclude each other", what)
	}
	// A preset may learn its secret in a handshake; the pipeline checks those.
	if len(src.Secrets) == 0 && src.Provider == "" {
		at := src.SecretsPos
		if at.Line == 0 {
			at = src.Pos
		}
		p.errorAt(at, "%s: no secret configured (or every placeholder in secrets is empty)", what)
	}
}

func (p *parser) secrets(n *yaml.Node, what, source string) []string {
	var out []string
	for _, item := range p.listNodes(n, what) {
		p.literal(item, what, source)
		// An unset variable in a rotation slot is not an error.
		if s := p.expanded(item, what); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// providerOptions reads a mapping of names to strings, placeholders
// expanded; the preset checks the names.
func (p *parser) providerOptions(n *yaml.Node, what, source string) map[string]string {
	out := map[string]string{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must map option names to values", what)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		out[name] = p.expanded(n.Content[i+1], what+"."+name)
		if name == "secret" {
			p.literal(n.Content[i+1], what+"."+name, source)
		}
	}
	return out
}

func (p *parser) learnSecret(n *yaml.Node, what string) (until time.Time) {
	p.fields(n, what, handlers{
		"until": func(_, v *yaml.Node) { until = p.timestamp(v, what+".until") },
	})
	if n.Kind == yaml.MappingNode && field(n, "until") == nil {
		p.errorf(n, "%s: until is required (an RFC 3339 time such as 2030-01-02T15:04:05Z)", what)
	}
	return until
}

func (p *parser) mode(n *yaml.Node, what string) string {
	mode := p.str(n, what)
	if mode != "live" && mode != "test" {
		p.errorf(n, "%s must be live or test, got %q", what, mode)
	}
	return mode
}

// dedup reads a dedup block, or off (or false) to turn deduplication off.
func (p *parser) dedup(n *yaml.Node, what string) Dedup {
	var d Dedup
	if n.Kind == yaml.ScalarNode && (n.Value == "off" || n.Value == "false") {
		d.Disabled = true
		return d
	}
	p.fields(n, what, handlers{
		"key":           func(_, v *yaml.Node) { d.Key, d.KeyPos = p.str(v, what+".key"), pos(v) },
		"window":        func(_, v *yaml.Node) { d.Window = p.duration(v, what+".window") },
		"replay_digest": func(_, v *yaml.Node) { d.NoReplayDigest = !p.boolean(v, what+".replay_digest") },
	})
	return d
}

func (p *parser) routes(n *yaml.Node, what string) []*Route {
	var out []*Route
	for i, item := range p.listNodes(n, what) {
		out = append(out, p.route(item, fmt.Sprintf("%s[%d]", what, i)))
	}
	return out
}

// response sets the keys given over the defaults already in r.
func (p *parser) response(n *yaml.Node, r *Response, what string) {
	p.fields(n, what, handlers{
		"status": func(_, v *yaml.Node) {
			r.Status = p.integer(v, what+".status", 200)
			if r.Status > 299 {
				p.errorf(v, "%s.status must be a 2xx status", what)
			}
		},
		"body":         func(_, v *yaml.Node) { r.Body = p.str(v, what+".body") },
		"content_type": func(_, v *yaml.Node) { r.ContentType = p.str(v, what+".content_type") },
	})
}

func (p *parser) listNodes(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []*yaml.Node{n}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list", what)
		return nil
	}
	return n.Content
}

func (p *parser) verify(n *yaml.Node, what string) *verify.Spec {
	v := &verify.Spec{}
	set := func(dst *string, name string) func(_, v *yaml.Node) {
		return func(_, node *yaml.Node) { *dst = p.str(node, what+"."+name) }
	}
	p.fields(n, what, handlers{
		"algorithm":        set(&v.Algorithm, "algorithm"),
		"header":           set(&v.Header, "header"),
		"prefix":           set(&v.Prefix, "prefix"),
		"separator":        set(&v.Separator, "separator"),
		"pair_separator":   set(&v.PairSeparator, "pair_separator"),
		"signature_key":    set(&v.SignatureKey, "signature_key"),
		"timestamp_key":    set(&v.TimestampKey, "timestamp_key"),
		"encoding":         set(&v.Encoding, "encoding"),
		"content":          set(&v.Content, "content"),
		"timestamp_header": set(&v.TimestampHeader, "timestamp_header"),
		"timestamp_unit":   set(&v.TimestampUnit, "timestamp_unit"),
		"id_header":        set(&v.IDHeader, "id_header"),
		"secret_encoding":  set(&v.SecretEncoding, "secret_encoding"),
		"format":           set(&v.Format, "format"),
	})
	return v
}

func (p *parser) route(n *yaml.Node, what string) *Route {
	r := &Route{Pos: pos(n)}
	p.fields(n, what, handlers{
		"name": func(_, v *yaml.Node) { r.Name = p.str(v, what+".name") },
		"when": func(_, v *yaml.Node) {
			r.When = p.str(v, what+".when")
			r.WhenPos = pos(v)
		},
		"schema": func(_, v *yaml.Node) {
			r.Schema, r.SchemaDoc = p.schema(v, what+".schema")
			r.SchemaPos = pos(v)
		},
		"to": func(_, v *yaml.Node) {
			r.To = p.strList(v, what+".to")
			r.ToPos = pos(v)
		},
		"stop": func(_, v *yaml.Node) { r.Stop = p.boolean(v, what+".stop") },
		"path": func(_, v *yaml.Node) {
			r.Path, r.PathPos = p.str(v, what+".path"), pos(v)
			if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
				p.errorf(v, "%s.path must start with /", what)
			}
		},
		"set_headers": func(_, v *yaml.Node) {
			r.SetHeaders, r.SetHeadersPos = p.setHeaders(v, what+".set_headers"), pos(v)
		},
		"remove_headers": func(_, v *yaml.Node) { r.RemoveHeaders = p.strList(v, what+".remove_headers") },
		"transform": func(_, v *yaml.Node) {
			r.Transform, r.TransformPos = p.str(v, what+".transform"), pos(v)
		},
	})
	if r.Name != "" {
		what = fmt.Sprintf("route %q", r.Name)
	}
	if len(r.To) == 0 {
		p.errorf(n, "%s: to is required", what)
	}
	if r.When == "" && r.Schema == "" && r.SchemaDoc == nil {
		p.errorf(n, "%s: set when, schema, or both", what)
	}
	return r
}

// setHeaders refuses the headers that describe the connection and body,
// which the transport sets itself.
func (p *parser) setHeaders(n *yaml.Node, what string) map[string]string {
	headers := map[string]string{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must map header names to values", what)
		return headers
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if lower := strings.ToLower(name); lower == "host" || lower == "content-length" || lower == "transfer-encoding" {
			p.errorf(n.Content[i], "%s: %s cannot be set", what, name)
		}
		headers[name] = p.str(n.Content[i+1], what+"."+name)
	}
	return headers
}

// check validates references across sections.
func (p *parser) check() {
	p.checkJetStream()
	p.checkReserved()
	paths := map[string]string{}
	for _, src := range p.cfg.Sources {
		if other, dup := paths[src.Path]; dup {
			p.errorAt(src.Pos, "source %s: path %s is already used by source %s", src.Name, src.Path, other)
		}
		paths[src.Path] = src.Name
		p.checkUpstreams(src.Default, src.DefaultPos, "source "+src.Name+".default")
		p.checkUpstreams(src.OtherModeTo, src.OtherModeToPos, "source "+src.Name+".other_mode_to")
		if len(src.OtherModeTo) > 0 && src.Mode == "" {
			p.errorAt(src.OtherModeToPos, "source %s: other_mode_to needs mode: live or mode: test", src.Name)
		}
		for _, r := range src.Routes {
			p.checkUpstreams(r.To, r.ToPos, "route "+r.Name+".to")
		}
		if src.Dedup.Window > p.cfg.Storage.Retention {
			p.errorAt(src.Pos, "source %s: dedup.window %s is longer than storage.retention %s", src.Name, src.Dedup.Window, p.cfg.Storage.Retention)
		}
	}
}

// streamName is what JetStream accepts in stream, subject and bucket names.
var streamName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (p *parser) jetstream(n *yaml.Node) *JetStream {
	js := &JetStream{Stream: DefaultJetStreamStream, Replicas: 1}
	p.fields(n, "storage.jetstream", handlers{
		"url":         func(_, v *yaml.Node) { js.URL = p.expanded(v, "storage.jetstream.url") },
		"credentials": func(_, v *yaml.Node) { js.Credentials = p.path(v, "storage.jetstream.credentials") },
		"replicas": func(_, v *yaml.Node) {
			js.Replicas = p.integer(v, "storage.jetstream.replicas", 1)
			if js.Replicas > 5 {
				p.errorf(v, "storage.jetstream.replicas: %d is more than JetStream's 5", js.Replicas)
			}
		},
		"stream": func(_, v *yaml.Node) {
			js.Stream = p.str(v, "storage.jetstream.stream")
			if !streamName.MatchString(js.Stream) {
				p.errorf(v, "storage.jetstream.stream: %q must be 1-32 letters, digits, - or _", js.Stream)
			}
		},
	})
	if js.URL == "" {
		p.errorf(n, "storage.jetstream: url is required (nats://host:4222)")
	}
	return js
}

// checkJetStream refuses what the JetStream store cannot carry: upstream
// names become subject tokens, and ordered delivery needs a single queue.
func (p *parser) checkJetStream() {
	if p.cfg.Storage.JetStream == nil {
		return
	}
	if p.cfg.Storage.Path != "" {
		p.errorAt(p.cfg.Storage.JetStreamPos, "storage: path and jetstream exclude each other")
	}
	for _, name := range slices.Sorted(maps.Keys(p.cfg.Upstreams)) {
		up := p.cfg.Upstreams[name]
		if !streamName.MatchString(name) {
			p.errorAt(up.Pos, "upstream %s: with storage.jetstream an upstream name must be letters, digits, - or _", name)
		}
		if up.OrderingKey != "" {
			p.errorAt(up.OrderingKeyPos, "upstream %s: ordering is not available with storage.jetstream (deliveries are shared by every instance)", name)
		}
	}
}

func (p *parser) checkUpstreams(names []string, at Pos, what string) {
	for _, name := range names {
		if _, ok := p.cfg.Upstreams[name]; !ok {
			p.errorAt(at, "%s: unknown upstream %q%s", what, name, p.suggest())
		}
	}
}

func (p *parser) suggest() string {
	if len(p.cfg.Upstreams) == 0 {
		return " (no upstreams are defined)"
	}
	return " (defined: " + joinKeys(p.cfg.Upstreams) + ")"
}
