package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	natsstore "github.com/hookgate/hookgate/internal/store/jetstream"
	"github.com/hookgate/hookgate/internal/verify"
)

// The hookgate subcommands, one definition each.
func init() {
	registerSubcommand(caddycmd.Command{
		Name:  "validate-routes",
		Usage: "<routes.yaml> | --routes <routes.yaml>",
		Short: "Checks a routes.yaml without opening the store",
		Long: `
Loads and compiles a routes file as the gateway would, placeholders expanded
from this environment, and prints every problem as file:line:col: reason.
Exits non-zero when there is one.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Args = cobra.MaximumNArgs(1)
			addRoutesFlag(cmd)
			cmd.RunE = runValidateRoutes
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "route",
		Usage: "(<routes.yaml> | --routes <routes.yaml>) --source <name> --body <event.json> [--header 'K: V']... [--query k=v]...",
		Short: "Shows which rules an event matches and where it would go",
		Long: `
Evaluates a source's rules on an event without sending anything: prints each
rule's outcome, then every delivery with its shaping (path, headers,
transformed body). Signatures are not checked.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Args = cobra.MaximumNArgs(1)
			addRoutesFlag(cmd)
			cmd.Flags().String("source", "", "source name in routes.yaml")
			cmd.Flags().String("body", "", "file with the event body ('-' for stdin)")
			cmd.Flags().StringArray("header", nil, "request header 'Name: value' (repeatable)")
			cmd.Flags().StringArray("query", nil, "query parameter name=value (repeatable)")
			cmd.RunE = runExplainRoute
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "compact",
		Usage: "--storage <hookgate.db>",
		Short: "Compacts the store file offline, returning free pages to the disk",
		Long: `
Copies the bbolt store into a new file without its free pages, then swaps it
in place of the original. The gateway must be stopped: a running gateway
holds the file's lock and the command refuses to run.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("storage", "", "path of the store file (default: Caddy's data dir/hookgate/hookgate.db)")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(cmdCompact)
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "migrate",
		Usage: "[--from <hookgate.db>] (--routes <routes.yaml> | --config <Caddyfile> [--adapter <name>])",
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
configuration and, with its storage option, the default for --from. (A .yaml file given
to --config without --adapter is read as a routes file, as older versions
did.)`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("from", "", "path of the bbolt store file (default: the handler's storage, else Caddy's data dir/hookgate/hookgate.db)")
			addRoutesFlag(cmd)
			cmd.Flags().StringP("config", "c", "", "Caddy's config file, whose webhook_gateway handler gives the configuration")
			cmd.Flags().StringP("adapter", "a", "", "name of the config adapter to use, as for 'caddy run'")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(cmdMigrate)
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "providers",
		Usage: "[--json | --markdown]",
		Short: "Lists the provider presets",
		Long: `
Lists every preset usable as 'provider:' in routes.yaml, one per line: name,
signature headers, scheme, dedup key and handshakes. --json prints the full
definitions; --markdown prints the table kept in docs/providers.md.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().Bool("json", false, "print JSON")
			cmd.Flags().Bool("markdown", false, "print the Markdown table of docs/providers.md")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(cmdProviders)
		},
	})
	registerSubcommand(caddycmd.Command{
		Name:  "send",
		Usage: "--provider <name> (--secret <s> --url <url> | --routes <routes.yaml> --source <name>) [--body <file>] [--header 'K: V']",
		Short: "Sends a correctly signed test event to a running gateway",
		Long: `
Signs a sample event (or the body you give) the way the provider does and
POSTs it, as 'stripe trigger' does for Stripe. The secret and path can come
from flags or from a source in routes.yaml; --gateway sets the base URL used
with --routes (default http://localhost:8080).

Exits non-zero unless the gateway answers 2xx.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("provider", "", "preset name (hookgate providers lists them)")
			cmd.Flags().String("secret", "", "signing secret (the private key for public-key schemes)")
			cmd.Flags().String("url", "", "full URL of the webhook endpoint")
			cmd.Flags().String("routes", "", "routes.yaml to take the secret and path from")
			cmd.Flags().String("source", "", "source name in routes.yaml")
			cmd.Flags().String("gateway", "http://localhost:8080", "base URL of the gateway, with --routes")
			cmd.Flags().String("body", "", "file with the body to send instead of a sample ('-' for stdin)")
			cmd.Flags().StringArray("header", nil, "extra header 'Name: value' (repeatable)")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(cmdSend)
		},
	})
}

func runValidateRoutes(cmd *cobra.Command, args []string) error {
	routes, err := routesArg(cmd, args)
	if err != nil {
		return err
	}
	code, err := validateRoutes(routes)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code != 0 {
		os.Exit(code)
	}
	return nil
}

