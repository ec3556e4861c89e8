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
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/hookgate/hookgate/hookgatecmd"
)

func main() {
	if caddy.CustomBinaryName == "" {
		caddy.CustomBinaryName = "hookgate"
	}
	if caddy.CustomLongDescription == "" {
		caddy.CustomLongDescription = longDescription()
	}
	os.Args = shortForms(os.Args)
	caddycmd.Main()
}

// shortForms rewrites `hookgate <cmd> ...` to `hookgate hookgate <cmd> ...`
// and `hookgate help <cmd>` to `hookgate help hookgate <cmd>` when <cmd> is
// a Hookgate command and not one of Caddy's.
func shortForms(args []string) []string {
	at := 1
	if len(args) > 2 && args[1] == "help" {
		at = 2
	}
	if len(args) <= at || !isShortForm(args[at]) {
		return args
	}
	out := make([]string, 0, len(args)+1)
	out = append(out, args[:at]...)
	out = append(out, hookgatecmd.CommandName)
	return append(out, args[at:]...)
}

func isShortForm(name string) bool {
	if _, caddys := caddycmd.Commands()[name]; caddys {
		return false
	}
	return hookgatecmd.IsSubcommand(name)
}

func longDescription() string {
	var b strings.Builder
	b.WriteString(`Hookgate is Caddy with its standard modules and the Hookgate webhook
gateway: the webhook_gateway handler verifies, deduplicates and durably
stores webhooks, acknowledges them at once and delivers them to the
upstreams of a routes.yaml.

Hookgate's commands, each short for 'hookgate hookgate <command>' (in any
other Caddy build with Hookgate: 'caddy hookgate <command>'):

`)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range hookgatecmd.Subcommands() {
		if isShortForm(c.Name()) {
			fmt.Fprintf(w, "  %s\t%s\n", c.Name(), c.Short)
		}
	}
	w.Flush()
	b.WriteString(`
Every other command is Caddy's, for example:

  hookgate run --config Caddyfile
  hookgate validate --config Caddyfile
  hookgate reload --config Caddyfile

'hookgate help <command>' shows a command's flags.
`)
	return b.String()
}
