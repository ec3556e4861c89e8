package ingest

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/rules"
	"github.com/hookgate/hookgate/internal/verify"
)

// DefaultBodyTimeout bounds reading a webhook's body: providers give up on an
// answer within 10 to 30 seconds, so a slower body is not a provider's.
const DefaultBodyTimeout = 30 * time.Second

// Source is one compiled source: everything the request path needs to
// verify, deduplicate, check and route its requests.
type Source struct {
	// Name, Path, Provider and PublicURL are as configured; Provider is
	// empty for a custom scheme.
	Name, Path, Provider, PublicURL string
	// Scheme verifies the signature; SignsURL says it covers the URL.
	Scheme   verify.Scheme
	SignsURL bool
	// Format is the provider's body format (verify.FormatJSON, …), never
	// what the request's Content-Type claims.
	Format string
	// Secrets and VerifyToken are what handshakes answer with.
	Secrets     []string
	VerifyToken string
	// Handshakes are the provider's endpoint handshakes.
	Handshakes []*verify.Handshake
	// Learns marks a scheme whose secret a handshake establishes; the secret
	// is kept in the store under Scope, and LearnUntil ends the window in
	// which a handshake may establish it (zero: never).
	Learns     bool
	Scope      string
	LearnUntil time.Time
	// Dedup computes the dedup key, kept for DedupWindow; nil without one.
	Dedup       *rules.Program
	DedupWindow time.Duration
	// DigestFallback makes an empty preset dedup key, or a preset without
	// one, fall back to the body's digest.
	DigestFallback bool
	// SchemeKey takes the dedup key the scheme derives from what it
	// verified (verify.Result.DedupKey) when it derives one.
	SchemeKey bool
	// ReplayDigest adds the body's digest as a second dedup key: the
	// signature covers no timestamp or id, so a capture verifies forever.
	ReplayDigest bool
	// Gate is the schema bodies must satisfy, nil without one; Quarantine
	// parks failing events instead of answering 400.
	Gate       *rules.Schema
	Quarantine bool
	// Rules routes the source's events.
	Rules *rules.Table
	// Live is true for a live-mode event, nil when mode is not checked;
	// WantLive is the mode taken, and events of the other mode go to
	// OtherModeTo (refused when it is empty).
	Live        *rules.Program
	WantLive    bool
	OtherModeTo []string
	// Response is what an accepted event is answered with.
	Response Response
	// SecretHeaders and SecretFields are what the scheme reads that must
	// never be shown: signature and token headers, credential body fields.
	SecretHeaders, SecretFields []string
	// AllowIPs limits the client addresses the source answers; nil allows
	// every address.
	AllowIPs AddrSet
	// ListenTokens may stream the source's events (hookgate listen).
	ListenTokens []ListenToken
	// Search computes the event's search values, indexed by the store.
	Search []SearchField
	// RejectionsKept is how many refused requests the source's log keeps
	// (0 keeps none); RejectionBodyBytes how much of each body, masked
	// (0: none).
	RejectionsKept, RejectionBodyBytes int
}

// ListenToken is a bearer token that may stream a source's events; Raw
// ones get bodies unmasked.
type ListenToken struct {
	Token string
	Raw   bool
}

// SearchField is a named search value and the expression computing it.
type SearchField struct {
	Name string
	Expr *rules.Program
}

// AddrSet is an allowlist of client addresses (ipranges.Set).
type AddrSet interface {
	Contains(netip.Addr) bool
}

// Response is a source's answer to an accepted event; an empty Body
// answers with the event's id as JSON.
type Response struct {
	Status      int
	Body        string
	ContentType string
}

// source is a Source with what the request path derives from it.
type source struct {
	Source
	unsignedHandshakes []*verify.Handshake
	signedHandshakes   []*verify.Handshake
	needsBody          bool     // something reads the parsed body
	needsEnv           bool     // something evaluates an expression
	bodyRequired       bool     // an unparseable body is a 400
	dedupPath          []string // the dedup key read straight from the body, when that is all it needs
}

