package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// hookgateCommands are the subcommands of the one top-level `hookgate`
// command that Hookgate adds to Caddy.
var hookgateCommands = []string{"events", "replay", "rejected", "listen", "stats", "send", "route", "validate-routes", "providers", "compact", "migrate", "inspect", "secrets", "backup"}

func runBinary(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	return string(out), err
}

// missingCommands returns the commands of want that help does not list
// as "  name  short description".
func missingCommands(help string, want []string) []string {
	var missing []string
	for _, name := range want {
		found := false
		for l := range strings.SplitSeq(help, "\n") {
			f := strings.Fields(l)
			if len(f) > 1 && f[0] == name && strings.HasPrefix(l, "  ") {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// TestCLICommandTree runs the binary's command line: Hookgate's commands
// under `hookgate hookgate …` as in any xcaddy build, the short forms the
// hookgate binary takes as aliases, the help that lists them, and Caddy's
// own commands left alone.
func TestCLICommandTree(t *testing.T) {
	long, err := runBinary(t, "hookgate", "providers")
	if err != nil {
		t.Fatalf("hookgate hookgate providers: %v\n%s", err, long)
	}
	short, err := runBinary(t, "providers")
	if err != nil {
		t.Fatalf("hookgate providers: %v\n%s", err, short)
	}
	for _, want := range []string{"NAME", "stripe", "github", "slack", "shopify"} {
		if !strings.Contains(long, want) {
			t.Errorf("hookgate hookgate providers lacks %q:\n%s", want, long)
		}
	}
	if short != long {
		t.Errorf("the short form prints something else:\n%s\nwant:\n%s", short, long)
	}

	for _, args := range [][]string{{"help"}, {"--help"}, {"hookgate", "--help"}, {"help", "hookgate"}, {"hookgate"}} {
		out, err := runBinary(t, args...)
		if err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
			continue
		}
		if missing := missingCommands(out, hookgateCommands); len(missing) > 0 {
			t.Errorf("hookgate %s does not list %v:\n%s", strings.Join(args, " "), missing, out)
		}
	}
	// The root help still lists Caddy's commands, and `hookgate` among them.
	if out, _ := runBinary(t, "help"); len(missingCommands(out, []string{"run", "validate", "adapt", "reload", "hookgate"})) > 0 {
		t.Errorf("hookgate help lacks Caddy's commands:\n%s", out)
	}
	// Caddy's package commands would replace the binary with a Caddy from
	// its download server, without Hookgate: not offered, and refused.
	for _, name := range []string{"add-package", "remove-package", "upgrade"} {
		if out, _ := runBinary(t, "help"); strings.Contains(out, name) {
			t.Errorf("hookgate help offers %s:\n%s", name, out)
		}
		out, err := runBinary(t, name, "github.com/example/plugin")
		if err == nil || !strings.Contains(out, "not available in a build with Hookgate") || !strings.Contains(out, "xcaddy build") {
			t.Errorf("hookgate %s: %v\n%s", name, err, out)
		}
	}

	// A subcommand's own help, by either form, its usage as typed.
	for _, args := range [][]string{{"help", "events"}, {"events", "--help"}, {"hookgate", "events", "--help"}, {"help", "hookgate", "events"}} {
		out, err := runBinary(t, args...)
		if err != nil || !strings.Contains(out, "hookgate events [command]") || strings.Contains(out, "hookgate hookgate") ||
			len(missingCommands(out, []string{"list", "show", "replay", "cancel"})) > 0 {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{{"help", "events", "list"}, {"events", "list", "--help"}, {"hookgate", "events", "list", "--help"}} {
		out, err := runBinary(t, args...)
		if err != nil || !strings.Contains(out, "\n  hookgate events list [--source S]") || !strings.Contains(out, "--status") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}

	// Usage errors exit 2 and suggest what was meant.
	for args, want := range map[string]string{"hookgate stat": `unknown command "stat"`, "events lst": "did you mean list?", "events show": "accepts 1 arg(s)", "stats --adress x": "unknown flag: --adress"} {
		out, err := runBinary(t, strings.Fields(args)...)
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 || !strings.Contains(out, want) {
			t.Errorf("hookgate %s: %v\n%s", args, err, out)
		}
	}
	// Caddy's commands keep their names: `validate` is Caddy's, not
	// validate-routes, and a Caddy command is not rewritten.
	if out, err := runBinary(t, "validate", "--help"); err != nil || !strings.Contains(out, "hookgate validate --config") {
		t.Errorf("hookgate validate --help: %v\n%s", err, out)
	}
	if out, err := runBinary(t, "version"); err != nil {
		t.Errorf("hookgate version: %v\n%s", err, out)
	}
}
