package caddymodule

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// The event inspector: plain HTML, CSS and JavaScript embedded in the
// binary, served by the admin API, nothing fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

var uiRoot, _ = fs.Sub(uiFiles, "ui")

func serveUI(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return apiError(http.StatusMethodNotAllowed, "the inspector is read with GET")
	}
	name := strings.TrimPrefix(r.URL.Path, "/hookgate/ui")
	if name == "" {
		http.Redirect(w, r, "/hookgate/ui/", http.StatusMovedPermanently)
		return nil
	}
	// No framing: a page on another site could overlay the Replay button
	// and have the operator click it.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	r2 := r.Clone(r.Context())
	r2.URL.Path = name
	http.FileServerFS(uiRoot).ServeHTTP(w, r2)
	return nil
}

func timeline(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	minutes := 60
	if v := r.URL.Query().Get("minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 24*60 {
			return apiError(http.StatusBadRequest, "minutes: want 1 to 1440, got %q", v)
		}
		minutes = n
	}
	points, truncated, err := g.handle.store.Timeline(time.Now().Add(-time.Duration(minutes-1) * time.Minute))
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"points": points, "truncated": truncated})
}

// inspectorHeader is sent by the inspector page on every call. A cross-site
// page can send a custom header only after a CORS preflight, which the
// inspector never grants, so its presence proves the page itself made the call.
const inspectorHeader = "X-Hookgate-Inspector"

// inspector guards the inspector server the way Caddy guards its admin
// endpoint (Host and Origin checks), and more strictly: it forwards calls
// with the admin endpoint's own Origin, so whatever it lets through, the
// admin endpoint can no longer tell apart.
type inspector struct {
	hosts map[string]bool // lower-case Host values it answers to
	next  http.Handler
}

// inspectorHosts lists the Host values the inspector answers to: the
// loopback names on its port, its own address when it listens on one IP,
// and each allowed name as given, or without a port on its port and bare
// (the default port, as a proxy in front forwards it).
func inspectorHosts(listen *net.TCPAddr, allow []string) (map[string]bool, error) {
	port := strconv.Itoa(listen.Port)
	hosts := map[string]bool{}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		hosts[net.JoinHostPort(name, port)] = true
	}
	if !listen.IP.IsUnspecified() {
		hosts[strings.ToLower(net.JoinHostPort(listen.IP.String(), port))] = true
	}
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" || strings.ContainsAny(a, "/@?#* ") {
			return nil, fmt.Errorf("--allow-host %q: want a host name, optionally with :port", a)
		}
		if h, p, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || h == "" {
				return nil, fmt.Errorf("--allow-host %q: want a host name, optionally with :port", a)
			}
			hosts[net.JoinHostPort(strings.Trim(h, "[]"), p)] = true
			continue
		}
		name := strings.Trim(a, "[]")
		bare := name
		if strings.Contains(name, ":") {
			bare = "[" + name + "]"
		}
		hosts[bare] = true
		hosts[net.JoinHostPort(name, port)] = true
	}
	return hosts, nil
}

func (in *inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := in.check(r); err != nil {
		log.Printf("inspector: refused %s %s (Host %q, Origin %q): %v", r.Method, r.URL.Path, r.Host, r.Header.Get("Origin"), err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	if r.Method == http.MethodOptions {
		// Same-origin calls need no preflight, and cross-origin ones get
		// no grant: answered here, without CORS headers, never forwarded.
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	in.next.ServeHTTP(w, r)
}

// check returns why r is refused, or nil.
func (in *inspector) check(r *http.Request) error {
	if !in.hosts[strings.ToLower(r.Host)] {
		return fmt.Errorf("host not allowed: %s (hookgate inspect --allow-host adds a name)", r.Host)
	}
	if _, ok := r.Header["Origin"]; ok && !in.originAllowed(r.Header.Get("Origin")) {
		return fmt.Errorf("origin not allowed: %s", r.Header.Get("Origin"))
	}
	if r.Header.Get("Upgrade") != "" {
		return errors.New("protocol upgrades are not served")
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if r.Header.Get(inspectorHeader) != "1" {
			return fmt.Errorf("%s without the %s header the inspector page sends", r.Method, inspectorHeader)
		}
	}
	// Dot segments, escaped or not, could reach past /hookgate/ on the
	// admin endpoint.
	if p, c := r.URL.Path, path.Clean(r.URL.Path); p != c && p != c+"/" {
		return fmt.Errorf("path not clean: %s", r.URL.EscapedPath())
	}
	if p := r.URL.Path; !strings.HasPrefix(p, "/hookgate/") || p == "/hookgate/ui" || strings.HasPrefix(p, "/hookgate/ui/") {
		return nil // the page and its files: served here, harmless to load
	}
	// Browsers say where a request comes from even when they send no
	// Origin (a cross-site <img> or <script> GET); the API's callers are
	// the page itself, or tools that are no browser.
	if s := r.Header.Get("Sec-Fetch-Site"); s == "cross-site" || s == "same-site" {
		return fmt.Errorf("a %s request to the API", s)
	}
	return nil
}

// originAllowed reports whether origin is one of the inspector's own: an
// http or https origin with an allowed host. "null" and other opaque
// origins are refused.
func (in *inspector) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return in.hosts[strings.ToLower(u.Host)]
}

// InspectorHandler serves the inspector page and forwards its API calls to
// Caddy's admin endpoint at host admin, through transport (nil: the
// default, over TCP). Caddy's admin endpoint refuses browser
// navigations, which carry neither Origin nor Referer (its cross-site
// protection), so a browser reaches the page through here; the forwarded
// calls carry the admin endpoint's own origin, which is why the inspector
// checks Host, Origin and, for calls that change state, inspectorHeader
// itself before forwarding anything.
//
// Over a Unix socket (overSocket) Caddy's admin endpoint takes no Origin
// at all, as Caddy's own commands send none: the call goes without one.
func InspectorHandler(admin string, overSocket bool, transport http.RoundTripper, listen *net.TCPAddr, allowHosts []string) (http.Handler, error) {
	hosts, err := inspectorHosts(listen, allowHosts)
	if err != nil {
		return nil, err
	}
	target := &url.URL{Scheme: "http", Host: admin}
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = admin
			if overSocket {
				pr.Out.Header.Del("Origin")
			} else {
				pr.Out.Header.Set("Origin", "http://"+admin)
			}
			// The admin endpoint needs none of these; credentials meant for
			// a proxy in front go no further.
			for _, h := range []string{"Referer", "Cookie", "Authorization", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Sec-Fetch-Dest", "Sec-Fetch-User"} {
				pr.Out.Header.Del(h)
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			// The admin endpoint grants CORS to the origin it was sent,
			// its own; none of that applies to the inspector's callers.
			for k := range resp.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					resp.Header.Del(k)
				}
			}
			return nil
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hookgate/ui/", http.StatusFound)
	})
	mux.HandleFunc("/hookgate/ui/", func(w http.ResponseWriter, r *http.Request) {
		if err := serveUI(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusMethodNotAllowed)
		}
	})
	mux.Handle("/hookgate/", proxy)
	return &inspector{hosts: hosts, next: mux}, nil
}
