package assemble

import (
	"encoding/json"

	"github.com/hookgate/hookgate/internal/config"
)

// transport is the Caddy reverse_proxy HTTP transport
// (http.reverse_proxy.transport.http) an upstream's reach asks for, as
// JSON; nil when the engine's own transport serves. The short keys map onto
// Caddy's names; a transport given whole is taken as it is.
func transport(r *config.Upstream) json.RawMessage {
	if r.TLS == nil && r.Proxy == "" && r.Transport == nil {
		return nil
	}
	if r.Transport != nil {
		return r.Transport
	}
	// As the engine's own transport does: the backend gets the provider's
	// headers, not an Accept-Encoding of ours, and a dial may take 10s.
	t := map[string]any{"compression": false, "dial_timeout": "10s"}
	switch r.Proxy {
	case "env": // Caddy's default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY
	case "":
		t["network_proxy"] = map[string]any{"from": "none"}
	default:
		t["network_proxy"] = map[string]any{"from": "url", "url": string(r.Proxy)}
	}
	if tls := r.TLS; tls != nil {
		c := map[string]any{}
		if len(tls.CA) > 0 {
			c["ca"] = map[string]any{"provider": "file", "pem_files": []string(tls.CA)}
		}
		if tls.ClientCert != "" {
			c["client_certificate_file"], c["client_certificate_key_file"] = string(tls.ClientCert), string(tls.ClientKey)
		}
		if tls.ServerName != "" {
			c["server_name"] = string(tls.ServerName)
		}
		if tls.InsecureSkipVerify {
			c["insecure_skip_verify"] = true
		}
		t["tls"] = c
	}
	raw, _ := json.Marshal(t) // maps of strings, lists and bools always encode
	return raw
}

// mayProxy reports whether a transport may send requests through a forward
// proxy: one is named, or none is and Caddy takes HTTP_PROXY from the
// environment.
func mayProxy(transport json.RawMessage) bool {
	var t struct {
		NetworkProxy *struct {
			From string `json:"from"`
		} `json:"network_proxy"`
	}
	if json.Unmarshal(transport, &t) != nil {
		return true
	}
	return t.NetworkProxy == nil || t.NetworkProxy.From != "none"
}
