package hookgatecmd

import (
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
)

func upstreamsCommand() *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "Lists upstreams: state, paused, pending, oldest pending, dead, breaker",
		Args:  args(cobra.NoArgs),
		RunE:  run(runUpstreamsList),
	}
	addAdminFlags(list)
	pause := upstreamActionCommand("pause", "Delivers nothing to an upstream: its deliveries wait, burning no attempts, across restarts and reloads (and on every instance, with JetStream)")
	resume := upstreamActionCommand("resume", "Delivers what waited for an upstream, at once")
	return group(&cobra.Command{
		Use:   "upstreams",
		Short: "Lists upstreams with their backlog, or pauses and resumes one, through the admin API",
	}, list, pause, resume)
}

func runUpstreamsList(cmd *cobra.Command, _ []string) error {
	var out struct {
		Store     string                     `json:"store"`
		Upstreams []caddymodule.UpstreamView `json:"upstreams"`
	}
	if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/upstreams", nil, &out); err != nil || printed {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "UPSTREAM\tSTATE\tPENDING\tOLDEST PENDING\tDEAD\tBREAKER\tSINCE")
	for _, u := range out.Upstreams {
		since := "-"
		if u.Since != nil {
			since = u.Since.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%s\t%s\n", u.Name, u.State, u.Pending, seconds(u.OldestPendingSeconds), u.Dead, u.Breaker, since)
	}
	return w.Flush()
}

func upstreamActionCommand(action, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   action + " <name>",
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: run(func(cmd *cobra.Command, a []string) error {
			var out caddymodule.UpstreamView
			return newAdminClient(cmd).act(cmd, http.MethodPost, "/hookgate/upstreams/"+url.PathEscape(a[0])+"/"+action, nil, &out, func() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%d pending)\n", out.Name, out.State, out.Pending)
			})
		}),
	}
	addAdminFlags(cmd)
	return cmd
}
