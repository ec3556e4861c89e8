package config

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"net/http"
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
)

// The values that check themselves where they are written. Each reads
// itself from its node (decodeNode), so an error names the line and
// column of the value it is about.

// Duration is a duration as Caddy reads one: text in Caddy's units ("90s",
// "1h30m", "7d12h"), or whole nanoseconds, as Caddy's JSON writes them.
type Duration time.Duration

// Std is the duration as the standard library's type.
func (d Duration) Std() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

func (d *Duration) decodeNode(dec *decoder, n *yaml.Node, what string) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var ns int64
		if n.Decode(&ns) != nil || ns < 0 {
			dec.errorf(n, "%s: want a duration such as 90s or 7d, or whole nanoseconds", what)
			return
		}
		*d = Duration(ns)
		return
	}
	s := dec.str(n, what)
	if s == "" {
		*d = 0
		return
	}
	v, err := ParseDuration(s)
	switch {
	case err != nil:
		dec.errorf(n, "%s: %v", what, err)
	case v < 0:
		dec.errorf(n, "%s must not be negative", what)
	default:
		*d = Duration(v)
	}
}

// Size is a byte count as Caddy's Caddyfile reads one: 512, 64KiB, 5MiB,
// 1.5MiB, 5mb, 10M.
type Size int64

func (s *Size) decodeNode(d *decoder, n *yaml.Node, what string) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var b int64
		if n.Decode(&b) != nil || b <= 0 {
			d.errorf(n, "%s: want a positive size such as 5MiB", what)
			return
		}
		*s = Size(b)
		return
	}
	v, err := ParseSize(d.str(n, what))
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
		return
	}
	*s = Size(v)
}

// Text is a string in which placeholders ({env.X}, {file.Y}) are expanded
// when the configuration loads.
type Text string

func (t *Text) decodeNode(d *decoder, n *yaml.Node, what string) { *t = Text(d.expanded(n, what)) }

// Secret is a credential: expanded as Text is, and noted when it is
// written out rather than as a placeholder (validate-routes warns of it).
type Secret string

func (s *Secret) decodeNode(d *decoder, n *yaml.Node, what string) {
	d.literal(n, what)
	*s = Secret(d.credential(n, what))
}

// Secrets are a source's secrets, any of which may match. A placeholder
// that expands to nothing is dropped, so a rotation slot can stay empty.
type Secrets []string

func (s *Secrets) decodeNode(d *decoder, n *yaml.Node, what string) {
	*s = nil
	for _, item := range d.listNodes(n, what) {
		d.literal(item, what)
		if v := d.credential(item, what); v != "" {
			*s = append(*s, v)
		}
	}
}

// Path is a file name: expanded, and taken from the routes file's folder
// when it is relative.
type Path string

func (p *Path) decodeNode(d *decoder, n *yaml.Node, what string) {
	s := d.expanded(n, what)
	if s != "" && !filepath.IsAbs(s) {
		s = filepath.Join(d.dir, s)
	}
	*p = Path(s)
}

// Expr is an expr-lang expression, compiled when the configuration is
// assembled; At is where it was written, for its errors.
type Expr struct {
	Src string
	At  Pos
}

func (e *Expr) decodeNode(d *decoder, n *yaml.Node, what string) {
	e.Src, e.At = d.str(n, what), pos(n)
}

// Refs names upstreams; At is where the list was written. Each name is
// checked against the upstreams once every one is read.
type Refs struct {
	Names []string
	At    Pos
}

func (r *Refs) decodeNode(d *decoder, n *yaml.Node, what string) {
	r.At = pos(n)
	r.Names = nil
	for _, item := range d.listNodes(n, what) {
		r.Names = append(r.Names, d.str(item, what))
	}
}

// URL is an absolute http or https URL, placeholders expanded. Errors name
// the problem, not the value: a URL may carry a token (a Slack webhook's
// path).
type URL struct{ *url.URL }

func (u *URL) decodeNode(d *decoder, n *yaml.Node, what string) {
	u.parse(d, n, what, d.expanded(n, what))
}

// parse takes raw, the node's expanded value, as an http(s) URL.
func (u *URL) parse(d *decoder, n *yaml.Node, what, raw string) {
	if raw == "" {
		d.errorf(n, "%s is empty (an unset placeholder?)", what)
		return
	}
	parsed, err := url.Parse(raw)
	switch {
	case err != nil:
		d.errorf(n, "%s is not a URL", what)
	case parsed.Scheme != "http" && parsed.Scheme != "https":
		d.errorf(n, "%s: scheme must be http or https", what)
	case parsed.Host == "":
		d.errorf(n, "%s: the URL has no host", what)
	default:
		u.URL = parsed
	}
}

