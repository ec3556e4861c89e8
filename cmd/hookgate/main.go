// Command hookgate is Caddy with its standard modules and the Hookgate
// webhook gateway.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/hookgate/hookgate/caddymodule"
)

func main() {
	caddycmd.Main()
}
