package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/store"
)

// Secrets a handshake established (Asana's X-Hook-Secret), listed and
// revoked through the admin API and `hookgate secrets`.

func init() {
	registerSubcommand(caddycmd.Command{
		Name:  "secrets",
		Usage: "list | revoke <source> [--scope S] [--address host:port] [--json]",
		Short: "Lists or revokes secrets learned in a provider's handshake (Asana)",
		Long: `
secrets list                 learned secrets: source, scope, when, fingerprint
                             (the secret itself is never shown)
secrets revoke <source>      delete a source's learned secret: it stops
                             verifying at once, on every instance, and the
                             next handshake inside the source's learn_secret
                             window may establish a new one; --scope picks
                             one when several sites have a source of that name

--address is Caddy's admin endpoint (default localhost:2019).`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Args = cobra.RangeArgs(1, 2)
			addAdminFlags(cmd)
			cmd.Flags().String("scope", "", "the scope to revoke, as secrets list shows it")
			cmd.RunE = runSecrets
		},
	})
}

// secretView describes a learned secret without revealing it.
type secretView struct {
	Source    string    `json:"source"`
	Scope     string    `json:"scope"`
	LearnedAt time.Time `json:"learned_at"`
	// Fingerprint is the first 8 bytes of the secret's SHA-256, to tell
	// secrets apart and compare with the provider's.
	Fingerprint string `json:"fingerprint"`
}

// learningView is a configured source whose secret a handshake establishes.
type learningView struct {
	Source     string    `json:"source"`
	Scope      string    `json:"scope"`
	LearnUntil time.Time `json:"learn_until,omitzero"`
	WindowOpen bool      `json:"window_open"`
}

func viewSecret(ls store.LearnedSecret) secretView {
	sum := sha256.Sum256([]byte(ls.Secret))
	return secretView{Source: ls.Source, Scope: ls.Scope, LearnedAt: ls.LearnedAt, Fingerprint: "sha256:" + hex.EncodeToString(sum[:8])}
}

// listSecrets answers GET /hookgate/secrets: the learned secrets, and the
// live sources that may learn one with their windows.
func listSecrets(w http.ResponseWriter, _ *http.Request, g *liveGateway) error {
	all, err := g.handle.store.LearnedSecrets()
	if err != nil {
		return err
	}
	out := struct {
		Secrets []secretView   `json:"secrets"`
		Sources []learningView `json:"sources"`
	}{Secrets: []secretView{}, Sources: []learningView{}}
	for _, ls := range all {
		out.Secrets = append(out.Secrets, viewSecret(ls))
	}
	now := time.Now()
	for _, p := range g.pipelines {
		for _, s := range p.LearningSources() {
			out.Sources = append(out.Sources, learningView{Source: s.Source, Scope: s.Scope, LearnUntil: s.LearnUntil, WindowOpen: now.Before(s.LearnUntil)})
		}
	}
	slices.SortFunc(out.Sources, func(a, b learningView) int { return strings.Compare(a.Scope, b.Scope) })
	return writeJSON(w, out)
}

// revokeSecret answers DELETE /hookgate/secrets/{source}[?scope=].
func revokeSecret(w http.ResponseWriter, r *http.Request, g *liveGateway) error {
	source := r.PathValue("source")
	all, err := g.handle.store.LearnedSecrets()
	if err != nil {
		return err
	}
	scope := r.URL.Query().Get("scope")
	var match []store.LearnedSecret
	var scopes []string
	for _, ls := range all {
		if ls.Source == source && (scope == "" || ls.Scope == scope) {
			match = append(match, ls)
			scopes = append(scopes, ls.Scope)
		}
	}
	switch len(match) {
	case 0:
		return apiError(http.StatusNotFound, "no learned secret for source %q%s", source, inScope(scope))
	case 1:
	default:
		return apiError(http.StatusConflict, "source %q has learned secrets in several scopes; choose one with ?scope= (%s)", source, strings.Join(scopes, ", "))
	}
	found, err := g.handle.store.RevokeSecret(r.Context(), match[0].Scope)
	if err != nil {
		return err
	}
	if !found {
		return apiError(http.StatusNotFound, "no learned secret for source %q%s", source, inScope(scope))
	}
	if g.owner != nil && g.owner.logger != nil {
		g.owner.logger.Info("learned secret revoked", zap.String("source", source), zap.String("scope", match[0].Scope))
	}
	return writeJSON(w, map[string]any{"revoked": viewSecret(match[0])})
}

func inScope(scope string) string {
	if scope == "" {
		return ""
	}
	return " in scope " + scope
}

func runSecrets(cmd *cobra.Command, args []string) error {
	c := newAdminClient(cmd)
	asJSON, _ := cmd.Flags().GetBool("json")
	switch {
	case args[0] == "list" && len(args) == 1:
		var out struct {
			Secrets []secretView   `json:"secrets"`
			Sources []learningView `json:"sources"`
		}
		if printed, err := c.view(cmd, "/hookgate/secrets", nil, &out); err != nil || printed {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "SOURCE\tSCOPE\tLEARNED\tFINGERPRINT")
		for _, s := range out.Secrets {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Source, s.Scope, s.LearnedAt.Local().Format("2006-01-02 15:04:05"), s.Fingerprint)
		}
		w.Flush()
		for _, s := range out.Sources {
			if s.WindowOpen {
				fmt.Printf("learning window open for %s until %s\n", s.Scope, s.LearnUntil.Local().Format(time.RFC3339))
			}
		}
	case args[0] == "revoke" && len(args) == 2:
		q := url.Values{}
		if scope, _ := cmd.Flags().GetString("scope"); scope != "" {
			q.Set("scope", scope)
		}
		var out struct {
			Revoked secretView `json:"revoked"`
		}
		raw, err := c.call(http.MethodDelete, "/hookgate/secrets/"+url.PathEscape(args[1]), q, &out)
		if err != nil {
			return err
		}
		if asJSON {
			printJSON(raw)
			return nil
		}
		fmt.Printf("revoked the secret of %s (%s, %s)\n", out.Revoked.Source, out.Revoked.Scope, out.Revoked.Fingerprint)
	default:
		return fmt.Errorf("usage: %s list | revoke <source> [--scope S]", cmd.CommandPath())
	}
	return nil
}

// migrateSecrets carries learned secrets to another store, as they are:
// a scope the destination already has a secret for keeps that one.
func migrateSecrets(from, to store.SecretStore) (carried, kept int, err error) {
	all, err := from.LearnedSecrets()
	if err != nil {
		return 0, 0, fmt.Errorf("reading learned secrets: %w", err)
	}
	for _, ls := range all {
		won, err := to.LearnSecret(context.Background(), ls)
		if err != nil {
			return carried, kept, fmt.Errorf("learned secret of %s: %w", ls.Scope, err)
		}
		if won {
			carried++
			continue
		}
		kept++
		if there, err := to.LearnedSecret(ls.Scope); err == nil && there != nil && there.Secret != ls.Secret {
			fmt.Fprintf(os.Stderr, "warning: %s already has another learned secret in the destination (%s); kept it\n", ls.Scope, viewSecret(*there).Fingerprint)
		}
	}
	return carried, kept, nil
}
