package hookgatecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
)

func eventsCommand() *cobra.Command {
	list := &cobra.Command{
		Use:   "list [--source S] [--status S] [--upstream U] [--origin O] [--since 24h] [--until T] [--q text] [--limit N] [--cursor C]",
		Short: "Lists stored events, newest first",
		Args:  args(cobra.NoArgs),
		RunE:  run(runEventsList),
	}
	addAdminFlags(list)
	list.Flags().String("source", "", "only events from this source")
	list.Flags().String("status", "", "pending, delivered, dead, unrouted, quarantined or canceled")
	list.Flags().String("q", "", "part of an event id or dedup key")
	list.Flags().String("upstream", "", "only events with a delivery to this upstream")
	list.Flags().String("search", "", "name:value of a search field (search_fields), found through the index")
	list.Flags().String("origin", "", "only events that came so: webhook, reconcile or redelivery")
	list.Flags().String("since", "", "events received since: an RFC 3339 time or a duration ago (24h)")
	list.Flags().String("until", "", "events received until: an RFC 3339 time or a duration ago")
	list.Flags().String("cursor", "", "continue a listing from here")
	list.Flags().Int("limit", 20, "how many events")

	show := &cobra.Command{
		Use:   "show <id>",
		Short: "Shows one event: the request (secrets masked), its body, its deliveries and attempts",
		Args:  args(cobra.ExactArgs(1)),
		RunE: run(func(cmd *cobra.Command, a []string) error {
			var ev eventDetail
			if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/events/"+url.PathEscape(a[0]), nil, &ev); err != nil || printed {
				return err
			}
			ev.print(cmd.OutOrStdout())
			return nil
		}),
	}
	addAdminFlags(show)

	replay := eventActionCommand("replay", "Delivers an event again (routes an unrouted or quarantined one)")
	cancel := eventActionCommand("cancel", "Cancels an event's pending retries")
	return group(&cobra.Command{
		Use:   "events",
		Short: "Lists, shows, replays or cancels stored events through the admin API",
		Long: `
Stored events through Caddy's admin endpoint (--address, default
localhost:2019, or HOOKGATE_ADMIN); --json prints the API's JSON instead of
tables.`,
	}, list, show, replay, cancel)
}

// eventActionCommand POSTs to one event's action endpoint.
func eventActionCommand(action, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   action + " <id>",
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: run(func(cmd *cobra.Command, a []string) error {
			var out map[string]any
			return newAdminClient(cmd).act(cmd, http.MethodPost, "/hookgate/events/"+url.PathEscape(a[0])+"/"+action, nil, &out, func() {
				keys := make([]string, 0, len(out))
				for k := range out {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", k, out[k])
				}
			})
		}),
	}
	addAdminFlags(cmd)
	return cmd
}

// eventRow is what events list shows of an event.
type eventRow struct {
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
}

func runEventsList(cmd *cobra.Command, _ []string) error {
	q := url.Values{}
	for _, name := range []string{"source", "status", "q", "search", "cursor", "since", "until", "upstream", "origin"} {
		if v, _ := cmd.Flags().GetString(name); v != "" {
			q.Set(name, v)
		}
	}
	limit, _ := cmd.Flags().GetInt("limit")
	q.Set("limit", strconv.Itoa(limit))
	var out struct {
		Events []eventRow `json:"events"`
		Next   string     `json:"next_cursor"`
	}
	if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/events", q, &out); err != nil || printed {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tRECEIVED\tSOURCE\tSTATUS\tDELIVERIES\tDEDUP KEY")
	for _, e := range out.Events {
		deliveries := ""
		for i, d := range e.Deliveries {
			if i > 0 {
				deliveries += " "
			}
			deliveries += fmt.Sprintf("%s:%s(%d)", d.Upstream, d.State, d.Attempts)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.ReceivedAt.Local().Format("2006-01-02 15:04:05"), e.Source, e.Status, orDash(deliveries), orDash(e.DedupKey))
	}
	w.Flush()
	if out.Next != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "more: --cursor %s\n", out.Next)
	}
	return nil
}

func replayCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay [--status dead] [--source S] [--upstream U] [--since 24h] [--until T] [--dry-run]",
		Short: "Replays matching deliveries in bulk, page by page, with progress; --dry-run shows the plan first",
		Args:  args(cobra.NoArgs),
		RunE:  run(runBulkReplay),
	}
	addAdminFlags(cmd)
	cmd.Flags().String("status", "dead", "states to replay: dead, delivered, canceled (comma-separated)")
	cmd.Flags().String("source", "", "only this source")
	cmd.Flags().String("upstream", "", "only this upstream")
	cmd.Flags().String("since", "", "events received since (RFC 3339 or a duration ago)")
	cmd.Flags().String("until", "", "events received until")
	cmd.Flags().Int("page", 1000, "deliveries per request")
	cmd.Flags().Bool("dry-run", false, "count what a replay would touch, per upstream, with a sample of events; replay nothing")
	return cmd
}

// replayPlan prints what a bulk replay with the same filters would touch:
// the deliveries per upstream, up to 10,000, and a sample of events.
func replayPlan(cmd *cobra.Command, c *adminClient, q url.Values) error {
	q.Set("dry_run", "1")
	q.Set("limit", "10000")
	var out struct {
		Would      int            `json:"would_replay"`
		ByUpstream map[string]int `json:"by_upstream"`
		Sample     []string       `json:"sample"`
		More       bool           `json:"more"`
	}
	if printed, err := c.viewPost(cmd, "/hookgate/replay", q, &out); err != nil || printed {
		return err
	}
	w := cmd.OutOrStdout()
	more := ""
	if out.More {
		more = " (at least: the plan counts the first 10,000)"
	}
	fmt.Fprintf(w, "would replay %d deliveries%s\n", out.Would, more)
	for _, u := range slices.Sorted(maps.Keys(out.ByUpstream)) {
		fmt.Fprintf(w, "  %s: %d\n", u, out.ByUpstream[u])
	}
	if len(out.Sample) > 0 {
		fmt.Fprintf(w, "for example: %s\n", strings.Join(out.Sample, ", "))
	}
	fmt.Fprintln(w, "run it again without --dry-run to replay them")
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
	q.Set("limit", strconv.Itoa(page))
	if dry, _ := cmd.Flags().GetBool("dry-run"); dry {
		return replayPlan(cmd, c, q)
	}
	total, pages := 0, 0
	for {
		var out struct {
			Replayed int    `json:"replayed"`
			Next     string `json:"next"`
		}
		if _, err := c.call(http.MethodPost, "/hookgate/replay", q, &out); err != nil {
			return exitWith(exitCode(err), fmt.Errorf("after %d replayed: %w (resume with the same filters)", total, err))
		}
		total += out.Replayed
		pages++
		fmt.Fprintf(cmd.ErrOrStderr(), "\rreplayed %d deliveries (%d pages)", total, pages)
		if out.Next == "" {
			break
		}
		q.Set("after", out.Next)
	}
	fmt.Fprintln(cmd.ErrOrStderr())
	fmt.Fprintf(cmd.OutOrStdout(), "replayed: %d\n", total)
	return nil
}

func statsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Shows counters: received, rejected, duplicates, pending, dead, oldest pending age",
		Args:  args(cobra.NoArgs),
		RunE:  run(runStats),
	}
	addAdminFlags(cmd)
	return cmd
}

func runStats(cmd *cobra.Command, _ []string) error {
	var st caddymodule.StatsView
	if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/stats", nil, &st); err != nil || printed {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "store %s: %d events (%d unrouted, %d quarantined)\n", st.Store, st.Events, st.Unrouted, st.Quarantined)
	fmt.Fprintf(out, "deliveries: %d pending, %d delivered, %d dead, %d canceled; oldest pending %s\n",
		st.Pending, st.Delivered, st.Dead, st.Canceled, seconds(st.Oldest))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "UPSTREAM\tPENDING\tDELIVERED\tDEAD\tOLDEST PENDING\tBREAKER")
	for _, name := range sortedKeys(st.Upstreams) {
		u := st.Upstreams[name]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\n", name, u.Pending, u.Delivered, u.Dead, seconds(u.OldestPendingSeconds), orDash(st.Breakers[name]))
	}
	w.Flush()
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SOURCE\tEVENTS\tSTORED\tBODIES")
	for _, name := range sortedKeys(st.Sources) {
		s := st.Sources[name]
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", name, s.Events, humanize.IBytes(uint64(s.Bytes)), humanize.IBytes(uint64(s.BodyBytes)))
	}
	w.Flush()
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SOURCE\tOUTCOME\tREQUESTS")
	for _, src := range sortedKeys(st.Requests) {
		for _, outcome := range sortedKeys(st.Requests[src]) {
			fmt.Fprintf(w, "%s\t%s\t%.0f\n", src, outcome, st.Requests[src][outcome])
		}
	}
	return w.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// eventDetail is what events show prints of an event.
