package caddymodule

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// CommandName is the one top-level command Hookgate adds to Caddy's command
// line. Every Hookgate command is a subcommand of it (caddy hookgate events
// list), so a Caddy build with Hookgate and other plugins never has two
// plugins claiming the same top-level name: caddycmd.RegisterCommand panics
// on a duplicate, and the binary would not start.
const CommandName = "hookgate"

var (
	subcommandsMu sync.Mutex
	subcommands   = map[string]caddycmd.Command{}
)

var subcommandName = regexp.MustCompile(`^[a-z0-9]$|^([a-z0-9]+-?[a-z0-9]*)+[a-z0-9]$`)

// registerSubcommand adds a command under `hookgate`. It takes a
// caddycmd.Command, as caddycmd.RegisterCommand does, with the same rules:
// Name, Short and Func or CobraFunc are required, and a name registered twice
// panics. Call it from init; the cobra commands are built when Caddy builds
// its command tree, after every init has run.
func registerSubcommand(cmd caddycmd.Command) {
	subcommandsMu.Lock()
	defer subcommandsMu.Unlock()
	switch {
	case cmd.Name == "":
		panic("hookgate subcommand: name is required")
	case !subcommandName.MatchString(cmd.Name) || cmd.Name == "help":
		panic("hookgate subcommand: invalid name " + cmd.Name)
	case cmd.Func == nil && cmd.CobraFunc == nil:
		panic("hookgate subcommand " + cmd.Name + ": function missing")
	case cmd.Short == "":
		panic("hookgate subcommand " + cmd.Name + ": short description is required")
	}
	if _, dup := subcommands[cmd.Name]; dup {
		panic("hookgate subcommand already registered: " + cmd.Name)
	}
	subcommands[cmd.Name] = cmd
}

// Subcommands returns the commands under `hookgate`, sorted by name.
func Subcommands() []caddycmd.Command {
	subcommandsMu.Lock()
	defer subcommandsMu.Unlock()
	out := make([]caddycmd.Command, 0, len(subcommands))
	for _, c := range subcommands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// IsSubcommand reports whether name is a command under `hookgate`.
func IsSubcommand(name string) bool {
	subcommandsMu.Lock()
	defer subcommandsMu.Unlock()
	_, ok := subcommands[name]
	return ok
}

// subcommandToCobra builds the cobra command for a subcommand the way Caddy
// builds one for a top-level command.
func subcommandToCobra(c caddycmd.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   strings.TrimSpace(c.Name + " " + c.Usage),
		Short: c.Short,
		Long:  c.Long,
	}
	if c.CobraFunc != nil {
		c.CobraFunc(cmd)
	} else {
		cmd.RunE = caddycmd.WrapCommandFuncForCobra(c.Func)
		if c.Flags != nil {
			cmd.Flags().AddGoFlagSet(c.Flags)
		}
	}
	return cmd
}

// buildCommandTree fills in the `hookgate` cobra command: one subcommand per
// registered command. Caddy calls it when it builds its command tree, in
// caddycmd.Main, so every file's init has registered its commands by then.
func buildCommandTree(cmd *cobra.Command) {
	cmd.Use = CommandName
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return errors.New(msg)
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	for _, c := range Subcommands() {
		cmd.AddCommand(subcommandToCobra(c))
	}
}

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  CommandName,
		Usage: "<command> [args] [flags]",
		Short: "Webhook gateway commands: events, stats, replay, send, route, providers and more",
		Long: `
Hookgate's commands, for the webhook_gateway handler and its store: the
admin API from the shell (events, stats, replay, secrets, backup), signed
test events (send), routes.yaml checks (validate-routes, route), the provider
presets (providers) and offline store maintenance (compact, migrate).

In any Caddy build with Hookgate they run as 'caddy hookgate <command>';
the hookgate binary also takes them without the prefix ('hookgate events
list'). A routes file is named with --routes everywhere (validate-routes and
route also take it as their argument); --config always means Caddy's config.`,
		CobraFunc: buildCommandTree,
	})
}
