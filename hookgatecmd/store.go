package hookgatecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	natsstore "github.com/hookgate/hookgate/internal/store/jetstream"
)

// Offline maintenance of a store file: the gateway that uses it is
// stopped, or the file's lock refuses the command.

// storeFlag is --store, or the flag it replaced, which still works.
func storeFlag(cmd *cobra.Command, former string) string {
	path, _ := cmd.Flags().GetString("store")
	if path == "" {
		path, _ = cmd.Flags().GetString(former)
	}
	return path
}

// addFormerStoreFlag keeps a flag --store replaced working, hidden.
func addFormerStoreFlag(cmd *cobra.Command, name string) {
	cmd.Flags().String(name, "", "the store file")
	cmd.Flags().MarkDeprecated(name, "use --store")
	exclusive(cmd, "store", name)
}

func compactCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compact [--store <hookgate.db>]",
		Short: "Compacts the store file offline, returning free pages to the disk",
		Long: `
Copies the bbolt store into a new file without its free pages, then swaps it
in place of the original. The gateway must be stopped: a running gateway
holds the file's lock and the command refuses to run.`,
		Args: args(cobra.NoArgs),
		RunE: run(runCompact),
	}
	addStoreFlag(cmd, "the store file (default: Caddy's data dir/hookgate/hookgate.db)")
	addFormerStoreFlag(cmd, "storage")
	return cmd
}

// openFailure is the exit code of a store that would not open: not there,
// or held by a running gateway.
func openFailure(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return exitWith(ExitNotFound, err)
	}
	return exitWith(ExitRefused, fmt.Errorf("opening %s (is the gateway still running?): %w", path, err))
}

func runCompact(cmd *cobra.Command, _ []string) error {
	path := storeFlag(cmd, "storage")
	if path == "" {
		path = caddymodule.DefaultStorePath()
	}
	before, err := os.Stat(path)
	if err != nil {
		return exitWith(ExitNotFound, err)
	}
	tmp := path + ".compact"
	os.Remove(tmp)
	bolt.RemoveBodyLog(tmp)
	if err := bolt.Compact(tmp, path); err != nil {
		os.Remove(tmp)
		bolt.RemoveBodyLog(tmp)
		return exitWith(ExitRefused, fmt.Errorf("compacting %s (is the gateway still running?): %w", path, err))
	}
	// The copy's body log links the original's segments, which stay in place.
	if err := bolt.RemoveBodyLog(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if err := bolt.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("compact: syncing the store's folder: %w", err)
	}
	after, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "compacted %s: %d bytes -> %d bytes\n", path, before.Size(), after.Size())
	return nil
}

func migrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate [--store <hookgate.db>] (--routes <routes.yaml> | --config <Caddyfile> [--adapter <name>])",
		Short: "Moves the pending events of a bbolt store into the JetStream store",
		Long: `
Copies every event that still has a pending delivery from a bbolt store file
into the JetStream store named by storage.jetstream in the routes file. Each
event keeps its id, headers, body and delivery history; its pending
deliveries are queued with a fresh retry budget. Events already in JetStream
are skipped, so an interrupted migration can be run again. The gateway that
used the file must be stopped: it holds the file's lock.

The routes file is named with --routes, or found through Caddy's config:
--config (and --adapter) as for 'caddy run', the adjacent Caddyfile when
neither is given. Its webhook_gateway handler gives the gateway's
configuration and, with its storage option, the default for --store. (A
.yaml file given to --config without --adapter is read as a routes file, as
older versions did.)`,
		Args: args(cobra.NoArgs),
		RunE: run(runMigrate),
	}
	addStoreFlag(cmd, "the bbolt store file (default: the handler's storage, else Caddy's data dir/hookgate/hookgate.db)")
	addFormerStoreFlag(cmd, "from")
	addRoutesFlag(cmd)
	cmd.Flags().StringP("config", "c", "", "Caddy's config file, whose webhook_gateway handler gives the configuration")
	cmd.Flags().StringP("adapter", "a", "", "name of the config adapter to use, as for 'caddy run'")
	exclusive(cmd, "routes", "config")
	exclusive(cmd, "routes", "adapter")
	return cmd
}

// migrationSource is what migrate moves from and to: the bbolt file and
// the configuration whose storage.jetstream receives its events.
func migrationSource(cmd *cobra.Command) (from string, cfg *config.Routes, name string, err error) {
	from = storeFlag(cmd, "from")
	routes, _ := cmd.Flags().GetString("routes")
	caddyConfig, _ := cmd.Flags().GetString("config")
	adapter, _ := cmd.Flags().GetString("adapter")
	if routes == "" && adapter == "" && isYAMLFile(caddyConfig) {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: --config names Caddy's config; reading %s as a routes file (use --routes)\n", caddyConfig)
		routes = caddyConfig
	}
	if routes != "" {
		_, cfg, err = loadRoutes(routes, false)
		name = routes
	} else {
		var gw caddyGateway
		gw, err = gatewayFromCaddyConfig(caddyConfig, adapter)
		cfg, name = gw.cfg, gw.name
		if from == "" {
			from = gw.storage
		}
	}
	if from == "" {
		from = caddymodule.DefaultStorePath()
	}
	return from, cfg, name, err
}