func runExplainRoute(cmd *cobra.Command, args []string) error {
	routes, err := routesArg(cmd, args)
	if err != nil {
		return err
	}
	return explainRoute(cmd, routes)
}

// addRoutesFlag adds --routes, the one flag that names a routes file in
// every command. (--config is Caddy's: the Caddyfile or JSON config.)
func addRoutesFlag(cmd *cobra.Command) {
	cmd.Flags().String("routes", "", "routes.yaml file")
}

// routesArg returns the routes file of a command that takes it as its one
// argument or with --routes.
func routesArg(cmd *cobra.Command, args []string) (string, error) {
	flag, _ := cmd.Flags().GetString("routes")
	switch {
	case len(args) == 1 && flag != "" && args[0] != flag:
		return "", fmt.Errorf("two routes files: %s and --routes %s", args[0], flag)
	case len(args) == 1:
		return args[0], nil
	case flag != "":
		return flag, nil
	}
	return "", fmt.Errorf("name the routes file: %s <routes.yaml> or --routes <routes.yaml>", cmd.Name())
}

func loadRoutes(path string) (*ingest.Pipeline, *config.Routes, error) {
	repl := caddy.NewReplacer()
	cfg, err := config.Load(path, expandingPlaceholders(repl))
	if err != nil {
		return nil, nil, err
	}
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		return nil, cfg, err
	}
	return parts.Pipeline, cfg, nil
}

func validateRoutes(path string) (int, error) {
	p, cfg, err := loadRoutes(path)
	if err != nil {
		fmt.Println(err)
		return 1, nil
	}
	routes := 0
	for _, s := range cfg.Sources {
		routes += len(s.Routes)
	}
	fmt.Printf("%s: valid: %d sources, %d routes, %d upstreams\n", path, len(cfg.Sources), routes, len(cfg.Upstreams))
	fmt.Printf("claimed prefixes (unknown paths under them get 404): %s\n", strings.Join(orNone(p.Claimed()), ", "))
	unclaimed := p.Unclaimed()
	slices.Sort(unclaimed)
	for _, sp := range unclaimed {
		fmt.Printf("warning: source path %s lies outside every claimed prefix: a mistyped path near it passes to the next handler unverified (set claim: in %s)\n", sp, path)
	}
	for _, l := range literalSecrets(cfg) {
		fmt.Printf("%s:%d:%d: warning: %s is a literal secret: the routes file is part of Caddy's configuration, so it shows in GET /config/ on the admin API, in autosave.json and in Caddy's DEBUG log; write {env.NAME} or {file.PATH} instead\n",
			path, l.At.Line, l.At.Col, l.What)
	}
	return 0, nil
}

