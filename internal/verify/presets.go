package verify

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hookgate/hookgate/internal/closest"
)

// Preset is a provider's catalog entry: its scheme and what goes with it.
// It holds what verifying needs; the samples `hookgate send` sends are the
// samples package's.
type Preset struct {
	// Name is the word used as `provider:` in routes.yaml.
	Name string `json:"name"`
	// Description names the provider and summarises its scheme.
	Description string `json:"description"`
	// Docs is the provider's documentation of the scheme.
	Docs string `json:"docs,omitempty"`
	// Spec is the declarative scheme; Bespoke.Build replaces it.
	Spec Spec `json:"scheme"`
	// Bespoke is a scheme of the preset's own, for what a Spec cannot say.
	Bespoke Bespoke `json:"bespoke"`
	// Format is how the provider encodes bodies: json (the default), form,
	// or either. Bodies are read in this format, never by Content-Type.
	Format string `json:"format"`
	// Dedup is what names one delivery of one event.
	Dedup Dedup `json:"dedup"`
	// Handshakes are the endpoint checks the provider makes.
	Handshakes []*Handshake `json:"handshakes,omitempty"`
	// Live tells a live-mode event from a test-mode one.
	Live Live `json:"live"`
	// Keys says what a source's secrets are.
	Keys Keys `json:"keys"`
	// Trust says what the signature does not cover, and what must never be
	// shown.
	Trust Trust `json:"trust"`
	// Response is the body the provider expects for an accepted event, if any.
	Response string `json:"response,omitempty"`
	// Delivery is what the provider does with a delivery that fails.
	Delivery Delivery `json:"delivery"`
	// Checked says what the scheme was checked against: "sdk" (a request
	// the provider's SDK signed or accepted), "vector" (a published
	// example) or "docs" (signed per the documentation only). A test holds
	// it to the fixtures.
	Checked string `json:"checked"`
}

// Delivery is a provider's documented delivery behaviour: whether it
// retries, how long it waits, and how to get an event sent again. Empty
// fields are not documented.
type Delivery struct {
	// Retries says how the provider retries a failed delivery, in words;
	// "none" when it never does.
	Retries string `json:"retries"`
	// RetryWindow is how long after the first attempt retries stop.
	RetryWindow Span `json:"retry_window,omitempty"`
	// Timeout is how long the provider waits for an answer.
	Timeout Span `json:"timeout,omitempty"`
	// Redeliver says how to ask for an event again (an API, the
	// dashboard); empty when the provider cannot.
	Redeliver string `json:"redeliver,omitempty"`
	// Reconcile says what a source's reconcile block does with the
	// provider's event API; empty when the gateway has no client for it.
	Reconcile string `json:"reconcile,omitempty"`
	// IPRanges names the published egress ranges `allow_ips` knows for the
	// provider.
	IPRanges []string `json:"ip_ranges,omitempty"`
	// Docs is where these facts are documented.
	Docs string `json:"docs,omitempty"`
}

// NeverRetries reports whether the provider sends a failed delivery only
// once, so an event the gateway refused is lost unless someone asks for it.
func (d Delivery) NeverRetries() bool { return strings.HasPrefix(d.Retries, "none") }

// Span is a duration written as Go writes one ("72h0m0s") in JSON.
type Span time.Duration

// MarshalJSON writes the span as a duration string.
func (s Span) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(s).String() + `"`), nil
}

// String is the span as a duration.
func (s Span) String() string { return time.Duration(s).String() }

