// Command hookgate is Caddy with its standard modules and the Hookgate
// webhook gateway.
//
// Hookgate's own commands live under one Caddy command, `hookgate` (`caddy
// hookgate events list` in any xcaddy build). This binary also takes them
// without the prefix: `hookgate events list` runs `hookgate hookgate events
// list`. Caddy's commands (run, validate, adapt, reload, ...) keep their
// names and win over a Hookgate command of the same name.
package main

import (
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/hookgate/hookgate/hookgatecmd"
)

func main() { hookgatecmd.Main() }
