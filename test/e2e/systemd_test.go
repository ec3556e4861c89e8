package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The paths the shipped unit and VM configuration use (docs/install.md).
const (
	unitBinary    = "/usr/local/bin/hookgate"
	unitCaddyfile = "/etc/hookgate/Caddyfile"
	unitRoutes    = "/etc/hookgate/routes.yaml"
	unitStore     = "/var/lib/hookgate/hookgate.db"
)

// systemdAnalyze finds systemd-analyze, which Debian ships in the systemd
// package; scripts/test.sh installs it as root.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is needed to check examples/systemd/hookgate.service (apt-get install systemd; scripts/test.sh installs it as root)")
	}
	return path
}

// TestSystemdUnitVerifies runs `systemd-analyze verify` on the shipped
// unit with its binary path pointed at the hookgate just built (verify
// checks that ExecStart's binary exists and is executable). Any output
// fails the test: an unknown or misspelt directive is only a warning to
// systemd, and would silently drop a protection.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze := systemdAnalyze(t)
	unit := string(readRepoFile(t, "examples/systemd/hookgate.service"))
	for _, line := range []string{
		"User=hookgate",
		"ExecStart=" + unitBinary + " run --config " + unitCaddyfile,
		"ExecReload=" + unitBinary + " reload --config " + unitCaddyfile + " --force",
		"RuntimeDirectory=hookgate",
		"EnvironmentFile=-/etc/hookgate/hookgate.env",
		"StateDirectory=hookgate",
		"ProtectSystem=strict",
		"NoNewPrivileges=true",
		"AmbientCapabilities=CAP_NET_BIND_SERVICE",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
	} {
		if !containsLine(unit, line) {
			t.Errorf("the unit lacks the line %q", line)
		}
	}
	for l := range strings.SplitSeq(unit, "\n") {
		if strings.HasPrefix(l, "Exec") && strings.Contains(l, "--environ") {
			t.Errorf("%s: --environ would print hookgate.env's secrets to the journal", l)
		}
	}

	path := filepath.Join(t.TempDir(), "hookgate.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, unitBinary, binary)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	// The sandbox as systemd rates it: exposure at most 2.0 of 10 ("OK";
	// Caddy's own unit rates 9.0 with systemd 252). --threshold counts
	// tenths of a point.
	out, err = exec.Command(analyze, "security", "--offline=true", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security rates the unit above 2.0: %v\n%s", err, overall(string(out)))
	}
	t.Log(overall(string(out)))
}

// overall is the last line of systemd-analyze security's report, with the
// items that cost points.
func overall(report string) string {
	var keep []string
	for l := range strings.SplitSeq(report, "\n") {
		if strings.HasPrefix(l, "✗") || strings.Contains(l, "Overall exposure") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "\n")
}