// Bespoke is a scheme a preset builds itself.
type Bespoke struct {
	// Build makes the scheme from the source's secrets and options; nil
	// for a declarative preset.
	Build func(secrets []string, opts Options) (Scheme, error) `json:"-"`
	// Describe says what Build checks, for listings.
	Describe string `json:"describe,omitempty"`
	// Headers names the headers the scheme reads.
	Headers []string `json:"headers,omitempty"`
	// SignsFreshness marks a scheme whose signature covers a timestamp or
	// an event id, so a captured request cannot be sent again as a new
	// event. Declarative specs tell by their content.
	SignsFreshness bool `json:"signs_freshness,omitempty"`
	// SignsURL marks a scheme that signs the request URL. Declarative
	// specs tell by their content.
	SignsURL bool `json:"signs_url,omitempty"`
	// Signer signs any message as the scheme does, with the key it is
	// given, for re-signing and samples; nil when the gateway cannot sign
	// it. A declarative spec signs itself.
	Signer Signer `json:"-"`
	// NewKeys makes a secret and signing key for the scheme's key format;
	// nil derives them from Spec or Keys.Kind (see GenerateKeys).
	NewKeys func() (secret, signingKey string, err error) `json:"-"`
}

// Dedup is how a preset names one delivery of one event.
type Dedup struct {
	// Key is an expression producing the provider's event id. Without one
	// (and without Scheme), the body's digest is the key.
	Key string `json:"key,omitempty"`
	// Scheme says what the key is when the scheme derives it from what it
	// verified (Result.DedupKey); empty for the others.
	Scheme string `json:"scheme,omitempty"`
}

// Live tells a provider's live-mode events from its test-mode ones.
type Live struct {
	// Expr is an expression that is true for a live-mode event and false
	// for a test-mode one; empty when the provider does not mark them.
	Expr string `json:"expr,omitempty"`
	// Unsigned marks an Expr that reads what the signature does not cover:
	// anyone replaying an event could flip it, so `mode` refuses to rely on
	// it.
	Unsigned bool `json:"unsigned,omitempty"`
}

// Keys says what a preset's secrets are.
type Keys struct {
	// Kind is what the scheme does with its secrets, as the gateway
	// branches on it.
	Kind SecretKind `json:"-"`
	// Describe says what `secrets` hold, for people: a shared secret (the
	// default), a public key, a token.
	Describe string `json:"describe,omitempty"`
	// Learned marks a scheme whose secret arrives in a handshake; such a
	// source may start without secrets.
	Learned bool `json:"learned,omitempty"`
	// Reveal marks a learned secret the operator must copy into the
	// provider (Notion's verification_token): `hookgate secrets reveal`
	// shows it, once.
	Reveal bool `json:"reveal,omitempty"`
	// Public marks secrets that are not secret besides public keys (SNS's
	// TopicArns).
	Public bool `json:"public,omitempty"`
	// Options are the provider_options the scheme reads (Plaid's API
	// credentials); any other key is a configuration error.
	Options []ProviderOption `json:"provider_options,omitempty"`
}

// Trust says what a preset's signature does not cover, and what must
// never be shown.
type Trust struct {
	// BodyUnsigned marks a scheme that checks a shared token but does not
	// sign the body: it proves who sent it, TLS alone protects what was
	// sent.
	BodyUnsigned bool `json:"body_unsigned,omitempty"`
	// ObjectBodies marks a provider whose every event is a JSON object:
	// any other body is refused even with a valid signature, so a
	// handshake that MACs a token of another shape cannot sign an event
	// (X's CRC).
	ObjectBodies bool `json:"object_bodies,omitempty"`
	// SecretFields names body fields that carry a credential or signature
	// (Microsoft Graph's clientState): masked wherever the body is shown
	// or logged, like the headers a scheme reads.
	SecretFields []string `json:"secret_fields,omitempty"`
	// Unsigned names what the scheme or the dedup key reads that the
	// signature does not cover, and why that is safe; a test holds every
	// preset to it.
	Unsigned []string `json:"unsigned,omitempty"`
}

// Options are per-source settings a scheme may use.
type Options struct {
	// Tolerance overrides the preset's timestamp tolerance when non-zero.
	Tolerance time.Duration
	// ProviderOptions are the source's provider_options, among the names
	// the preset's Options list.
	ProviderOptions map[string]string
}

// ProviderOption is a provider_options key a preset reads.
type ProviderOption struct {
	Name string `json:"name"`
	// Doc says what the value is.
	Doc string `json:"doc"`
	// Example is a value of the right shape, for tests and listings.
	Example string `json:"example,omitempty"`
}