func runMigrate(cmd *cobra.Command, _ []string) error {
	from, cfg, routes, err := migrationSource(cmd)
	if err != nil {
		return err
	}
	js := cfg.Storage.JetStream
	if js == nil {
		return usageError("%s has no storage.jetstream to migrate to", routes)
	}
	if _, err := os.Stat(from); err != nil {
		return exitWith(ExitNotFound, err)
	}
	src, err := bolt.Open(from, bolt.Options{OpenTimeout: 3 * time.Second})
	if err != nil {
		return openFailure(from, err)
	}
	defer src.Close()
	dst, err := natsstore.Open(natsstore.Options{URL: string(js.URL), Stream: js.Stream, Replicas: js.Replicas,
		Credentials: string(js.Credentials), Retention: cfg.Storage.Retention.Std()})
	if err != nil {
		return exitWith(ExitUnreachable, err)
	}
	defer dst.Close()
	moved, skipped, deliveries := 0, 0, 0
	err = src.EachPending(func(rec *store.EventRecord, bodies map[uint16][]byte) error {
		ok, err := dst.Import(context.Background(), rec, bodies)
		if err != nil {
			return fmt.Errorf("event %s: %w", rec.Event.ID, err)
		}
		if !ok {
			skipped++
			return nil
		}
		moved++
		for _, d := range rec.Deliveries {
			if d.State == store.StatePending {
				deliveries++
			}
		}
		return nil
	})
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "migrated %d events with %d pending deliveries from %s to %s (%d already there)\n", moved, deliveries, from, dst.Path(), skipped)
	if err != nil {
		return err
	}
	carried, kept, err := migrateSecrets(cmd, src, dst)
	fmt.Fprintf(out, "carried %d learned secrets (%d already there)\n", carried, kept)
	return err
}

func isYAMLFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// caddyGateway is the webhook_gateway handler of a Caddy config: its
// configuration, loaded as the handler loads it, and its storage override.
type caddyGateway struct {
	cfg     *config.Routes
	name    string // what the configuration is called in messages
	storage string
}

// webhookGateways finds the webhook_gateway handlers anywhere in a Caddy
// JSON config, each as JSON with sorted keys, so equal handlers are equal
// bytes.
func webhookGateways(tree any) []json.RawMessage {
	var found []json.RawMessage
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "webhook_gateway" {
				b, _ := json.Marshal(v)
				found = append(found, b)
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(tree)
	return found
}

// gatewayFromCaddyConfig loads Caddy's config as 'caddy run' would (the
// adjacent Caddyfile when file is empty) and returns its webhook_gateway
// handler. Several handlers must carry the same configuration.
func gatewayFromCaddyConfig(file, adapter string) (caddyGateway, error) {
	raw, used, _, err := caddycmd.LoadConfig(file, adapter)
	if err != nil {
		return caddyGateway{}, err
	}
	if used == "" {
		return caddyGateway{}, usageError("no routes file: give --routes <routes.yaml> or --config <Caddyfile>")
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return caddyGateway{}, fmt.Errorf("%s: %w", used, err)
	}
	found := webhookGateways(tree)
	switch {
	case len(found) == 0:
		return caddyGateway{}, exitWith(ExitNotFound, fmt.Errorf("%s has no webhook_gateway handler; give --routes", used))
	case slices.ContainsFunc(found[1:], func(b json.RawMessage) bool { return !bytes.Equal(b, found[0]) }):
		return caddyGateway{}, usageError("%s has several webhook_gateway handlers with different configurations; give --routes and --store", used)
	}
	var h caddymodule.Handler
	if err := json.Unmarshal(found[0], &h); err != nil {
		return caddyGateway{}, fmt.Errorf("%s: webhook_gateway: %w", used, err)
	}
	repl := caddy.NewReplacer()
	cfg, err := h.LoadConfig(repl)
	if err != nil {
		return caddyGateway{}, err
	}
	gw := caddyGateway{cfg: cfg, name: used}
	if h.Config != "" {
		gw.name = cfg.File
	}
	if h.Storage != "" {
		if gw.storage, err = repl.ReplaceOrErr(h.Storage, true, true); err != nil {
			return caddyGateway{}, fmt.Errorf("%s: webhook_gateway storage: %w", used, err)
		}
	}
	return gw, nil
}
