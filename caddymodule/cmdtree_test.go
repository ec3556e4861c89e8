package caddymodule

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// hookgateTree builds the `hookgate` cobra command as Caddy does when it
// builds its command tree: from the registered command's CobraFunc.
func hookgateTree(t *testing.T) *cobra.Command {
	t.Helper()
	reg, ok := caddycmd.Commands()[CommandName]
	if !ok {
		t.Fatalf("no top-level %q command registered", CommandName)
	}
	root := &cobra.Command{Use: "caddy", SilenceUsage: true, SilenceErrors: true}
	cmd := &cobra.Command{Use: reg.Name + " " + reg.Usage, Short: reg.Short, Long: reg.Long}
	reg.CobraFunc(cmd)
	root.AddCommand(cmd)
	return root
}

// runCLI executes `caddy <args>` on a fresh tree, capturing what the commands
// write through cobra.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := hookgateTree(t)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

var formerTopLevel = []string{"events", "replay", "stats", "validate-routes", "route", "compact", "migrate", "providers", "send", "inspect", "secrets", "backup"}

// TestOneTopLevelCommand: this package adds `hookgate` to Caddy's commands
// and none of the names it used to take, so it cannot collide with another
// plugin's `stats` or `send`.
func TestOneTopLevelCommand(t *testing.T) {
	top := caddycmd.Commands()
	if _, ok := top[CommandName]; !ok {
		t.Fatalf("caddycmd.Commands() lacks %q", CommandName)
	}
	for _, name := range formerTopLevel {
		if _, ok := top[name]; ok {
			t.Errorf("%q is still a top-level Caddy command", name)
		}
	}
	for _, c := range Subcommands() {
		if _, ok := top[c.Name]; ok {
			t.Errorf("subcommand %q is also registered at the top level", c.Name)
		}
	}
}