// SignsURL reports whether the scheme signs the request URL, which the
// gateway then has to rebuild for each request.
func (p Preset) SignsURL() bool {
	if p.Bespoke.Build != nil {
		return p.Bespoke.SignsURL
	}
	return SpecSignsURL(p.Spec)
}

// SpecSignsURL reports whether a declarative scheme signs the URL.
func SpecSignsURL(s Spec) bool { return strings.Contains(s.Content, "{url}") }

// Compile builds the preset's scheme for a source.
func (p Preset) Compile(secrets []string, opts Options) (Scheme, error) {
	var scheme Scheme
	var err error
	if p.Bespoke.Build != nil {
		scheme, err = p.Bespoke.Build(secrets, opts)
	} else {
		spec := p.Spec
		if opts.Tolerance > 0 {
			spec.Tolerance = opts.Tolerance
		}
		scheme, err = New(spec, secrets)
	}
	if err != nil || !p.Trust.ObjectBodies {
		return scheme, err
	}
	return objectBodies{scheme}, nil
}

// objectBodies refuses a body that is not one JSON object, once the
// signature over its raw bytes verified.
type objectBodies struct{ Scheme }

// ErrNotObject is a signed body that is not the JSON object the provider
// always sends.
var ErrNotObject = errors.New("body is not a JSON object")

func (o objectBodies) Verify(r *Request) (Result, error) {
	res, err := o.Scheme.Verify(r)
	if err != nil {
		return res, err
	}
	if _, ok := object(r.Body); !ok {
		return Result{}, fmt.Errorf("%w: %w", ErrInvalidSignature, ErrNotObject)
	}
	return res, nil
}

// Signer signs requests as a provider does, for `hookgate send`,
// re-signing deliveries and tests.
type Signer interface {
	Sign(key string, msg Message) (http.Header, error)
}

// standardWebhooks builds the Standard Webhooks scheme with a header prefix
// ("webhook" or "svix"): id.timestamp.body, HMAC-SHA256, base64, whsec_ keys.
func standardWebhooks(name, description, prefix, docs, checked string) Preset {
	return Preset{
		Name:        name,
		Description: description,
		Spec: Spec{
			Algorithm:       "hmac-sha256",
			Header:          prefix + "-signature",
			Separator:       " ",
			Prefix:          "v1,",
			Encoding:        "base64",
			Content:         "{id}.{timestamp}.{body}",
			IDHeader:        prefix + "-id",
			TimestampHeader: prefix + "-timestamp",
			SecretEncoding:  "whsec",
			Tolerance:       5 * time.Minute,
		},
		Docs:    docs,
		Dedup:   Dedup{Key: `headers["` + prefix + `-id"]`},
		Checked: checked,
	}
}

// githubSpec is GitHub's X-Hub-Signature-256.
var githubSpec = Spec{Algorithm: "hmac-sha256", Header: "X-Hub-Signature-256", Prefix: "sha256=", Encoding: "hex"}

var presets = map[string]Preset{}

func register(ps ...Preset) {
	for _, p := range ps {
		if _, dup := presets[p.Name]; dup {
			panic("preset registered twice: " + p.Name)
		}
		if p.Format == "" {
			p.Format = FormatJSON
		}
		if err := CheckFormat(p.Format); err != nil {
			panic("preset " + p.Name + ": " + err.Error())
		}
		if p.Bespoke.Build == nil {
			p.Spec.Format = p.Format
		}
		presets[p.Name] = p
	}
}