// Settings are a pipeline's compiled sources and limits.
type Settings struct {
	Sources []Source
	// Claims are the claimed path prefixes; nil claims the sources' longest
	// common parent folder, an empty non-nil slice claims nothing.
	Claims []string
	// MaxBody bounds a request body.
	MaxBody int64
	// MaxPending bounds the deliveries waiting before ingest answers 503;
	// 0 sets no bound.
	MaxPending int64
	// MaxInflightBody bounds the body bytes held by requests being read
	// (DefaultInflightBodyBytes when 0).
	MaxInflightBody int64
	// UnfinishedPerClient and UnfinishedPerConnection bound the requests
	// whose body has not fully arrived from one client address and on one
	// connection (DefaultUnfinishedPerClient and …PerConnection when 0);
	// FirstByteTimeout bounds the wait for a body's first byte
	// (DefaultFirstByteTimeout when 0, none when negative).
	UnfinishedPerClient, UnfinishedPerConnection int
	FirstByteTimeout                             time.Duration
	// LogBodies logs each event's body at DEBUG, with MaskFields and
	// personal data masked.
	LogBodies  bool
	MaskFields []string
	// MaskShownBodies masks bodies the admin API shows (ShownBody) as
	// logged bodies are, with MaskFields.
	MaskShownBodies bool
	// OrderKeys compute the ordering key of deliveries to ordered upstreams.
	OrderKeys map[string]*rules.Program
	Hooks
}

// Hooks are what the server around the pipeline tells it.
type Hooks struct {
	// ClientIP reads the client's address (Caddy's client IP, which honours
	// trusted_proxies); nil reads the connection's peer.
	ClientIP func(*http.Request) string
	// TrustedProxy recognises a request from one of Caddy's
	// trusted_proxies, whose X-Forwarded-* headers delivery passes on; nil
	// recognises none.
	TrustedProxy func(*http.Request) bool
	// Observer is told the outcome of every request, for metrics and
	// alerts; nil tells no one.
	Observer Observer
	// Answered, when set, is told of each request's outcome and event id
	// (empty for a refusal) once it is answered, on its goroutine: Caddy
	// puts them in the request's variables for the access log.
	Answered func(r *http.Request, outcome, eventID string)
}

// New returns a pipeline for compiled sources. Two sources whose paths
// match alike are an error.
func New(s Settings) (*Pipeline, error) {
	p := &Pipeline{
		log:          zap.NewNop(),
		rejectLog:    zap.NewNop(),
		clientIP:     peerIP,
		trustedProxy: untrusted,
		observer:     s.Observer,
		attached:     make(chan struct{}),
		now:          time.Now,
		sources:      map[string]*source{},
		maxBody:      s.MaxBody,
		maxPending:   s.MaxPending,
		orderKeys:    s.OrderKeys,
		bodyTimeout:  DefaultBodyTimeout,
		bodies:       &bodyBudget{limit: s.MaxInflightBody},
	}
	if s.ClientIP != nil {
		p.clientIP = s.ClientIP
	}
	p.answered = s.Answered
	if s.TrustedProxy != nil {
		p.trustedProxy = s.TrustedProxy
	}
	if p.bodies.limit == 0 {
		p.bodies.limit = DefaultInflightBodyBytes
	}
	p.unfinished = newUnfinished(orDefault(s.UnfinishedPerClient, DefaultUnfinishedPerClient),
		orDefault(s.UnfinishedPerConnection, DefaultUnfinishedPerConnection), DefaultUnfinishedTotal)
	switch p.firstByteTimeout = s.FirstByteTimeout; {
	case p.firstByteTimeout == 0:
		p.firstByteTimeout = DefaultFirstByteTimeout
	case p.firstByteTimeout < 0:
		p.firstByteTimeout = 0
	}
	if s.LogBodies {
		p.masker = newMasker(s.MaskFields)
	}
	if s.MaskShownBodies {
		p.shownMasker = newMasker(s.MaskFields)
	}
	for _, cs := range s.Sources {
		key := PathKey(cs.Path)
		if other, dup := p.sources[key]; dup {
			return nil, fmt.Errorf("source %s: path %s matches the same requests as source %s (%s)", cs.Name, cs.Path, other.Name, other.Path)
		}
		p.sources[key] = p.derive(cs)
	}
	if s.Claims != nil {
		for _, c := range s.Claims {
			p.claims = append(p.claims, claimKey(c))
		}
	} else {
		keys := make([]string, 0, len(p.sources))
		for k := range p.sources {
			keys = append(keys, k)
		}
		p.claims = defaultClaims(keys)
	}
	p.secrets, _ = s.Observer.(SecretObserver)
	return p, nil
}

