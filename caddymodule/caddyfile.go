package caddymodule

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

func init() {
	httpcaddyfile.RegisterDirective("webhook_gateway", parseDirective)
	httpcaddyfile.RegisterDirectiveOrder("webhook_gateway", httpcaddyfile.Before, "reverse_proxy")
}

// parseDirective reads the directive's own tokens, because a routes file
// given by absolute path (/etc/caddy/routes.yaml) would otherwise be taken
// for a path matcher. A first argument that names a .yaml, .yml or .json
// file is the routes file; any other is a request matcher.
func parseDirective(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	var matcherSet caddy.ModuleMap
	if h.NextArg() && !isRoutesFile(h.Val()) {
		h.Reset()
		h.Next()
		ms, err := h.ExtractMatcherSet()
		if err != nil {
			return nil, err
		}
		matcherSet = ms
	}
	h.Reset()
	handler := new(Handler)
	if err := handler.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return h.NewRoute(matcherSet, handler), nil
}

// isRoutesFile tells a routes file from a matcher token by its extension.
func isRoutesFile(token string) bool {
	if strings.HasPrefix(token, "{") {
		return true // a file named by a placeholder
	}
	if strings.ContainsAny(token, "*") || strings.HasPrefix(token, "@") {
		return false
	}
	switch strings.ToLower(filepath.Ext(token)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	webhook_gateway [<matcher>] [<routes.yaml>] {
//	    config  <routes.yaml>
//	    storage <file.db>
//	}
//
// The short form names the routes file on the directive's line, by a
// relative or absolute path ending in .yaml, .yml or .json; any other first
// argument is a request matcher (/webhooks/*, @name). In the block form every
// sub-directive is optional, but a routes file must be given one way or the
// other.
//
// The routes file is read when the Caddyfile is adapted and inlined into the
// handler's JSON, as Caddy's import does: `caddy adapt` shows the whole
// gateway, and `caddy reload` applies an edited routes file. Errors in it
// are reported as file:line:col at that moment. Relative paths are taken
// from the Caddyfile's folder; a routes file named with placeholders
// ({env.ROUTES}) is read when the configuration loads instead.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	var routes string
	if d.NextArg() {
		if !isRoutesFile(d.Val()) {
			return d.Errf("%q is neither a matcher nor a routes file: name the routes file with its .yaml extension, or use the block form: webhook_gateway { config %s }", d.Val(), d.Val())
		}
		routes = resolveFrom(d.File(), d.Val())
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "config":
			if !d.NextArg() {
				return d.ArgErr()
			}
			if routes != "" {
				return d.Err("routes file given twice")
			}
			routes = resolveFrom(d.File(), d.Val())
		case "storage":
			if !d.NextArg() {
				return d.ArgErr()
			}
			h.Storage = resolveFrom(d.File(), d.Val())
		default:
			return d.Errf("unknown subdirective %q (known: config, storage)", d.Val())
		}
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	if routes == "" {
		return d.Err("webhook_gateway needs a routes file: webhook_gateway <routes.yaml>, or webhook_gateway <matcher> <routes.yaml> (a first argument that does not end in .yaml, .yml or .json is read as a request matcher)")
	}
	if strings.Contains(routes, "{") {
		h.Config = routes
		return nil
	}
	inline, err := inlineRoutes(routes)
	if err != nil {
		return d.Errf("%v", err)
	}
	h.Routes = config.WrittenRoutes(inline)
	h.FileVersions = fileVersions(inline)
	return nil
}

// filePlaceholder is a {file.PATH} placeholder.
var filePlaceholder = regexp.MustCompile(`\{file\.([^{}]+)\}`)

// fileVersions is, for each file a {file.PATH} placeholder of the routes
// reads, its size and modification time (never its content), or "absent".
func fileVersions(routes []byte) map[string]string {
	out := map[string]string{}
	for _, m := range filePlaceholder.FindAllSubmatch(routes, -1) {
		path := string(m[1])
		if fi, err := os.Stat(path); err == nil {
			out[path] = fmt.Sprintf("%d bytes, modified %s", fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		} else {
			out[path] = "absent"
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// inlineRoutes reads a routes file, checks it as the gateway would, and
// returns the JSON the handler carries.
func inlineRoutes(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading routes file: %w", err)
	}
	repl := caddy.NewReplacer()
	// Adapting needs no secret: they are resolved where the configuration
	// is provisioned, so `adapt` and `reload` work without them.
	cfg, err := config.Parse(path, data, CheckOptions(repl))
	if err != nil {
		return nil, err
	}
	if _, err := assemble.Config(cfg, ingest.Hooks{}); err != nil {
		return nil, err
	}
	return config.Inline(path, data)
}

func resolveFrom(caddyfilePath, p string) string {
	if filepath.IsAbs(p) || strings.Contains(p, "{") || caddyfilePath == "" {
		return p
	}
	abs, err := filepath.Abs(filepath.Join(filepath.Dir(caddyfilePath), p))
	if err != nil {
		return p
	}
	return abs
}

// Interface guards
var _ caddyfile.Unmarshaler = (*Handler)(nil)
