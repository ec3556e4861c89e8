package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
	adapt := exec.Command(out, "adapt", "--config", filepath.Join(repoRoot(), "examples", "Caddyfile"))
	adapt.Env = exampleEnv(t)
	adapted, err := adapt.CombinedOutput()
	if err != nil || !strings.Contains(string(adapted), `"handler":"webhook_gateway"`) {
		t.Fatalf("adapting the example: %v\n%s", err, adapted)
	}
}

// TestExampleValidates provisions the example configuration as it ships,
// with the demo secrets examples/run.sh gives it: validating compiles it but
// opens no store, so nothing is created in Caddy's default data folder.
func TestExampleValidates(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(binary, "validate", "--config", filepath.Join(repoRoot(), "examples", "Caddyfile"))
	cmd.Env = append(exampleEnv(t), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Fatalf("example does not validate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "caddy", "hookgate", "hookgate.db")); !os.IsNotExist(err) {
		t.Fatalf("validate created or touched the store: %v", err)
	}
}

// exampleEnv is the environment examples/run.sh runs the example in: this
// process's, with the demo secrets of examples/demo.env and without
// HOOKGATE_ADMIN. It fails the test if examples/routes.yaml holds a secret
// that is not an {env.NAME} placeholder (a copy of the example must carry no
// usable key), or names a variable demo.env gives no demo value.
func exampleEnv(t *testing.T) []string {
	t.Helper()
	demo := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^export (\w+)="\$\{(\w+):-([^}]*)\}"$`).FindAllStringSubmatch(readFile(t, filepath.Join(repoRoot(), "examples", "demo.env")), -1) {
		if m[1] != m[2] {
			t.Fatalf("examples/demo.env: %s defaults from %s", m[1], m[2])
		}
		demo[m[1]] = m[3]
	}
	var routes struct {
		Sources map[string]struct {
			Secrets []string `yaml:"secrets"`
		} `yaml:"sources"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot(), "examples", "routes.yaml"))), &routes); err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`^\{env\.(\w+)\}$`)
	for name, src := range routes.Sources {
		for _, secret := range src.Secrets {
			m := placeholder.FindStringSubmatch(secret)
			if m == nil {
				t.Fatalf("examples/routes.yaml: source %s has a secret that is not an {env.NAME} placeholder: a copy of the example would carry a key anyone can read", name)
			}
			if len(demo[m[1]]) < 16 {
				t.Fatalf("examples/demo.env: %s needs a demo value of at least 16 bytes, has %q", m[1], demo[m[1]])
			}
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := demo[name]; !ok && name != "HOOKGATE_ADMIN" {
			env = append(env, kv)
		}
	}
	for name, value := range demo {
		env = append(env, name+"="+value)
	}
	return env
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