// derive works out when the request path parses the body and evaluates
// expressions: once, and only when something reads them.
func (p *Pipeline) derive(cs Source) *source {
	s := &source{Source: cs}
	for _, h := range cs.Handshakes {
		if h.Unsigned {
			s.unsignedHandshakes = append(s.unsignedHandshakes, h)
		} else {
			s.signedHandshakes = append(s.signedHandshakes, h)
		}
	}
	// A gate or a dedup key that reads the body makes an unparseable body
	// a 400.
	s.bodyRequired = (s.Dedup != nil && s.Dedup.NeedsBody()) || s.Gate != nil || (s.Live != nil && s.Live.NeedsBody())
	s.needsBody = s.bodyRequired || s.Rules.NeedsBody()
	s.needsEnv = len(s.Rules.Rules) > 0 || s.Dedup != nil || s.Live != nil
	for _, key := range p.orderKeys {
		s.needsEnv = true
		s.needsBody = s.needsBody || key.NeedsBody()
	}
	for _, f := range s.Search {
		s.needsEnv = true
		s.needsBody = s.needsBody || f.Expr.NeedsBody()
	}
	// A source whose only use of the body is a dedup key like body.id reads
	// that value straight from the bytes instead of parsing the body.
	if s.Dedup != nil && len(s.Rules.Rules) == 0 && s.Live == nil && s.Gate == nil && len(p.orderKeys) == 0 && len(s.Search) == 0 {
		if path, ok := s.Dedup.BodyPath(); ok && s.Format != verify.FormatForm {
			s.dedupPath, s.needsEnv, s.needsBody, s.bodyRequired = path, false, false, false
		}
	}
	return s
}

func (s *source) hasHandshakes() bool {
	return len(s.unsignedHandshakes)+len(s.signedHandshakes) > 0
}

// ShownBody returns a stored body of source as the admin API and the
// inspector may show it: re-encoded with personal data masked, as logged
// bodies are but whole, when the configuration masks shown bodies; ok is
// false when it does not, and the body is shown as stored.
func (p *Pipeline) ShownBody(source string, body []byte) (masked []byte, ok bool) {
	if p.shownMasker == nil {
		return nil, false
	}
	format := verify.FormatEither // a source the configuration no longer has
	var secret []string
	for _, s := range p.sources {
		if s.Name == source {
			format, secret = s.Format, s.SecretFields
			break
		}
	}
	return []byte(p.shownMasker.masked(format, body, secret)), true
}

// MaskedParts names what must be masked when a source's stored request is
// shown: the headers its scheme reads for signatures and tokens, and body
// fields that carry credentials.
func (p *Pipeline) MaskedParts(source string) (headers, bodyFields []string) {
	for _, s := range p.sources {
		if s.Name == source {
			return s.SecretHeaders, s.SecretFields
		}
	}
	return nil, nil
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Listener is what a listen token grants on a source.
type Listener struct {
	// Source and Provider name the source and its preset ("" for a
	// declared scheme).
	Source, Provider string
	// Raw streams bodies unmasked.
	Raw bool
}

// Listen checks a listen token for source, in constant time against each
// configured one, and says what it grants; ok is false for an unknown
// source, a source without tokens, or a wrong token.
func (p *Pipeline) Listen(source, token string) (l Listener, ok bool) {
	for _, s := range p.sources {
		if s.Name != source {
			continue
		}
		for _, t := range s.ListenTokens {
			if subtle.ConstantTimeCompare([]byte(t.Token), []byte(token)) == 1 {
				l, ok = Listener{Source: s.Name, Provider: s.Provider, Raw: t.Raw}, true
			}
		}
	}
	return l, ok
}
