package hookgatecmd

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
)

func inspectCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect [--listen 127.0.0.1:2020] [--allow-host name]...",
		Short: "Serves the event inspector page for a browser, on loopback",
		Long: `
Serves the event inspector (events, details, attempts, replay, a chart of the
last hour) and forwards its calls to Caddy's admin endpoint. It listens on
loopback only unless told otherwise; anyone who can reach it can replay
events and read stored requests.

Like Caddy's admin endpoint, it answers only to its own Host names
(localhost, 127.0.0.1 and [::1] on its port) and Origins, and takes calls
that change state only from its own page. --allow-host adds a name, such as
the site of a Caddy proxy in front that authenticates users: without a
port it is accepted bare and on the inspector's port.`,
		Args: args(cobra.NoArgs),
		RunE: run(runInspect),
	}
	addAdminFlags(cmd)
	cmd.Flags().String("listen", "127.0.0.1:2020", "address to serve the page on")
	cmd.Flags().StringArray("allow-host", nil, "also answer to this host name[:port] (repeatable)")
	return cmd
}

func runInspect(cmd *cobra.Command, _ []string) error {
	c := newAdminClient(cmd)
	admin := strings.TrimPrefix(strings.TrimPrefix(c.base, "http://"), "https://")
	listen, _ := cmd.Flags().GetString("listen")
	allow, _ := cmd.Flags().GetStringArray("allow-host")
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitWith(ExitRefused, err)
	}
	handler, err := caddymodule.InspectorHandler(admin, c.socket, c.transport, ln.Addr().(*net.TCPAddr), allow)
	if err != nil {
		ln.Close()
		return exitWith(ExitUsage, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "event inspector: http://%s/hookgate/ui/ (admin API at %s)\n", ln.Addr(), c.where)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
