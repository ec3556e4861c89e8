package hookgatecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/samples"
	"github.com/hookgate/hookgate/internal/verify"
)

func providersCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "providers [--json | --markdown]",
		Short: "Lists the provider presets",
		Long: `
Lists every preset usable as 'provider:' in routes.yaml, one per line in 100
columns: name, provider, signature, dedup key and handshakes. --json prints
the full definitions; --markdown prints the table kept in docs/providers.md.`,
		Args: args(cobra.NoArgs),
		RunE: run(runProviders),
	}
	cmd.Flags().Bool("json", false, "print the full definitions as JSON")
	cmd.Flags().Bool("markdown", false, "print the Markdown table of docs/providers.md")
	exclusive(cmd, "json", "markdown")
	return cmd
}

// listingWidth is the width the provider listing fits in.
const listingWidth = 100

// providerColumn is a column of the provider listing. A width of 0 takes
// what the others leave, shared with the other such columns.
type providerColumn struct {
	title string
	width int
	cell  func(verify.Preset) string
}

// providerColumns are the listing's columns: the name is never cut, so its
// column is as wide as the longest.
func providerColumns(presets []verify.Preset) []providerColumn {
	name := len("NAME")
	for _, p := range presets {
		name = max(name, utf8.RuneCountInString(p.Name))
	}
	cols := []providerColumn{
		{"NAME", name, func(p verify.Preset) string { return p.Name }},
		{"PROVIDER", 0, func(p verify.Preset) string { provider, _, _ := strings.Cut(p.Description, ":"); return provider }},
		{"SIGNATURE", 0, signatureCell},
		{"DEDUP KEY", 0, dedupCell},
		{"HANDSHAKES", 14, handshakeCell},
	}
	left, shared := listingWidth-2*(len(cols)-1), 0
	for _, c := range cols {
		left -= c.width
		if c.width == 0 {
			shared++
		}
	}
	for i := range cols {
		if cols[i].width == 0 {
			cols[i].width = left / shared
		}
	}
	return cols
}

// signatureCell is a scheme's first words: its algorithm and encoding.
func signatureCell(p verify.Preset) string {
	scheme, _, _ := strings.Cut(p.Summary(), " over ")
	scheme, _, _ = strings.Cut(scheme, ",")
	return scheme
}

// handshakeCell names the handshakes a preset answers, without the
// preset's name they start with.
func handshakeCell(p verify.Preset) string {
	names := p.HandshakeNames()
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, p.Name+" ")
	}
	return orDash(strings.Join(names, ", "))
}

// dedupCell says in a few words what a preset deduplicates by.
func dedupCell(p verify.Preset) string {
	key := p.Dedup.Key
	switch {
	case p.Dedup.Scheme != "":
		return "the signed content"
	case key == "":
		return "body digest"
	case strings.HasPrefix(key, `headers["`) && strings.HasSuffix(key, `"]`) && !strings.Contains(key, " "):
		return "header " + strings.TrimSuffix(strings.TrimPrefix(key, `headers["`), `"]`)
	}
	return key
}

// fit cuts s to width runes, marking a cut with an ellipsis.
func fit(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

func runProviders(cmd *cobra.Command, _ []string) error {
	presets := verify.Presets()
	out := cmd.OutOrStdout()
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(presets)
	}
	if md, _ := cmd.Flags().GetBool("markdown"); md {
		_, err := fmt.Fprint(out, verify.MarkdownTable())
		return err
	}
	cols := providerColumns(presets)
	row := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", cols[i].width-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	row(titles)
	for _, p := range presets {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = fit(c.cell(p), c.width)
		}
		row(cells)
	}
	return nil
}

