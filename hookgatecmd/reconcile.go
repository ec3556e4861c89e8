package hookgatecmd

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

func reconcileCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile --source S [--since 24h] [--dry-run]",
		Short: "Asks a source's provider for the events the gateway missed, now",
		Long: `
Runs a source's reconciliation now, as it runs after every start and every
reconcile.every: the provider's event API is listed from the source's
cursor (or --since ago, within the provider's window); events the gateway
lacks are stored (Stripe) or redelivered by the provider (GitHub). With
--dry-run it lists and counts, and stores and asks for nothing.`,
		Args: args(cobra.NoArgs),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			source, _ := cmd.Flags().GetString("source")
			q := url.Values{}
			if v, _ := cmd.Flags().GetString("since"); v != "" {
				q.Set("since", v)
			}
			if dry, _ := cmd.Flags().GetBool("dry-run"); dry {
				q.Set("dry_run", "1")
			}
			var out struct {
				Listed       int   `json:"listed"`
				Stored       int   `json:"stored"`
				Duplicates   int   `json:"duplicates"`
				Redeliveries int   `json:"redeliveries"`
				Failed       int   `json:"failed"`
				Requests     int   `json:"requests"`
				TookMS       int64 `json:"took_ms"`
				DryRun       bool  `json:"dry_run"`
			}
			return newAdminClient(cmd).act(cmd, http.MethodPost, "/hookgate/sources/"+url.PathEscape(source)+"/reconcile", q, &out, func() {
				what := "reconciled"
				if out.DryRun {
					what = "dry run"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s: listed %d, stored %d, duplicates %d, redeliveries %d, failed %d (%d requests, %d ms)\n",
					what, source, out.Listed, out.Stored, out.Duplicates, out.Redeliveries, out.Failed, out.Requests, out.TookMS)
			})
		}),
	}
	addAdminFlags(cmd)
	cmd.Flags().String("source", "", "the source to reconcile")
	cmd.Flags().String("since", "", "list from this long ago instead of the cursor (24h)")
	cmd.Flags().Bool("dry-run", false, "list and count only")
	_ = cmd.MarkFlagRequired("source")
	return cmd
}
