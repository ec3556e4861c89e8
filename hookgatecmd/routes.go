package hookgatecmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/verify"
)

// addRoutesFlag adds --routes, the one flag that names a routes file in
// every command. (--config is Caddy's: the Caddyfile or JSON config.)
func addRoutesFlag(cmd *cobra.Command) {
	cmd.Flags().String("routes", "", "routes.yaml file")
}

// routesArg is the routes file, given as the argument or with --routes.
func routesArg(cmd *cobra.Command, a []string) (string, error) {
	flag, _ := cmd.Flags().GetString("routes")
	switch {
	case len(a) == 1 && flag != "" && flag != a[0]:
		return "", usageError("two routes files: %s and --routes %s", a[0], flag)
	case len(a) == 1:
		return a[0], nil
	case flag != "":
		return flag, nil
	}
	return "", usageError("name the routes file: %s <routes.yaml> or --routes <routes.yaml>", cmd.Name())
}

// loadRoutes reads and compiles a routes file as the gateway does,
// placeholders expanded from this environment; with noSecrets,
// credentials' placeholders are checked and left unresolved.
func loadRoutes(path string, noSecrets bool) (*ingest.Pipeline, *config.Routes, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, exitWith(ExitNotFound, err)
	}
	opts := caddymodule.PlaceholderOptions(caddy.NewReplacer())
	if noSecrets {
		opts = caddymodule.CheckOptions(caddy.NewReplacer())
	}
	cfg, err := config.Load(path, opts)
	if err != nil {
		return nil, nil, err
	}
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		return nil, cfg, err
	}
	return parts.Pipeline, cfg, nil
}

func validateRoutesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate-routes <routes.yaml> | --routes <routes.yaml>",
		Short: "Checks a routes.yaml without opening the store",
		Long: `
Loads and compiles a routes file as the gateway would, placeholders expanded
from this environment, and prints every problem as file:line:col: reason.
Exits 1 when there is one.

With --no-secrets, credentials written as placeholders (secrets, reconcile
credentials, provider_options, alert URLs) are checked for syntax and not
resolved, so a CI job can check a configuration whose secrets it cannot read;
the schemes those secrets make are then not built.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: run(runValidateRoutes),
	}
	addRoutesFlag(cmd)
	cmd.Flags().Bool("no-secrets", false, "check credentials' placeholders without resolving them")
	return cmd
}

func runValidateRoutes(cmd *cobra.Command, a []string) error {
	path, err := routesArg(cmd, a)
	if err != nil {
		return err
	}
	noSecrets, _ := cmd.Flags().GetBool("no-secrets")
	p, cfg, err := loadRoutes(path, noSecrets)
	if errors.Is(err, os.ErrNotExist) {
		return err
	}
	out := cmd.OutOrStdout()
	if err != nil {
		fmt.Fprintln(out, err)
		return &Error{Code: ExitFailed, Err: err, reported: true}
	}
	routes := 0
	for _, s := range cfg.Sources {
		routes += len(s.Routes)
	}
	fmt.Fprintf(out, "%s: valid: %d sources, %d routes, %d upstreams\n", path, len(cfg.Sources), routes, len(cfg.Upstreams))
	if noSecrets && len(cfg.Unresolved) > 0 {
		fmt.Fprintf(out, "not resolved (--no-secrets): the credentials of %s\n", strings.Join(unresolvedNames(cfg), ", "))
	}
	fmt.Fprintf(out, "claimed prefixes (unknown paths under them get 404): %s\n", strings.Join(orNone(p.Claimed()), ", "))
	unclaimed := p.Unclaimed()
	slices.Sort(unclaimed)
	for _, sp := range unclaimed {
		fmt.Fprintf(out, "warning: source path %s lies outside every claimed prefix: a mistyped path near it passes to the next handler unverified (set claim: in %s)\n", sp, path)
	}
	for _, l := range literalSecrets(cfg) {
		fmt.Fprintf(out, "%s:%d:%d: warning: %s is a literal secret: the routes file is part of Caddy's configuration, so it shows in GET /config/ on the admin API, in autosave.json and in Caddy's DEBUG log; write {env.NAME} or {file.PATH} instead\n",
			path, l.At.Line, l.At.Col, l.What)
	}
	return nil
}

// unresolvedNames names what --no-secrets left unresolved.
func unresolvedNames(cfg *config.Routes) []string {
	var out []string
	for name := range cfg.Unresolved {
		if name == "" {
			name = "alert targets"
		} else {
			name = "source " + name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
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

func routeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "route (<routes.yaml> | --routes <routes.yaml>) --source <name> --body <event.json> [--header 'K: V']... [--query k=v]...",
		Short: "Shows which rules an event matches and where it would go",
		Long: `
Evaluates a source's rules on an event without sending anything: prints each
rule's outcome, then every delivery with its shaping (path, headers,
transformed body). Signatures are not checked.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: run(runRoute),
	}
	addRoutesFlag(cmd)
	cmd.Flags().String("source", "", "source name in routes.yaml")
	cmd.Flags().String("body", "", "file with the event body ('-' for stdin)")
	cmd.Flags().StringArray("header", nil, "request header 'Name: value' (repeatable)")
	cmd.Flags().StringArray("query", nil, "query parameter name=value (repeatable)")
	return cmd
}

// readBody reads a --body argument: a file, or - for stdin.
func readBody(cmd *cobra.Command, path string) ([]byte, error) {
	var body []byte
	var err error
	if path == "-" {
		body, err = io.ReadAll(cmd.InOrStdin())
	} else {
		body, err = os.ReadFile(path)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, exitWith(ExitNotFound, fmt.Errorf("reading body: %w", err))
	}
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	return body, nil
}

// headerArgs reads repeated 'Name: value' arguments.
func headerArgs(raw []string) ([][2]string, error) {
	var out [][2]string
	for _, h := range raw {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, usageError("header %q: want 'Name: value'", h)
		}
		out = append(out, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	return out, nil
}

func runRoute(cmd *cobra.Command, a []string) error {
	path, err := routesArg(cmd, a)
	if err != nil {
		return err
	}
	fl := cmd.Flags()
	p, _, err := loadRoutes(path, false)
	if err != nil {
		return err
	}
	source, _ := fl.GetString("source")
	bodyPath, _ := fl.GetString("body")
	if bodyPath == "" {
		return usageError("--body is required")
	}
	body, err := readBody(cmd, bodyPath)
	if err != nil {
		return err
	}
	rawHeaders, _ := fl.GetStringArray("header")
	pairs, err := headerArgs(rawHeaders)
	if err != nil {
		return err
	}
	headers := map[string]string{}
	for _, h := range pairs {
		headers[strings.ToLower(h[0])] = h[1]
	}
	query := map[string]string{}
	rawQuery, _ := fl.GetStringArray("query")
	for _, q := range rawQuery {
		name, value, _ := strings.Cut(q, "=")
		query[name] = value
	}
	ex, err := p.Explain(source, headers, query, body)
	if err != nil {
		return exitWith(ExitNotFound, err)
	}
	printExplanation(cmd.OutOrStdout(), ex)
	return nil
}

func printExplanation(out io.Writer, ex *ingest.Explanation) {
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
		return
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
}
