package assemble

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/ipranges"
	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/verify"
)

// compileSource compiles one source: its scheme (a provider's preset or a
// custom one), learning, mode, dedup key, gate and routes.
func compileSource(cfg *config.Routes, src *config.Source) (ingest.Source, error) {
	s := ingest.Source{
		Name:        src.Name,
		Path:        src.Path,
		Provider:    src.Provider,
		PublicURL:   string(src.PublicURL),
		Response:    ingest.Response(src.Response),
		DedupWindow: src.Dedup.Window.Std(),
		Secrets:     src.Secrets,
		VerifyToken: string(src.VerifyToken),

		RejectionsKept: config.DefaultRejectionsKept,
	}
	for _, t := range src.ListenTokens {
		s.ListenTokens = append(s.ListenTokens, ingest.ListenToken{Token: string(t.Token), Raw: t.Raw})
	}
	for _, f := range src.SearchFields {
		prog, err := rules.CompileKey(f.Expr.Src)
		if err != nil {
			return s, cfg.Errorf(f.Expr.At, "source %s: search_fields.%s: %v", src.Name, f.Name, err)
		}
		s.Search = append(s.Search, ingest.SearchField{Name: f.Name, Expr: prog})
	}
	if r := src.Rejections; r != nil {
		s.RejectionsKept, s.RejectionBodyBytes = r.Keep, int(r.BodyBytes)
	}
	if s.DedupWindow == 0 {
		s.DedupWindow = cfg.Storage.Retention.Std()
	}
	var preset verify.Preset
	var err error
	if src.Provider != "" {
		preset, err = presetScheme(cfg, src, &s)
	} else {
		err = customScheme(cfg, src, &s)
	}
	if err != nil {
		return s, err
	}
	if err := compileAllowIPs(cfg, src, &s); err != nil {
		return s, err
	}
	if err := compileLearning(cfg, src, preset, &s); err != nil {
		return s, err
	}
	if err := compileMode(cfg, src, preset, &s); err != nil {
		return s, err
	}
	if err := compileDedup(cfg, src, preset, &s); err != nil {
		return s, err
	}
	if v := src.Validate; v != nil {
		schema, err := compileSchema(src.Name+"-validate", v.Schema)
		if err != nil {
			return s, cfg.Errorf(v.Pos(), "source %s: validate: %v", src.Name, err)
		}
		s.Gate, s.Quarantine = schema, v.Quarantine
	}
	s.Rules, err = compileRoutes(cfg, src)
	return s, err
}

// presetScheme sets up a source that names a provider's preset.
func presetScheme(cfg *config.Routes, src *config.Source, s *ingest.Source) (verify.Preset, error) {
	preset, ok := verify.Lookup(src.Provider)
	if !ok {
		hint := ""
		if close := verify.Suggest(src.Provider); len(close) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", strings.Join(close, ", "))
		}
		return preset, cfg.Errorf(src.ValuePos("provider"), "source %s: unknown provider %q%s (hookgate providers lists them)", src.Name, src.Provider, hint)
	}
	if err := checkProviderOptions(preset, src.ProviderOptions); err != nil {
		return preset, cfg.Errorf(src.KeyPos("provider_options"), "source %s: %v", src.Name, err)
	}
	if cfg.Unresolved[src.Name] {
		s.Scheme = verify.Unresolved // a check without secrets: nothing to build the scheme with
	} else if err := presetKeys(cfg, src, preset, s); err != nil {
		return preset, err
	}
	s.Handshakes = preset.Handshakes
	if s.Response.Body == "" && preset.Response != "" {
		s.Response.Body = preset.Response
	}
	s.SignsURL = preset.SignsURL()
	s.Format = preset.Format
	s.DigestFallback = src.Dedup.Key.Src == "" && !src.Dedup.Disabled
	s.SchemeKey = src.Dedup.Key.Src == "" && !src.Dedup.Disabled && preset.Dedup.Scheme != ""
	s.ReplayDigest = preset.Replayable() && !src.Dedup.Disabled && !src.Dedup.NoReplayDigest()
	s.SecretHeaders = append([]string{preset.Spec.Header}, preset.Bespoke.Headers...)
	s.SecretFields = preset.Trust.SecretFields
	return preset, nil
}

// presetKeys checks a preset source's secrets and builds its scheme, one
// per secret (verify.PerSecret).
func presetKeys(cfg *config.Routes, src *config.Source, preset verify.Preset, s *ingest.Source) error {
	// A preset with provider_options may fetch its keys (Plaid); it says
	// itself when that is not enough.
	if len(src.Secrets) == 0 && !preset.Keys.Learned && len(src.ProviderOptions) == 0 {
		return cfg.Errorf(src.KeyPos("secrets"), "source %s: no secret configured (or every placeholder in secrets is empty)", src.Name)
	}
	if err := checkSharedKeys(preset, src.Secrets); err != nil {
		return cfg.Errorf(src.KeyPos("secrets"), "source %s: %v", src.Name, err)
	}
	opts := verify.Options{Tolerance: src.Tolerance.Std(), ProviderOptions: src.ProviderOptions}
	scheme, err := verify.PerSecret(src.Secrets, func(secrets []string) (verify.Scheme, error) { return preset.Compile(secrets, opts) })
	if err != nil {
		return cfg.Errorf(src.KeyPos("secrets"), "source %s: %v", src.Name, err)
	}
	s.Scheme = scheme
	return nil
}

