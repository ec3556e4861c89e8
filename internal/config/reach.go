package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Reach is how delivery gets to an upstream beyond its URL: the TLS trust
// and client certificate, a forward proxy, or Caddy's whole HTTP transport.
// The zero value delivers as the engine does by default.
type Reach struct {
	// TLS configures the connection to an https upstream.
	TLS *UpstreamTLS
	// Proxy is a forward proxy's URL, or "env" to take HTTP_PROXY,
	// HTTPS_PROXY and NO_PROXY from the environment; empty uses none.
	Proxy string
	// Transport is Caddy's reverse_proxy HTTP transport
	// (http.reverse_proxy.transport.http) as JSON, for settings the short
	// keys do not cover; it excludes TLS and Proxy.
	Transport json.RawMessage
	Pos       Pos
}

// IsZero reports whether the upstream is reached the default way.
func (r Reach) IsZero() bool { return r.TLS == nil && r.Proxy == "" && r.Transport == nil }

// UpstreamTLS is the TLS configuration of an https upstream, in the words
// of Caddy's reverse_proxy transport.
type UpstreamTLS struct {
	// CA lists PEM files of the certificate authorities trusted for the
	// upstream's certificate, in place of the system's.
	CA []string
	// ClientCert and ClientKey are PEM files of the certificate the gateway
	// presents to an upstream that requires one (mutual TLS).
	ClientCert string
	ClientKey  string
	// ServerName is the name the upstream's certificate is checked against,
	// when it is not the URL's host.
	ServerName string
	// InsecureSkipVerify accepts any certificate: anyone on the path can
	// then read and change deliveries. For tests only.
	InsecureSkipVerify bool
}

// reachKey reads an upstream's tls, proxy and transport keys.
func (p *parser) reachKey(k, v *yaml.Node, up *Upstream, what string) {
	if up.Reach.Pos == (Pos{}) {
		up.Reach.Pos = pos(k)
	}
	switch k.Value {
	case "tls":
		up.Reach.TLS = p.upstreamTLS(v, what+".tls")
	case "proxy":
		up.Reach.Proxy = p.proxy(v, what+".proxy")
	case "transport":
		if v.Kind != yaml.MappingNode {
			p.errorf(v, "%s.transport must be a mapping: Caddy's reverse_proxy HTTP transport", what)
			return
		}
		var doc any
		if err := v.Decode(&doc); err != nil {
			p.errorf(v, "%s.transport: %v", what, err)
			return
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			p.errorf(v, "%s.transport cannot be written as JSON: %v", what, err)
			return
		}
		up.Reach.Transport = raw
	}
}

func (p *parser) upstreamTLS(n *yaml.Node, what string) *UpstreamTLS {
	t := &UpstreamTLS{}
	var certNode *yaml.Node
	p.fields(n, what, handlers{
		"ca": func(_, v *yaml.Node) {
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, item := range items {
				t.CA = append(t.CA, p.pemFile(item, what+".ca"))
			}
		},
		"client_cert": func(_, v *yaml.Node) { t.ClientCert, certNode = p.path(v, what+".client_cert"), v },
		"client_key":  func(_, v *yaml.Node) { t.ClientKey = p.path(v, what+".client_key") },
		"server_name": func(_, v *yaml.Node) { t.ServerName = p.expanded(v, what+".server_name") },
		"insecure_skip_verify": func(_, v *yaml.Node) {
			t.InsecureSkipVerify = p.boolean(v, what+".insecure_skip_verify")
		},
	})
	switch {
	case (t.ClientCert == "") != (t.ClientKey == ""):
		p.errorf(n, "%s: client_cert and client_key go together", what)
	case t.ClientCert != "":
		if _, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey); err != nil {
			p.errorf(certNode, "%s: client certificate: %v", what, err)
		}
	}
	if t.InsecureSkipVerify && len(t.CA) > 0 {
		p.errorf(n, "%s: insecure_skip_verify turns off the check that ca configures; drop one", what)
	}
	return t
}

// pemFile resolves a CA file and checks that it holds certificates, so a
// wrong path fails the load at its line instead of every delivery.
func (p *parser) pemFile(n *yaml.Node, what string) string {
	file := p.path(n, what)
	if file == "" {
		return ""
	}
	data, err := os.ReadFile(file)
	if err != nil {
		p.errorf(n, "%s: %v", what, err)
		return file
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		p.errorf(n, "%s: %s holds no PEM certificate", what, file)
	}
	return file
}

func (p *parser) proxy(n *yaml.Node, what string) string {
	s := p.expanded(n, what)
	if s == "env" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "socks5", "socks5h"}, u.Scheme) {
		p.errorf(n, "%s must be a proxy URL (http://, https://, socks5://) or env", what)
		return ""
	}
	return s
}

// checkReach refuses settings that cannot apply to the upstream's URL.
func (p *parser) checkReach(key *yaml.Node, up *Upstream, what string) {
	r := up.Reach
	if r.Transport != nil && (r.TLS != nil || r.Proxy != "") {
		p.errorAt(r.Pos, "%s: transport is Caddy's whole HTTP transport: put tls and the proxy inside it, or drop it", what)
	}
	if r.TLS != nil && up.URL != nil && up.URL.Scheme != "https" {
		p.errorAt(r.Pos, "%s: tls applies to an https:// url, not %s", what, up.URL.Scheme)
	}
}

// upstreamHeaders reads the static headers set on every delivery. Values
// may hold placeholders (a token from the environment) and are never
// logged; the headers the gateway sets itself cannot be replaced.
func (p *parser) upstreamHeaders(n *yaml.Node, what string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping of header names to values", what)
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := http.CanonicalHeaderKey(k.Value)
		switch {
		case !validHeaderName(k.Value):
			p.errorf(k, "%s: %q is not a header name", what, k.Value)
		case strings.HasPrefix(name, "Hookgate-") || name == "Idempotency-Key" || name == "Content-Length" || name == "Host":
			p.errorf(k, "%s: %s is set by the gateway on every delivery", what, name)
		default:
			value := p.expanded(v, what+"."+k.Value)
			if strings.ContainsAny(value, "\r\n") {
				p.errorf(v, "%s.%s: the value contains a line break", what, k.Value)
			}
			out[name] = value
		}
	}
	return out
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