// TestCommandTree: every former command is a subcommand of `hookgate`, with
// its usage, help text and flags.
func TestCommandTree(t *testing.T) {
	root := hookgateTree(t)
	hg, _, err := root.Find([]string{CommandName})
	if err != nil || hg.Name() != CommandName {
		t.Fatalf("find %s: %v %v", CommandName, hg, err)
	}
	var names []string
	for _, c := range hg.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range formerTopLevel {
		if !slices.Contains(names, want) {
			t.Errorf("no subcommand %q (have %v)", want, names)
		}
	}
	for _, reg := range Subcommands() {
		c, _, err := root.Find([]string{CommandName, reg.Name})
		if err != nil || c.Name() != reg.Name {
			t.Errorf("find %s: %v", reg.Name, err)
			continue
		}
		if c.Short != reg.Short || c.Long != reg.Long || c.Use != strings.TrimSpace(reg.Name+" "+reg.Usage) {
			t.Errorf("%s: help text differs from the registered command: %q %q", reg.Name, c.Use, c.Short)
		}
		if c.RunE == nil && c.Run == nil {
			t.Errorf("%s does nothing", reg.Name)
		}
	}
	flags := map[string][]string{
		"events":          {"address", "json", "source", "status", "limit", "cursor"},
		"replay":          {"address", "status", "upstream", "since", "page"},
		"stats":           {"address", "json"},
		"send":            {"provider", "secret", "url", "routes", "source", "gateway", "body", "header"},
		"route":           {"routes", "source", "body", "header", "query"},
		"validate-routes": {"routes"},
		"compact":         {"storage"},
		"migrate":         {"from", "routes", "config", "adapter"},
		"providers":       {"json", "markdown"},
		"inspect":         {"address", "listen"},
		"secrets":         {"address", "json", "scope"},
	}
	for name, want := range flags {
		c, _, _ := root.Find([]string{CommandName, name})
		for _, f := range want {
			if c.Flags().Lookup(f) == nil {
				t.Errorf("%s has no --%s", name, f)
			}
		}
	}

	help, err := runCLI(t, CommandName, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range formerTopLevel {
		if !strings.Contains(help, "\n  "+want+" ") {
			t.Errorf("hookgate --help does not list %s:\n%s", want, help)
		}
	}
	if _, err := runCLI(t, CommandName, "stat"); err == nil || !strings.Contains(err.Error(), `unknown command "stat"`) || !strings.Contains(err.Error(), "stats") {
		t.Errorf("unknown subcommand: got %v, want an error suggesting stats", err)
	}
}

// TestRoutesFileForms: route and validate-routes take the routes file as
// their argument or with --routes, the flag send and migrate use.
func TestRoutesFileForms(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	writeTestFile(t, routes, `
upstreams:
  billing: {url: "http://127.0.0.1:1"}
  legacy: {url: "http://127.0.0.1:2"}
sources:
  stripe:
    path: /webhooks/stripe
    provider: stripe
    secrets: ["whsec_x-0123456789abcdef"]
    default: [legacy]
    routes:
      - name: payments
        when: 'body.type startsWith "payment_intent."'
        to: [billing]
`)
	event := filepath.Join(dir, "event.json")
	writeTestFile(t, event, `{"id":"evt_1","type":"payment_intent.created"}`)
	for _, args := range [][]string{
		{routes},
		{"--routes", routes},
		{routes, "--routes", routes},
	} {
		out, err := runCLI(t, append(append([]string{CommandName, "route"}, args...), "--source", "stripe", "--body", event)...)
		if err != nil || !strings.Contains(out, "rule payments  match") || !strings.Contains(out, "-> billing (route payments)") {
			t.Errorf("route %v: %v\n%s", args, err, out)
		}
	}
	if _, err := runCLI(t, CommandName, "route", "--source", "stripe", "--body", event); err == nil || !strings.Contains(err.Error(), "--routes") {
		t.Errorf("route without a routes file: %v", err)
	}
	if _, err := runCLI(t, CommandName, "route", routes, "--routes", filepath.Join(dir, "other.yaml"), "--source", "stripe", "--body", event); err == nil || !strings.Contains(err.Error(), "two routes files") {
		t.Errorf("route with two routes files: %v", err)
	}
	if _, err := runCLI(t, CommandName, "validate-routes"); err == nil || !strings.Contains(err.Error(), "validate-routes <routes.yaml> or --routes") {
		t.Errorf("validate-routes without a routes file: %v", err)
	}
}

// TestGatewayFromCaddyConfig: --config is Caddy's config; migrate finds the
// gateway's configuration and its storage in the webhook_gateway handler.
func TestGatewayFromCaddyConfig(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "conf", "routes.yaml")
	writeTestFile(t, routes, `
storage:
  jetstream:
    url: nats://10.0.0.1:4222
upstreams:
  legacy: {url: "http://127.0.0.1:2"}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: ["x-0123456789abcdef"]
    default: [legacy]
`)
	caddyfile := filepath.Join(dir, "Caddyfile")
	writeTestFile(t, caddyfile, ":8080 {\n\twebhook_gateway ./conf/routes.yaml {\n\t\tstorage data/old.db\n\t}\n}\n")
	gw, err := gatewayFromCaddyConfig(caddyfile, "")
	if err != nil {
		t.Fatal(err)
	}
	if gw.cfg.Storage.JetStream == nil || gw.cfg.Storage.JetStream.URL != "nats://10.0.0.1:4222" || gw.storage != filepath.Join(dir, "data", "old.db") {
		t.Errorf("from the Caddyfile: got %+v, storage %q", gw.cfg.Storage, gw.storage)
	}

	t.Setenv("HOOKGATE_TEST_ROUTES", routes)
	nested := filepath.Join(dir, "caddy.json")
	writeTestFile(t, nested, `{"apps":{"http":{"servers":{"s":{"routes":[{"handle":[{"handler":"subroute","routes":[
		{"handle":[{"handler":"webhook_gateway","config":"{env.HOOKGATE_TEST_ROUTES}"}]}]}]}]}}}}}`)
	gw, err = gatewayFromCaddyConfig(nested, "")
	if err != nil || gw.cfg.Storage.JetStream == nil || gw.name != routes || gw.storage != "" {
		t.Errorf("from nested JSON naming the routes file: got %+v, %v", gw, err)
	}

	two := filepath.Join(dir, "two.json")
	writeTestFile(t, two, `{"apps":{"http":{"servers":{"s":{"routes":[{"handle":[
		{"handler":"webhook_gateway","config":"/a.yaml"},{"handler":"webhook_gateway","config":"/b.yaml"}]}]}}}}}`)
	if _, err := gatewayFromCaddyConfig(two, ""); err == nil || !strings.Contains(err.Error(), "several webhook_gateway handlers") {
		t.Errorf("two configurations: %v", err)
	}
	none := filepath.Join(dir, "none.json")
	writeTestFile(t, none, `{"apps":{}}`)
	if _, err := gatewayFromCaddyConfig(none, ""); err == nil || !strings.Contains(err.Error(), "no webhook_gateway handler") {
		t.Errorf("no handler: %v", err)
	}

	if _, err := runCLI(t, CommandName, "migrate", "--routes", "/a.yaml", "--config", caddyfile); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("migrate with --routes and --config: %v", err)
	}
}

func TestRegisterSubcommandRules(t *testing.T) {
	mustPanic := func(name string, c caddycmd.Command) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: registered without a panic", name)
			}
		}()
		registerSubcommand(c)
	}
	noop := func(*cobra.Command) {}
	mustPanic("duplicate", caddycmd.Command{Name: "events", Short: "again", CobraFunc: noop})
	mustPanic("no short", caddycmd.Command{Name: "zz-test-noshort", CobraFunc: noop})
	mustPanic("no func", caddycmd.Command{Name: "zz-test-nofunc", Short: "x"})
	mustPanic("bad name", caddycmd.Command{Name: "Bad Name", Short: "x", CobraFunc: noop})
	if IsSubcommand("zz-test-noshort") || IsSubcommand("zz-test-nofunc") {
		t.Error("a refused command was registered")
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
