package hookgatecmd

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// tree builds the hookgate cobra command as Caddy does when it builds its
// command tree: from the registered command's CobraFunc, under a root that
// silences usage as Caddy's does.
func tree(t *testing.T, rootName string) *cobra.Command {
	t.Helper()
	reg, ok := caddycmd.Commands()[CommandName]
	if !ok {
		t.Fatalf("no top-level %q command registered", CommandName)
	}
	root := &cobra.Command{Use: rootName, SilenceUsage: true}
	cmd := &cobra.Command{Use: reg.Name + " " + reg.Usage, Short: reg.Short, Long: reg.Long}
	reg.CobraFunc(cmd)
	root.AddCommand(cmd)
	return root
}

// result is what a command line did: its output, and the exit code
// Caddy's main would exit with.
type result struct {
	out, err string
	code     int
}

// runCLI executes `caddy <args>` on a fresh tree.
func runCLI(t *testing.T, a ...string) result {
	t.Helper()
	return runIn(t, "caddy", a...)
}

func runIn(t *testing.T, rootName string, a ...string) result {
	t.Helper()
	root := tree(t, rootName)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(a)
	err := root.Execute()
	r := result{out: out.String(), err: errOut.String()}
	if err != nil {
		// As caddycmd.Main: the code of Caddy's exit error, else 1.
		r.code = 1
		if code, ok := caddyExitCode(err); ok {
			r.code = code
		}
	}
	return r
}

// caddyExitCode reads the code Caddy's main would take from err: the
// exported field of its unexported error type.
func caddyExitCode(err error) (int, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "exiting with status ") {
			var code int
			if _, scanErr := fmt.Sscan(strings.TrimPrefix(e.Error(), "exiting with status "), &code); scanErr == nil {
				return code, true
			}
		}
	}
	return 0, false
}

var formerTopLevel = []string{"events", "replay", "stats", "validate-routes", "route", "compact", "migrate", "providers", "send", "inspect", "secrets", "backup", "upstreams"}

// TestOneTopLevelCommand: the package adds hookgate to Caddy's commands
// and none of the names under it, so it cannot collide with another
// plugin's stats or send.
func TestOneTopLevelCommand(t *testing.T) {
	top := caddycmd.Commands()
	if _, ok := top[CommandName]; !ok {
		t.Fatalf("caddycmd.Commands() lacks %q", CommandName)
	}
	for _, c := range Subcommands() {
		if _, ok := top[c.Name()]; ok {
			t.Errorf("subcommand %q is also registered at the top level", c.Name())
		}
	}
	var names []string
	for _, c := range Subcommands() {
		names = append(names, c.Name())
	}
	for _, want := range formerTopLevel {
		if !slices.Contains(names, want) || !IsSubcommand(want) {
			t.Errorf("no subcommand %q (have %v)", want, names)
		}
	}
	if IsSubcommand("run") || IsSubcommand("help") {
		t.Error("Caddy's commands are not Hookgate's")
	}
}