func init() {
	register(
		Preset{
			Name: "stripe",
			Delivery: Delivery{Retries: "live: exponential backoff for up to 3 days; sandbox: 3 times over a few hours", RetryWindow: Span(72 * time.Hour), Redeliver: "Dashboard \"Resend\" on the event delivery; CLI stripe events resend evt_... --webhook-endpoint=we_...", IPRanges: []string{"stripe"}, Docs: "https://docs.stripe.com/webhooks",
				Reconcile: "GET /v1/events (30 days), each missing event fetched and stored"},
			Checked:     "sdk: stripe@23.1.0",
			Description: "Stripe: Stripe-Signature t=…,v1=… over timestamp.body, HMAC-SHA256 hex; the whole whsec_ string is the key",
			Spec: Spec{
				Algorithm:    "hmac-sha256",
				Header:       "Stripe-Signature",
				SignatureKey: "v1",
				TimestampKey: "t",
				Encoding:     "hex",
				Content:      "{timestamp}.{body}",
				Tolerance:    5 * time.Minute,
			},
			Docs:  "https://docs.stripe.com/webhooks#verify-manually",
			Dedup: Dedup{Key: "body.id"},
			Live:  Live{Expr: "body.livemode == true"},
		},
		Preset{
			Name: "github",
			Delivery: Delivery{Retries: "none: a failed delivery is not retried", Timeout: Span(10 * time.Second), Redeliver: "REST API POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts; UI \"Redeliver\" (deliveries of the past 3 days)", IPRanges: []string{"github"}, Docs: "https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries",
				Reconcile: "GET {hook}/deliveries (3 days), each failed or missing delivery redelivered"},
			Checked:     "sdk: @octokit/webhooks-methods@6.0.0",
			Description: "GitHub: X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex",
			Spec:        githubSpec,
			Docs:        "https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries",
			Dedup:       Dedup{Key: `headers["x-github-delivery"]`},
		},
		standardWebhooks("standard-webhooks", "Standard Webhooks: webhook-id/-timestamp/-signature v1,… over id.timestamp.body, HMAC-SHA256 base64, whsec_ key", "webhook",
			"https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md", "sdk: standardwebhooks@1.1.1"),
		standardWebhooks("svix", "Svix: svix-id/-timestamp/-signature v1,… over id.timestamp.body, HMAC-SHA256 base64, whsec_ key", "svix",
			"https://docs.svix.com/receiving/verifying-payloads/how-manual", "sdk: svix@2.5.0"),
	)
}

// Lookup returns the preset with that name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets[strings.ToLower(name)]
	return p, ok
}

// Presets returns every preset, sorted by name.
func Presets() []Preset {
	out := make([]Preset, 0, len(presets))
	for _, p := range presets {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Preset) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Suggest returns the preset names closest to an unknown one.
func Suggest(name string) []string {
	presets := Presets()
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return closest.Names(name, names)
}

// SecretsConfidential reports whether a source's secrets must be kept
// secret: they are not public keys, nor values such as SNS's TopicArns.
func (p Preset) SecretsConfidential() bool {
	return p.Keys.Kind != SecretPublicKey && !p.Keys.Public
}

// Resignable reports whether the gateway can re-sign the preset's events
// with a source's secret: it can sign the scheme, the signature covers the
// body, and the secret is a shared one, not a public key or a token.
func (p Preset) Resignable() bool {
	_, err := SignerFor(p)
	return err == nil && !p.Trust.BodyUnsigned && p.Keys.Kind == SecretMACKey
}

// Replayable reports whether the signature covers neither a timestamp nor
// an event id: the same signed bytes verify again at any time, also behind
// a fresh, unsigned delivery id.
func (p Preset) Replayable() bool {
	if p.Bespoke.Build != nil {
		return !p.Bespoke.SignsFreshness
	}
	d, err := compileSpec(p.Spec)
	if err != nil {
		return false
	}
	return !d.signsFreshness()
}

// SecretKind is what a scheme does with its configured secrets.
type SecretKind uint8

const (
	// SecretMACKey is a shared key for a MAC or hash, used as written (or as
	// a declarative spec's secret_encoding says).
	SecretMACKey SecretKind = iota
	// SecretMACKeyHex is a shared MAC key written in hex.
	SecretMACKeyHex
	// SecretPublicKey is a public key; the provider holds the private one.
	SecretPublicKey
	// SecretToken is compared as given: a token, a password, a client state
	// or a secret learned in a handshake. It is not a key.
	SecretToken
)