// TestSystemdConfigValidates checks the VM configuration that
// docs/install.md installs next to the unit: with the secrets filled in it
// validates, opening no store; the adapted JSON names the secrets only as
// placeholders; and with hookgate.env as shipped (empty values) the
// configuration is refused, so a forgotten secret never runs unverified.
func TestSystemdConfigValidates(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "state", "hookgate.db")
	caddyfile := string(readRepoFile(t, "examples/systemd/Caddyfile"))
	routes := string(readRepoFile(t, "examples/systemd/routes.yaml"))
	if !strings.Contains(caddyfile, unitRoutes) || !strings.Contains(routes, "path: "+unitStore) {
		t.Fatalf("the VM Caddyfile should name %s and routes.yaml store in %s, the unit's StateDirectory", unitRoutes, unitStore)
	}
	writeFile(t, filepath.Join(dir, "Caddyfile"), strings.ReplaceAll(caddyfile, unitRoutes, filepath.Join(dir, "routes.yaml")))
	writeFile(t, filepath.Join(dir, "routes.yaml"), strings.ReplaceAll(routes, unitStore, store))

	const github, stripe = "github-secret-0123456789abcdef", "whsec_stripe-secret-0123456789abcdef"
	filled := filepath.Join(dir, "filled.env")
	writeFile(t, filled, "GITHUB_WEBHOOK_SECRET="+github+"\nSTRIPE_WEBHOOK_SECRET="+stripe+"\n")
	shipped := filepath.Join(repoRoot(), "examples", "systemd", "hookgate.env")

	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		// Only the env file sets the secrets (--envfile keeps a variable
		// that is already set, even to nothing).
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GITHUB_WEBHOOK_SECRET=") && !strings.HasPrefix(kv, "STRIPE_WEBHOOK_SECRET=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("validate", "--config", filepath.Join(dir, "Caddyfile"), "--envfile", filled)
	if err != nil || !strings.Contains(out, "Valid configuration") {
		t.Fatalf("the VM configuration does not validate with its secrets set: %v\n%s", err, out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("validate created or touched the store %s: %v", store, err)
	}
	out, err = run("adapt", "--config", filepath.Join(dir, "Caddyfile"), "--envfile", filled)
	if err != nil || !strings.Contains(out, `"hooks.example.com"`) || !strings.Contains(out, `{env.STRIPE_WEBHOOK_SECRET}`) {
		t.Fatalf("adapting the VM configuration: %v\n%s", err, out)
	}
	if strings.Contains(out, github) || strings.Contains(out, stripe) {
		t.Fatalf("the adapted JSON (which Caddy autosaves) carries a secret's value:\n%s", out)
	}
	out, err = run("validate", "--config", filepath.Join(dir, "Caddyfile"), "--envfile", shipped)
	if err == nil || !strings.Contains(out, "no secret configured") {
		t.Fatalf("with hookgate.env as shipped (no secrets) the configuration should be refused: %v\n%s", err, out)
	}

	// Where the secrets cannot be read: adapt needs none, and validate and
	// validate-routes check everything but them with --no-secrets.
	out, err = run("adapt", "--config", filepath.Join(dir, "Caddyfile"))
	if err != nil || !strings.Contains(out, `{env.GITHUB_WEBHOOK_SECRET}`) {
		t.Fatalf("adapting without the secrets: %v\n%s", err, out)
	}
	out, err = run("validate", "--config", filepath.Join(dir, "Caddyfile"), "--no-secrets")
	if err != nil || !strings.Contains(out, "Valid configuration") {
		t.Fatalf("validate --no-secrets without the secrets: %v\n%s", err, out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("validate --no-secrets created or touched the store %s: %v", store, err)
	}
	out, err = run("validate-routes", "--no-secrets", filepath.Join(dir, "routes.yaml"))
	if err != nil || !strings.Contains(out, "valid: 2 sources") || !strings.Contains(out, "not resolved (--no-secrets): the credentials of source github, source stripe") {
		t.Fatalf("validate-routes --no-secrets: %v\n%s", err, out)
	}
	// It still checks the placeholders' syntax, and every other key.
	broken := strings.Replace(strings.ReplaceAll(routes, unitStore, store), "{env.STRIPE_WEBHOOK_SECRET}", "{$STRIPE_WEBHOOK_SECRET}", 1)
	writeFile(t, filepath.Join(dir, "routes.yaml"), broken)
	out, err = run("validate", "--config", filepath.Join(dir, "Caddyfile"), "--no-secrets")
	if err == nil || !strings.Contains(out, "routes.yaml:") || !strings.Contains(out, "is Caddyfile syntax") {
		t.Fatalf("validate --no-secrets of a {$NAME} placeholder: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, "routes.yaml"), strings.Replace(strings.ReplaceAll(routes, unitStore, store), "provider: stripe", "provider: strpie", 1))
	out, err = run("validate-routes", "--no-secrets", filepath.Join(dir, "routes.yaml"))
	if err == nil || !strings.Contains(out, `unknown provider "strpie"`) {
		t.Fatalf("validate-routes --no-secrets of a mistyped provider: %v\n%s", err, out)
	}
}

func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