// TestEveryCommandIsRunnableOrAGroup: each command does something, and
// each verb of a group is a command of its own with its own help.
func TestEveryCommandIsRunnableOrAGroup(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.RunE == nil {
			t.Errorf("%s has no RunE", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%s has no short description", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := tree(t, "caddy")
	hg, _, _ := root.Find([]string{CommandName})
	walk(hg)
	for group, verbs := range map[string][]string{"events": {"list", "show", "replay", "cancel"}, "upstreams": {"list", "pause", "resume"}, "secrets": {"list", "revoke"}} {
		for _, verb := range verbs {
			r := runCLI(t, CommandName, group, verb, "--help")
			if r.code != 0 || !strings.Contains(r.out, "caddy hookgate "+group+" "+verb) || !strings.Contains(r.out, "--address") {
				t.Errorf("%s %s --help: %d\n%s%s", group, verb, r.code, r.out, r.err)
			}
		}
	}
}

// TestUsageLinesReadAsTyped: in the hookgate binary a command's usage
// reads hookgate events list, not hookgate hookgate events list; in
// another Caddy build, caddy hookgate events list.
func TestUsageLinesReadAsTyped(t *testing.T) {
	r := runIn(t, "hookgate", CommandName, "events", "list", "--help")
	if !strings.Contains(r.out, "\n  hookgate events list [--source S]") || strings.Contains(r.out, "hookgate hookgate") {
		t.Errorf("usage in the hookgate binary:\n%s", r.out)
	}
	r = runIn(t, "hookgate", CommandName, "events", "--help")
	if !strings.Contains(r.out, `Use "hookgate events [command] --help"`) || strings.Contains(r.out, "hookgate hookgate") {
		t.Errorf("group usage in the hookgate binary:\n%s", r.out)
	}
	r = runIn(t, "caddy", CommandName, "events", "list", "--help")
	if !strings.Contains(r.out, "\n  caddy hookgate events list [--source S]") {
		t.Errorf("usage in a Caddy build:\n%s", r.out)
	}
}

// TestExitCodes: usage errors, unknown commands with a suggestion, and
// what the admin API answers each exit with their own code, the error
// printed once.
func TestExitCodes(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/hookgate/events/missing":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no event missing"}`))
		case "/hookgate/events/busy/replay":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"busy"}`))
		case "/hookgate/stats":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"no webhook_gateway is configured"}`))
		case "/hookgate/events/0123/cancel":
			w.Write([]byte(`{"canceled":1}`))
		default:
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer api.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cases := []struct {
		args []string
		code int
		err  string // in what was printed
	}{
		{[]string{"stat"}, ExitUsage, `unknown command "stat" for "caddy hookgate"; did you mean stats?`},
		{[]string{"events", "lst"}, ExitUsage, `unknown command "lst" for "caddy hookgate events"; did you mean list?`},
		{[]string{"events", "show"}, ExitUsage, "accepts 1 arg(s), received 0"},
		{[]string{"events", "list", "--limt", "3"}, ExitUsage, "unknown flag: --limt"},
		{[]string{"events", "show", "missing", "--address", api.URL}, ExitNotFound, "Error: no event missing"},
		{[]string{"events", "replay", "busy", "--address", api.URL}, ExitRefused, "Error: busy"},
		{[]string{"stats", "--address", api.URL}, ExitUnreachable, "no webhook_gateway is configured"},
		{[]string{"stats", "--address", closed.URL}, ExitUnreachable, "admin API at " + closed.URL},
		{[]string{"events", "cancel", "0123", "--address", api.URL}, 0, ""},
		{[]string{"compact", "--store", filepath.Join(t.TempDir(), "none.db")}, ExitNotFound, "no such file"},
		{[]string{"migrate", "--routes", "/a.yaml", "--config", "Caddyfile"}, ExitUsage, "give --routes or --config, not both"},
		{[]string{"validate-routes"}, ExitUsage, "validate-routes <routes.yaml> or --routes"},
		{[]string{"validate-routes", filepath.Join(t.TempDir(), "none.yaml")}, ExitNotFound, "no such file"},
		{[]string{"providers", "--json", "--markdown"}, ExitUsage, "give --json or --markdown, not both"},
		{[]string{"send", "--provider", "nope", "--secret", "s", "--url", "http://x"}, ExitNotFound, `unknown provider "nope"`},
	}
	for _, c := range cases {
		r := runCLI(t, append([]string{CommandName}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.err, c.err) {
			t.Errorf("%v: exit %d, want %d; printed:\n%s", c.args, r.code, c.code, r.err)
		}
		if c.code != 0 && strings.Count(r.err, c.err) != 1 {
			t.Errorf("%v: the error is not printed once:\n%s", c.args, r.err)
		}
	}
	if r := runCLI(t, CommandName, "events", "cancel", "0123", "--address", api.URL); r.out != "canceled: 1\n" {
		t.Errorf("cancel printed %q", r.out)
	}
}

// TestRoutesFileForms: route and validate-routes take the routes file as
// their argument or with --routes, the flag send and migrate use; a
// routes file with problems exits 1 with each problem on a line.
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
	for _, a := range [][]string{{routes}, {"--routes", routes}, {routes, "--routes", routes}} {
		r := runCLI(t, append(append([]string{CommandName, "route"}, a...), "--source", "stripe", "--body", event)...)
		if r.code != 0 || !strings.Contains(r.out, "rule payments  match") || !strings.Contains(r.out, "-> billing (route payments)") {
			t.Errorf("route %v: %d\n%s%s", a, r.code, r.out, r.err)
		}
	}
	if r := runCLI(t, CommandName, "route", "--source", "stripe", "--body", event); r.code != ExitUsage || !strings.Contains(r.err, "--routes") {
		t.Errorf("route without a routes file: %+v", r)
	}
	if r := runCLI(t, CommandName, "route", routes, "--routes", filepath.Join(dir, "other.yaml"), "--source", "stripe", "--body", event); r.code != ExitUsage || !strings.Contains(r.err, "two routes files") {
		t.Errorf("route with two routes files: %+v", r)
	}
	if r := runCLI(t, CommandName, "route", routes, "--source", "strip", "--body", event); r.code != ExitNotFound || !strings.Contains(r.err, "strip") {
		t.Errorf("route with an unknown source: %+v", r)
	}
	if r := runCLI(t, CommandName, "validate-routes", routes); r.code != 0 || !strings.Contains(r.out, "valid: 1 sources, 1 routes, 2 upstreams") {
		t.Errorf("validate-routes: %+v", r)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeTestFile(t, bad, "upstreams:\n  u: {url: 'http://x'}\nsources:\n  s:\n    path: /s\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [v, w]\n")
	r := runCLI(t, CommandName, "validate-routes", bad)
	want := bad + ":8:14: source s.default: unknown upstream \"v\" (defined: u)\n" + bad + ":8:14: source s.default: unknown upstream \"w\" (defined: u)\n"
	if r.code != ExitFailed || r.out != want || r.err != "" {
		t.Errorf("validate-routes of a bad file: %d\n%q\nwant\n%q\nstderr %q", r.code, r.out, want, r.err)
	}
}

// TestStoreFlag: every command names a store file with --store; the
// flags it replaced still work, and say so.
func TestStoreFlag(t *testing.T) {
	for _, name := range []string{"compact", "migrate", "backup", "events", "stats", "upstreams", "secrets", "replay", "inspect"} {
		root := tree(t, "caddy")
		c, _, err := root.Find([]string{CommandName, name})
		if err != nil {
			t.Fatal(err)
		}
		leaves := []*cobra.Command{c}
		if c.HasSubCommands() {
			leaves = c.Commands()
		}
		for _, leaf := range leaves {
			if leaf.Flags().Lookup("store") == nil {
				t.Errorf("%s has no --store", leaf.CommandPath())
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	r := runCLI(t, CommandName, "compact", "--storage", missing)
	if r.code != ExitNotFound || !strings.Contains(r.out+r.err, "use --store") || !strings.Contains(r.err, missing) {
		t.Errorf("compact --storage: %+v", r)
	}
}

// TestProvidersFitIn100Columns: the listing is a table of 100 columns
// that names every preset whole.
func TestProvidersFitIn100Columns(t *testing.T) {
	r := runCLI(t, CommandName, "providers")
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	if r.code != 0 || len(lines) < 40 || !strings.HasPrefix(lines[0], "NAME ") {
		t.Fatalf("providers: %+v", r)
	}
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > listingWidth {
			t.Errorf("%d columns: %s", n, line)
		}
	}
	for _, want := range []string{"standard-webhooks-ed25519 ", "stripe ", "github "} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no row starts with %q", want)
		}
	}
	if r := runCLI(t, CommandName, "providers", "--json"); r.code != 0 || !strings.HasPrefix(r.out, "[") {
		t.Errorf("providers --json: %+v", r)
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

// TestAdminOverUnixSocket: --address takes Caddy's unix//path form, as
// Caddy's admin endpoint may listen on a socket.
func TestAdminOverUnixSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "admin.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hookgate/upstreams" || r.Host != "127.0.0.1" {
			http.Error(w, `{"error":"unexpected `+r.Host+r.URL.Path+`"}`, http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"store":"/s.db","upstreams":[{"name":"billing","state":"paused","pending":3}]}`))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	for _, addr := range []string{"unix/" + socket, "unix/" + socket + "|0660"} {
		r := runCLI(t, CommandName, "upstreams", "list", "--address", addr)
		if r.code != 0 || !strings.Contains(r.out, "billing") || !strings.Contains(r.out, "paused") {
			t.Errorf("%s: %+v", addr, r)
		}
	}
	if r := runCLI(t, CommandName, "upstreams", "list", "--address", "unix/"+socket+".gone"); r.code != ExitUnreachable || !strings.Contains(r.err, "admin API at unix/") {
		t.Errorf("a socket that is not there: %+v", r)
	}
}

