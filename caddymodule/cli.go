package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// The operator's commands talk to the admin API, as `caddy reload` does.

func init() {
	registerSubcommand(caddycmd.Command{
		Name:  "events",
		Usage: "list|show|replay|cancel [id] [--source S] [--status S] [--limit N] [--address host:port] [--json]",
		Short: "Lists, shows, replays or cancels stored events through the admin API",
		Long: `
events list                  newest first; --source, --status, --q, --limit, --cursor
events show <id>             one event: request (secrets masked), deliveries, attempts
events replay <id>           deliver it again (routes an unrouted or quarantined event)
events cancel <id>           cancel its pending retries

--address is Caddy's admin endpoint (default localhost:2019); --json prints
the API's JSON instead of tables.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Args = cobra.RangeArgs(1, 2)
			addAdminFlags(cmd)
			cmd.Flags().String("source", "", "only events from this source")
			cmd.Flags().String("status", "", "pending, delivered, dead, unrouted, quarantined or canceled")
			cmd.Flags().String("q", "", "part of an event id or dedup key")
			cmd.Flags().String("cursor", "", "continue a listing from here")
			cmd.Flags().Int("limit", 20, "how many events")
			cmd.RunE = runEvents
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "replay",
		Usage: "[--status dead] [--source S] [--upstream U] [--since 24h] [--address host:port]",
		Short: "Replays matching deliveries in bulk, page by page, with progress",
		CobraFunc: func(cmd *cobra.Command) {
			addAdminFlags(cmd)
			cmd.Flags().String("status", "dead", "states to replay: dead, delivered, canceled (comma-separated)")
			cmd.Flags().String("source", "", "only this source")
			cmd.Flags().String("upstream", "", "only this upstream")
			cmd.Flags().String("since", "", "events received since (RFC 3339 or a duration ago)")
			cmd.Flags().String("until", "", "events received until")
			cmd.Flags().Int("page", 1000, "deliveries per request")
			cmd.RunE = runBulkReplay
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "stats",
		Usage: "[--address host:port] [--json]",
		Short: "Shows counters: received, rejected, duplicates, pending, dead, oldest pending age",
		CobraFunc: func(cmd *cobra.Command) {
			addAdminFlags(cmd)
			cmd.RunE = runStats
		},
	})
}

func addAdminFlags(cmd *cobra.Command) {
	def := "localhost:2019"
	if v := os.Getenv("HOOKGATE_ADMIN"); v != "" {
		def = v
	}
	cmd.Flags().String("address", def, "Caddy's admin endpoint (or HOOKGATE_ADMIN)")
	cmd.Flags().String("store", "", "store file, when several are live")
	cmd.Flags().Bool("json", false, "print JSON")
}

type adminClient struct {
	base  string
	store string
	http  *http.Client
}

func newAdminClient(cmd *cobra.Command) *adminClient {
	addr, _ := cmd.Flags().GetString("address")
	st, _ := cmd.Flags().GetString("store")
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &adminClient{base: strings.TrimSuffix(addr, "/"), store: st, http: &http.Client{Timeout: 60 * time.Second}}
}

// call sends a request and decodes the JSON answer into out; raw gets the
// body as it came.
func (c *adminClient) call(method, path string, query url.Values, out any) ([]byte, error) {
	if query == nil {
		query = url.Values{}
	}
	if c.store != "" {
		query.Set("store", c.store)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return raw, fmt.Errorf("%s", e.Error)
		}
		return raw, fmt.Errorf("admin API answered %s", resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, err
		}
	}
	return raw, nil
}

// view GETs an admin path into out; with --json it prints the answer as
// it came instead, and reports that it did.
func (c *adminClient) view(cmd *cobra.Command, path string, query url.Values, out any) (printed bool, err error) {
	raw, err := c.call(http.MethodGet, path, query, out)
	if err != nil {
		return false, err
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		printJSON(raw)
		return true, nil
	}
	return false, nil
}

func printJSON(raw []byte) {
	os.Stdout.Write(raw)
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		fmt.Println()
	}
}

func runEvents(cmd *cobra.Command, args []string) error {
	c := newAdminClient(cmd)
	asJSON, _ := cmd.Flags().GetBool("json")
	action := args[0]
	needID := action != "list"
	if needID != (len(args) == 2) {
		return fmt.Errorf("usage: %s list | show <id> | replay <id> | cancel <id>", cmd.CommandPath())
	}
	switch action {
	case "list":
		q := url.Values{}
		for _, name := range []string{"source", "status", "q", "cursor"} {
			if v, _ := cmd.Flags().GetString(name); v != "" {
				q.Set(name, v)
			}
		}
		limit, _ := cmd.Flags().GetInt("limit")
		q.Set("limit", fmt.Sprint(limit))
		var out struct {
			Events []struct {
				ID         string    `json:"id"`
				Source     string    `json:"source"`
				ReceivedAt time.Time `json:"received_at"`
				Status     string    `json:"status"`
				DedupKey   string    `json:"dedup_key"`
				Deliveries []struct {
					Upstream string `json:"upstream"`
					State    string `json:"state"`
					Attempts int    `json:"attempts"`
				} `json:"deliveries"`
			} `json:"events"`
			Next string `json:"next_cursor"`
		}
		if printed, err := c.view(cmd, "/hookgate/events", q, &out); err != nil || printed {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tRECEIVED\tSOURCE\tSTATUS\tDELIVERIES\tDEDUP KEY")
		for _, e := range out.Events {
			var ds []string
			for _, d := range e.Deliveries {
				ds = append(ds, fmt.Sprintf("%s:%s(%d)", d.Upstream, d.State, d.Attempts))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.ReceivedAt.Local().Format("2006-01-02 15:04:05"), e.Source, e.Status, orDash(strings.Join(ds, " ")), orDash(e.DedupKey))
		}
		w.Flush()
		if out.Next != "" {
			fmt.Printf("more: --cursor %s\n", out.Next)
		}
	case "show":
		raw, err := c.call(http.MethodGet, "/hookgate/events/"+url.PathEscape(args[1]), nil, nil)
		if err != nil {
			return err
		}
		printJSON(raw)
	case "replay", "cancel":
		var out map[string]any
		raw, err := c.call(http.MethodPost, "/hookgate/events/"+url.PathEscape(args[1])+"/"+action, nil, &out)
		if err != nil {
			return err
		}
		if asJSON {
			printJSON(raw)
			return nil
		}
		for k, v := range out {
			fmt.Printf("%s: %v\n", k, v)
		}
	default:
		return fmt.Errorf("unknown action %q: list, show, replay or cancel", action)
	}
	return nil
}

func runBulkReplay(cmd *cobra.Command, _ []string) error {
	c := newAdminClient(cmd)
	q := url.Values{}
	for _, name := range []string{"status", "source", "upstream", "since", "until"} {
		if v, _ := cmd.Flags().GetString(name); v != "" {
			q.Set(name, v)
		}
	}
	page, _ := cmd.Flags().GetInt("page")
	q.Set("limit", fmt.Sprint(page))
	total, pages := 0, 0
	for {
		var out struct {
			Replayed int    `json:"replayed"`
			Next     string `json:"next"`
		}
		if _, err := c.call(http.MethodPost, "/hookgate/replay", q, &out); err != nil {
			return fmt.Errorf("after %d replayed: %w (resume with the same filters)", total, err)
		}
		total += out.Replayed
		pages++
		fmt.Fprintf(os.Stderr, "\rreplayed %d deliveries (%d pages)", total, pages)
		if out.Next == "" {
			break
		}
		q.Set("after", out.Next)
	}
	fmt.Fprintln(os.Stderr)
	fmt.Printf("replayed: %d\n", total)
	return nil
}

func runStats(cmd *cobra.Command, _ []string) error {
	c := newAdminClient(cmd)
	var st statsView
	if printed, err := c.view(cmd, "/hookgate/stats", nil, &st); err != nil || printed {
		return err
	}
	fmt.Printf("store %s: %d events (%d unrouted, %d quarantined)\n", st.Store, st.Events, st.Unrouted, st.Quarantined)
	fmt.Printf("deliveries: %d pending, %d delivered, %d dead, %d canceled; oldest pending %s\n",
		st.Pending, st.Delivered, st.Dead, st.Canceled, time.Duration(st.Oldest*float64(time.Second)).Round(time.Second))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "UPSTREAM\tPENDING\tDELIVERED\tDEAD\tOLDEST PENDING\tBREAKER")
	for name, u := range st.Upstreams {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\n", name, u.Pending, u.Delivered, u.Dead,
			time.Duration(u.OldestPendingSeconds*float64(time.Second)).Round(time.Second), orDash(st.Breakers[name]))
	}
	w.Flush()
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SOURCE\tOUTCOME\tREQUESTS")
	for src, outcomes := range st.Requests {
		for outcome, n := range outcomes {
			fmt.Fprintf(w, "%s\t%s\t%.0f\n", src, outcome, n)
		}
	}
	w.Flush()
	return nil
}
