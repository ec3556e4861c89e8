package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestXcaddyBuild builds the gateway the xcaddy way, from xcaddy.json, and
// checks the result carries the Hookgate modules and adapts the example.
func TestXcaddyBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hookgate-xcaddy")
	build := exec.Command("go", "run", "./tools/xcaddybuild", "-config", "xcaddy.json", "-o", out)
	build.Dir = repoRoot()
	if log, err := build.CombinedOutput(); err != nil {
		t.Fatalf("xcaddy build: %v\n%s", err, tail(string(log), 4000))
	}
	modules, err := exec.Command(out, "list-modules").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"http.handlers.webhook_gateway", "hookgate", "http.handlers.reverse_proxy"} {
		if !containsLine(string(modules), id) {
			t.Errorf("xcaddy-built binary lacks module %s", id)
		}
	}
	adapted, err := exec.Command(out, "adapt", "--config", filepath.Join(repoRoot(), "examples", "Caddyfile")).CombinedOutput()
	if err != nil || !strings.Contains(string(adapted), `"handler":"webhook_gateway"`) {
		t.Fatalf("adapting the example: %v\n%s", err, adapted)
	}
}

// TestExampleValidates provisions the example configuration as it ships:
// validating compiles it but opens no store, so nothing is created in
// Caddy's default data folder.
func TestExampleValidates(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(binary, "validate", "--config", filepath.Join(repoRoot(), "examples", "Caddyfile"))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Fatalf("example does not validate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "caddy", "hookgate", "hookgate.db")); !os.IsNotExist(err) {
		t.Fatalf("validate created or touched the store: %v", err)
	}
}

func containsLine(s, line string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestInvalidRoutesRefusedAtStart checks that a bad routes.yaml stops the
// gateway from starting, with the file, line and reason, and that the store
// is not created for a configuration that was refused.
func TestInvalidRoutesRefusedAtStart(t *testing.T) {
	dir, _, _ := newGatewayDir(t, "upstreams:\n  legacy:\n    url: http://127.0.0.1:1\nsources:\n  s:\n    path: /h\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [legacyy]\n", "127.0.0.1:1")
	cmd := exec.Command(binary, "run", "--config", filepath.Join(dir, "Caddyfile"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("gateway started with an invalid routes file:\n%s", out)
	}
	want := filepath.Join(dir, "routes.yaml") + `:9:14: source s.default: unknown upstream \"legacyy\" (defined: legacy)`
	if !strings.Contains(string(out), want) {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "hookgate.db")); !os.IsNotExist(err) {
		t.Fatalf("store created for a refused configuration: %v", err)
	}
}