// TestEventsShowReadsAsText: events show prints the event for a person
// (durations as durations, the body indented, each attempt with its
// answer), and --json the API's record.
func TestEventsShowReadsAsText(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"01EVENT","source":"github","status":"delivered","origin":"redelivery","secret":1,"received_at":"2026-12-02T05:00:00Z",
			"method":"POST","path":"/webhooks/github","headers":{"X-Github-Event":["push"]},"body":"{\"zen\":\"ok\"}",
			"deliveries":[{"upstream":"ci","route":"pushes","state":"delivered","history":[
				{"n":1,"at":"2026-12-02T05:00:01Z","duration_ns":12345678,"status":503,"response":"busy"},
				{"n":2,"at":"2026-12-02T05:00:03Z","duration_ns":2500000,"status":200}]}]}`))
	}))
	defer api.Close()
	r := runCLI(t, CommandName, "events", "show", "01EVENT", "--address", api.URL)
	for _, want := range []string{"event 01EVENT  github  delivered", "origin redelivery, verified with secret 1", "POST /webhooks/github", "X-Github-Event: push",
		"\"zen\": \"ok\"", "→ ci (route pushes): delivered", "attempt 1", "503  12.3ms", "answered: busy", "200  2.5ms"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("events show lacks %q:\n%s", want, r.out)
		}
	}
	if j := runCLI(t, CommandName, "events", "show", "01EVENT", "--json", "--address", api.URL); !strings.Contains(j.out, `"duration_ns":12345678`) || strings.Contains(j.out, "attempt 1") {
		t.Errorf("events show --json:\n%s", j.out)
	}
}