// checkProviderOptions refuses provider_options the preset does not read.
func checkProviderOptions(preset verify.Preset, opts map[string]string) error {
	var known []string
	for _, o := range preset.Keys.Options {
		known = append(known, o.Name)
	}
	for name := range opts {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return fmt.Errorf("provider %s takes no provider_options (got %s)", preset.Name, name)
			}
			return fmt.Errorf("provider_options: unknown option %s for provider %s (known: %s)", name, preset.Name, strings.Join(known, ", "))
		}
	}
	return nil
}

// customScheme sets up a source verified by a scheme its verify block
// declares.
func customScheme(cfg *config.Routes, src *config.Source, s *ingest.Source) error {
	if len(src.ProviderOptions) > 0 {
		return cfg.Errorf(src.KeyPos("provider_options"), "source %s: provider_options needs a provider", src.Name)
	}
	spec := src.Verify.Spec()
	if spec.TimestampHeader != "" || spec.TimestampKey != "" {
		spec.Tolerance = 5 * time.Minute
	}
	if src.Tolerance > 0 {
		spec.Tolerance = src.Tolerance.Std()
	}
	s.SignsURL = verify.SpecSignsURL(spec)
	s.Format = spec.Format
	if s.Format == "" {
		s.Format = verify.FormatEither
	}
	s.ReplayDigest = verify.Preset{Spec: spec}.Replayable() && !src.Dedup.Disabled && !src.Dedup.NoReplayDigest()
	s.SecretHeaders = []string{spec.Header}
	if cfg.Unresolved[src.Name] {
		if err := verify.CheckSpec(spec); err != nil {
			return cfg.Errorf(src.KeyPos("verify"), "source %s: %v", src.Name, err)
		}
		s.Scheme = verify.Unresolved
		return nil
	}
	if err := checkSharedKeys(verify.Preset{Spec: spec}, src.Secrets); err != nil {
		return cfg.Errorf(src.KeyPos("secrets"), "source %s: %v", src.Name, err)
	}
	scheme, err := verify.PerSecret(src.Secrets, func(secrets []string) (verify.Scheme, error) { return verify.New(spec, secrets) })
	if err != nil {
		at := src.KeyPos("verify")
		if secretErr := (*verify.SecretError)(nil); errors.As(err, &secretErr) {
			at = src.KeyPos("secrets")
		}
		return cfg.Errorf(at, "source %s: %v", src.Name, err)
	}
	s.Scheme = scheme
	return nil
}

