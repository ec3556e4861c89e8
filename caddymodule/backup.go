package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	bolt "go.etcd.io/bbolt"
)

func init() {
	registerSubcommand(caddycmd.Command{
		Name:  "backup",
		Usage: "--to <file> [--force] [--address host:port] [--store <path>]",
		Short: "Copies a consistent snapshot of a running gateway's store to a file",
		Long: `
Downloads a snapshot of the live bbolt store from the admin API
(GET /hookgate/backup) while the gateway keeps taking and delivering events.
The snapshot is one read transaction: it holds every event ACKed before the
backup began, nothing half-written.

The copy goes to <file>.tmp in the same folder, is synced to disk, checked
(its length against the size the gateway announced, then opened read-only
and walked with bbolt's consistency check), and only then renamed to <file>,
and the folder synced. An existing <file> is kept unless --force.

To restore: stop the gateway, put the file where its storage is (storage.path
in routes.yaml, the Caddyfile's storage, or Caddy's data dir/hookgate/hookgate.db),
start it. The JetStream store is backed up with NATS instead (nats stream backup).`,
		CobraFunc: func(cmd *cobra.Command) {
			addAdminFlags(cmd)
			cmd.Flags().String("to", "", "file to write the snapshot to")
			cmd.Flags().Bool("force", false, "replace an existing file (and a <file>.tmp left by an interrupted backup)")
			cmd.RunE = runBackup
		},
	})
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
		return fmt.Errorf("--to <file> is required")
	}
	to, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	if _, err := os.Stat(to); err == nil && !force {
		return fmt.Errorf("%s exists; --force replaces it", to)
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
		printJSON(out)
		return nil
	}
	fmt.Printf("backed up %s to %s: %d bytes, %d events, in %s\n", res.Store, res.File, res.Bytes, res.Events, time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond))
	return nil
}

// downloadBackup writes the snapshot to to+".tmp", syncs and checks it,
// renames it to to and syncs the folder. On any failure the temporary file
// is removed and to is left as it was.
func downloadBackup(c *adminClient, to string, force bool) (res backupResult, err error) {
	tmp := to + ".tmp"
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(tmp, flags, 0o600) // a backup holds bodies and secrets
	if errors.Is(err, os.ErrExist) {
		return res, fmt.Errorf("%s exists: another backup is writing it, or one was interrupted (--force replaces it)", tmp)
	}
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()

	u := c.base + "/hookgate/backup"
	if c.store != "" {
		u += "?" + url.Values{"store": {c.store}}.Encode()
	}
	// No overall timeout: a large store takes as long as it takes. The
	// transport bounds the wait for the gateway to start answering.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: time.Minute}}
	resp, err := client.Get(u)
	if err != nil {
		return res, fmt.Errorf("admin API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return res, fmt.Errorf("backup: %s", e.Error)
		}
		return res, fmt.Errorf("backup: admin API answered %s", resp.Status)
	}
	if resp.ContentLength < 0 {
		return res, fmt.Errorf("backup: the admin API sent no length; cannot tell a complete copy (is %s a Hookgate gateway?)", c.base)
	}
	res.Store, res.File = resp.Header.Get("Hookgate-Store"), to
	res.Bytes, err = io.Copy(f, resp.Body)
	if err != nil {
		return res, fmt.Errorf("backup: after %d of %d bytes: %w", res.Bytes, resp.ContentLength, err)
	}
	if res.Bytes != resp.ContentLength {
		return res, fmt.Errorf("backup: incomplete, %d of %d bytes", res.Bytes, resp.ContentLength)
	}
	if err = f.Sync(); err != nil {
		return res, fmt.Errorf("backup: syncing %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return res, fmt.Errorf("backup: closing %s: %w", tmp, err)
	}
	if res.Events, err = checkBackup(tmp); err != nil {
		return res, err
	}
	if err = os.Rename(tmp, to); err != nil {
		return res, err
	}
	return res, syncDir(filepath.Dir(to))
}

// checkBackup opens a downloaded snapshot read-only, walks it with bbolt's
// consistency check and makes sure it is a Hookgate store; it returns how
// many events it holds.
func checkBackup(path string) (events int, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return 0, fmt.Errorf("backup: the copy does not open as a bbolt file: %w", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		var bad error
		for err := range tx.Check() { // drained: Check's walker sends every error
			if bad == nil {
				bad = fmt.Errorf("backup: the copy fails bbolt's check: %w", err)
			}
		}
		if bad != nil {
			return bad
		}
		// The store's layout (internal/store): a meta bucket with the
		// schema version, events keyed by id.
		meta, evs := tx.Bucket([]byte("meta")), tx.Bucket([]byte("events"))
		if meta == nil || meta.Get([]byte("version")) == nil || evs == nil {
			return errors.New("backup: the copy is a bbolt file but not a Hookgate store")
		}
		events = evs.Stats().KeyN
		return nil
	})
	return events, err
}

// syncDir makes a rename in dir durable. Windows cannot sync a folder: there
// the rename is as durable as NTFS makes it.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("backup: syncing folder %s: %w", dir, err)
	}
	return nil
}
