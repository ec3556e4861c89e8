// Package hookgatecmd is Hookgate's command line: the one command it adds
// to Caddy's (caddy hookgate events list; the hookgate binary takes
// hookgate events list), and the subcommands under it, which talk to the
// admin API, check routes files, sign test events and maintain stores.
//
// Every subcommand is a cobra command whose RunE returns an error that
// carries its exit code (Error); the codes tell a script what went wrong.
package hookgatecmd

import (
	"errors"
	"fmt"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// CommandName is the one top-level command Hookgate adds to Caddy's
// command line. Every Hookgate command is a subcommand of it, so a Caddy
// build with Hookgate and other plugins never has two plugins claiming the
// same top-level name: caddycmd.RegisterCommand panics on a duplicate, and
// the binary would not start.
const CommandName = "hookgate"

// Exit codes, the same for every subcommand.
const (
	// ExitFailed: the command ran and what it did or checked failed (a
	// routes file with problems, a gateway that did not answer 2xx).
	ExitFailed = 1
	// ExitUsage: the command line is wrong (an unknown flag or command, a
	// missing argument).
	ExitUsage = 2
	// ExitNotFound: what the command names does not exist (an event, an
	// upstream, a source, a file).
	ExitNotFound = 3
	// ExitUnreachable: the admin API, the gateway or the store could not be
	// reached, or has no gateway configured.
	ExitUnreachable = 4
	// ExitRefused: the gateway or the store refused the request (a
	// conflict, a store locked by a running gateway).
	ExitRefused = 5
)

// Error is a subcommand's failure and the exit code it carries.
type Error struct {
	Code int
	Err  error
	// reported is set when the command printed the failure itself (a
	// routes file's problems, one per line).
	reported bool
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// exitWith wraps err with an exit code.
func exitWith(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

func usageError(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// exitCode is the code an error exits with: its own, else ExitFailed.
func exitCode(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ExitFailed
}

// run adapts a subcommand's function to cobra: its error is printed once,
// in one style, and its code reaches Caddy's main, which exits with it.
func run(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := checkExclusive(cmd)
		if err == nil {
			err = fn(cmd, args)
		}
		if err == nil {
			return nil
		}
		return fail(cmd, err)
	}
}

const exclusiveAnnotation = "hookgate-exclusive"

// exclusive notes flags that exclude one another. (cobra's own groups are
// checked where their error cannot carry an exit code.)
func exclusive(cmd *cobra.Command, names ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	if groups := cmd.Annotations[exclusiveAnnotation]; groups != "" {
		cmd.Annotations[exclusiveAnnotation] = groups + ";" + strings.Join(names, ",")
		return
	}
	cmd.Annotations[exclusiveAnnotation] = strings.Join(names, ",")
}

// checkExclusive refuses two flags of one exclusive group, as a usage
// error.
func checkExclusive(cmd *cobra.Command) error {
	groups := cmd.Annotations[exclusiveAnnotation]
	if groups == "" {
		return nil
	}
	for group := range strings.SplitSeq(groups, ";") {
		var set []string
		for name := range strings.SplitSeq(group, ",") {
			if cmd.Flags().Changed(name) {
				set = append(set, "--"+name)
			}
		}
		if len(set) > 1 {
			return usageError("give %s, not both", strings.Join(set, " or "))
		}
	}
	return nil
}

// fail prints err and returns what makes Caddy's main exit with its code.
// Caddy's main takes the code only from the error its own command wrapper
// returns, so the wrapper is asked for it, with nothing to log.
func fail(cmd *cobra.Command, err error) error {
	cmd.SilenceErrors = true
	if e, ok := errors.AsType[*Error](err); !ok || !e.reported {
		fmt.Fprintf(cmd.ErrOrStderr(), "Error: %v\n", err)
		if exitCode(err) == ExitUsage {
			fmt.Fprintf(cmd.ErrOrStderr(), "Run '%s --help' for usage.\n", displayPath(cmd))
		}
	}
	code := exitCode(err)
	if code <= 1 {
		return err
	}
	return caddycmd.WrapCommandFuncForCobra(func(caddycmd.Flags) (int, error) { return code, nil })(cmd, nil)
}

// displayPath is a command's path as the user types it: in the hookgate
// binary the short form, hookgate events list, not hookgate hookgate
// events list.
func displayPath(cmd *cobra.Command) string {
	path := cmd.CommandPath()
	if doubled := CommandName + " " + CommandName; path == doubled || strings.HasPrefix(path, doubled+" ") {
		return strings.TrimPrefix(path, CommandName+" ")
	}
	return path
}

// args checks a command's arguments, as a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return fail(cmd, &Error{Code: ExitUsage, Err: err})
		}
		return nil
	}
}

// group is a command whose work is done by its subcommands: alone it
// prints its help; an unknown verb is a usage error that suggests the
// closest.
func group(cmd *cobra.Command, verbs ...*cobra.Command) *cobra.Command {
	cmd.Args = func(c *cobra.Command, a []string) error {
		if len(a) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", a[0], displayPath(c))
		if s := c.SuggestionsFor(a[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return fail(c, &Error{Code: ExitUsage, Err: errors.New(msg)})
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	cmd.SuggestionsMinimumDistance = 2
	cmd.AddCommand(verbs...)
	return cmd
}

// usageTemplate is cobra's, with the paths as the user types them.
const usageTemplate = `Usage:{{if .Runnable}}
  {{hookgateUseLine .}}{{end}}{{if .HasAvailableSubCommands}}
  {{hookgatePath .}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{hookgatePath .}} [command] --help" for more information about a command.{{end}}
`
