package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/reconcile/providertest"
)

// startGatewayOnSocket starts the gateway in dir with Caddy's admin
// endpoint on the Unix socket sock (mode 0600) instead of TCP, and waits
// for the socket and the site.
func startGatewayOnSocket(t *testing.T, dir string, port, adminPort int, sock string) *gateway {
	t.Helper()
	caddyfile := filepath.Join(dir, "Caddyfile")
	text := strings.Replace(readFile(t, caddyfile), fmt.Sprintf("admin 127.0.0.1:%d", adminPort), "admin unix/"+sock+"|0600", 1)
	writeFile(t, caddyfile, text)
	g := &gateway{t: t, dir: dir, port: port, adminPort: adminPort, log: &syncBuffer{}, exited: make(chan struct{})}
	g.cmd = exec.Command(binary, "run", "--config", caddyfile, "--adapter", "caddyfile")
	g.cmd.Dir = dir
	g.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		g.kill()
		if t.Failed() {
			t.Logf("gateway log:\n%s", g.log.String())
		}
	})
	waitFor(t, "the admin socket and the site", 30*time.Second, func() bool {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		c.Close()
		c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return g
}

// TestCommandsOverTheAdminSocket: with Caddy's admin endpoint on a Unix
// socket (mode 0600), every command that talks to it works with
// --address unix//path: stats, events list/show/replay/cancel, bulk
// replay, upstreams, secrets, backup, reconcile, the inspector, and
// Caddy's own reload; no TCP admin port is open; another local user
// cannot connect.
func TestCommandsOverTheAdminSocket(t *testing.T) {
	up := newRecorder(t, "", func(int) int { return 500 })
	passthrough := newRecorder(t, "", nil)
	square := providertest.NewSquare(t, squareToken).URL()
	routes := fmt.Sprintf(`upstreams:
  legacy:
    url: http://%s
    retry: {max_attempts: 1}
sources:
  github:
    path: /webhooks/github
    provider: github
    secrets: [gh-e2e-secret-0123456789]
    default: [legacy]
  square:
    path: /hooks/square
    provider: square
    secrets: [sq-key-0123456789]
    default: [legacy]
    reconcile:
      credentials: %q
      api_base: %s
`, up.addr, squareToken, square)
	dir, port, adminPort := newGatewayDir(t, routes, passthrough.addr)
	sockDir := filepath.Join(dir, "run")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "admin.sock")
	g := startGatewayOnSocket(t, dir, port, adminPort, sock)
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", adminPort)); err == nil {
		c.Close()
		t.Fatal("the admin endpoint also listens on TCP")
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	ids := g.ackGitHubEvents(t, "sock", 2)
	var id string
	for k := range ids {
		id = k
	}
	waitFor(t, "both deliveries dead", 20*time.Second, func() bool { return len(up.all()) >= 2 })
	address := "--address=unix/" + sock
	run := func(want string, args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, append(args, address)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("hookgate %s over the socket: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	waitFor(t, "the events dead", 20*time.Second, func() bool {
		out, _ := exec.Command(binary, "events", "list", "--status", "dead", address).CombinedOutput()
		return strings.Count(string(out), "dead") >= 2
	})
	run("deliveries:", "stats")
	run(id, "events", "list")
	run(id, "events", "show", id)
	run("replayed", "events", "replay", id)
	run("canceled", "events", "cancel", id)
	run("legacy", "upstreams", "list")
	run("legacy: paused", "upstreams", "pause", "legacy")
	run("legacy: ", "upstreams", "resume", "legacy")
	run("replayed: ", "replay", "--source", "github", "--status", "dead")
	run("SOURCE", "secrets", "list")
	run("listed", "reconcile", "--source", "square", "--dry-run")
	backup := filepath.Join(dir, "backup.db")
	run("backed up", "backup", "--to", backup)
	if fi, err := os.Stat(backup); err != nil || fi.Size() == 0 {
		t.Fatalf("backup over the socket: %v", err)
	}

	// The inspector serves the page and forwards its calls to the socket.
	inspectPort := freePort(t)
	inspect := exec.Command(binary, "inspect", "--listen", fmt.Sprintf("127.0.0.1:%d", inspectPort), address)
	inspectLog := &syncBuffer{}
	inspect.Stdout, inspect.Stderr = inspectLog, inspectLog
	if err := inspect.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inspect.Process.Kill(); inspect.Wait() })
	var stats string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("inspector log:\n%s\nlast answer: %s", inspectLog.String(), stats)
		}
	})
	waitFor(t, "the inspector's stats", 10*time.Second, func() bool {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/hookgate/stats", inspectPort), nil)
		req.Header.Set("X-Hookgate-Inspector", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		stats = fmt.Sprintf("%d %s", resp.StatusCode, b)
		return resp.StatusCode == 200
	})
	if !strings.Contains(stats, `"events"`) {
		t.Fatalf("the inspector's stats: %s", stats)
	}

	// Caddy's reload finds the socket in the Caddyfile.
	writeFile(t, filepath.Join(dir, "routes.yaml"), strings.Replace(routes, "max_attempts: 1", "max_attempts: 2", 1))
	if out, err := exec.Command(binary, "reload", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile").CombinedOutput(); err != nil {
		t.Fatalf("reload over the socket: %v\n%s", err, out)
	}

	// Another local user cannot reach the API.
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Fatal("runuser is needed (util-linux)")
	}
	shared, err := os.MkdirTemp("", "hookgate-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o755)
	copyFile(t, binary, filepath.Join(shared, "hookgate"), 0o755)
	// Every folder down to the socket lets anyone through: only the
	// socket's own mode keeps them out.
	for d := sockDir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	out, err := exec.Command("runuser", "-u", "nobody", "--", filepath.Join(shared, "hookgate"), "stats", address).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "permission denied") {
		t.Fatalf("another user over the socket: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}