func keysCommand() *cobra.Command {
	newKeys := &cobra.Command{
		Use:   "new --provider <name> [--json]",
		Short: "Makes a test secret, or a key pair for a public-key scheme",
		Long: `
Prints a fresh secret for the provider's scheme: for a shared-secret scheme,
one value for routes.yaml's secrets: and send --secret; for a public-key
scheme, the public half for routes.yaml and the private half for
'hookgate send --secret'. For a scheme whose keys the gateway fetches
(google-pubsub, azure-event-grid, paypal, apple-app-store), it also prints
the provider_options that pin the test key in their place. For trials and
tests only: real keys come from the provider.`,
		Args: args(cobra.NoArgs),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			name, _ := cmd.Flags().GetString("provider")
			p, ok := verify.Lookup(name)
			if !ok {
				return exitWith(ExitNotFound, fmt.Errorf("unknown provider %q (close: %s)", name, strings.Join(verify.Suggest(name), ", ")))
			}
			secret, signing, err := verify.GenerateKeys(p)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			options := verify.TestKeyOptions(signing)
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"secret": secret, "signing_key": signing, "provider_options": options})
			}
			if secret == signing {
				fmt.Fprintf(out, "secret (routes.yaml secrets: and send --secret):\n%s\n", secret)
				return nil
			}
			fmt.Fprintf(out, "routes.yaml secrets:\n%s\n\nprivate key (send --secret):\n%s\n", secret, signing)
			if len(options) > 0 {
				// Fetched-key schemes verify the test key with what the source pins.
				fmt.Fprintf(out, "\nroutes.yaml provider_options (instead of the provider's own keys):\n")
				for _, k := range slices.Sorted(maps.Keys(options)) {
					fmt.Fprintf(out, "  %s: %q\n", k, options[k])
				}
			}
			return nil
		}),
	}
	newKeys.Flags().String("provider", "", "preset name")
	newKeys.Flags().Bool("json", false, "print {secret, signing_key} as JSON")
	_ = newKeys.MarkFlagRequired("provider")
	return group(&cobra.Command{Use: "keys", Short: "Makes test keys for a provider's scheme"}, newKeys)
}

func sendCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "send --provider <name> (--secret <s> | --secret-file <f> | --secret-env <VAR>) --url <url> | --routes <routes.yaml> --source <name>) [--body <file>] [--header 'K: V']",
		Short: "Sends a correctly signed test event to a running gateway",
		Long: `
Signs a sample event (or the body you give) the way the provider does and
POSTs it, as 'stripe trigger' does for Stripe. The secret and path can come
from flags or from a source in routes.yaml, whether it names a preset or
declares its scheme in a verify: block; --gateway sets the base URL used
with --routes (default http://localhost:8080). For a public-key scheme,
'hookgate keys new --provider <name>' makes a test key pair: its public
half goes in routes.yaml, the private half in --secret.

Exits 1 unless the gateway answers 2xx.`,
		Args: args(cobra.NoArgs),
		RunE: run(runSend),
	}
	cmd.Flags().String("provider", "", "preset name (hookgate providers lists them)")
	cmd.Flags().String("secret", "", "signing secret (the private key for public-key schemes)")
	cmd.Flags().String("secret-file", "", "read the signing secret from this file")
	cmd.Flags().String("secret-env", "", "read the signing secret from this environment variable")
	cmd.Flags().String("url", "", "full URL of the webhook endpoint")
	addRoutesFlag(cmd)
	cmd.Flags().String("source", "", "source name in routes.yaml")
	cmd.Flags().String("gateway", "http://localhost:8080", "base URL of the gateway, with --routes")
	cmd.Flags().String("body", "", "file with the body to send instead of a sample ('-' for stdin)")
	cmd.Flags().StringArray("header", nil, "extra header 'Name: value' (repeatable)")
	exclusive(cmd, "secret", "secret-file", "secret-env")
	return cmd
}

// sendTarget is where send signs for and posts to.
type sendTarget struct {
	provider, secret, url string
	// declared is the scheme of a source with a verify: block.
	declared *verify.Preset
}

// secretFlag reads the secret from --secret, --secret-file or --secret-env.
func secretFlag(cmd *cobra.Command) (string, error) {
	fl := cmd.Flags()
	if name, _ := fl.GetString("secret-env"); name != "" {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return "", usageError("--secret-env: %s is not set", name)
		}
		return v, nil
	}
	if path, _ := fl.GetString("secret-file"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", usageError("--secret-file: %v", err)
		}
		return strings.TrimRight(string(data), "\r\n"), nil
	}
	s, _ := fl.GetString("secret")
	return s, nil
}

