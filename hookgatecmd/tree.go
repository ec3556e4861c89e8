package hookgatecmd

import (
	"fmt"
	"slices"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// The hookgate command and the tree under it.

// subcommands builds the commands under hookgate. A cobra command has one
// parent and keeps its parsed flags, so each tree gets its own.
func subcommands() []*cobra.Command {
	return []*cobra.Command{
		validateRoutesCommand(), routeCommand(), sendCommand(), providersCommand(), keysCommand(),
		eventsCommand(), replayCommand(), reconcileCommand(), rejectedCommand(), listenCommand(), statsCommand(), upstreamsCommand(), secretsCommand(),
		backupCommand(), inspectCommand(), compactCommand(), migrateCommand(),
	}
}

// Subcommands builds the commands under hookgate, sorted by name.
func Subcommands() []*cobra.Command {
	cmds := subcommands()
	slices.SortFunc(cmds, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
	return cmds
}

// IsSubcommand reports whether name is a command under hookgate.
func IsSubcommand(name string) bool {
	return slices.ContainsFunc(subcommands(), func(c *cobra.Command) bool { return c.Name() == name })
}

func init() {
	cobra.AddTemplateFunc("hookgatePath", displayPath)
	cobra.AddTemplateFunc("hookgateUseLine", func(c *cobra.Command) string {
		line := c.UseLine()
		if path := c.CommandPath(); strings.HasPrefix(line, path) {
			return displayPath(c) + line[len(path):]
		}
		return line
	})
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  CommandName,
		Usage: "<command> [args] [flags]",
		Short: "Webhook gateway commands: events, stats, replay, send, route, providers and more",
		Long: `
Hookgate's commands, for the webhook_gateway handler and its store: the
admin API from the shell (events, stats, replay, upstreams, secrets,
backup), signed test events (send), routes.yaml checks (validate-routes,
route), the provider presets (providers) and offline store maintenance
(compact, migrate).

In any Caddy build with Hookgate they run as 'caddy hookgate <command>';
the hookgate binary also takes them without the prefix ('hookgate events
list'). A routes file is named with --routes everywhere (validate-routes and
route also take it as their argument), a store file with --store; --config
always means Caddy's config.

Exit codes: 1 failed, 2 usage, 3 not found, 4 unreachable, 5 refused.`,
		CobraFunc: buildTree,
	})
}

// buildTree fills in the hookgate command. Caddy calls it when it builds
// its command tree, in caddycmd.Main.
func buildTree(cmd *cobra.Command) {
	cmd.Use = CommandName
	cmd.SetUsageTemplate(usageTemplate)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fail(c, &Error{Code: ExitUsage, Err: err})
	})
	group(cmd, subcommands()...)
	// The tree is whole once cobra initializes, before any command runs.
	cobra.OnInitialize(func() { withdrawPackageCommands(cmd.Root()) })
}

// packageCommands are Caddy's commands that replace the binary with one
// from Caddy's download server, which cannot build Hookgate in: they
// would leave a Caddy without the webhook gateway.
var packageCommands = []string{"add-package", "remove-package", "upgrade"}

// withdrawPackageCommands hides the package commands from help and has
// them say how to build instead.
func withdrawPackageCommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !slices.Contains(packageCommands, c.Name()) {
			continue
		}
		c.Hidden = true
		c.RunE = func(c *cobra.Command, _ []string) error {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("%s is not available in a build with Hookgate: Caddy's download server cannot build it in. "+
				"Build a new binary instead: xcaddy build --with github.com/hookgate/hookgate (docs/install.md)", c.Name())}
		}
		c.Run = nil
	}
}