// compileAllowIPs limits the source to its allow_ips, or to the top-level
// list when it sets none; an empty list limits nothing.
func compileAllowIPs(cfg *config.Routes, src *config.Source, s *ingest.Source) error {
	allow := cfg.AllowIPs
	if src.AllowIPs.Set {
		allow = src.AllowIPs
	}
	if len(allow.Entries) == 0 {
		return nil
	}
	set, err := ipranges.Default().Compile(allow.Entries)
	if err != nil {
		return cfg.Errorf(allow.At, "source %s: allow_ips: %v", src.Name, err)
	}
	s.AllowIPs = set
	return nil
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

// compileLearning sets up a source whose secret a handshake establishes.
// learn_secret opens the window for it; without one, handshakes are refused.
func compileLearning(cfg *config.Routes, src *config.Source, preset verify.Preset, s *ingest.Source) error {
	s.Learns = src.Provider != "" && preset.Keys.Learned
	s.Scope = ingest.SecretScope(src.Name, src.Path, string(src.PublicURL))
	if src.LearnSecret == nil {
		return nil
	}
	u, err := url.Parse(string(src.PublicURL))
	switch {
	case !s.Learns:
		return cfg.Errorf(src.KeyPos("learn_secret"), "source %s: learn_secret: this source's scheme does not learn its secret in a handshake (only asana does)", src.Name)
	case len(src.Secrets) > 0:
		return cfg.Errorf(src.KeyPos("learn_secret"), "source %s: learn_secret and secrets exclude each other: with a configured secret, handshakes are refused", src.Name)
	case src.PublicURL == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return cfg.Errorf(src.KeyPos("learn_secret"), "source %s: learn_secret needs public_url, the URL given to the provider (https://host/path): the learned secret belongs to it, so two sites sharing a store never share one", src.Name)
	}
	s.LearnUntil = src.LearnUntil()
	return nil
}

// compileMode sets up a source that takes only live or only test events,
// which needs a preset that marks them inside what it signs.
func compileMode(cfg *config.Routes, src *config.Source, preset verify.Preset, s *ingest.Source) error {
	if src.Mode == "" {
		return nil
	}
	switch {
	case src.Provider == "":
		return cfg.Errorf(src.ValuePos("mode"), "source %s: mode needs a provider preset that marks test and live events", src.Name)
	case preset.Live.Expr == "":
		return cfg.Errorf(src.ValuePos("mode"), "source %s: provider %s does not mark test and live events, so mode cannot be checked", src.Name, preset.Name)
	case preset.Live.Unsigned:
		return cfg.Errorf(src.ValuePos("mode"), "source %s: provider %s marks test and live events outside what it signs (%s), so anyone replaying an event could flip it and mode cannot rely on it: give test and live their own sources and secrets, or route on it with a when: rule", src.Name, preset.Name, preset.Live.Expr)
	}
	prog, err := rules.CompileCondition(preset.Live.Expr)
	if err != nil {
		return cfg.Errorf(src.ValuePos("mode"), "source %s: live-mode expression: %v", src.Name, err)
	}
	s.Live, s.WantLive, s.OtherModeTo = prog, src.Mode == "live", src.OtherModeTo.Names
	return nil
}

// compileDedup compiles the source's dedup key, or its preset's.
func compileDedup(cfg *config.Routes, src *config.Source, preset verify.Preset, s *ingest.Source) error {
	key, at := src.Dedup.Key.Src, src.Dedup.Key.At
	if key == "" && src.Provider != "" {
		key, at = preset.Dedup.Key, src.ValuePos("provider")
	}
	if key == "" || src.Dedup.Disabled {
		return nil
	}
	prog, err := rules.CompileKey(key)
	if err != nil {
		return cfg.Errorf(at, "source %s: dedup.key: %v", src.Name, err)
	}
	s.Dedup = prog
	return nil
}

// compileRoutes compiles the source's rules in order, behind its default.
func compileRoutes(cfg *config.Routes, src *config.Source) (*rules.Table, error) {
	table := &rules.Table{Default: src.Default.Names}
	for _, r := range src.Routes {
		rule := rules.Rule{Name: r.Name, To: r.To.Names, Stop: r.Stop}
		if rule.Name == "" {
			rule.Name = fmt.Sprintf("line %d", r.Pos().Line)
		}
		if r.When.Src != "" {
			prog, err := rules.CompileCondition(r.When.Src)
			if err != nil {
				return nil, cfg.Errorf(r.When.At, "route %s: when: %v", rule.Name, err)
			}
			rule.When = prog
		}
		if !r.Schema.IsZero() {
			schema, err := compileSchema(fmt.Sprintf("%s-route-%d", src.Name, r.Pos().Line), r.Schema)
			if err != nil {
				return nil, cfg.Errorf(r.Schema.At, "route %s: %v", rule.Name, err)
			}
			rule.Schema = schema
		}
		shape, err := compileShape(cfg, r, rule.Name)
		if err != nil {
			return nil, err
		}
		rule.Shape = shape
		table.Rules = append(table.Rules, rule)
	}
	return table, nil
}

func compileSchema(name string, s config.Schema) (*rules.Schema, error) {
	if s.Doc == nil {
		return rules.CompileSchema(s.File)
	}
	// YAML numbers decode as Go ints; the schema compiler wants JSON values.
	raw, err := json.Marshal(s.Doc)
	if err != nil {
		return nil, err
	}
	var normalized any
	if err := json.Unmarshal(raw, &normalized); err != nil {
		return nil, err
	}
	return rules.CompileInlineSchema(name, normalized)
}

func compileShape(cfg *config.Routes, r *config.Route, name string) (*rules.Shape, error) {
	if r.Path == "" && len(r.SetHeaders) == 0 && len(r.RemoveHeaders) == 0 && r.Transform.Src == "" {
		return nil, nil
	}
	shape := &rules.Shape{RemoveHeaders: r.RemoveHeaders}
	if r.Path != "" {
		t, err := rules.CompileTemplate(r.Path)
		if err != nil {
			return nil, cfg.Errorf(r.ValuePos("path"), "route %s: path: %v", name, err)
		}
		shape.Path = t
	}
	if len(r.SetHeaders) > 0 {
		shape.SetHeaders = map[string]*rules.Template{}
		for header, value := range r.SetHeaders {
			t, err := rules.CompileTemplate(value)
			if err != nil {
				return nil, cfg.Errorf(r.ValuePos("set_headers"), "route %s: set_headers.%s: %v", name, header, err)
			}
			shape.SetHeaders[header] = t
		}
	}
	if r.Transform.Src != "" {
		prog, err := rules.CompileKey(r.Transform.Src)
		if err != nil {
			return nil, cfg.Errorf(r.Transform.At, "route %s: transform: %v", name, err)
		}
		shape.Transform = prog
	}
	return shape, nil
}