// target takes the provider, secret and URL from the flags, and what they
// leave out from the source in --routes.
func target(cmd *cobra.Command) (sendTarget, error) {
	fl := cmd.Flags()
	var t sendTarget
	t.provider, _ = fl.GetString("provider")
	t.url, _ = fl.GetString("url")
	var err error
	if t.secret, err = secretFlag(cmd); err != nil {
		return t, err
	}
	if routes, _ := fl.GetString("routes"); routes != "" {
		name, _ := fl.GetString("source")
		src, err := sourceFromRoutes(routes, name)
		if err != nil {
			return t, err
		}
		if t.provider == "" {
			t.provider = src.Provider
		}
		if src.Verify != nil && t.provider == "" {
			spec := src.Verify.Spec()
			t.provider, t.declared = src.Name, &verify.Preset{Name: src.Name, Spec: spec}
		}
		if t.secret == "" {
			if t.publicKey() {
				return t, usageError("source %s verifies with a public key; pass the private key with --secret ('hookgate keys new --provider %s' makes a test pair)", name, t.provider)
			}
			if len(src.Secrets) == 0 {
				return t, usageError("source %s has no secret configured; pass one with --secret", name)
			}
			t.secret = src.Secrets[0]
		}
		if t.url == "" {
			gateway, _ := fl.GetString("gateway")
			t.url = strings.TrimSuffix(gateway, "/") + src.Path
		}
	}
	if t.provider == "" || t.secret == "" || t.url == "" {
		return t, usageError("need --provider, --secret and --url (or --routes and --source)")
	}
	return t, nil
}

// publicKey reports whether the target's scheme verifies with a public key,
// so the secret in routes.yaml cannot sign.
func (t sendTarget) publicKey() bool {
	if t.declared != nil {
		return verify.Asymmetric(t.declared.Spec.Algorithm)
	}
	p, ok := verify.Lookup(t.provider)
	return ok && p.Keys.Kind == verify.SecretPublicKey
}

// preset is the scheme send signs with: the named preset, or the source's
// declared scheme.
func (t sendTarget) preset() (verify.Preset, error) {
	if t.declared != nil {
		return *t.declared, nil
	}
	p, ok := verify.Lookup(t.provider)
	if !ok {
		return p, exitWith(ExitNotFound, fmt.Errorf("unknown provider %q (close: %s)", t.provider, strings.Join(verify.Suggest(t.provider), ", ")))
	}
	return p, nil
}

func runSend(cmd *cobra.Command, _ []string) error {
	t, err := target(cmd)
	if err != nil {
		return err
	}
	preset, err := t.preset()
	if err != nil {
		return err
	}
	now := time.Now()
	sample, err := samples.Event(preset, t.secret, now)
	if err != nil {
		return err
	}
	if path, _ := cmd.Flags().GetString("body"); path != "" {
		if sample.Body, err = readBody(cmd, path); err != nil {
			return err
		}
	}
	signed, err := samples.Sign(preset, t.secret, sample, t.url, now)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(sample.Body))
	if err != nil {
		return exitWith(ExitUsage, err)
	}
	for _, h := range []http.Header{sample.Header, signed} {
		for k, v := range h {
			req.Header[k] = v
		}
	}
	extra, _ := cmd.Flags().GetStringArray("header")
	pairs, err := headerArgs(extra)
	if err != nil {
		return err
	}
	for _, h := range pairs {
		req.Header.Set(h[0], h[1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return exitWith(ExitUnreachable, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %s\n", resp.Proto, resp.Status)
	for _, h := range []string{"Hookgate-Event-Id", "Hookgate-Duplicate"} {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(out, "%s: %s\n", h, v)
		}
	}
	fmt.Fprintf(out, "\n%s", answer)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("gateway answered %s", resp.Status)
	}
	return nil
}

// sourceFromRoutes finds a source in a routes file.
func sourceFromRoutes(path, name string) (*config.Source, error) {
	cfg, err := config.Load(path, caddymodule.PlaceholderOptions(caddy.NewReplacer()))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range cfg.Sources {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, exitWith(ExitNotFound, fmt.Errorf("no source %q in %s (sources: %s)", name, path, strings.Join(names, ", ")))
}
