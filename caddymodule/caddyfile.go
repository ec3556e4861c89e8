package caddymodule

import (
	"path/filepath"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("webhook_gateway", parseCaddyfile)
	httpcaddyfile.RegisterDirectiveOrder("webhook_gateway", httpcaddyfile.Before, "reverse_proxy")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var handler Handler
	err := handler.UnmarshalCaddyfile(h.Dispenser)
	return &handler, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	webhook_gateway [<routes.yaml>] {
//	    config  <routes.yaml>
//	    storage <file.db>
//	}
//
// The short form names the routes file on the directive's line. In the block
// form every sub-directive is optional, but a routes file must be given one
// way or the other. Relative paths are taken from the Caddyfile's folder, as
// Caddy's import does; paths with placeholders are left for Provision.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		h.Config = resolveFrom(d.File(), d.Val())
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
			if h.Config != "" {
				return d.Err("routes file given twice")
			}
			h.Config = resolveFrom(d.File(), d.Val())
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
	if h.Config == "" {
		return d.Err("webhook_gateway needs a routes file: webhook_gateway <routes.yaml>")
	}
	return nil
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
