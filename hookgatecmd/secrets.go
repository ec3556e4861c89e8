package hookgatecmd

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookgate/hookgate/caddymodule"
	"github.com/hookgate/hookgate/internal/store"
)

// Secrets a handshake established (Asana's X-Hook-Secret).

func secretsCommand() *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "Lists learned secrets: source, scope, when, fingerprint (the secret itself is never shown)",
		Args:  args(cobra.NoArgs),
		RunE:  run(runSecretsList),
	}
	addAdminFlags(list)
	revoke := &cobra.Command{
		Use:   "revoke <source> [--scope S]",
		Short: "Deletes a source's learned secret",
		Long: `
Deletes a source's learned secret: it stops verifying at once, on every
instance, and the next handshake inside the source's learn_secret window may
establish a new one. --scope picks one when several sites have a source of
that name.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: run(runSecretsRevoke),
	}
	addAdminFlags(revoke)
	revoke.Flags().String("scope", "", "the scope to revoke, as secrets list shows it")
	reveal := &cobra.Command{
		Use:   "reveal <source> [--scope S]",
		Short: "Prints a learned secret the provider needs copied back (Notion's verification_token)",
		Long: `
Prints the secret a source learned, for the presets whose provider asks the
operator to paste it back (Notion's verification_token), and only while the
source's learn_secret window is open. Other learned secrets are never shown.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: run(runSecretsReveal),
	}
	addAdminFlags(reveal)
	reveal.Flags().String("scope", "", "the scope, as secrets list shows it")
	return group(&cobra.Command{
		Use:   "secrets",
		Short: "Lists, reveals or revokes secrets learned in a provider's handshake (Asana, Notion)",
	}, list, reveal, revoke)
}

func runSecretsList(cmd *cobra.Command, _ []string) error {
	var out struct {
		Secrets []caddymodule.SecretView   `json:"secrets"`
		Sources []caddymodule.LearningView `json:"sources"`
	}
	if printed, err := newAdminClient(cmd).view(cmd, "/hookgate/secrets", nil, &out); err != nil || printed {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SOURCE\tSCOPE\tLEARNED\tFINGERPRINT")
	for _, s := range out.Secrets {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Source, s.Scope, s.LearnedAt.Local().Format("2006-01-02 15:04:05"), s.Fingerprint)
	}
	w.Flush()
	for _, s := range out.Sources {
		if s.WindowOpen {
			fmt.Fprintf(cmd.OutOrStdout(), "learning window open for %s until %s\n", s.Scope, s.LearnUntil.Local().Format(time.RFC3339))
		}
	}
	return nil
}

func runSecretsRevoke(cmd *cobra.Command, a []string) error {
	q := url.Values{}
	if scope, _ := cmd.Flags().GetString("scope"); scope != "" {
		q.Set("scope", scope)
	}
	var out struct {
		Revoked caddymodule.SecretView `json:"revoked"`
	}
	return newAdminClient(cmd).act(cmd, http.MethodDelete, "/hookgate/secrets/"+url.PathEscape(a[0]), q, &out, func() {
		fmt.Fprintf(cmd.OutOrStdout(), "revoked the secret of %s (%s, %s)\n", out.Revoked.Source, out.Revoked.Scope, out.Revoked.Fingerprint)
	})
}

func runSecretsReveal(cmd *cobra.Command, a []string) error {
	q := url.Values{}
	if scope, _ := cmd.Flags().GetString("scope"); scope != "" {
		q.Set("scope", scope)
	}
	var out struct {
		Secret string `json:"secret"`
	}
	return newAdminClient(cmd).act(cmd, http.MethodPost, "/hookgate/secrets/"+url.PathEscape(a[0])+"/reveal", q, &out, func() {
		fmt.Fprintln(cmd.OutOrStdout(), out.Secret)
	})
}

// migrateSecrets carries learned secrets to another store, as they are:
// a scope the destination already has a secret for keeps that one.
func migrateSecrets(cmd *cobra.Command, from, to store.SecretStore) (carried, kept int, err error) {
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
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s already has another learned secret in the destination (%s); kept it\n", ls.Scope, caddymodule.ViewSecret(*there).Fingerprint)
		}
	}
	return carried, kept, nil
}
