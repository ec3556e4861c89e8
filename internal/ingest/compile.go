package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/deliver"
	"github.com/hookgate/hookgate/internal/route"
	"github.com/hookgate/hookgate/internal/verify"
)

// DefaultBodyTimeout bounds reading a webhook's body: providers give up on an
// answer within 10 to 30 seconds, so a slower body is not a provider's.
const DefaultBodyTimeout = 30 * time.Second

// source is one compiled source.
type source struct {
	name        string
	path        string // as configured
	provider    string
	scheme      verify.Scheme
	dedup       *route.Program
	dedupWindow time.Duration
	table       *route.Table
	needsBody   bool
	needsEnv    bool
	publicURL   string
	signsURL    bool // the scheme signs the URL, so requestURL is needed
	response    config.Response

	secrets            []string
	verifyToken        string
	unsignedHandshakes []*verify.Handshake
	signedHandshakes   []*verify.Handshake

	// learns marks a scheme whose secret a handshake establishes; the
	// secret is kept in the store under scope, and learnUntil ends the
	// window in which a handshake may establish it (zero: never).
	learns     bool
	scope      string
	learnUntil time.Time

	gate         *route.Schema // bodies must satisfy it; nil without a gate
	quarantine   bool          // park failing events instead of answering 400
	bodyRequired bool          // an unparseable body is a 400
	dedupPath    []string      // the dedup key read straight from the body, when that is all it needs
	format       string        // the provider's body format (verify.FormatJSON, …), never Content-Type
	digestKey    bool          // an empty preset dedup key falls back to the body's digest
	// secretHeaders and secretFields are what the scheme reads that must
	// never be shown: signature and token headers, credential body fields.
	secretHeaders, secretFields []string
	// replayDigest adds the body's digest as a second dedup key: the
	// signature covers no timestamp or id, so a capture verifies forever.
	replayDigest bool

	live        *route.Program // true for a live-mode event; nil when mode is not checked
	wantLive    bool
	otherModeTo []string
}