// literalSecrets are the credentials written out in cfg, leaving out the
// secrets of presets whose secrets are public (public keys, SNS topics).
func literalSecrets(cfg *config.Routes) []config.Literal {
	public := map[string]bool{}
	for _, s := range cfg.Sources {
		if p, ok := verify.Lookup(s.Provider); ok && s.Provider != "" && !p.SecretsConfidential() {
			public[s.Name] = true
		}
	}
	var out []config.Literal
	for _, l := range cfg.Literals {
		if l.Source != "" && public[l.Source] && strings.HasSuffix(l.What, ".secrets") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

func explainRoute(cmd *cobra.Command, path string) error {
	fl := cmd.Flags()
	p, _, err := loadRoutes(path)
	if err != nil {
		return err
	}
	source, _ := fl.GetString("source")
	bodyPath, _ := fl.GetString("body")
	var body []byte
	switch bodyPath {
	case "":
		return fmt.Errorf("--body is required")
	case "-":
		body, err = io.ReadAll(os.Stdin)
	default:
		body, err = os.ReadFile(bodyPath)
	}
	if err != nil {
		return fmt.Errorf("reading body: %w", err)
	}
	headers := map[string]string{}
	rawHeaders, _ := fl.GetStringArray("header")
	for _, h := range rawHeaders {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("header %q: want 'Name: value'", h)
		}
		headers[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
	}
	query := map[string]string{}
	rawQuery, _ := fl.GetStringArray("query")
	for _, q := range rawQuery {
		name, value, _ := strings.Cut(q, "=")
		query[name] = value
	}
	ex, err := p.Explain(source, headers, query, body)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "source %s (provider %s)\n", ex.Source, orDash(ex.Provider))
	if ex.BodyErr != nil {
		fmt.Fprintf(out, "  body: %v; rules that read it do not match\n", ex.BodyErr)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, r := range ex.Rules {
		outcome := "no match"
		switch {
		case r.Err != nil:
			outcome = "error (no match): " + r.Err.Error()
		case r.Matched:
			outcome = "match"
		}
		fmt.Fprintf(w, "  rule %s\t%s\n", r.Name, outcome)
	}
	w.Flush()
	if len(ex.Targets) == 0 {
		fmt.Fprintln(out, "deliveries: none (the event would be stored as unrouted)")
		return nil
	}
	fmt.Fprintln(out, "deliveries:")
	for _, t := range ex.Targets {
		fmt.Fprintf(out, "  -> %s (route %s)", t.Upstream, t.Route)
		if t.Path != "" {
			fmt.Fprintf(out, " path %s", t.Path)
		}
		if t.OrderKey != "" {
			fmt.Fprintf(out, " ordering key %q", t.OrderKey)
		}
		fmt.Fprintln(out)
		for k, v := range t.SetHeaders {
			fmt.Fprintf(out, "       set header %s: %s\n", k, v)
		}
		for _, h := range t.RemoveHeaders {
			fmt.Fprintf(out, "       remove header %s\n", h)
		}
		if t.Body != nil {
			fmt.Fprintf(out, "       body: %s\n", t.Body)
		}
	}
	return nil
}

func cmdCompact(fl caddycmd.Flags) (int, error) {
	path := fl.String("storage")
	if path == "" {
		path = defaultStorePath()
	}
	before, err := os.Stat(path)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	tmp := path + ".compact"
	os.Remove(tmp)
	bolt.RemoveBodyLog(tmp)
	if err := bolt.Compact(tmp, path); err != nil {
		os.Remove(tmp)
		bolt.RemoveBodyLog(tmp)
		return caddy.ExitCodeFailedStartup, fmt.Errorf("compacting %s (is the gateway still running?): %w", path, err)
	}
	// The copy's body log links the original's segments, which stay in place.
	if err := bolt.RemoveBodyLog(tmp); err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	if err := bolt.SyncDir(filepath.Dir(path)); err != nil {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("compact: syncing the store's folder: %w", err)
	}
	after, err := os.Stat(path)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	fmt.Printf("compacted %s: %d bytes -> %d bytes\n", path, before.Size(), after.Size())
	return caddy.ExitCodeSuccess, nil
}

func cmdMigrate(fl caddycmd.Flags) (int, error) {
	from, routes := fl.String("from"), fl.String("routes")
	caddyConfig, adapter := fl.String("config"), fl.String("adapter")
	if routes != "" && (caddyConfig != "" || adapter != "") {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("give --routes or --config, not both")
	}
	if routes == "" && adapter == "" && isYAMLFile(caddyConfig) {
		// Older versions took the routes file with --config.
		fmt.Fprintf(os.Stderr, "note: --config names Caddy's config; reading %s as a routes file (use --routes)\n", caddyConfig)
		routes = caddyConfig
	}
	var cfg *config.Routes
	if routes != "" {
		_, c, err := loadRoutes(routes)
		if err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
		cfg = c
	} else {
		gw, err := gatewayFromCaddyConfig(caddyConfig, adapter)
		if err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
		cfg, routes = gw.cfg, gw.name
		if from == "" {
			from = gw.storage
		}
	}
	if from == "" {
		from = defaultStorePath()
	}
	js := cfg.Storage.JetStream
	if js == nil {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("%s has no storage.jetstream to migrate to", routes)
	}
	if _, err := os.Stat(from); err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	src, err := bolt.Open(from, bolt.Options{OpenTimeout: 3 * time.Second})
	if err != nil {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("opening %s (is the gateway still running?): %w", from, err)
	}
	defer src.Close()
	dst, err := natsstore.Open(natsstore.Options{URL: string(js.URL), Stream: js.Stream, Replicas: js.Replicas, Credentials: string(js.Credentials), Retention: cfg.Storage.Retention.Std()})
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
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
	fmt.Printf("migrated %d events with %d pending deliveries from %s to %s (%d already there)\n", moved, deliveries, from, dst.Path(), skipped)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	carried, kept, err := migrateSecrets(src, dst)
	fmt.Printf("carried %d learned secrets (%d already there)\n", carried, kept)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	return caddy.ExitCodeSuccess, nil
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

// gatewayFromCaddyConfig loads Caddy's config as 'caddy run' would (the
// adjacent Caddyfile when file is empty) and returns its webhook_gateway
// handler. Several handlers must carry the same configuration.
func gatewayFromCaddyConfig(file, adapter string) (caddyGateway, error) {
	raw, used, _, err := caddycmd.LoadConfig(file, adapter)
	if err != nil {
		return caddyGateway{}, err
	}
	if used == "" {
		return caddyGateway{}, fmt.Errorf("no routes file: give --routes <routes.yaml> or --config <Caddyfile>")
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return caddyGateway{}, fmt.Errorf("%s: %w", used, err)
	}
	var found []json.RawMessage
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "webhook_gateway" {
				b, _ := json.Marshal(v) // sorted keys: equal handlers are equal bytes
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
	switch {
	case len(found) == 0:
		return caddyGateway{}, fmt.Errorf("%s has no webhook_gateway handler; give --routes", used)
	case slices.ContainsFunc(found[1:], func(b json.RawMessage) bool { return !bytes.Equal(b, found[0]) }):
		return caddyGateway{}, fmt.Errorf("%s has several webhook_gateway handlers with different configurations; give --routes and --from", used)
	}
	var h Handler
	if err := json.Unmarshal(found[0], &h); err != nil {
		return caddyGateway{}, fmt.Errorf("%s: webhook_gateway: %w", used, err)
	}
	repl := caddy.NewReplacer()
	cfg, err := h.loadConfig(repl)
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

func cmdProviders(fl caddycmd.Flags) (int, error) {
	presets := verify.Presets()
	switch {
	case fl.Bool("json"):
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(presets); err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
	case fl.Bool("markdown"):
		fmt.Print(verify.MarkdownTable())
	default:
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tHEADERS\tSCHEME\tDEDUP KEY\tHANDSHAKES")
		for _, p := range presets {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Headers(), ", "), p.Summary(),
				p.DedupSummary(), orDash(strings.Join(p.HandshakeNames(), ", ")))
		}
		w.Flush()
	}
	return caddy.ExitCodeSuccess, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cmdSend(fl caddycmd.Flags) (int, error) {
	provider, secret, target := fl.String("provider"), fl.String("secret"), fl.String("url")
	if routes := fl.String("routes"); routes != "" {
		src, err := sourceFromRoutes(routes, fl.String("source"))
		if err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
		if provider == "" {
			provider = src.Provider
		}
		if secret == "" {
			if p, ok := verify.Lookup(provider); ok && p.Keys.Kind == verify.SecretPublicKey {
				return caddy.ExitCodeFailedStartup, fmt.Errorf("provider %s verifies with a public key; pass the private key with --secret", provider)
			}
			secret = src.Secrets[0]
		}
		if target == "" {
			target = strings.TrimSuffix(fl.String("gateway"), "/") + src.Path
		}
	}
	if provider == "" || secret == "" || target == "" {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("need --provider, --secret and --url (or --routes and --source)")
	}
	preset, ok := verify.Lookup(provider)
	if !ok {
		return caddy.ExitCodeFailedStartup, fmt.Errorf("unknown provider %q (close: %s)", provider, strings.Join(verify.Suggest(provider), ", "))
	}
	now := time.Now()
	sample, err := samples.Event(preset, secret, now)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	if path := fl.String("body"); path != "" {
		var body []byte
		if path == "-" {
			body, err = io.ReadAll(os.Stdin)
		} else {
			body, err = os.ReadFile(path)
		}
		if err != nil {
			return caddy.ExitCodeFailedStartup, fmt.Errorf("reading body: %w", err)
		}
		sample.Body = body
	}
	signed, err := samples.Sign(preset, secret, sample, target, now)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(sample.Body))
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	for _, h := range []http.Header{sample.Header, signed} {
		for k, v := range h {
			req.Header[k] = v
		}
	}
	extra, err := fl.GetStringArray("header")
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	for _, h := range extra {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return caddy.ExitCodeFailedStartup, fmt.Errorf("header %q: want 'Name: value'", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	fmt.Printf("%s %s\n", resp.Proto, resp.Status)
	for _, h := range []string{"Hookgate-Event-Id", "Hookgate-Duplicate"} {
		if v := resp.Header.Get(h); v != "" {
			fmt.Printf("%s: %s\n", h, v)
		}
	}
	fmt.Printf("\n%s", answer)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 1, fmt.Errorf("gateway answered %s", resp.Status)
	}
	return caddy.ExitCodeSuccess, nil
}

func sourceFromRoutes(path, name string) (*config.Source, error) {
	repl := caddy.NewReplacer()
	cfg, err := config.Load(path, expandingPlaceholders(repl))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range cfg.Sources {
		if s.Name == name {
			if s.Provider == "" {
				return nil, fmt.Errorf("source %s uses a declarative scheme; send needs a preset", name)
			}
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("no source %q in %s (sources: %s)", name, path, strings.Join(names, ", "))
}