// Time is an RFC 3339 time, placeholders expanded.
type Time struct{ time.Time }

func (t *Time) decodeNode(d *decoder, n *yaml.Node, what string) {
	s := d.expanded(n, what)
	if s == "" {
		return
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		d.errorf(n, "%s: want an RFC 3339 time such as 2030-01-02T15:04:05Z, got %q", what, s)
		return
	}
	t.Time = v
}

// Rate is attempts per second, written "50/s", "600/m", "3600/h" or as a
// number per second.
type Rate float64

func (r *Rate) decodeNode(d *decoder, n *yaml.Node, what string) {
	v, err := ParseRate(d.str(n, what))
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
	}
	*r = Rate(v)
}

// Ratio is a share in (0, 1].
type Ratio float64

func (r *Ratio) decodeNode(d *decoder, n *yaml.Node, what string) {
	var v float64
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil || v <= 0 || v > 1 {
		d.errorf(n, "%s must be a number in (0, 1]", what)
	}
	*r = Ratio(v)
}

// RetryOn lists what is retried: status codes, "4xx", "5xx", "network".
type RetryOn struct{ deliver.RetryOn }

func (r *RetryOn) decodeNode(d *decoder, n *yaml.Node, what string) {
	var items []string
	for _, item := range d.listNodes(n, what) {
		s := d.str(item, what)
		if _, err := deliver.ParseRetryOn([]string{s}); err != nil {
			d.errorf(item, "%s: %v", strings.TrimSuffix(what, ".retry_on"), err)
		}
		items = append(items, s)
	}
	r.RetryOn, _ = deliver.ParseRetryOn(items)
}

// Schema is a JSON Schema: a file name (taken from the routes file's
// folder) or the schema written inline.
type Schema struct {
	File string
	Doc  any
	At   Pos
}

func (s *Schema) decodeNode(d *decoder, n *yaml.Node, what string) {
	s.At = pos(n)
	if n.Kind == yaml.MappingNode {
		if err := n.Decode(&s.Doc); err != nil {
			d.errorf(n, "%s: %v", what, err)
		}
		return
	}
	var p Path
	p.decodeNode(d, n, what)
	s.File = string(p)
}

// IsZero reports an unset schema.
func (s Schema) IsZero() bool { return s.File == "" && s.Doc == nil }

// AllowIPs limits the client addresses (as Caddy sees them, so
// trusted_proxies applies) a source takes requests from: CIDRs, single
// addresses and named provider ranges (github, stripe, …), each checked
// when the file loads.
type AllowIPs struct {
	Entries []string
	// Set is true when the key is written: an empty list then allows every
	// address, which is how a source turns the top-level default off.
	Set bool
	At  Pos
}

func (a *AllowIPs) decodeNode(d *decoder, n *yaml.Node, what string) {
	a.Set, a.At, a.Entries = true, pos(n), nil
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list of CIDRs, addresses or provider names, such as [github, 192.0.2.0/24]", what)
		return
	}
	for _, item := range n.Content {
		entry := d.str(item, what)
		if entry == "" {
			if item.Kind == yaml.ScalarNode && item.Tag != "!!null" {
				d.errorf(item, "%s: an entry is empty", what)
			}
			continue
		}
		if err := ipranges.Default().Check(entry); err != nil {
			d.errorf(item, "%s: %v", what, err)
			continue
		}
		a.Entries = append(a.Entries, entry)
	}
}

// Claim lists the path prefixes the gateway answers itself.
type Claim struct {
	Prefixes []string
	// Set is true when the key is written (an empty list claims nothing).
	Set bool
	At  Pos
}

func (c *Claim) decodeNode(d *decoder, n *yaml.Node, what string) {
	c.Set, c.At, c.Prefixes = true, pos(n), nil
	items := d.listNodes(n, what)
	for _, item := range items {
		p := d.str(item, what)
		if !strings.HasPrefix(p, "/") {
			d.errorf(item, "%s: a prefix must start with /, got %q", what, p)
		}
		c.Prefixes = append(c.Prefixes, p)
	}
}

// CAFiles are PEM files of certificates trusted instead of the system
// roots: one name or a list, each checked to hold a certificate.
type CAFiles []string

