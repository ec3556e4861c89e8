package hookgatecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

func sendCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "send --provider <name> (--secret <s> --url <url> | --routes <routes.yaml> --source <name>) [--body <file>] [--header 'K: V']",
		Short: "Sends a correctly signed test event to a running gateway",
		Long: `
Signs a sample event (or the body you give) the way the provider does and
POSTs it, as 'stripe trigger' does for Stripe. The secret and path can come
from flags or from a source in routes.yaml; --gateway sets the base URL used
with --routes (default http://localhost:8080).

Exits 1 unless the gateway answers 2xx.`,
		Args: args(cobra.NoArgs),
		RunE: run(runSend),
	}
	cmd.Flags().String("provider", "", "preset name (hookgate providers lists them)")
	cmd.Flags().String("secret", "", "signing secret (the private key for public-key schemes)")
	cmd.Flags().String("url", "", "full URL of the webhook endpoint")
	addRoutesFlag(cmd)
	cmd.Flags().String("source", "", "source name in routes.yaml")
	cmd.Flags().String("gateway", "http://localhost:8080", "base URL of the gateway, with --routes")
	cmd.Flags().String("body", "", "file with the body to send instead of a sample ('-' for stdin)")
	cmd.Flags().StringArray("header", nil, "extra header 'Name: value' (repeatable)")
	return cmd
}

// sendTarget is where send signs for and posts to.
type sendTarget struct {
	provider, secret, url string
}

// target takes the provider, secret and URL from the flags, and what they
// leave out from the source in --routes.
func target(cmd *cobra.Command) (sendTarget, error) {
	fl := cmd.Flags()
	var t sendTarget
	t.provider, _ = fl.GetString("provider")
	t.secret, _ = fl.GetString("secret")
	t.url, _ = fl.GetString("url")
	if routes, _ := fl.GetString("routes"); routes != "" {
		name, _ := fl.GetString("source")
		src, err := sourceFromRoutes(routes, name)
		if err != nil {
			return t, err
		}
		if t.provider == "" {
			t.provider = src.Provider
		}
		if t.secret == "" {
			if p, ok := verify.Lookup(t.provider); ok && p.Keys.Kind == verify.SecretPublicKey {
				return t, usageError("provider %s verifies with a public key; pass the private key with --secret", t.provider)
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

func runSend(cmd *cobra.Command, _ []string) error {
	t, err := target(cmd)
	if err != nil {
		return err
	}
	preset, ok := verify.Lookup(t.provider)
	if !ok {
		return exitWith(ExitNotFound, fmt.Errorf("unknown provider %q (close: %s)", t.provider, strings.Join(verify.Suggest(t.provider), ", ")))
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

// sourceFromRoutes finds a preset source in a routes file.
func sourceFromRoutes(path, name string) (*config.Source, error) {
	cfg, err := config.Load(path, caddymodule.PlaceholderOptions(caddy.NewReplacer()))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range cfg.Sources {
		if s.Name == name {
			if s.Provider == "" {
				return nil, usageError("source %s uses a declarative scheme; send needs a preset", name)
			}
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, exitWith(ExitNotFound, fmt.Errorf("no source %q in %s (sources: %s)", name, path, strings.Join(names, ", ")))
}