// Compile builds everything a configuration needs at request time: schemes,
// expressions and schemas. Errors carry the file and line they come from.
func Compile(cfg *config.Config) (*Pipeline, error) {
	p := &Pipeline{
		log:          zap.NewNop(),
		rejectLog:    zap.NewNop(),
		clientIP:     peerIP,
		trustedProxy: untrusted,
		attached:     make(chan struct{}),
		now:          time.Now,
		notify:       func(string) {},
		sources:      map[string]*source{},
		maxBody:      cfg.MaxBody,
		upstreams:    map[string]deliver.Upstream{},
		orderKeys:    map[string]*route.Program{},
	}
	var errs []error
	for _, src := range cfg.Sources {
		s, err := compileSource(cfg, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := PathKey(src.Path)
		if other, dup := p.sources[key]; dup {
			errs = append(errs, cfg.Errorf(src.Pos, "source %s: path %s matches the same requests as source %s (%s): paths match without regard to case, trailing slash or duplicate slashes", src.Name, src.Path, other.name, other.path))
			continue
		}
		p.sources[key] = s
	}
	if cfg.ClaimSet {
		for _, c := range cfg.Claim {
			p.claims = append(p.claims, claimKey(c))
		}
	} else {
		keys := make([]string, 0, len(p.sources))
		for k := range p.sources {
			keys = append(keys, k)
		}
		p.claims = defaultClaims(keys)
	}
	for name, up := range cfg.Upstreams {
		p.upstreams[name] = up.Upstream
		sign, err := resigner(cfg, up)
		if err != nil {
			errs = append(errs, err)
		}
		u := p.upstreams[name]
		u.Sign = sign
		u.SignID = up.Resign.Scheme
		p.upstreams[name] = u
		if up.OrderingKey != "" {
			prog, err := route.CompileKey(up.OrderingKey)
			if err != nil {
				errs = append(errs, cfg.Errorf(up.OrderingKeyPos, "upstream %s: ordering.key: %v", name, err))
				continue
			}
			p.orderKeys[name] = prog
		}
	}
	// A source whose only use of the body is a dedup key like body.id reads
	// that value straight from the bytes instead of parsing the body.
	for _, src := range p.sources {
		if src.dedup == nil || len(src.table.Rules) > 0 || src.live != nil || src.gate != nil || len(p.orderKeys) > 0 {
			continue
		}
		if path, ok := src.dedup.BodyPath(); ok && src.format != verify.FormatForm {
			src.dedupPath, src.needsEnv, src.needsBody, src.bodyRequired = path, false, false, false
		}
	}
	p.maxPending = int64(cfg.MaxPending)
	p.bodyTimeout = DefaultBodyTimeout
	p.bodies = &bodyBudget{limit: cfg.MaxInflightBody}
	if p.bodies.limit == 0 {
		p.bodies.limit = DefaultInflightBodyBytes
	}
	if cfg.Logging.Bodies {
		p.masker = newMasker(cfg.Logging.MaskFields)
	}
	p.retention = cfg.Storage.Retention
	for _, key := range p.orderKeys {
		for _, src := range p.sources {
			src.needsEnv = true
			src.needsBody = src.needsBody || key.NeedsBody()
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// checkSharedKeys refuses configured secrets too weak to be keys.
func checkSharedKeys(p verify.Preset, secrets []string) error {
	for i, secret := range secrets {
		if err := verify.CheckSharedKey(p, secret); err != nil {
			return fmt.Errorf("secret %d %w", i+1, err)
		}
	}
	return nil
}

func compileSource(cfg *config.Config, src *config.Source) (*source, error) {
	s := &source{
		name:        src.Name,
		path:        src.Path,
		provider:    src.Provider,
		publicURL:   src.PublicURL,
		response:    src.Response,
		dedupWindow: src.Dedup.Window,
	}
	if s.dedupWindow == 0 {
		s.dedupWindow = cfg.Storage.Retention
	}
	dedupKey := src.Dedup.Key
	dedupPos := src.Dedup.KeyPos
	var scheme verify.Scheme
	var err error
	liveExpr := ""
	if src.Provider != "" {
		preset, ok := verify.Lookup(src.Provider)
		if !ok {
			hint := ""
			if close := verify.Suggest(src.Provider); len(close) > 0 {
				hint = fmt.Sprintf("; did you mean %s?", strings.Join(close, ", "))
			}
			return nil, cfg.Errorf(src.ProviderPos, "source %s: unknown provider %q%s (hookgate providers lists them)", src.Name, src.Provider, hint)
		}
		if dedupKey == "" {
			dedupKey = preset.DedupKey
			dedupPos = src.ProviderPos
		}
		if len(src.Secrets) == 0 && !preset.LearnsSecret {
			at := src.SecretsPos
			if at.Line == 0 {
				at = src.Pos
			}
			return nil, cfg.Errorf(at, "source %s: no secret configured (or every placeholder in secrets is empty)", src.Name)
		}
		if err := checkSharedKeys(preset, src.Secrets); err != nil {
			return nil, cfg.Errorf(src.SecretsPos, "source %s: %v", src.Name, err)
		}
		scheme, err = preset.Compile(src.Secrets, verify.Options{Tolerance: src.Tolerance})
		if err != nil {
			return nil, cfg.Errorf(src.SecretsPos, "source %s: %v", src.Name, err)
		}
		for _, h := range preset.Handshakes {
			if h.Unsigned {
				s.unsignedHandshakes = append(s.unsignedHandshakes, h)
			} else {
				s.signedHandshakes = append(s.signedHandshakes, h)
			}
		}
		if s.response.Body == "" && preset.Response != "" {
			s.response.Body = preset.Response
		}
		liveExpr = preset.Live
		s.signsURL = preset.SignsURL()
		s.format = preset.Format
		s.digestKey = src.Dedup.Key == ""
		s.replayDigest = preset.Replayable() && !src.Dedup.Disabled && !src.Dedup.NoReplayDigest
		s.secretHeaders = append(append(s.secretHeaders, preset.Spec.Header), preset.BespokeHeaders...)
		s.secretFields = preset.SecretFields
		if src.Mode != "" && liveExpr == "" {
			return nil, cfg.Errorf(src.ModePos, "source %s: provider %s does not mark test and live events, so mode cannot be checked", src.Name, preset.Name)
		}
		if src.Mode != "" && preset.LiveUnsigned {
			return nil, cfg.Errorf(src.ModePos, "source %s: provider %s marks test and live events outside what it signs (%s), so anyone replaying an event could flip it and mode cannot rely on it: give test and live their own sources and secrets, or route on it with a when: rule", src.Name, preset.Name, liveExpr)
		}
	} else {
		if src.Mode != "" {
			return nil, cfg.Errorf(src.ModePos, "source %s: mode needs a provider preset that marks test and live events", src.Name)
		}
		spec := *src.Verify
		if spec.TimestampHeader != "" || spec.TimestampKey != "" {
			spec.Tolerance = 5 * time.Minute
		}
		if src.Tolerance > 0 {
			spec.Tolerance = src.Tolerance
		}
		s.signsURL = verify.SpecSignsURL(spec)
		s.format = spec.Format
		if s.format == "" {
			s.format = verify.FormatEither
		}
		s.replayDigest = verify.Preset{Spec: spec}.Replayable() && !src.Dedup.Disabled && !src.Dedup.NoReplayDigest
		s.secretHeaders = []string{spec.Header}
		if err := checkSharedKeys(verify.Preset{Spec: spec}, src.Secrets); err != nil {
			return nil, cfg.Errorf(src.SecretsPos, "source %s: %v", src.Name, err)
		}
		scheme, err = verify.New(spec, src.Secrets)
		if err != nil {
			at := src.VerifyPos
			if secretErr := (*verify.SecretError)(nil); errors.As(err, &secretErr) {
				at = src.SecretsPos
			}
			return nil, cfg.Errorf(at, "source %s: %v", src.Name, err)
		}
	}
	if err := s.compileLearning(cfg, src); err != nil {
		return nil, err
	}
	s.scheme = scheme
	s.secrets = src.Secrets
	s.verifyToken = src.VerifyToken
	if src.Mode != "" {
		prog, err := route.CompileCondition(liveExpr)
		if err != nil {
			return nil, cfg.Errorf(src.ModePos, "source %s: live-mode expression: %v", src.Name, err)
		}
		s.live, s.wantLive, s.otherModeTo = prog, src.Mode == "live", src.OtherModeTo
	}
	if dedupKey != "" && !src.Dedup.Disabled {
		prog, err := route.CompileKey(dedupKey)
		if err != nil {
			return nil, cfg.Errorf(dedupPos, "source %s: dedup.key: %v", src.Name, err)
		}
		s.dedup = prog
	}
	s.table = &route.Table{Default: src.Default}
	if v := src.Validate; v != nil {
		schema, err := compileSchema(src.Name+"-validate", v.Schema, v.SchemaDoc)
		if err != nil {
			return nil, cfg.Errorf(v.Pos, "source %s: validate: %v", src.Name, err)
		}
		s.gate, s.quarantine = schema, v.Quarantine
	}
	for _, r := range src.Routes {
		rule := route.Rule{Name: r.Name, To: r.To, Stop: r.Stop}
		if rule.Name == "" {
			rule.Name = fmt.Sprintf("line %d", r.Pos.Line)
		}
		if r.When != "" {
			prog, err := route.CompileCondition(r.When)
			if err != nil {
				return nil, cfg.Errorf(r.WhenPos, "route %s: when: %v", rule.Name, err)
			}
			rule.When = prog
		}
		if r.Schema != "" || r.SchemaDoc != nil {
			schema, err := compileSchema(fmt.Sprintf("%s-route-%d", src.Name, r.Pos.Line), r.Schema, r.SchemaDoc)
			if err != nil {
				return nil, cfg.Errorf(r.SchemaPos, "route %s: %v", rule.Name, err)
			}
			rule.Schema = schema
		}
		shape, err := compileShape(cfg, r, rule.Name)
		if err != nil {
			return nil, err
		}
		rule.Shape = shape
		s.table.Rules = append(s.table.Rules, rule)
	}
	// The body is parsed once, and only when something reads it; a gate or
	// a dedup key that reads it makes an unparseable body a 400.
	s.bodyRequired = (s.dedup != nil && s.dedup.NeedsBody()) || s.gate != nil || (s.live != nil && s.live.NeedsBody())
	s.needsBody = s.bodyRequired || s.table.NeedsBody()
	s.needsEnv = len(s.table.Rules) > 0 || s.dedup != nil || s.live != nil
	return s, nil
}

func compileSchema(name, file string, doc any) (*route.Schema, error) {
	if doc == nil {
		return route.CompileSchema(file)
	}
	// YAML numbers decode as Go ints; the schema compiler wants JSON values.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var normalized any
	if err := json.Unmarshal(raw, &normalized); err != nil {
		return nil, err
	}
	return route.CompileInlineSchema(name, normalized)
}

func compileShape(cfg *config.Config, r *config.Route, name string) (*route.Shape, error) {
	if r.Path == "" && len(r.SetHeaders) == 0 && len(r.RemoveHeaders) == 0 && r.Transform == "" {
		return nil, nil
	}
	shape := &route.Shape{RemoveHeaders: r.RemoveHeaders}
	if r.Path != "" {
		t, err := route.CompileTemplate(r.Path)
		if err != nil {
			return nil, cfg.Errorf(r.PathPos, "route %s: path: %v", name, err)
		}
		shape.Path = t
	}
	if len(r.SetHeaders) > 0 {
		shape.SetHeaders = map[string]*route.Template{}
		for header, value := range r.SetHeaders {
			t, err := route.CompileTemplate(value)
			if err != nil {
				return nil, cfg.Errorf(r.SetHeadersPos, "route %s: set_headers.%s: %v", name, header, err)
			}
			shape.SetHeaders[header] = t
		}
	}
	if r.Transform != "" {
		prog, err := route.CompileKey(r.Transform)
		if err != nil {
			return nil, cfg.Errorf(r.TransformPos, "route %s: transform: %v", name, err)
		}
		shape.Transform = prog
	}
	return shape, nil
}

// MaskedParts names what must be masked when a source's stored request is
// shown: the headers its scheme reads for signatures and tokens, and body
// fields that carry credentials.
func (p *Pipeline) MaskedParts(source string) (headers, bodyFields []string) {
	for _, s := range p.sources {
		if s.name == source {
			return s.secretHeaders, s.secretFields
		}
	}
	return nil, nil
}
