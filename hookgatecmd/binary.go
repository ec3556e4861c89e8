package hookgatecmd

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	"github.com/hookgate/hookgate/caddymodule"
)

// Main runs the hookgate binary: Caddy with Hookgate, whose own commands
// also go without the hookgate prefix (see the package doc of
// cmd/hookgate). A release's wrapper module calls it too, so that its
// build information names Hookgate's version.
func Main() {
	if caddy.CustomBinaryName == "" {
		caddy.CustomBinaryName = "hookgate"
	}
	if caddy.CustomLongDescription == "" {
		caddy.CustomLongDescription = longDescription()
	}
	args, err := ownFlags(shortForms(os.Args))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookgate:", err)
		os.Exit(2)
	}
	os.Args = args
	caddycmd.Main()
}

// ownFlags takes the flags this binary adds to two of Caddy's commands
// and returns the arguments without them:
//
//   - validate --no-secrets: credentials written as placeholders are
//     checked for syntax, not resolved, so a CI job can validate a
//     configuration whose secrets it cannot read;
//   - reload --envfile FILE: the variables of FILE (as the unit's
//     EnvironmentFile= gives them) are set first, for the Caddyfile's {$VAR}
//     when reloading from a shell.
func ownFlags(args []string) ([]string, error) {
	if len(args) < 2 || (args[1] != "validate" && args[1] != "reload") {
		return args, nil
	}
	out := args[:2:2]
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case args[1] == "validate" && (a == "--no-secrets" || a == "--no-secrets=true"):
			caddymodule.ValidateWithoutSecrets = true
		case args[1] == "reload" && (a == "--envfile" || strings.HasPrefix(a, "--envfile=")):
			file, given := strings.CutPrefix(a, "--envfile=")
			if !given {
				if i+1 == len(args) {
					return nil, fmt.Errorf("reload --envfile needs a file")
				}
				i++
				file = args[i]
			}
			if err := loadEnvFile(file); err != nil {
				return nil, err
			}
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// loadEnvFile sets the variables of an environment file as systemd's
// EnvironmentFile= reads one: KEY=VALUE lines, # comments, optional
// quotes. A variable already set keeps its value, as Caddy's --envfile
// does.
func loadEnvFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reload --envfile: %w", err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return fmt.Errorf("reload --envfile: %s:%d: want KEY=VALUE", path, n+1)
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		if _, set := os.LookupEnv(key); !set {
			os.Setenv(key, value)
		}
	}
	return nil
}

// shortForms rewrites `hookgate <cmd> ...` to `hookgate hookgate <cmd> ...`
// and `hookgate help <cmd>` to `hookgate help hookgate <cmd>` when <cmd> is
// a Hookgate command and not one of Caddy's.
func shortForms(args []string) []string {
	at := 1
	if len(args) > 2 && args[1] == "help" {
		at = 2
	}
	if len(args) <= at || !isShortForm(args[at]) {
		return args
	}
	out := make([]string, 0, len(args)+1)
	out = append(out, args[:at]...)
	out = append(out, CommandName)
	return append(out, args[at:]...)
}

func isShortForm(name string) bool {
	if _, caddys := caddycmd.Commands()[name]; caddys {
		return false
	}
	return IsSubcommand(name)
}

func longDescription() string {
	var b strings.Builder
	b.WriteString(`Hookgate is Caddy with its standard modules and the Hookgate webhook
gateway: the webhook_gateway handler verifies, deduplicates and durably
stores webhooks, acknowledges them at once and delivers them to the
upstreams of a routes.yaml.

Hookgate's commands, each short for 'hookgate hookgate <command>' (in any
other Caddy build with Hookgate: 'caddy hookgate <command>'):

`)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range Subcommands() {
		if isShortForm(c.Name()) {
			fmt.Fprintf(w, "  %s\t%s\n", c.Name(), c.Short)
		}
	}
	w.Flush()
	b.WriteString(`
Every other command is Caddy's, for example:

  hookgate run --config Caddyfile
  hookgate validate --config Caddyfile
  hookgate reload --config Caddyfile

'hookgate help <command>' shows a command's flags.
`)
	return b.String()
}