type eventDetail struct {
	ID          string              `json:"id"`
	Source      string              `json:"source"`
	Status      string              `json:"status"`
	Origin      string              `json:"origin"`
	Secret      int                 `json:"secret"`
	ReceivedAt  time.Time           `json:"received_at"`
	Method      string              `json:"method"`
	Path        string              `json:"path"`
	Query       string              `json:"query"`
	RemoteAddr  string              `json:"remote_addr"`
	DedupKey    string              `json:"dedup_key"`
	Quarantined string              `json:"quarantined"`
	Search      map[string]string   `json:"search"`
	Headers     map[string][]string `json:"headers"`
	Body        string              `json:"body"`
	BodyBase64  bool                `json:"body_base64"`
	Deliveries  []struct {
		Upstream string    `json:"upstream"`
		Route    string    `json:"route"`
		State    string    `json:"state"`
		NextAt   time.Time `json:"next_at"`
		History  []struct {
			N        int           `json:"n"`
			At       time.Time     `json:"at"`
			Status   int           `json:"status"`
			Duration time.Duration `json:"duration_ns"`
			Error    string        `json:"error"`
			Response string        `json:"response"`
		} `json:"history"`
	} `json:"deliveries"`
}

// print writes the event for a person: durations as durations, the body
// indented when it is JSON.
func (e eventDetail) print(out io.Writer) {
	fmt.Fprintf(out, "event %s  %s  %s\n", e.ID, e.Source, e.Status)
	fmt.Fprintf(out, "received %s from %s, origin %s, verified with secret %d\n", e.ReceivedAt.Local().Format("2006-01-02 15:04:05.000 MST"), orDash(e.RemoteAddr), e.Origin, e.Secret)
	if e.DedupKey != "" {
		fmt.Fprintf(out, "dedup key %s\n", e.DedupKey)
	}
	if e.Quarantined != "" {
		fmt.Fprintf(out, "quarantined: %s\n", e.Quarantined)
	}
	for _, name := range sortedKeys(e.Search) {
		fmt.Fprintf(out, "search %s: %s\n", name, e.Search[name])
	}
	target := e.Path
	if e.Query != "" {
		target += "?" + e.Query
	}
	fmt.Fprintf(out, "\n%s %s\n", e.Method, target)
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		fmt.Fprintf(out, "%s: %s\n", k, strings.Join(e.Headers[k], ", "))
	}
	body := e.Body
	var indented bytes.Buffer
	if !e.BodyBase64 && json.Indent(&indented, []byte(body), "", "  ") == nil {
		body = indented.String()
	} else if e.BodyBase64 {
		body = "(binary, base64) " + body
	}
	fmt.Fprintf(out, "\n%s\n", body)
	if len(e.Deliveries) == 0 {
		fmt.Fprintf(out, "\nno deliveries: the event is %s\n", e.Status)
	}
	for _, d := range e.Deliveries {
		fmt.Fprintf(out, "\n→ %s (route %s): %s", d.Upstream, orDash(d.Route), d.State)
		if d.State == "pending" && !d.NextAt.IsZero() {
			fmt.Fprintf(out, ", next attempt %s", d.NextAt.Local().Format("15:04:05"))
		}
		fmt.Fprintln(out)
		for _, a := range d.History {
			status := strconv.Itoa(a.Status)
			if a.Status == 0 {
				status = "no answer"
			}
			line := fmt.Sprintf("  attempt %d  %s  %s  %s", a.N, a.At.Local().Format("15:04:05.000"), status, a.Duration.Round(100*time.Microsecond))
			if a.Error != "" {
				line += "  " + a.Error
			}
			fmt.Fprintln(out, line)
			if a.Response != "" {
				fmt.Fprintf(out, "    answered: %s\n", strings.ReplaceAll(a.Response, "\n", " "))
			}
		}
	}
}
