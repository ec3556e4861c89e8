package hookgatecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/internal/store/bolt"
)

func backupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup --to <file> [--force]",
		Short: "Copies a consistent snapshot of a running gateway's store to a file",
		Long: `
Downloads a snapshot of the live bbolt store from the admin API
(GET /hookgate/backup) while the gateway keeps taking and delivering events.
The snapshot is one read transaction: it holds every event ACKed before the
backup began, nothing half-written.

A store is its file and the folder of body segments beside it
(<store>.bodies), so a backup is too: <file> and <file>.bodies. The copy is
unpacked into a new folder of its own beside <file> (.hookgate-backup-*,
0700), synced to disk, checked (its length against the size the gateway
announced, then opened read-only, walked with bbolt's consistency check, and
every body read against its checksum), and only then renamed to <file> and
<file>.bodies, and the folder synced. An existing <file> is kept unless
--force.

To restore: stop the gateway, put <file> where its storage is (storage.path
in routes.yaml, the Caddyfile's storage, or Caddy's data dir/hookgate/hookgate.db)
and <file>.bodies beside it as <storage>.bodies, start it. The JetStream
store is backed up with NATS instead (nats stream backup).`,
		Args: args(cobra.NoArgs),
		RunE: run(runBackup),
	}
	addAdminFlags(cmd)
	cmd.Flags().String("to", "", "file to write the snapshot to")
	cmd.Flags().Bool("force", false, "replace an existing file")
	return cmd
}

// backupResult is what `hookgate backup --json` prints.
type backupResult struct {
	File    string  `json:"file"`
	Store   string  `json:"store"`
	Bytes   int64   `json:"bytes"`
	Events  int     `json:"events"`
	Seconds float64 `json:"seconds"`
}

func runBackup(cmd *cobra.Command, _ []string) error {
	to, _ := cmd.Flags().GetString("to")
	force, _ := cmd.Flags().GetBool("force")
	asJSON, _ := cmd.Flags().GetBool("json")
	if to == "" {
		return usageError("--to <file> is required")
	}
	to, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	if _, err := os.Stat(to); err == nil && !force {
		return exitWith(ExitRefused, fmt.Errorf("%s exists; --force replaces it", to))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	started := time.Now()
	res, err := downloadBackup(newAdminClient(cmd), to, force)
	if err != nil {
		return err
	}
	res.Seconds = time.Since(started).Seconds()
	if asJSON {
		out, _ := json.MarshalIndent(res, "", "  ")
		printJSON(cmd, out)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s: %d bytes, %d events, in %s\n", res.Store, res.File, res.Bytes, res.Events, time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond))
	return nil
}

// downloadBackup unpacks the snapshot into a fresh folder of its own
// beside to (os.MkdirTemp, 0700, so nothing in it can have been planted),
// syncs and checks it, renames the store and its body log into place and
// syncs the folder. On any failure the working copy is removed and to is
// left as it was.
func downloadBackup(c *adminClient, to string, force bool) (res backupResult, err error) {
	work, err := os.MkdirTemp(filepath.Dir(to), ".hookgate-backup-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(work)
	tmp := filepath.Join(work, bolt.BackupFile) // a backup holds bodies and secrets: 0600 in a 0700 folder

	u := c.base + "/hookgate/backup"
	if c.store != "" {
		u += "?" + url.Values{"store": {c.store}}.Encode()
	}
	// No overall timeout: a large store takes as long as it takes. The
	// transport bounds the wait for the gateway to start answering.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if c.transport != nil {
		transport = c.transport.Clone()
	}
	transport.ResponseHeaderTimeout = time.Minute
	client := &http.Client{Transport: transport}
	resp, err := client.Get(u)
	if err != nil {
		return res, exitWith(ExitUnreachable, fmt.Errorf("admin API at %s: %w", c.where, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return res, exitWith(apiStatusCode(resp.StatusCode), fmt.Errorf("backup: %w", apiError(raw, resp.Status)))
	}
	if resp.ContentLength < 0 {
		return res, fmt.Errorf("backup: the admin API sent no length; cannot tell a complete copy (is %s a Hookgate gateway?)", c.where)
	}
	res.Store, res.File = resp.Header.Get("Hookgate-Store"), to
	counted := &countingReader{r: resp.Body}
	if err = bolt.Unpack(counted, tmp); err != nil {
		return res, fmt.Errorf("backup: after %d of %d bytes: %w", counted.n, resp.ContentLength, err)
	}
	// The archive's end may come before the announced length is read.
	if _, err = io.Copy(io.Discard, counted); err != nil {
		return res, fmt.Errorf("backup: after %d of %d bytes: %w", counted.n, resp.ContentLength, err)
	}
	if res.Bytes = counted.n; res.Bytes != resp.ContentLength {
		return res, fmt.Errorf("backup: incomplete, %d of %d bytes", res.Bytes, resp.ContentLength)
	}
	if res.Events, err = bolt.Check(tmp); err != nil {
		return res, fmt.Errorf("backup: the copy fails its check: %w", err)
	}
	if force {
		if err = bolt.RemoveBodyLog(to); err != nil {
			return res, err
		}
	}
	if err = os.Rename(tmp+".bodies", to+".bodies"); err != nil {
		return res, fmt.Errorf("backup: %w (--force replaces an existing copy)", err)
	}
	if err = os.Rename(tmp, to); err != nil {
		return res, err
	}
	if err := bolt.SyncDir(filepath.Dir(to)); err != nil {
		return res, fmt.Errorf("backup: syncing folder: %w", err)
	}
	return res, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
