package hookgatecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// The operator's commands talk to the admin API, as `caddy reload` does.

// addAdminFlags adds what every admin API command takes: where the API
// is, which store when several are live, and JSON output.
func addAdminFlags(cmd *cobra.Command) {
	def := "localhost:2019"
	if v := os.Getenv("HOOKGATE_ADMIN"); v != "" {
		def = v
	}
	cmd.Flags().String("address", def, "Caddy's admin endpoint (or HOOKGATE_ADMIN)")
	addStoreFlag(cmd, "the store file to act on, when several are live")
	cmd.Flags().Bool("json", false, "print the API's JSON")
}

// addStoreFlag adds --store, the one flag that names a store file.
func addStoreFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().String("store", "", usage)
}

// adminClient calls the admin API.
type adminClient struct {
	// base is the URL requests go to; where names the endpoint in messages.
	base, where string
	store       string
	// transport reaches the endpoint: over TCP, or a Unix socket (socket).
	transport *http.Transport
	socket    bool
	http      *http.Client
}

// newAdminClient reaches the admin endpoint --address names, in Caddy's
// forms: host:port, http://host:port, or unix//path/to/socket.
func newAdminClient(cmd *cobra.Command) *adminClient {
	addr, _ := cmd.Flags().GetString("address")
	st, _ := cmd.Flags().GetString("store")
	c := &adminClient{where: addr, store: st, transport: http.DefaultTransport.(*http.Transport).Clone()}
	if socket, ok := unixSocket(addr); ok {
		// Caddy's admin endpoint takes this Host on a socket.
		c.base, c.socket = "http://127.0.0.1", true
		c.transport.Proxy = nil
		c.transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}
	} else {
		if !strings.Contains(addr, "://") {
			addr = "http://" + addr
		}
		c.base = strings.TrimSuffix(addr, "/")
		c.where = c.base
	}
	c.http = &http.Client{Timeout: 60 * time.Second, Transport: c.transport}
	return c
}

// unixSocket is the socket of an address in Caddy's unix//path form, which
// may end in |mode.
func unixSocket(addr string) (string, bool) {
	path, ok := strings.CutPrefix(addr, "unix/")
	if !ok {
		return "", false
	}
	path, _, _ = strings.Cut(path, "|")
	return path, true
}

// apiStatusCode is the exit code for an admin API answer that is not 2xx.
func apiStatusCode(status int) int {
	switch {
	case status == http.StatusNotFound:
		return ExitNotFound
	case status == http.StatusServiceUnavailable:
		return ExitUnreachable
	case status >= 400 && status < 500:
		return ExitRefused
	}
	return ExitFailed
}

// call sends a request and decodes the JSON answer into out; it returns
// the body as it came.
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
		return nil, exitWith(ExitUsage, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, exitWith(ExitUnreachable, fmt.Errorf("admin API at %s: %w", c.where, err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return raw, exitWith(apiStatusCode(resp.StatusCode), apiError(raw, resp.Status))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, fmt.Errorf("admin API at %s: %w", c.where, err)
		}
	}
	return raw, nil
}

// apiError is the error an admin API answer carries, or its status.
func apiError(body []byte, status string) error {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s", e.Error)
	}
	return fmt.Errorf("admin API answered %s", status)
}

// view GETs an admin path into out; with --json it prints the answer as it
// came instead, and reports that it did.
func (c *adminClient) view(cmd *cobra.Command, path string, query url.Values, out any) (printed bool, err error) {
	raw, err := c.call(http.MethodGet, path, query, out)
	if err != nil {
		return false, err
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		printJSON(cmd, raw)
		return true, nil
	}
	return false, nil
}

// viewPost is view for a POST that changes nothing (a dry run).
func (c *adminClient) viewPost(cmd *cobra.Command, path string, query url.Values, out any) (printed bool, err error) {
	raw, err := c.call(http.MethodPost, path, query, out)
	if err != nil {
		return false, err
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		printJSON(cmd, raw)
		return true, nil
	}
	return false, nil
}

// act POSTs or DELETEs, then prints the answer as JSON with --json, or
// hands it to show.
func (c *adminClient) act(cmd *cobra.Command, method, path string, query url.Values, out any, show func()) error {
	raw, err := c.call(method, path, query, out)
	if err != nil {
		return err
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		printJSON(cmd, raw)
		return nil
	}
	show()
	return nil
}

func printJSON(cmd *cobra.Command, raw []byte) {
	w := cmd.OutOrStdout()
	w.Write(raw)
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		fmt.Fprintln(w)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// seconds turns the API's second counts into a duration to print.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}
