package hookgatecmd

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
)

func rejectedCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rejected",
		Short: "Lists the most recent refused requests per source: when, from where, why",
		Long: `Lists each source's most recent refused requests, newest first: the time,
the client address, the status, the reason (bad_signature, stale_timestamp,
ip_not_allowed, unavailable, …) and the verifier's explanation. With
--headers, the request's headers too, every value but a few harmless ones
(Content-Type, User-Agent, event-type headers) shown as its length.`,
		Example: `  hookgate rejected --source stripe
  hookgate rejected --source stripe --limit 5 --headers`,
		Args: args(cobra.NoArgs),
		RunE: run(runRejected),
	}
	addAdminFlags(cmd)
	cmd.Flags().String("source", "", "one source's refusals")
	cmd.Flags().Int("limit", 20, "records per source (1 to 1000)")
	cmd.Flags().Bool("headers", false, "print each request's headers, masked")
	return cmd
}

func runRejected(cmd *cobra.Command, _ []string) error {
	q := url.Values{}
	if s, _ := cmd.Flags().GetString("source"); s != "" {
		q.Set("source", s)
	}
	limit, _ := cmd.Flags().GetInt("limit")
	q.Set("limit", strconv.Itoa(limit))
	var v caddymodule.RejectedView
	if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/rejected", q, &v); err != nil || printed {
		return err
	}
	headers, _ := cmd.Flags().GetBool("headers")
	out := cmd.OutOrStdout()
	if len(v.Sources) == 0 {
		fmt.Fprintln(out, "no refused requests kept")
		return nil
	}
	for i, name := range sortedKeys(v.Sources) {
		log := v.Sources[name]
		if i > 0 {
			fmt.Fprintln(out)
		}
		line := fmt.Sprintf("%s: %d kept", name, len(log.Records))
		if log.Dropped > 0 {
			line += fmt.Sprintf(", %d more refused faster than the log keeps them", log.Dropped)
		}
		fmt.Fprintln(out, line)
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "TIME\tCLIENT\tSTATUS\tREASON\tREQUEST\tDETAIL")
		for _, r := range log.Records {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s %s\t%s\n", r.At.Local().Format(time.DateTime), orDash(r.ClientIP), r.Status, orDash(r.Reason),
				r.Method, r.Path, orDash(r.Detail))
			if headers {
				for _, h := range sortedKeys(r.Header) {
					fmt.Fprintf(w, "\t\t\t\t  %s: %s\t\n", h, strings.Join(r.Header[h], ", "))
				}
				if r.Body != "" {
					fmt.Fprintf(w, "\t\t\t\t  body: %s\t\n", r.Body)
				}
			}
		}
		w.Flush()
	}
	return nil
}
