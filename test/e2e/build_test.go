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

// TestExampleValidates provisions the example configuration as it ships,
// with the store in Caddy's default data folder.
func TestExampleValidates(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(binary, "validate", "--config", filepath.Join(repoRoot(), "examples", "Caddyfile"))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Fatalf("example does not validate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "caddy", "hookgate", "hookgate.db")); err != nil {
		t.Fatalf("store not created in the default location: %v", err)
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