func (c *CAFiles) decodeNode(d *decoder, n *yaml.Node, what string) {
	*c = nil
	for _, item := range d.listNodes(n, what) {
		var p Path
		p.decodeNode(d, item, what)
		file := string(p)
		if file == "" {
			continue
		}
		*c = append(*c, file)
		data, err := os.ReadFile(file)
		if err != nil {
			d.errorf(item, "%s: %v", what, err)
			continue
		}
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			d.errorf(item, "%s: %s holds no PEM certificate", what, file)
		}
	}
}

// Proxy is a forward proxy URL (http, https, socks5), or "env" for the
// environment's HTTP_PROXY and friends.
type Proxy string

func (p *Proxy) decodeNode(d *decoder, n *yaml.Node, what string) {
	s := d.expanded(n, what)
	if s == "env" {
		*p = Proxy(s)
		return
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "socks5", "socks5h"}, u.Scheme) {
		d.errorf(n, "%s must be a proxy URL (http://, https://, socks5://) or env", what)
		return
	}
	*p = Proxy(s)
}

// DeliveryHeaders are static headers set on every delivery: values
// expanded (a token from the environment) and never logged; the headers
// the gateway sets itself cannot be replaced.
type DeliveryHeaders map[string]string

func (h *DeliveryHeaders) decodeNode(d *decoder, n *yaml.Node, what string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of header names to values", what)
		return
	}
	out := make(DeliveryHeaders, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := http.CanonicalHeaderKey(k.Value)
		switch {
		case !validHeaderName(k.Value):
			d.errorf(k, "%s: %q is not a header name", what, k.Value)
		case strings.HasPrefix(name, "Hookgate-") || name == "Idempotency-Key" || name == "Content-Length" || name == "Host":
			d.errorf(k, "%s: %s is set by the gateway on every delivery", what, name)
		default:
			value := d.expanded(v, what+"."+k.Value)
			if strings.ContainsAny(value, "\r\n") {
				d.errorf(v, "%s.%s: the value contains a line break", what, k.Value)
			}
			out[name] = value
		}
	}
	*h = out
}

// RouteHeaders are the headers a route sets on its deliveries; those that
// describe the connection and the body are the transport's.
type RouteHeaders map[string]string

func (h *RouteHeaders) decodeNode(d *decoder, n *yaml.Node, what string) {
	out := RouteHeaders{}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must map header names to values", what)
		*h = out
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if lower := strings.ToLower(name); lower == "host" || lower == "content-length" || lower == "transfer-encoding" {
			d.errorf(n.Content[i], "%s: %s cannot be set", what, name)
		}
		out[name] = d.str(n.Content[i+1], what+"."+name)
	}
	*h = out
}

// ProviderOptions are settings a preset reads beyond its secrets (Plaid's
// API credentials), placeholders expanded; the preset names the keys it
// takes.
type ProviderOptions map[string]string

func (o *ProviderOptions) decodeNode(d *decoder, n *yaml.Node, what string) {
	out := ProviderOptions{}
	*o = out
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must map option names to values", what)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if name == "secret" {
			d.literal(n.Content[i+1], what+"."+name)
		}
		out[name] = d.credential(n.Content[i+1], what+"."+name)
	}
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// SearchFields map a search field's name to the expression that computes
// it, in file order.
type SearchFields []SearchField

// SearchField is one named expression.
type SearchField struct {
	Name string
	Expr Expr
}

// searchFieldName keeps names short and free of the separator a query
// uses (name:value).
var searchFieldName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// MaxSearchFields bounds a source's search fields: each is an index entry
// per event.
const MaxSearchFields = 8

func (f *SearchFields) decodeNode(d *decoder, n *yaml.Node, what string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of field names to expressions, such as {type: body.type}", what)
		return
	}
	*f = nil
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorf(k, "%s: %q appears twice", what, k.Value)
			continue
		}
		seen[k.Value] = true
		if !searchFieldName.MatchString(k.Value) {
			d.errorf(k, "%s: %q must be 1-32 lowercase letters, digits or _, starting with a letter", what, k.Value)
			continue
		}
		var e Expr
		e.decodeNode(d, v, what+"."+k.Value)
		*f = append(*f, SearchField{Name: k.Value, Expr: e})
	}
	if len(*f) > MaxSearchFields {
		d.errorf(n, "%s: %d fields, at most %d", what, len(*f), MaxSearchFields)
	}
}

// MarshalJSON writes the fields as one object, in file order.
func (f SearchFields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, field := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(field.Name)
		expr, _ := json.Marshal(field.Expr.Src)
		b.Write(name)
		b.WriteByte(':')
		b.Write(expr)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
